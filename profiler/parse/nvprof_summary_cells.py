"""The cells of an nvprof summary -> checked numbers: times with their units (`1.8260ms`,
`928ns`, `8.5s`) and shares (`20.21%`), read once per distinct cell when the cells are single
tokens; a row's type (`GPU activities:`), and the check that each row type's shares add up.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from profiler.parse import cell_quotes, csvtext, tokens, values
from profiler.parse.table_origin import Origin

COLUMNS = ["type", "name", "time_pct", "calls", "total", "avg", "min", "max"]
TIMES = {"total": "Time", "avg": "Avg", "min": "Min", "max": "Max"}
_CELLS = ["type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"]
_TWO_LETTER_UNITS = {unit: csvtext.NS_PER_UNIT[unit] for unit in ("ns", "us", "ms")}


def token_numbers(
    cut: tokens.Tokens,
    k: int,
    drop: int | np.ndarray,
    origin: Origin,
    column: str,
    rule: values.Rule,
    factor: float | np.ndarray,
    index: pd.Index | None = None,
) -> pd.Series:
    """Each row's k-th token, less its last `drop` characters (a unit), as a checked number
    (`values.numbers`); messages quote the whole token. `index` numbers the data rows (default:
    the rows are the data rows)."""
    at = cut.index(k)
    rows = pd.RangeIndex(len(at)) if index is None else index
    start, end = cut.start[at], cut.end[at]
    number, fast = _decimals_by_value(cut.codes, start, end - drop)
    slow = np.flatnonzero(~fast)
    text = cut.text

    def shown(i: int) -> str:
        return text[int(start[i]) : int(end[i])]

    if len(slow):
        stops = (end - drop)[slow].tolist()
        again, present = values.parsed(
            [text[a:b] for a, b in zip(start[slow].tolist(), stops, strict=True)]
        )
        bad = np.flatnonzero(np.isnan(again) & present)
        if len(bad):
            at_bad = int(slow[bad[0]])
            cell = cell_quotes.shown_cell(shown(at_bad))
            raise origin.cell_error(int(rows[at_bad]), column, f"{cell} is not a number")
        number[slow] = again
    return values.checked(number, rows, origin, column, rule, factor, shown)


BELOW = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)  # low n bytes


def _decimals_by_value(
    codes: np.ndarray, start: np.ndarray, stop: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`tokens.decimals`, read once per distinct cell when every cell is at most 8 bytes (its
    bytes are then its key: the text holds no NUL byte); cells repeat in a summary's columns."""
    width = stop - start
    size = len(codes)
    if not len(start) or size < 8 or int(width.max()) > 8 or int(start.max()) > size - 8:
        return tokens.decimals(codes, start, stop)
    view = np.ndarray((size - 7,), dtype="<u8", buffer=codes, strides=(1,))
    keys = view[start] & BELOW[np.clip(width, 0, 8)]
    rows, distinct = pd.factorize(keys)
    if len(distinct) * 2 > len(rows):
        return tokens.decimals(codes, start, stop)
    seen = np.maximum.accumulate(rows)  # codes come in order of first appearance
    first = np.flatnonzero(np.append(True, seen[1:] > seen[:-1]))  # the first row of each
    number, fast = tokens.decimals(codes, start[first], stop[first])
    return number[rows], fast[rows]


def token_shares(cut: tokens.Tokens, origin: Origin, index: pd.Index | None = None) -> pd.Series:
    """`20.21%` -> 20.21 (`shares` on tokens); `index` as in `token_numbers`. Cells that all
    lack the `%` (nvprof before CUDA 6 printed `49.52`) are read as they are."""
    codes = cut.codes
    at = cut.index(0)
    marked = codes[cut.end[at] - 1] == ord("%")
    if len(marked) and not marked.any():
        return token_numbers(cut, 0, 0, origin, "Time(%)", values.SHARE, 1.0, index)
    bad = np.flatnonzero(~marked)
    if len(bad):
        cell = cell_quotes.shown_cell(cut.text[cut.start[at[bad[0]]] : cut.end[at[bad[0]]]])
        row = int(bad[0]) if index is None else int(index[bad[0]])
        raise origin.cell_error(row, "Time(%)", f"{cell} is not a percentage")
    return token_numbers(cut, 0, 1, origin, "Time(%)", values.SHARE, 1.0, index)


