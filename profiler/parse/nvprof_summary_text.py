"""nvprof's text summary tables -> rows of checked numbers (`text_rows`).

A text row is cut into its seven fields with `str.split` (never with a pattern, whose
backtracking made a run of spaces quadratic): an optional `GPU activities:` / `API calls:`
type, then `Time(%) Time Calls Avg Min Max Name`, the name being the rest of the line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiler.errors import ParseError
from profiler.parse import (
    byte_spans,
    csvtext,
    lines,
    nvprof_summary_cells,
    nvprof_wrapped,
    summary_keys,
    tokens,
    values,
)
from profiler.parse.nvprof_summary_cells import COLUMNS
from profiler.parse.table_origin import Origin


@dataclass(frozen=True)
class Names:
    """The names of a text table's rows as its parser found them: each one's length, and all as
    fixed-width bytes (`S`: ASCII without a NUL, so they sort as the text does)."""

    sizes: np.ndarray
    text: np.ndarray


def text_rows(
    origin: Origin, section: str, raw: memoryview | None = None, table: lines.Lines | None = None
) -> pd.DataFrame:
    """`text_rows_named` without the names' lengths and bytes."""
    return text_rows_named(origin, section, raw, table)[0]


def text_rows_named(
    origin: Origin, section: str, raw: memoryview | None = None, table: lines.Lines | None = None
) -> tuple[pd.DataFrame, Names | None]:
    """The rows of one text summary table (`origin.text` starts at its header).

    Given its lines with their leads, the rows are read from the bytes by the keys of their
    fields (`summary_keys`); else, or when that path does not take the table as it is, every
    row is cut into tokens at once (`tokens.split`) and its numbers read from them (the rare
    cell that is not a plain decimal, or a table that is not ASCII, as before, one by one).

    Args:
        origin: the table's text and place in its file (its text may be left to `origin.cut`).
        section: the row type of rows before the first typed one (`GPU activities` unless the
            table stands under an `==PID== API calls:` line).
        raw: the table's bytes when the file is ASCII (its tokens are then found without
            encoding its text).
        table: the table's lines and their leads (`parse.lines`, offsets in `raw`), when known.

    A table refused as it is is read again with the names a log broke onto the next line
    joined to their rows (`nvprof_wrapped`), when it has such lines.

    Returns: DataFrame with `COLUMNS`: times in ns (float), calls and shares as read; and, when
        they were cut out of the bytes at once, its names' lengths and bytes (`Names`), which
        spare `summary_tables` measuring and encoding them again.

    Raises: ParseError naming the line (and column) of the first bad row or cell (of the table
        as it is, when joining broken names does not mend it).
    """
    try:
        keyed = None if table is None else summary_keys.scan(table)
        if keyed is not None and table is not None:
            return _keyed_rows(keyed, np.frombuffer(table.data, dtype=np.uint8), section, origin)
        origin = origin.with_text()
        return _token_rows(origin, section, raw)
    except ParseError as refused:
        origin = origin.with_text()
        unit_rows = _unit_rows(origin, section)
        if unit_rows is not None:
            return unit_rows, None
        whole = nvprof_wrapped.joined(origin)
        if whole is None:
            raise
        try:
            return _token_rows(whole, section, None)
        except ParseError:
            raise refused from None


def _keyed_rows(
    rows: summary_keys.KeyedRows, codes: np.ndarray, section: str, origin: Origin
) -> tuple[pd.DataFrame, Names | None]:
    """`text_rows_named` of the rows `summary_keys.scan` read."""
    sections = [section] + [kind for _, kind in rows.types]
    changes = [-1] + [row for row, _ in rows.types]
    count = len(rows.offsets)
    numbers = np.empty((6, count), dtype="float64")
    for j, (k, read) in enumerate(_readers(origin)):
        numbers[j] = _by_key(rows.keys, k, read)
    names, named = _names(codes, rows.name_start, rows.name_end - rows.name_start, True)
    return _frame(numbers, names, named, sections, changes, origin)


