"""The column text of `nsys stats` (no `--format csv`): one report table -> nsys fields.

A table is a header line, a rule of dash runs (one run per column) and the rows:

     Time (%)  Total Time (ns)  Instances  Avg (ns)   ...  Name
     --------  ---------------  ---------  ---------  ...  -------------------------
        100.0          883,936          1  883,936.0  ...  inc(int *, unsigned long)

The rule gives each column's place. Numbers are right-aligned and end where their run ends;
text is left-aligned; the last column (a name) may run past its rule; an empty cell is blank
(a copy has no grid). Every version from 2019.x to 2025.x writes this layout; headers differ
(`Time(%)`, `Total Time` with the unit in the heading, `Start(sec)`, ...) and `nsys_fields`
reads them all. Numbers carry thousands separators (`1,400,294`); `None` means no value.

Rows of one width (as nsys pads them) are read by `nsys_rows` with NumPy; anything it does not
read is cut at the columns by `nsys_cut`; where the columns lie is `nsys_rule`'s.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from functools import partial

import pandas as pd

from profiler.errors import ParseError
from profiler.parse import (
    cell_quotes,
    decimal_comma,
    digit_groups,
    nsys_cut,
    nsys_fields,
    nsys_notes,
    nsys_rows,
    nsys_rule,
    reader_notes,
)
from profiler.parse.nsys_rule import Span
from profiler.parse.table_origin import Origin

_NUMBER_WORD = re.compile(r"[0-9][0-9,]{0,40}(?:\.[0-9]{1,20})?|None")  # a retyped cell


def read_table(
    block: str | Callable[[], str],
    report: str,
    origin: Origin,
    units: dict[str, str] | None = None,
    source: tuple[bytes, int, int] | None = None,
) -> pd.DataFrame:
    """One report's column text (header, rule, rows) -> nsys fields (see `nsys_fields.convert`).

    Args:
        block: the table's text, header line first, the rule second; or what gives it, called
            only when the rows are not read from `source` (a million rows cost a fifth of a
            second to decode).
        report: the canonical report name.
        origin: where the table is in its file (its text, or its `cut`, is `block`'s; `skip`
            1: the rule).
        units: units that a heading gives for fields whose header has none.
        source: the file's bytes and where `block` starts and ends in them, when they are
            `block`'s characters one for one (ASCII): the rows are then read from them.

    Raises: ParseError for a missing or repeated column, a cell outside its column, or a cell
        that is no number in range (naming its line and column).
    """
    text: str | None = None  # the block's text, made only when it is needed
    if source is None:
        text = _made(block)
        header, rule, at = nsys_rule.three_parts(text)
        rows = (text.encode("ascii"), at, len(text)) if text.isascii() else None
    else:
        header, rule, at = nsys_rule.three_parts(nsys_rule.head(source))
        rows = (source[0], source[1] + at, source[2])
    columns = nsys_rule.columns_under(header, rule)
    cells = nsys_rule.header_cells(header, columns)
    cols = nsys_fields.columns(cells, report, origin)
    if "" in cells:  # (nsys prints a header word over every run of its rule)
        _check_unheaded((text if text is not None else _made(block))[at:], columns, cells, origin)
    raw = None if rows is None else _fast_rows(*rows, columns, cells, cols)
    if raw is None:
        rest = (text if text is not None else _made(block))[at:]
        if not rest or rest.isspace():  # (`strip` would copy the rows)
            used = [i for i, cell in enumerate(cells) if cell in cols]
            raw = pd.DataFrame({f"c{i}": pd.Series(dtype="string") for i in used})
        else:
            raw = _rows_or_words(rest, columns, cells, cols, origin)
    raw = _strip_labels(_by_header(raw, cells, cols), cols)
    if _has_hash(text, at, rows):  # (a scan in C: a million rows' names cost 0.2 s to check)
        raw = nsys_notes.without_notes(raw, cells, columns[-1][1] - columns[-1][0], cols, origin)
    try:
        return nsys_fields.convert(raw, cols, report, origin, units)
    except ParseError as exc:
        made = block if text is None else text
        as_text = partial(_text_cells, made, at, columns, cells, cols, origin)
        comma = _decimal_comma(raw, as_text, cols, report, origin, exc)
        if comma is not None:
            return nsys_fields.convert(comma.cells, cols, report, origin, units, comma.shares_cut)
        if (hint := cell_quotes.locale_hint(exc.detail)) is not None:
            raise ParseError(exc.path, exc.expected, hint) from None
        raw = digit_groups.ungrouped(raw, cols, exc)
    return nsys_fields.convert(raw, cols, report, origin, units)


def _has_hash(text: str | None, at: int, rows: tuple[bytes, int, int] | None) -> bool:
    """Whether the rows (in `text` from `at`, or the ASCII bytes `rows`) hold a `#` anywhere."""
    if rows is not None:
        return rows[0].find(b"#", rows[1], rows[2]) >= 0
    return text is not None and text.find("#", at) >= 0


def _decimal_comma(
    raw: pd.DataFrame,
    as_text: Callable[[], pd.DataFrame | None],
    cols: nsys_fields.Columns,
    report: str,
    origin: Origin,
    exc: ParseError,
) -> decimal_comma.Read | None:
    """The cells of a table that could not be read as they are (`exc`), read as nsys writes
    them in a locale with a decimal comma, said by a `reader_notes.ReadNote`; None when they are not
    written so. `as_text` gives the cells as text, for when a reader parsed some as numbers
    already (pandas reads `51859,821` as 51859821).

    Raises: as `decimal_comma.read`.
    """
    parsed = any(raw[col].dtype.kind in "iuf" for col in raw.columns)
    cells = as_text() if parsed else raw
    comma = None if cells is None else decimal_comma.read(cells, cols, exc)
    if comma is not None:
        line = origin.line(0)
        said = (
            f"line {line}: the {report} table's numbers are read with a decimal comma "
            f"({comma.decided!r}): nsys ran in a locale that writes them so"
        )
        warnings.warn(reader_notes.ReadNote(said, line), stacklevel=4)
    return comma


def _text_cells(
    block: str | Callable[[], str],
    at: int,
    columns: list[Span],
    cells: list[str],
    cols: nsys_fields.Columns,
    origin: Origin,
) -> pd.DataFrame | None:
    """The used cells of the rows of `block` (from `at`) as stripped text, by header, cut in
    Python (`nsys_cut.rows_in_python`: a table that was refused already); None when a cell runs
    outside its column."""
    try:
        raw = nsys_cut.rows_in_python(_made(block)[at:], columns, origin)
    except ParseError:
        return None
    return _by_header(raw, cells, cols)


def _by_header(raw: pd.DataFrame, cells: list[str], cols: nsys_fields.Columns) -> pd.DataFrame:
    """The columns of `raw` (`c0`, `c1`, ... by position) that profgen uses, named by their
    header cells."""
    used = [i for i, cell in enumerate(cells) if cell in cols]
    return raw[[f"c{i}" for i in used]].set_axis([cells[i] for i in used], axis=1)


def _made(block: str | Callable[[], str]) -> str:
    """A block's text, from the block or from what gives it."""
    return block if isinstance(block, str) else block()