def token_times(
    cut: tokens.Tokens, k: int, origin: Origin, column: str, index: pd.Index | None = None
) -> pd.Series:
    """`1.8260ms`, `928ns`, `8.5s` -> float ns (`times` on tokens); `index` as in
    `token_numbers`."""
    rows = pd.RangeIndex(len(cut.count)) if index is None else index
    codes = cut.codes
    at = cut.index(k)
    start, end = cut.start[at], cut.end[at]
    last = codes[end - 1]
    before = np.where(end - start >= 2, codes[np.maximum(end - 2, 0)], 0)
    factor = np.zeros(len(at), dtype="float64")
    for unit, ns in _TWO_LETTER_UNITS.items():
        factor[(before == ord(unit[0])) & (last == ord("s"))] = ns
    seconds = factor == 0
    bad = np.flatnonzero(seconds & (last != ord("s")))
    if len(bad):
        cell = cell_quotes.shown_cell(cut.text[start[bad[0]] : end[bad[0]]])
        raise origin.cell_error(int(rows[bad[0]]), column, f"{cell} is not a time such as 1.8260ms")
    factor[seconds] = csvtext.NS_PER_UNIT["s"]
    drop = np.where(seconds, 1, 2)
    return token_numbers(cut, k, drop, origin, column, values.TIME, factor, rows)


def row_type(body: str, origin: Origin, line: int) -> tuple[str, str]:
    """(`GPU activities`, the rest) of a row that starts with its type.

    Raises: ParseError naming the line when what precedes the first `:` is no row type.
    """
    kind, sep, rest = body.partition(":")
    if not sep or "%" in kind:
        raise origin.error(f"line {line}: not a summary row")
    return kind.strip(), rest


def shares(cells: np.ndarray, origin: Origin) -> pd.Series:
    """`20.21%` -> 20.21, each checked; cells that all lack the `%` (nvprof before CUDA 6) are
    read as they are."""
    bad = [row for row, cell in enumerate(cells) if not cell.endswith("%")]
    if bad and len(bad) < len(cells):
        cell = cell_quotes.shown_cell(cells[bad[0]])
        raise origin.cell_error(bad[0], "Time(%)", f"{cell} is not a percentage")
    numbers = pd.Series([cell if bad else cell[:-1] for cell in cells], dtype=object)
    shown = pd.Series(cells, dtype=object)
    return values.numbers(numbers, origin, "Time(%)", values.SHARE, 1.0, shown)


def times(cells: pd.Series, origin: Origin, column: str) -> pd.Series:
    """`1.8260ms`, `928ns`, `8.5s` -> float ns, each checked; the index of `cells` is kept (it
    numbers the data rows that messages name).

    Raises: ParseError naming the line and column of a cell that is no time.
    """
    text = cells.tolist()  # str cells (a summary's fields, a trace's distinct values)
    cut = tokens.split(text)
    if cut is not None and bool((cut.count == 1).all()):  # each cell one token: all at once
        return token_times(cut, 0, origin, column, cells.index)
    factor = np.array([_TWO_LETTER_UNITS.get(cell[-2:], 0.0) for cell in text], dtype="float64")
    seconds = factor == 0
    for row in np.flatnonzero(seconds):  # `8.56944s`, rare; or no unit at all
        if not text[row].endswith("s") or text[row].endswith(tuple(_TWO_LETTER_UNITS)):
            cell = cell_quotes.shown_cell(text[row])
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


def check_shares(rows: pd.DataFrame, origin: Origin, resolution: float) -> None:
    """Per row type, the rows' Time(%) add up to 100 (`values.check_shares`: a table cut after
    whole rows adds up to less, said by a `TrimmedTable` warning)."""
    for kind, group in rows.groupby("type", sort=False):
        values.check_shares(group["time_pct"], resolution, origin, str(kind), int(group.index[0]))