def _token_rows(
    origin: Origin, section: str, raw: memoryview | None
) -> tuple[pd.DataFrame, Names | None]:
    """`text_rows_named` of rows cut into tokens."""
    text = str(origin.text)
    after = text.find("\n") + 1  # the rows follow the header line
    cut = tokens.split_lines(text, raw) if after else tokens.split_lines("")  # row 0: the header
    if cut is None:
        return _rows_one_by_one(text[after:].split("\n"), section, origin), None
    offsets = np.flatnonzero(cut.count[1:] > 0)  # the rows of the body; blank lines are no rows
    cut = cut.rows(offsets + 1)
    initial = cut.codes[cut.start[cut.index(0)]] | 32  # lower case
    typed = np.flatnonzero((initial >= ord("a")) & (initial <= ord("z"))).tolist()
    sections, changes, skip, wrong = [section], [-1], np.zeros(len(offsets), dtype="int64"), None
    for i in typed:  # `GPU activities:` or `API calls:` before the first field
        kind, sep, rest = _line(text, cut, i).strip().partition(":")
        if not sep or "%" in kind:
            wrong = i
            break
        if rest[:1] and not rest[:1].isspace():  # `API calls:100.00%`: no token ends at `:`
            return _rows_one_by_one(text[after:].split("\n"), section, origin), None
        sections.append(kind.strip())
        changes.append(i)
        skip[i] = len((kind + ":").split())  # the tokens before the fields
    cut = cut.rows(np.arange(len(offsets)), skip)
    count = cut.count
    short = np.flatnonzero(count < 7)
    if wrong is not None and (not len(short) or wrong <= short[0]):
        raise origin.error(f"line {origin.first_line + offsets[wrong] + 1}: not a summary row")
    if len(short):
        found = min(int(count[short[0]]), 7)
        raise origin.error(
            f"line {origin.first_line + offsets[short[0]] + 1}: a summary row has 7 fields "
            f"(Time(%), Time, Calls, Avg, Min, Max, Name), this one {found} (truncated file?)"
        )
    keyed = "\0" not in text  # a token's first 8 bytes are then its key (`_by_value`)
    numbers = np.empty((6, len(offsets)), dtype="float64")  # the numeric columns, one block
    for j, (k, read) in enumerate(_readers(origin)):
        numbers[j] = _by_value(cut, k, keyed, read)
    names, named = _rest(cut, 6, keyed)
    return _frame(numbers, names, named, sections, changes, origin)


_Read = Callable[[tokens.Tokens, "pd.Index | None"], pd.Series]


def _readers(origin: Origin) -> list[tuple[int, _Read]]:
    """Per numeric column (`COLUMNS[2:]`), the token it is read from and how it is read (all
    rows for None, else the rows numbered by the index)."""

    def shares(c: tokens.Tokens, i: pd.Index | None) -> pd.Series:
        return nvprof_summary_cells.token_shares(c, origin, i)

    def calls(c: tokens.Tokens, i: pd.Index | None) -> pd.Series:
        return nvprof_summary_cells.token_numbers(c, 2, 0, origin, "Calls", values.COUNT, 1.0, i)

    out: list[tuple[int, _Read]] = [(0, shares), (2, calls)]
    for column, k in zip(nvprof_summary_cells.TIMES.values(), (1, 3, 4, 5), strict=True):

        def read(c: tokens.Tokens, i: pd.Index | None, k: int = k, column: str = column):
            return nvprof_summary_cells.token_times(c, k, origin, column, i)

        out.append((k, read))
    return out


def _frame(
    numbers: np.ndarray,
    names: list[str],
    named: Names | None,
    sections: list[str],
    changes: list[int],
    origin: Origin,
) -> tuple[pd.DataFrame, Names | None]:
    """The rows as `text_rows_named` gives them, from their numeric columns (`COLUMNS[2:]`, one
    row each), names, and types (rows from `changes[j] + 1` on are of type `sections[j]`).

    Raises: ParseError when a type's shares add up to more than 100% (less: `TrimmedTable`)."""
    which = np.searchsorted(np.array(changes), np.arange(numbers.shape[1]), side="right") - 1
    frame = pd.DataFrame(numbers.T, columns=COLUMNS[2:], copy=False)
    frame.insert(0, "name", pd.Series(names, dtype="string"))
    frame.insert(0, "type", pd.Series(pd.array(sections, dtype="string").take(which)))
    _check_shares_of(frame["time_pct"].to_numpy(), sections, changes, which, origin)
    return frame, named


