"""The rows of one nvprof metric or event table, as `nvprof_metrics` reads them.

A million rows are not a million strings: kernels, devices and metrics are codes into their
names, and the Invocations, Min, Max and Avg cells are spans of the table's text, read as
numbers all at once (`Cells.plain`) and as strings only where needed (`Cells.pick`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiler.parse import cell_quotes, tokens
from profiler.parse.table_origin import Origin

MIX = np.uint64(0x9E3779B97F4A7C15)  # odd: mixes a window's 8-byte words into one number


class Clash(Exception):
    """Two windows of one hash (never seen): the caller reads them another way."""



@dataclass(frozen=True)
class Cells:
    """One column of a table's rows: row i's cell is the `count[i]` bytes of `data` (UTF-8 text)
    that end at `base[i] + end`, or, for a row read on its own (a CSV cell, a text row cut with
    `str.split`), `own[i]`. `same`, when known, names for each row a row of the same bytes
    (itself, or an earlier one), so that repeated rows are read once."""

    data: bytes | memoryview
    base: np.ndarray
    end: int
    count: np.ndarray
    own: dict[int, object]
    same: np.ndarray | None = None

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

    def distinct(self) -> tuple[np.ndarray, list[object]]:
        """Each row's cell as a code into the distinct cells (text; -1 for a CSV's NA): each row
        of distinct bytes (`same`) read once, the cells in `data` told apart by their bytes
        (`Names`, right-aligned in windows as wide as the widest), so that a million rows of a
        few distinct cells make a few strings."""
        n = len(self.base)
        same = np.arange(n) if self.same is None else self.same
        first = same == np.arange(n)
        first[np.fromiter(self.own, dtype="int64", count=len(self.own))] = False
        rows = np.flatnonzero(first)
        local = np.zeros(n, dtype="int64")
        found: list[object] = []
        if len(rows):
            local[rows], found = self._spanned(rows)
        own = np.fromiter(self.own, dtype="int64", count=len(self.own))
        if len(own):
            cells = pd.Series([self.own[i] for i in own.tolist()], dtype=object)
            codes, distinct = pd.factorize(cells)
            local[own] = np.where(codes < 0, -1, codes + len(found))  # -1: NA (remap's last)
            found = found + list(distinct)
        seen: dict[object, int] = {}
        remap = np.array([seen.setdefault(c, len(seen)) for c in found] + [-1], dtype="int64")
        return remap[local][same], list(seen)

    def _spanned(self, rows: np.ndarray) -> tuple[np.ndarray, list[object]]:
        """`distinct` of rows `rows`, all of them cells in `data`."""
        width = max(int(self.count[rows].max()), 1)
        codes = np.frombuffer(self.data, dtype=np.uint8)
        windows = np.lib.stride_tricks.sliding_window_view(codes, width)
        names = Names(width)
        try:
            return names.codes(windows[self.base[rows] + self.end - width]), list(names.names)
        except (Clash, UnicodeDecodeError):  # (never seen) read as strings
            got, cells = pd.factorize(pd.Series(self.pick(rows), dtype=object))
            return got.astype("int64"), list(cells)


class Names:
    """Names told apart by their windows (right-aligned, `width` bytes, spaces before): each
    window hashed to one number, and checked byte for byte against the first window of its
    hash; codes are given in order of first appearance."""

    def __init__(self, width: int) -> None:
        self.width, self.words = width, -(-width // 8)
        self.known: dict[int, tuple[int, bytes]] = {}  # hash -> code, window
        self.names: list[str] = []

    def codes(self, windows: np.ndarray) -> np.ndarray:
        """Each window's code (windows: one row of `width` bytes each).

        Raises: Clash for two windows of one hash.
        """
        padded = np.zeros((len(windows), self.words * 8), dtype=np.uint8)
        padded[:, padded.shape[1] - self.width :] = windows
        words = padded.view(np.uint64)
        mixed = np.zeros(len(windows), dtype=np.uint64)
        for k in range(self.words):
            mixed = mixed * MIX + words[:, k]
        local, hashes = pd.factorize(mixed)
        code = np.empty(len(hashes), dtype="int64")
        firsts = np.empty(len(hashes), dtype="int64")
        firsts[local[::-1]] = np.arange(len(local))[::-1]
        known = []
        for k, (h, first) in enumerate(zip(hashes.tolist(), firsts.tolist(), strict=True)):
            if h not in self.known:
                window = padded[first].tobytes()
                self.known[h] = (len(self.names), window)
                self.names.append(window.decode("ascii").lstrip(" \0"))
            code[k], window = self.known[h]
            known.append(window)
        seen = np.frombuffer(b"".join(known), dtype=np.uint64).reshape(len(hashes), self.words)
        if not (words == seen[local]).all():
            raise Clash
        return code[local]


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
        shown = cell_quotes.shown_cell(metrics[metric[again[0]]], 80)
        line = origin.line(int(at[again[0]]))
        raise origin.error(f"line {line}: {shown} again for the same kernel")
    return occurrence
