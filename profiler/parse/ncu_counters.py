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

import numpy as np
import pandas as pd

from profiler import schema
from profiler.parse import values

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


def details(table: pd.DataFrame, stage: str, value: str = "Metric Value") -> pd.DataFrame:
    """The rows of a details page (or, `value` its `Average`, of a per-kernel summary) that name
    a metric, in file order.

    Args:
        table: the page, its `ID` column the launch IDs `metrics` has (checked there).
        stage: the stage key of every row.
        value: the column of the value.

    Returns: DataFrame with `schema.COUNTERS` columns.
    """
    rows = table[table["Metric Name"].notna().to_numpy()]
    summary = value == "Average"
    cells = rows[value]
    got = {
        "kernel_id": _ids(rows["ID"]),
        "name": _names(rows["Kernel Name"]),
        "section": _text(rows["Section Name"]) if "Section Name" in rows else None,
        "metric": _text(rows["Metric Name"]),
        "unit": _text(rows["Metric Unit"]) if "Metric Unit" in rows else None,
        "value": values.loose_numbers(cells),
        "text": _text(cells),
        "invocations": _numbers(rows, "Invocations") if summary else None,
        "min": _numbers(rows, "Minimum") if summary else None,
        "max": _numbers(rows, "Maximum") if summary else None,
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
    """A column without its index (the rows were picked from a larger table)."""
    return column.to_numpy() if isinstance(column, pd.Series) else column


def _text(cells: pd.Series) -> pd.Series:
    """Cells as `string`, each distinct cell stripped once; empty cells missing."""
    codes, distinct = pd.factorize(cells.to_numpy(dtype=object))
    return values.coded_strings(codes, [str(c).strip() or pd.NA for c in distinct])


def _names(cells: pd.Series) -> pd.Series:
    """Kernel names capped as `metrics` caps them, each distinct name once."""
    codes, distinct = pd.factorize(cells.to_numpy(dtype=object))
    return values.coded_strings(
        codes, values.cap_names(pd.Series(distinct, dtype="string")).tolist()
    )


def _ids(cells: pd.Series) -> pd.Series:
    """Launch IDs as int64 (each distinct cell read once)."""
    codes, distinct = pd.factorize(cells.to_numpy(dtype=object))
    number = values.loose_numbers(pd.Series(distinct, dtype=object))
    return pd.Series(number.astype("int64")[codes])


def _numbers(rows: pd.DataFrame, column: str) -> np.ndarray | None:
    """A column's numbers (NaN where none), None when the page has no such column."""
    return values.loose_numbers(rows[column]) if column in rows else None


def _repeat(text: str, n: int) -> pd.Series:
    """`text` n times, as `string`."""
    return values.coded_strings(np.zeros(n, dtype="int64"), [text])


def _missing(n: int, dtype: str) -> object:
    """A missing column of `dtype`."""
    if dtype == "string":
        return values.coded_strings(np.full(n, -1, dtype="int64"), []).array
    if dtype == "float64":
        return np.full(n, np.nan)
    return pd.arrays.IntegerArray(np.zeros(n, dtype="int64"), np.ones(n, dtype=bool))