def _fast_rows(
    data: bytes,
    at: int,
    end: int,
    columns: list[Span],
    cells: list[str],
    cols: nsys_fields.Columns,
) -> pd.DataFrame | None:
    """The rows `data[at:end]` (ASCII) as `nsys_cut.rows` reads them, read by `nsys_rows` when
    they are of the plain form it reads; else None."""
    if end <= at:
        return None
    fast = nsys_fields.fast_dtypes(cols)
    dtypes = {i: fast[cell] for i, cell in enumerate(cells) if cell in cols}
    return nsys_rows.read(data, at, columns, dtypes, end=end)


def _rows_or_words(
    rows: str,
    columns: list[Span],
    cells: list[str],
    cols: nsys_fields.Columns,
    origin: Origin,
) -> pd.DataFrame:
    """The rows cut at the columns (`nsys_cut.rows`); rows whose cells do not keep to the rule
    are read by their words instead, when that is unambiguous (`_words`)."""
    try:
        return nsys_cut.rows(rows, columns, cells, cols, origin)
    except ParseError:
        words = _words(rows, cells, cols)
        if words is not None:
            return words
        kept = _before_trailing_text(rows, columns, cells, cols)
        if kept is None:
            raise
    frame = nsys_cut.rows(rows[:kept], columns, cells, cols, origin)
    line = origin.line(sum(1 for row in rows[:kept].split("\n") if row.strip()) - 1) + 1
    shown = cell_quotes.shown_cell(rows[kept:].strip().split("\n", 1)[0], 60)
    said = (
        f"line {line}: text right under the table's last row ({shown}: a terminal capture with "
        "no blank line after the output) is no row of it: left out"
    )
    warnings.warn(reader_notes.ReadNote(said, line), stacklevel=4)
    return frame


