"""The rows of one nvprof metric or event table, as `nvprof_metrics` reads them.

A million rows are not a million strings: kernels, devices and metrics are codes into their
names, and the Invocations, Min, Max and Avg cells are spans of the table's text, read as
numbers all at once (`Cells.plain`) and as strings only where needed (`Cells.pick`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiler.parse import tokens, values
from profiler.parse.values import Origin


@dataclass(frozen=True)
class Cells:
    """One column of a table's rows: row i's cell is the `count[i]` bytes of `data` (UTF-8 text)
    that end at `base[i] + end`, or, for a row read on its own (a CSV cell, a text row cut with
    `str.split`), `own[i]`."""

    data: bytes | memoryview
    base: np.ndarray
    end: int
    count: np.ndarray
    own: dict[int, object]

    @classmethod
    def objects(cls, cells: list[object]) -> Cells:
        """Cells held as they are (a CSV column: text or NA)."""
        none = np.zeros(len(cells), dtype="int64")
        return cls(b"", none, 0, none, dict(enumerate(cells)))

    def spans(self, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the cells of rows `which` start and end in `data` (empty for own cells)."""
        stop = self.base[which] + self.end
        return stop - self.count[which], stop

    def pick(self, which: np.ndarray) -> list[object]:
        """The cells of rows `which`."""
        data, own = self.data, self.own
        start, stop = self.spans(which)
        spans = zip(which.tolist(), start.tolist(), stop.tolist(), strict=True)
        return [own[i] if i in own else str(data[a:b], "utf-8") for i, a, b in spans]

    def plain(self, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`tokens.decimals` of the cells of rows `which` (a row's own cell is not read)."""
        if not self.data:
            return np.full(len(which), np.nan), np.zeros(len(which), dtype=bool)
        codes = np.frombuffer(self.data, dtype=np.uint8)
        return tokens.decimals(codes, *self.spans(which))


@dataclass(frozen=True)
class Rows:
    """The metric or event rows of one table.

    Attributes:
        origin: the table (for messages).
        at: each row's data-row number, as `origin`'s messages count them (`Origin.line`).
        device, kernel, metric: each row's device, kernel and metric as codes into `devices`,
            `kernels` and `metrics` (one code per name; metrics in order of first appearance).
        occurrence: how many earlier blocks of rows had the row's device and kernel.
        cells: the `invocations`, `min`, `max` and `avg` cells.
    """

    origin: Origin
    at: np.ndarray
    device: np.ndarray
    devices: list[str]
    kernel: np.ndarray
    kernels: list[str]
    metric: np.ndarray
    metrics: list[str]
    occurrence: np.ndarray
    cells: dict[str, Cells]


def blocks(
    origin: Origin,
    at: np.ndarray,
    codes: tuple[np.ndarray, np.ndarray, np.ndarray],
    metrics: list[str],
    starts: np.ndarray | None = None,
) -> np.ndarray:
    """Each row's `occurrence`: how many earlier blocks of rows had its device and kernel. A
    block starts at each of `starts` (the rows under a `Kernel:` line), by default where the
    device or kernel changes. `codes`: each row's device, kernel and metric as numbers (equal
    numbers for equal names); `at`: the rows' data-row numbers.

    Raises: ParseError naming the line of a metric listed twice for one kernel.
    """
    device, kernel, metric = codes
    key = device * (int(kernel.max(initial=0)) + 1) + kernel
    if starts is None:
        starts = np.ones(len(key), dtype=bool)
        starts[1:] = key[1:] != key[:-1]
    first = pd.Series(key[starts])
    block = np.cumsum(starts) - 1  # each row's block
    occurrence = first.groupby(first).cumcount().to_numpy(dtype="int64")[block]
    group = pd.factorize(key * (int(occurrence.max(initial=0)) + 1) + occurrence)[0]
    again = np.flatnonzero(
        pd.Series(group.astype("int64") * (int(metric.max(initial=0)) + 1) + metric).duplicated()
    )
    if len(again):
        shown = values.shown_cell(metrics[metric[again[0]]], 80)
        line = origin.line(int(at[again[0]]))
        raise origin.error(f"line {line}: {shown} again for the same kernel")
    return occurrence
