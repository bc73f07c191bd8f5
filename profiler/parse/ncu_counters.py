"""Nsight Compute's metrics, every one as ncu printed it -> `schema.COUNTERS`.

`ncu_csv` and `ncu_text` map a few metrics to `schema.METRICS`; here every metric of every launch
is a row, named as ncu names it (a raw name such as `dram__bytes_read.sum`, or a section's display
name such as `Memory Throughput` with its section), in ncu's unit, its value cell kept as printed
and read as a number where it is one (`6,144` -> 6144; `n/a`, `CachePreferNone`: NaN). Its
`kernel_id` is the launch's ID in `metrics`. A per-kernel summary gives the Average as `value`,
with Minimum, Maximum and Invocations.

Where ncu prints a million cells, they are read by distinct cell: a column of a few distinct
names or units costs a few strings, not one per row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import pandas as pd

from profiler import schema
from profiler.parse import bounded_names, values

# The raw page's columns that say which launch a row is, not what it measured (and NVTX columns,
# whose names hold `Domain:`).
IDENTITY = frozenset(
    (
        "ID",
        "Process ID",
        "Process Name",
        "Host Name",
        "Kernel Name",
        "Kernel Time",
        "Context",
        "Stream",
        "Block Size",
        "Grid Size",
        "Device",
        "CC",
    )
)
# A column's cells: objects, a Series, or categories.
Cells: TypeAlias = np.ndarray | pd.Series | pd.Categorical


def details(table: pd.DataFrame, stage: str, value: str = "Metric Value") -> pd.DataFrame:
    """The rows of a details page (or, `value` its `Average`, of a per-kernel summary) that name
    a metric, in file order.

    Args:
        table: the page, its `ID` column the launch IDs `metrics` has (checked there).
        stage: the stage key of every row.
        value: the column of the value.

    Returns: DataFrame with `schema.COUNTERS` columns.
    """
    keep = table["Metric Name"].notna().to_numpy()
    summary = value == "Average"
    cells = Coded.of(_picked(table, value, keep))
    got = {
        "kernel_id": _ids(_picked(table, "ID", keep)),
        "name": _names(_picked(table, "Kernel Name", keep)),
        "section": _text(_picked(table, "Section Name", keep)) if "Section Name" in table else None,
        "metric": _text(_picked(table, "Metric Name", keep)),
        "unit": _text(_picked(table, "Metric Unit", keep)) if "Metric Unit" in table else None,
        "value": cells.numbers(),
        "text": cells.stripped(),
        "invocations": _numbers(table, "Invocations", keep) if summary else None,
        "min": _numbers(table, "Minimum", keep) if summary else None,
        "max": _numbers(table, "Maximum", keep) if summary else None,
    }
    return frame(got, stage)


def raw(table: pd.DataFrame, units: dict[str, str], stage: str) -> pd.DataFrame:
    """The raw page's metric cells (every column but `IDENTITY` and NVTX columns), launch by
    launch and column by column, those not empty.

    Args:
        table: the page without its units row, its `ID` column the launch IDs `metrics` has.
        units: each column's unit (from the units row; empty when none).
        stage: the stage key of every row.

    Returns: DataFrame with `schema.COUNTERS` columns.
    """
    columns = [c for c in table.columns if c not in IDENTITY and "Domain:" not in str(c)]
    if not columns:
        return schema.empty(schema.COUNTERS)
    cells = table[columns].to_numpy(dtype=object).ravel()  # launch by launch
    present = pd.notna(cells)
    launch = np.repeat(np.arange(len(table)), len(columns))[present]
    column = np.tile(np.arange(len(columns)), len(table))[present]
    shown = pd.Series(cells[present], dtype=object)
    names = pd.Series(columns, dtype=object)
    got = {
        "kernel_id": _ids(table["ID"]).to_numpy()[launch],
        "name": _names(table["Kernel Name"]).take(launch).reset_index(drop=True),
        "section": None,
        "metric": _text(names.take(column)),
        "unit": _text(names.map(lambda c: units.get(c) or pd.NA).take(column)),
        "value": values.loose_numbers(shown),
        "text": _text(shown),
        "invocations": None,
        "min": None,
        "max": None,
    }
    return frame(got, stage)


def frame(columns: Mapping[str, object], stage: str) -> pd.DataFrame:
    """`schema.COUNTERS` from its columns (None: missing throughout).

    Returns: DataFrame with `schema.COUNTERS` columns.
    """
    n = len(columns["kernel_id"])  # type: ignore[arg-type]
    out = {
        name: (_missing(n, schema.COUNTERS.dtypes[name]) if got is None else _plain(got))
        for name, got in columns.items()
    }
    out = {"stage": _repeat(stage, n), **out}
    table = pd.DataFrame(out, copy=False)
    return schema.validate(schema.conform(table, schema.COUNTERS), schema.COUNTERS)


def _plain(column: object) -> object:
    """A column without its index (the rows were picked from a larger table), its cells as they
    are stored: a `string` column made NumPy objects would be made `string` again, a round trip
    of a million strings where `string` is stored by pyarrow."""
    return column.array if isinstance(column, pd.Series) else column


@dataclass(frozen=True)
class Coded:
    """Cells as codes into their distinct cells (-1: missing), so that each distinct cell is
    read once: a million cells of a few thousand values cost a few thousand reads."""

    codes: np.ndarray
    distinct: np.ndarray

    @classmethod
    def of(cls, cells: Cells) -> Coded:
        """The cells' codes: a categorical's own (its categories the distinct cells, in their
        order), or those of a factorisation."""
        categories = cells.array if isinstance(cells, pd.Series) else cells
        if isinstance(categories, pd.Categorical):
            return cls(
                np.asarray(categories.codes), np.asarray(categories.categories, dtype=object)
            )
        codes, distinct = pd.factorize(np.asarray(cells, dtype=object))
        return cls(codes, distinct)

    def stripped(self) -> pd.Series:
        """The cells as `string`, stripped; empty cells missing."""
        names = [str(c).strip() or pd.NA for c in self.distinct]
        return bounded_names.coded_strings(self.codes, names)

    def numbers(self) -> np.ndarray:
        """`values.loose_numbers` of the cells. It reads the distinct cells, with one missing
        cell among them where any is missing: pandas' reader takes the set of cells it is
        given as a whole (the dtype it reads them in), and this is the same set."""
        missing = bool((self.codes < 0).any())
        pool = [*self.distinct, np.nan] if missing else list(self.distinct)
        number = values.loose_numbers(pd.Series(pool, dtype=object))
        return number[np.where(self.codes < 0, len(self.distinct), self.codes)]


def _picked(table: pd.DataFrame, column: str, keep: np.ndarray) -> Cells:
    """The cells of `column` in the rows `keep`: as objects, or still categories."""
    cells = table[column]
    if isinstance(cells.dtype, pd.CategoricalDtype):
        return cells.array[keep]
    return cells.to_numpy(dtype=object)[keep]


def _text(cells: Cells) -> pd.Series:
    """Cells as `string`, each distinct cell stripped once; empty cells missing."""
    return Coded.of(cells).stripped()


def _names(cells: Cells) -> pd.Series:
    """Kernel names capped as `metrics` caps them, each distinct name once."""
    coded = Coded.of(cells)
    capped = bounded_names.cap_names(pd.Series(coded.distinct, dtype="string")).tolist()
    return bounded_names.coded_strings(coded.codes, capped)


def _ids(cells: Cells) -> pd.Series:
    """Launch IDs as int64 (each distinct cell read once)."""
    coded = Coded.of(cells)
    number = values.loose_numbers(pd.Series(coded.distinct, dtype=object))
    return pd.Series(number.astype("int64")[coded.codes])


def _numbers(table: pd.DataFrame, column: str, keep: np.ndarray) -> np.ndarray | None:
    """A column's numbers in the rows `keep` (NaN where none), None when the page has no such
    column."""
    if column not in table:
        return None
    return values.loose_numbers(pd.Series(_picked(table, column, keep), dtype=object))


def _repeat(text: str, n: int) -> pd.Series:
    """`text` n times, as `string`."""
    return bounded_names.coded_strings(np.zeros(n, dtype="int64"), [text])


def _missing(n: int, dtype: str) -> object:
    """A missing column of `dtype`."""
    if dtype == "string":
        return bounded_names.coded_strings(np.full(n, -1, dtype="int64"), []).array
    if dtype == "float64":
        return np.full(n, np.nan)
    return pd.arrays.IntegerArray(np.zeros(n, dtype="int64"), np.ones(n, dtype=bool))
