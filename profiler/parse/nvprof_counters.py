"""nvprof's metric and event rows -> `schema.COUNTERS`: every row nvprof printed, as it printed it.

A row is a kernel's metric or event over its launches: Invocations, then Min, Max and Avg cells
that carry their unit in the number (`97.19%`, `7.2244GB/s`, `0.517002`) or are levels (`Low
(3)`, `Idle (0)`). Each cell becomes a number in its printed unit (`value` is the Avg), the
unit its suffix (missing for a plain number and a level, whose number is the one in parentheses),
and the Avg cell is kept as printed (`text`); a cell that is no number is NaN. Nothing is
checked: the rows `metrics` maps were checked there.

A million rows are read without a string per row: each column's distinct cells are found by
their bytes (`Cells.distinct`), and each distinct cell is read once.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from profiler import schema
from profiler.parse import bounded_names, values
from profiler.parse.nvprof_metric_rows import Rows

Codes = tuple[np.ndarray, list[object]]  # each row's code into distinct cells (-1: missing)


def read_cell(cell: object) -> tuple[float, str]:
    """A cell's number and unit: `97.19%` -> (97.19, `%`), `7.2244GB/s` -> (7.2244, `GB/s`),
    `Low (3)` -> (3.0, ``), `1,024` -> (1024.0, ``); (NaN, ``) for a cell that is no number."""
    if not isinstance(cell, str):
        return math.nan, ""
    text = cell.strip()
    if text.endswith(")") and "(" in text:  # a level
        return values.number_or_nan(text.rpartition("(")[2][:-1]), ""
    cut = len(text)
    while cut and not (text[cut - 1].isdigit() or text[cut - 1] == "."):
        cut -= 1
    number = values.number_or_nan(text[:cut])
    return (math.nan, "") if math.isnan(number) else (number, text[cut:].strip())


def counters(
    tables: list[Rows],
    kernels: tuple[np.ndarray, np.ndarray, list[str]],
    metric: tuple[np.ndarray, list[str]],
    invocations: np.ndarray,
    stage: str,
) -> pd.DataFrame:
    """Every row of every metric and event table, in file order.

    Args:
        tables: the tables' rows.
        kernels: each row's `kernel_id` (the `metrics` row of its kernel), its kernel's name as
            a code into the names, and the names (capped as `metrics` caps them).
        metric: each row's metric as a code into the metric names, and the names.
        invocations: each row's Invocations (read and checked by `nvprof_metrics`).
        stage: the stage key of every row.

    Returns: DataFrame with `schema.COUNTERS` columns, one row per metric or event row.
    """
    kernel_id, name_of, names = kernels
    cells = {c: _merged([t.cells[c].distinct() for t in tables]) for c in ("min", "max", "avg")}
    read = {c: [read_cell(cell) for cell in found] for c, (_, found) in cells.items()}
    number = {c: _values(codes, read[c]) for c, (codes, _) in cells.items()}
    avg_codes, avg_cells = cells["avg"]
    units = [unit for _, unit in read["avg"]]
    unit_of = np.array([k if unit else -1 for k, unit in enumerate(units)] + [-1], dtype="int64")
    n = len(kernel_id)
    out = pd.DataFrame(
        {
            "stage": bounded_names.coded_strings(np.zeros(n, dtype="int64"), [stage]),
            "kernel_id": kernel_id,
            "name": bounded_names.coded_strings(name_of, names),
            "section": bounded_names.coded_strings(np.full(n, -1, dtype="int64"), []),
            "metric": bounded_names.coded_strings(*metric),
            "unit": bounded_names.coded_strings(unit_of[avg_codes], units),
            "value": number["avg"],
            "text": bounded_names.coded_strings(avg_codes, [str(c).strip() for c in avg_cells]),
            "invocations": pd.array(invocations, dtype="Int64"),
            "min": number["min"],
            "max": number["max"],
        },
        copy=False,
    )
    return schema.validate(out, schema.COUNTERS)


def _merged(parts: list[Codes]) -> Codes:
    """The codes of several tables' rows, in order, into one list of distinct cells."""
    seen: dict[object, int] = {}
    out = []
    for codes, found in parts:
        remap = np.array([seen.setdefault(c, len(seen)) for c in found] + [-1], dtype="int64")
        out.append(remap[codes])
    return (np.concatenate(out) if out else np.zeros(0, dtype="int64")), list(seen)


def _values(codes: np.ndarray, read: list[tuple[float, str]]) -> np.ndarray:
    """Each row's number (NaN for a missing cell, code -1)."""
    number = np.array([v for v, _ in read] + [math.nan], dtype="float64")
    return number[codes]