def _check_shares_of(
    shares: np.ndarray, sections: list[str], changes: list[int], which: np.ndarray, origin: Origin
) -> None:
    """`nvprof_summary_cells.check_shares` of a text table whose rows from `changes[j] + 1` on
    are of type `sections[j]` (`which`: each row's j)."""
    group: list[int] = []  # each part's row type (-1: a part without rows)
    labels: dict[str, int] = {}  # the row types in order of first appearance
    for j, kind in enumerate(sections):
        empty = j + 1 < len(changes) and changes[j + 1] == max(changes[j], 0)  # typed row 0
        group.append(-1 if empty else labels.setdefault(kind, len(labels)))
    rows = np.asarray(group)[which]
    for label, g in labels.items():
        of = rows == g
        first = int(np.argmax(of)) if len(of) else 0
        values.check_shares(pd.Series(shares[of]), 0.01, origin, label, first)


_REST_BYTES = 64 * 2**20  # the most bytes `_rest` copies at once


def _rest(cut: tokens.Tokens, k: int, keyed: bool = False) -> tuple[list[str], Names | None]:
    """`cut.rest(k)` of rows that all have more than k tokens: each row's rest copied out of the
    bytes at once, a newline after each, and split (no slicing of the text per row); and, when
    so copied from a text without a NUL (`keyed`), their `Names`."""
    start = cut.start[cut.first + k]
    width = cut.end[cut.first + cut.count - 1] - start
    if not len(start) or len(start) * (int(width.max(initial=0)) + 1) > _REST_BYTES:
        return cut.rest(k), None
    return _names(cut.codes, start, width, keyed)


def _names(
    codes: np.ndarray, start: np.ndarray, width: np.ndarray, keyed: bool
) -> tuple[list[str], Names | None]:
    """The ASCII names `codes[start[i] : start[i] + width[i]]` (widths from 1), copied out at
    once, a NUL after each (a newline when a name holds a NUL), and split (one by one past
    `_REST_BYTES`); and, when so copied, `keyed` and none holds a NUL, their `Names`."""
    wide = int(width.max(initial=0))
    if not len(start) or len(start) * (wide + 1) > _REST_BYTES:
        view, stops = codes.data, (start + width).tolist()
        return [str(view[a:b], "ascii") for a, b in zip(start.tolist(), stops, strict=True)], None
    if int(start.max(initial=0)) + wide + 1 > len(codes):
        codes = np.concatenate((codes, np.zeros(wide + 1, dtype=np.uint8)))
    window = np.ndarray((len(codes) - wide,), dtype=f"V{wide + 1}", buffer=codes, strides=(1,))
    cells = window[start].view(np.uint8).reshape(len(start), wide + 1)  # one copy per name
    cells[:, wide] = 0
    keep = np.arange(wide + 1, dtype=np.int32) <= width.astype(np.int32)[:, None]  # and a byte
    cells[:, :wide] *= keep[:, 1:]  # the bytes past each name made 0: fixed-width bytes that
    joined = cells[keep].tobytes()  # sort as the names do, a NUL after each name
    if joined.count(b"\0") == len(start):  # none in a name
        named = Names(width, cells.view(f"S{wide + 1}").ravel()) if keyed else None
        return joined.decode("ascii").split("\0")[:-1], named
    cells[np.arange(len(start)), width] = ord("\n")
    return cells[keep].tobytes().decode("ascii").split("\n")[:-1], None


def _by_value(
    cut: tokens.Tokens,
    k: int,
    keyed: bool,
    read: Callable[[tokens.Tokens, pd.Index | None], pd.Series],
) -> pd.Series:
    """`read(cut, None)`, a column read from each row's k-th token (every row has one), run on
    the first row of each distinct token only (`read(rows, their numbers)`: a message names the
    first bad row, as before) and spread to the rows that repeat it: a summary's columns repeat
    few values. A token of at most 8 bytes is its own key when the text has no NUL (`keyed`)."""
    codes = cut.codes
    at = cut.first + k
    start, end = _spans(cut, at)
    width = end - start
    size = len(codes)
    if not keyed or not len(at) or size < 8 or int(width.max()) > 8 or int(start.max()) > size - 8:
        return read(cut, None)
    view = np.ndarray((size - 7,), dtype="<u8", buffer=codes, strides=(1,))
    rows, distinct = pd.factorize(view[start] & nvprof_summary_cells.BELOW[width])
    if len(distinct) * 2 > len(rows):
        return read(cut, None)
    seen = np.maximum.accumulate(rows)  # codes come in order of first appearance
    first = np.flatnonzero(np.append(True, seen[1:] > seen[:-1]))  # the first row of each
    got = read(cut.rows(first), pd.Index(first))
    return pd.Series(got.to_numpy(dtype="float64")[rows], dtype="float64")