def _before_trailing_text(
    rows: str, columns: list[Span], cells: list[str], cols: nsys_fields.Columns
) -> int | None:
    """Where the rows end when the lines after them are text (a prompt or a log line typed
    right under the table, no blank line between: `exec`, `$ ls`), not rows: every line from
    there on holds no digit in the first column, a number in every row nsys prints (the text
    of a table whose first column is text, a name, is never cut). None when no line is such
    text, or the first line already is."""
    field = cols.get(cells[0], ("", ""))[0] if cells else ""
    if not field or field in nsys_fields.TEXT:
        return None
    start, end = columns[0]
    lines = rows.split("\n")
    k = len(lines)
    while k and not any(ch.isdigit() for ch in lines[k - 1][: end + 1]):
        k -= 1
    if k == 0 or k == len(lines) or not "".join(lines[k:]).strip():
        return None
    return sum(len(line) + 1 for line in lines[:k])


def _words(rows: str, cells: list[str], cols: nsys_fields.Columns) -> pd.DataFrame | None:
    """Rows retyped by hand, their cells off the rule's columns (a course handout's `nsys
    profile --stats=true` example: `    73.2   1135967766    20  56798388.3 ...`), read as
    words: every column but the last holds a number, one word each, and the last (the name)
    takes the rest of the row. None when a column before the last holds text, or a row has
    fewer words than columns (an empty cell: the words would not say which) or a word before
    the name that is no number (then the rule's error stands)."""
    fast = nsys_fields.fast_dtypes(cols)
    if any(fast.get(cell) == "category" for cell in cells[:-1]):
        return None
    out: list[list[str]] = [[] for _ in cells]
    for line in rows.splitlines():
        parts = line.split(None, len(cells) - 1)
        if not parts:
            continue
        if len(parts) < len(cells) or not all(map(_NUMBER_WORD.fullmatch, parts[:-1])):
            return None
        for i, part in enumerate(parts):
            out[i].append(part.strip())
    return pd.DataFrame({f"c{i}": pd.array(col, dtype="string") for i, col in enumerate(out)})


def _check_unheaded(rows: str, columns: list[Span], cells: list[str], origin: Origin) -> None:
    """Raise when a row holds text under a run of the rule with no header word over it: a
    paste that put a blank inside a long cell split its run in two (`----- ---` under
    `Operation`), and reading the columns that have a header would cut the cell (`[CUDA memcpy
    Device-` of `[CUDA memcpy Device- to-Host]`) without a word."""
    unheaded = [columns[i] for i, cell in enumerate(cells) if not cell]
    row = -1
    for line in rows.split("\n"):
        if not line.strip():
            continue
        row += 1
        held = next((line[a:b].strip() for a, b in unheaded if line[a:b].strip()), "")
        if held:
            raise origin.error(
                f"line {origin.line(row)}: {cell_quotes.shown_cell(held, 40)} lies under a run of "
                "the rule with no header over it (a blank pasted into a cell split its column?)"
            )


def _strip_labels(raw: pd.DataFrame, cols: nsys_fields.Columns) -> pd.DataFrame:
    """Text cells without the blanks that pad them to their column's width (a categorical's
    categories only, where that keeps them distinct)."""
    out = {}
    for col in raw.columns:
        series = raw[col]
        if isinstance(series.dtype, pd.CategoricalDtype):
            stripped = series.cat.categories.str.strip()
            if stripped.is_unique:
                series = series.cat.rename_categories(list(stripped))
            else:
                series = series.astype("string").str.strip()
        elif series.dtype.kind not in "iuf":
            series = series.astype("string").str.strip()
        out[col] = series
    return pd.DataFrame(out, index=raw.index, copy=False)  # (no copy into one block)
