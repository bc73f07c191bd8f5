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
_TWO_LETTER_UNITS = {unit: csvtext.NS_PER_UNIT[unit] for unit in ("ns", "us", "ms")}


def text_rows(origin: Origin, section: str) -> pd.DataFrame:
    """The rows of one text summary table (`origin.text` starts at its header).

    Args:
        origin: the table's text and place in its file.
        section: the row type of rows before the first typed one (`GPU activities` unless the
            table stands under an `==PID== API calls:` line).

    Returns: DataFrame with `COLUMNS`: times in ns (float), calls and shares as read.

    Raises: ParseError naming the line (and column) of the first bad row or cell.
    """
    types, rows = [], []
    for offset, line in enumerate(str(origin.text).split("\n")[1:], start=1):
        body = line.strip()  # one split per row: this loop is the parser's hot path
        if not body:
            continue
        if body[0].isalpha():  # `GPU activities:` or `API calls:` before the first field
            section, body = _row_type(body, origin, origin.first_line + offset)
        fields = body.split(None, 6)
        if len(fields) < 7:
            raise origin.error(
                f"line {origin.first_line + offset}: a summary row has 7 fields (Time(%), Time, "
                f"Calls, Avg, Min, Max, Name), this one {len(fields)} (truncated file?)"
            )
        types.append(section)
        rows.append(fields)
    pct, total, calls, avg, least, most, names = np.array(rows, dtype=object).reshape(-1, 7).T
    out = {
        "type": pd.Series(types, dtype="string"),
        "name": pd.Series(names, dtype="string"),
        "time_pct": _shares(pct, origin),
        "calls": values.numbers(pd.Series(calls, dtype=object), origin, "Calls", values.COUNT),
    }
    for field, cells in zip(_TIMES, (total, avg, least, most), strict=True):
        out[field] = times(pd.Series(cells, dtype=object), origin, _TIMES[field])
    frame = pd.DataFrame(out, columns=COLUMNS)
    _check_shares(frame, origin, resolution=0.01)
    return frame


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


def _row_type(body: str, origin: Origin, line: int) -> tuple[str, str]:
    """(`GPU activities`, the rest) of a row that starts with its type.

    Raises: ParseError naming the line when what precedes the first `:` is no row type.
    """
    kind, sep, rest = body.partition(":")
    if not sep or "%" in kind:
        raise origin.error(f"line {line}: not a summary row")
    return kind.strip(), rest


def _shares(cells: np.ndarray, origin: Origin) -> pd.Series:
    """`20.21%` -> 20.21, each checked."""
    bad = [row for row, cell in enumerate(cells) if not cell.endswith("%")]
    if bad:
        cell = values.shown_cell(cells[bad[0]])
        raise origin.cell_error(bad[0], "Time(%)", f"{cell} is not a percentage")
    numbers = pd.Series([cell[:-1] for cell in cells], dtype=object)
    shown = pd.Series(cells, dtype=object)
    return values.numbers(numbers, origin, "Time(%)", values.SHARE, 1.0, shown)


def times(cells: pd.Series, origin: Origin, column: str) -> pd.Series:
    """`1.8260ms`, `928ns`, `8.5s` -> float ns, each checked; the index of `cells` is kept (it
    numbers the data rows that messages name).

    Raises: ParseError naming the line and column of a cell that is no time.
    """
    text = cells.tolist()  # str cells (a summary's fields, a trace's distinct values)
    factor = np.array([_TWO_LETTER_UNITS.get(cell[-2:], 0.0) for cell in text], dtype="float64")
    seconds = factor == 0
    for row in np.flatnonzero(seconds):  # `8.56944s`, rare; or no unit at all
        if not text[row].endswith("s") or text[row].endswith(tuple(_TWO_LETTER_UNITS)):
            cell = values.shown_cell(text[row])
            label = cells.index[int(row)]
            raise origin.cell_error(int(label), column, f"{cell} is not a time such as 1.8260ms")
    factor[seconds] = csvtext.NS_PER_UNIT["s"]
    numbers = [cell[:-1] if one else cell[:-2] for cell, one in zip(text, seconds, strict=True)]
    shown = pd.Series(text, index=cells.index, dtype=object)
    return values.numbers(
        pd.Series(numbers, index=cells.index, dtype=object),
        origin,
        column,
        values.TIME,
        factor,
        shown,
    )


def _check_shares(rows: pd.DataFrame, origin: Origin, resolution: float) -> None:
    """Per row type, the rows' Time(%) add up to 100 (a table cut after whole rows does not)."""
    for kind, group in rows.groupby("type", sort=False):
        values.check_shares(group["time_pct"], resolution, origin, str(kind))