def _by_key(keys: np.ndarray, k: int, read: _Read) -> np.ndarray:
    """`_by_value` of field k of rows read by `summary_keys`: `read` run on the first row of
    each distinct key, or on every row when most keys differ."""
    rows, distinct = pd.factorize(keys[k])
    if len(distinct) * 2 > len(rows):
        got = read(summary_keys.field_tokens(keys, None), None)
        return got.to_numpy(dtype="float64")
    first = byte_spans.first_rows(rows)  # (codes numbered in order of first appearance)
    got = read(summary_keys.field_tokens(keys, first), pd.Index(first))
    out: np.ndarray = got.to_numpy(dtype="float64")[rows]
    return out


_SPAN = np.dtype([("start", "<i8"), ("end", "<i8")])


def _spans(cut: tokens.Tokens, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`cut.start[at]`, `cut.end[at]`, read in one pass when they interleave in one array (as
    `tokens` makes them: the edges, a start then an end)."""
    start, end = cut.start, cut.end
    edges = start.base
    if (
        isinstance(edges, np.ndarray)
        and end.base is edges
        and edges.dtype == np.int64
        and edges.ndim == 1
        and edges.flags.c_contiguous
        and len(edges) == 2 * len(start) == 2 * len(end)
        and start.strides == end.strides == (16,)
        and start.ctypes.data == edges.ctypes.data
        and end.ctypes.data == edges.ctypes.data + 8
    ):
        pairs = edges.view(_SPAN)[at]
        return pairs["start"], pairs["end"]
    return start[at], end[at]


def _line(text: str, cut: tokens.Tokens, row: int) -> str:
    """Row `row` of `cut` (the rows of `text`): from its first token to its newline."""
    start = int(cut.start[cut.first[row]])
    stop = text.find("\n", start)
    return text[start:] if stop < 0 else text[start:stop]


def _unit_rows(origin: Origin, section: str) -> pd.DataFrame | None:
    """`text_rows` of a table with a units row under its header and plain numbers below it, or
    None when it has none. `nvprof -u ms` (`--normalized-time-unit`) before CUDA 9 printed
    `%  ms  ms  ms  ms` there (Time(%), then Time, Avg, Min, Max: Calls has no unit) and its
    times without units; the fast paths refuse such a table (its units row is no row)."""
    body = origin.full_text().partition("\n")[2]
    units, _, rows = body.partition("\n")
    cells = units.split()
    if len(cells) != 5 or cells[0] != "%" or any(c not in _UNIT_ROW for c in cells[1:]):
        return None
    factors = dict(
        zip(nvprof_summary_cells.TIMES, (csvtext.NS_PER_UNIT[c] for c in cells[1:]), strict=True)
    )
    lines = ["", *rows.split("\n")]  # the units row, blank: line numbers count from the header
    return _rows_one_by_one(lines, section, dataclasses.replace(origin, skip=1), factors)


_UNIT_ROW = ("ns", "us", "ms", "s")  # the units `nvprof -u` takes


def _rows_one_by_one(
    lines: list[str], section: str, origin: Origin, units: dict[str, float] | None = None
) -> pd.DataFrame:
    """`text_rows` of rows cut one by one with `str.split` (rows that are not ASCII, or below a
    units row: then `units` holds the ns per unit of each time column, keyed as
    `nvprof_summary_cells.TIMES`)."""
    types, rows = [], []
    for offset, line in enumerate(lines, start=1):
        body = line.strip()
        if not body:
            continue
        if body[0].isalpha():  # `GPU activities:` or `API calls:` before the first field
            section, body = nvprof_summary_cells.row_type(body, origin, origin.first_line + offset)
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
        "time_pct": nvprof_summary_cells.shares(pct, origin),
        "calls": values.numbers(pd.Series(calls, dtype=object), origin, "Calls", values.COUNT),
    }
    for field, cells in zip(nvprof_summary_cells.TIMES, (total, avg, least, most), strict=True):
        column = pd.Series(cells, dtype=object)
        if units is None:
            out[field] = nvprof_summary_cells.times(
                column, origin, nvprof_summary_cells.TIMES[field]
            )
        else:
            out[field] = values.numbers(
                column, origin, nvprof_summary_cells.TIMES[field], values.TIME, units[field]
            )
    frame = pd.DataFrame(out, columns=COLUMNS)
    nvprof_summary_cells.check_shares(frame, origin, resolution=0.01)
    return frame
