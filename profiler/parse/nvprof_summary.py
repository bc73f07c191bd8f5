"""nvprof's summary tables (text and `--csv`) -> rows of checked numbers, for `nvprof`.

A text row is cut into its seven fields with `str.split` (never with a pattern, whose
backtracking made a run of spaces quadratic): an optional `GPU activities:` / `API calls:`
type, then `Time(%) Time Calls Avg Min Max Name`, the name being the rest of the line.

Every line of a table (from its header to the blank or `==` line that ends it) must be a
row; every number is checked (see `profiler.parse.values`) and named by line and column when
it is wrong. A table cut short is refused rather than imported with rows missing, since its
totals would silently understate the stage: a row cut mid-way lacks fields or a time unit,
and a table cut after whole rows has shares that no longer add up to 100% per row type.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from profiler.parse import csvtext, values
from profiler.parse.values import Origin

COLUMNS = ["type", "name", "time_pct", "calls", "total", "avg", "min", "max"]
_TIMES = {"total": "Time", "avg": "Avg", "min": "Min", "max": "Max"}
_CELLS = ["type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"]
_TIME_UNITS = ("ns", "us", "ms", "s")  # two-letter units first: `ms` also ends with `s`


def text_rows(origin: Origin, section: str) -> pd.DataFrame:
    """The rows of one text summary table (`origin.text` starts at its header).

    Args:
        origin: the table's text and place in its file.
        section: the row type of rows before the first typed one (`GPU activities` unless the
            table stands under an `==PID== API calls:` line).

    Returns: DataFrame with `COLUMNS`: times in ns (float), calls and shares as read.

    Raises: ParseError naming the line (and column) of the first bad row or cell.
    """
    cells = []
    for offset, line in enumerate(str(origin.text).split("\n")[1:], start=1):
        if line.strip():
            kind, fields = _split_row(line, section, origin, origin.first_line + offset)
            cells.append([kind, *fields])
            section = kind
    raw = pd.DataFrame(cells, columns=_CELLS, dtype="string")
    pct = raw["Time(%)"]
    not_pct = np.flatnonzero(~pct.str.endswith("%").fillna(False).to_numpy(dtype=bool))
    if len(not_pct):
        row = int(not_pct[0])
        raise origin.cell_error(row, "Time(%)", f"{pct.iloc[row]!r} is not a percentage")
    out = {
        "type": raw["type"],
        "name": raw["Name"],
        "time_pct": values.numbers(
            pct.str.slice(0, -1), origin, "Time(%)", values.SHARE, shown=pct
        ),
        "calls": values.numbers(raw["Calls"], origin, "Calls", values.COUNT),
    }
    for field, column in _TIMES.items():
        out[field] = _times(raw[column], origin, column)
    rows = pd.DataFrame(out, columns=COLUMNS)
    _check_shares(rows, origin, resolution=0.01)
    return rows


def csv_rows(origin: Origin, section: str) -> pd.DataFrame:
    """The rows of one `nvprof --csv` summary table, times converted by its units row
    (`,%,ms,,us,us,ms,`).

    Returns: DataFrame with `COLUMNS`, as `text_rows`.

    Raises: ParseError for a repeated column, a missing units row, a truncated last row or a
        bad cell (named by line and column).
    """
    header = csvtext.header_cells(str(origin.text).split("\n", 1)[0])
    csvtext.check_header(header, origin.path, origin.expected)
    raw = csvtext.read_csv_text(origin.text, origin.path, origin.expected)
    if len(raw) < 1 or str(raw["Time(%)"].iloc[0]).strip() != "%":
        raise origin.error(f"line {origin.first_line + 1}: no units row (`,%,ms,,us,...`)")
    units, raw = raw.iloc[0].fillna(""), raw.iloc[1:].reset_index(drop=True)
    csvtext.check_last_row(origin, len(header), len(raw) - 1)
    out = {
        "type": raw["Type"] if "Type" in raw else pd.Series(section, index=raw.index),
        "name": raw["Name"],
        "time_pct": values.numbers(raw["Time(%)"], origin, "Time(%)", values.SHARE),
        "calls": values.numbers(raw["Calls"], origin, "Calls", values.COUNT),
    }
    for field, column in _TIMES.items():
        factor = csvtext.time_factor(str(units[column]), origin.path, column)
        out[field] = values.numbers(raw[column], origin, column, values.TIME, factor)
    rows = pd.DataFrame(out, columns=COLUMNS)
    _check_shares(rows, origin, resolution=1e-6)
    return rows


def _split_row(line: str, section: str, origin: Origin, number: int) -> tuple[str, list[str]]:
    """(row type, its seven fields) of one text row.

    Raises: ParseError naming line `number` when it is no summary row.
    """
    body, kind = line.strip(), section
    if body[:1].isalpha():  # `GPU activities:` or `API calls:` before the first field
        kind, sep, body = body.partition(":")
        if not sep or "%" in kind:
            raise origin.error(f"line {number}: not a summary row")
        kind, body = kind.strip(), body.strip()
    fields = body.split(None, 6)
    if len(fields) < 7:
        raise origin.error(
            f"line {number}: a summary row has 7 fields (Time(%), Time, Calls, Avg, Min, Max, "
            f"Name), this one {len(fields)} (truncated file?)"
        )
    return kind, fields


def _times(cells: pd.Series, origin: Origin, column: str) -> pd.Series:
    """`1.8260ms`, `928ns`, ... -> float ns, each checked."""
    unit = pd.Series("", index=cells.index, dtype="string")
    for suffix in _TIME_UNITS:
        hit = (unit == "").to_numpy(dtype=bool) & cells.str.endswith(suffix).fillna(False)
        unit = unit.mask(hit, suffix)
    missing = np.flatnonzero((unit == "").to_numpy(dtype=bool))
    if len(missing):
        row = int(missing[0])
        raise origin.cell_error(row, column, f"{cells.iloc[row]!r} is not a time such as 1.8260ms")
    number = pd.Series(
        [c[: -len(u)] for c, u in zip(cells, unit, strict=True)], index=cells.index, dtype="string"
    )
    factor = unit.map(csvtext.NS_PER_UNIT).to_numpy(dtype="float64")
    return values.numbers(number, origin, column, values.TIME, factor, shown=cells)


def _check_shares(rows: pd.DataFrame, origin: Origin, resolution: float) -> None:
    """Per row type, the rows' Time(%) add up to 100 (a table cut after whole rows does not)."""
    for kind, group in rows.groupby("type", sort=False):
        values.check_shares(group["time_pct"], resolution, origin, str(kind))
