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

A cell must stay inside its column: text in the gap between two columns is refused with its
line, since it would otherwise shift a number into the wrong field. Rows of one width (as nsys
pads them) are read by `nsys_rows` with NumPy; anything it does not read (or rows of several
widths) is cut with numpy and parsed by pandas' C reader, with no Python per row, unless a row
holds non-ASCII text before its last column (then Python cuts the rows: still linear, slower).
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from collections.abc import Callable
from functools import partial

import numpy as np
import pandas as pd

from profiler.errors import ParseError
from profiler.parse import decimal_comma, digit_groups, nsys_fields, nsys_notes, nsys_rows, values
from profiler.parse.values import Origin

Span = tuple[int, int]
_DASHES = re.compile(r"-+")
MAX_COLUMNS = 256
MAX_GAP = 16
_SHIFT = 2  # how far left of its dash run a header word may start (`columns_under`)
_CHUNK_BYTES = 1 << 20
_NUMBER_WORD = re.compile(r"[0-9][0-9,]{0,40}(?:\.[0-9]{1,20})?|None")  # a retyped cell
# Bytes that can stand for the column separator: one the rows do not hold is used.
_DELIMITERS = (0x1F, 0x1E, 0x1D, 0x1C, 0x1B, 0x01)


def is_rule(line: str) -> bool:
    """A line of dash runs and blanks only, as nsys rules its tables: 2 to `MAX_COLUMNS` runs,
    at most `MAX_GAP` blanks apart (nsys puts two). Anything wider is no table of nsys, and the
    bounds keep the work of cutting rows (per column and per blank between columns) small."""
    text = line.strip()
    if not text.startswith("-") or text.strip("- ") or " " not in text:
        return False
    runs = spans(text)
    gaps = (b[0] - a[1] for a, b in zip(runs, runs[1:], strict=False))
    return len(runs) <= MAX_COLUMNS and max(gaps) <= MAX_GAP


def spans(rule: str) -> list[Span]:
    """The (start, end) of every dash run of a rule line."""
    return [m.span() for m in _DASHES.finditer(rule)]


def header_cells(header: str, columns: list[Span]) -> list[str]:
    """The header's cell over each column: from the column's start to the next one's.

    nsys starts its header where the rule's first dash run starts. A header that starts left
    of it lost its leading blanks to a paste (a selection from a terminal that begins at the
    first word: `Time (%)  Total Time (ns) ...` over ` --------  ---------------`), and is read
    as if they were there."""
    header = _padded(header, columns)
    starts = [a for a, _ in columns] + [max(len(header), columns[-1][1])]
    return [header[starts[i] : starts[i + 1]].strip() for i in range(len(columns))]


def columns_under(header: str, rule: str) -> list[Span]:
    """Each column's place: the rule's dash runs (`spans`), a run widened to the left where a
    header word starts at most `_SHIFT` characters before it, in the blanks between two runs
    (`StdDev (ns)   Name` over `------------   -----`: a copy, such as a document converted
    from a PDF, moved the rule by a character). nsys never starts a header word there: its
    header cells lie inside their runs, so a table it printed keeps its rule's places."""
    runs = spans(rule)
    if not runs:
        return runs
    header = _padded(header, runs)
    out: list[Span] = []
    for start, end in runs:
        word = start
        while 0 < word < len(header) and header[word] != " " and header[word - 1] != " ":
            word -= 1
        shifted = word < start and start - word <= _SHIFT and (not out or word > out[-1][1])
        out.append((word if shifted else start, end))
    return out


def _padded(header: str, columns: list[Span]) -> str:
    """`header` with the leading blanks a paste took from it (see `header_cells`)."""
    lead = len(header) - len(header.lstrip(" "))
    return " " * (columns[0][0] - lead) + header if lead < columns[0][0] else header


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
        header, rule, at = _three_parts(text)
        rows = (text.encode("ascii"), at, len(text)) if text.isascii() else None
    else:
        header, rule, at = _three_parts(_head(source))
        rows = (source[0], source[1] + at, source[2])
    columns = columns_under(header, rule)
    cells = header_cells(header, columns)
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
        if (hint := values.locale_hint(exc.detail)) is not None:
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
    them in a locale with a decimal comma, said by a `values.ReadNote`; None when they are not
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
        warnings.warn(values.ReadNote(said, line), stacklevel=4)
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
    Python (`_rows_in_python`: a table that was refused already); None when a cell runs
    outside its column."""
    try:
        raw = _rows_in_python(_made(block)[at:], columns, origin)
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


def _head(source: tuple[bytes, int, int]) -> str:
    """The header and rule lines of a table in ASCII bytes (data, start, end), decoded."""
    data, start, end = source
    one = data.find(b"\n", start, end)
    two = data.find(b"\n", one + 1, end) if one >= 0 else -1
    return data[start : end if two < 0 else two + 1].decode("ascii")


def _three_parts(block: str) -> tuple[str, str, int]:
    """Header line, rule line and where the rows start (no copy of them: they may be many)."""
    one = block.find("\n")
    two = block.find("\n", one + 1) if one >= 0 else -1
    if one < 0:
        return block, "", len(block)
    if two < 0:
        return block[:one], block[one + 1 :], len(block)
    return block[:one], block[one + 1 : two], two + 1


def _fast_rows(
    data: bytes,
    at: int,
    end: int,
    columns: list[Span],
    cells: list[str],
    cols: nsys_fields.Columns,
) -> pd.DataFrame | None:
    """The rows `data[at:end]` (ASCII) as `_rows` reads them, read by `nsys_rows` when they are
    of the plain form it reads; else None."""
    if end <= at:
        return None
    fast = nsys_fields.fast_dtypes(cols)
    dtypes = {i: fast[cell] for i, cell in enumerate(cells) if cell in cols}
    return nsys_rows.read(data, at, columns, dtypes, end=end)


def _rows(
    rows: str,
    columns: list[Span],
    cells: list[str],
    cols: nsys_fields.Columns,
    origin: Origin,
) -> pd.DataFrame:
    """The rows cut at the columns: a frame of cells (numbers already parsed where the C reader
    could), columns named `c0`, `c1`, ... by position."""
    buf = bytearray(rows if rows.endswith("\n") else rows + "\n", "utf-8")
    arr = np.frombuffer(buf, dtype=np.uint8)  # a view: writes go to `buf`
    delimiter = next((d for d in _DELIMITERS if d not in buf), None)
    plain = buf.isascii() and b"\r" not in buf
    table = _as_table(buf, arr) if plain else None
    if delimiter is not None and table is not None:
        used = [i for i, cell in enumerate(cells) if cell in cols]
        compact = _compact_table(table, columns, used, delimiter, origin)
        return _read(compact, chr(delimiter), cells, cols, origin, used)
    starts, ends = _lines(arr)
    if delimiter is None or not (plain or _plain_before(arr, starts, columns[-1][0])):
        return _rows_in_python(rows, columns, origin)
    _check_gaps(arr, starts, ends, columns, origin)
    for _, end in columns[:-1]:
        pos = starts + end
        arr[pos[pos < ends]] = delimiter
    return _read(buf, chr(delimiter), cells, cols, origin)


def _rows_or_words(
    rows: str,
    columns: list[Span],
    cells: list[str],
    cols: nsys_fields.Columns,
    origin: Origin,
) -> pd.DataFrame:
    """The rows cut at the columns (`_rows`); rows whose cells do not keep to the rule are read
    by their words instead, when that is unambiguous (`_words`)."""
    try:
        return _rows(rows, columns, cells, cols, origin)
    except ParseError:
        words = _words(rows, cells, cols)
        if words is not None:
            return words
        kept = _before_trailing_text(rows, columns, cells, cols)
        if kept is None:
            raise
    frame = _rows(rows[:kept], columns, cells, cols, origin)
    line = origin.line(sum(1 for row in rows[:kept].split("\n") if row.strip()) - 1) + 1
    shown = values.shown_cell(rows[kept:].strip().split("\n", 1)[0], 60)
    said = (
        f"line {line}: text right under the table's last row ({shown}: a terminal capture with "
        "no blank line after the output) is no row of it: left out"
    )
    warnings.warn(values.ReadNote(said, line), stacklevel=4)
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


def _as_table(buf: bytearray, arr: np.ndarray) -> np.ndarray | None:
    """The rows as a 2-D array (one row per line, the newline last) when every line has the
    same length, as nsys pads them; else None."""
    width = buf.find(b"\n") + 1
    if width < 2 or len(buf) % width:
        return None
    table = arr.reshape(len(buf) // width, width)
    if buf.count(b"\n") != len(table) or not (table[:, -1] == 10).all():
        return None
    return table


def _compact_table(
    table: np.ndarray, columns: list[Span], used: list[int], delimiter: int, origin: Origin
) -> bytes:
    """Rows of one length (as nsys pads them) as a 2-D array -> the cells of the `used`
    columns only, each cut to the character positions that hold text in some row, joined by
    `delimiter`: the C reader then walks a third less text (nsys pads every cell and row).

    Works in slices of rows that stay in the cache (a column of a row-major table is a strided
    walk over all of it).

    Raises: ParseError naming the first line with text between two columns.
    """
    width = table.shape[1] - 1  # the newline
    step = max(1, _CHUNK_BYTES // table.shape[1])
    filled = np.zeros(width, dtype=bool)  # positions where some row is not blank
    for first in range(0, len(table), step):
        filled |= (table[first : first + step, :width] != 32).any(axis=0)
    gap = np.zeros(width, dtype=bool)
    for (_, a), (b, _) in zip(columns, columns[1:], strict=False):
        gap[a:b] = True
    if (filled & gap).any():
        bad = np.flatnonzero(((table[:, :width] != 32) & gap).any(axis=1))
        raise _outside(origin, int(bad[0]))
    edges = [0] + [end for _, end in columns[:-1]] + [width]
    spans = []
    for i in used:
        a, b = min(edges[i], width), min(edges[i + 1], width)
        inside = np.flatnonzero(filled[a:b])
        spans.append((a + inside[0], a + inside[-1] + 1) if len(inside) else (a, a))
    out = np.empty((len(table), sum(b - a + 1 for a, b in spans)), dtype=np.uint8)
    at = 0
    for a, b in spans:
        out[:, at + b - a] = delimiter
        at += b - a + 1
    out[:, -1] = 10
    for first in range(0, len(table), step):
        part, into = table[first : first + step], out[first : first + step]
        at = 0
        for a, b in spans:
            into[:, at : at + b - a] = part[:, a:b]
            at += b - a + 1
    return out.tobytes()


def _lines(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) of every non-empty line of a byte array."""
    newlines = np.flatnonzero(arr == 10)
    starts = np.concatenate(([0], newlines + 1))
    ends = np.concatenate((newlines, [len(arr)]))
    keep = ends > starts
    return starts[keep], ends[keep]


def _plain_before(arr: np.ndarray, starts: np.ndarray, last: int) -> bool:
    """No byte before the last column is non-ASCII or a carriage return (so that byte offsets
    are character offsets wherever a separator goes)."""
    odd = np.flatnonzero((arr >= 128) | (arr == 13))
    if not len(odd):
        return True
    line = np.searchsorted(starts, odd, side="right") - 1
    return bool(((odd - starts[line]) >= last).all())


def _check_gaps(
    arr: np.ndarray, starts: np.ndarray, ends: np.ndarray, columns: list[Span], origin: Origin
) -> None:
    """Every character between two columns is blank.

    Raises: ParseError naming the first line with text between two columns.
    """
    worst = len(starts)
    for (_, end), (nxt, _) in zip(columns, columns[1:], strict=False):
        for offset in range(end, nxt):
            pos = starts + offset
            inside = pos < ends
            bad = np.flatnonzero(inside & (arr[np.minimum(pos, len(arr) - 1)] != 32))
            if len(bad):
                worst = min(worst, int(bad[0]))
    if worst < len(starts):
        raise _outside(origin, worst)


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
                f"line {origin.line(row)}: {values.shown_cell(held, 40)} lies under a run of "
                "the rule with no header over it (a blank pasted into a cell split its column?)"
            )


def _outside(origin: Origin, row: int) -> ParseError:
    return origin.error(
        f"line {origin.line(row)}: a cell runs outside its column (the rule under the "
        "header gives each column's place)"
    )


def _read(
    data: bytes | bytearray,
    sep: str,
    cells: list[str],
    cols: nsys_fields.Columns,
    origin: Origin,
    present: list[int] | None = None,
) -> pd.DataFrame:
    """The separated rows through pandas' C reader, only the columns profgen uses: numbers
    parsed there (thousands separators, `None` as no value), text as categories; if a cell
    defeats it, every cell as text (the checks in `nsys_fields` then name the cell).
    `present` lists the columns `data` holds (by default all of them)."""
    fast = nsys_fields.fast_dtypes(cols)
    present = list(range(len(cells))) if present is None else present
    used = {f"c{i}": cells[i] for i in present if cells[i] in cols}
    dtypes = {name: fast[cell] for name, cell in used.items()}
    missing = {
        name: [""] if dtypes[name] == "category" else ["", nsys_fields.NONE] for name in used
    }
    options = {
        "sep": sep,
        "header": None,
        "names": [f"c{i}" for i in present],
        "usecols": list(used),
        "quoting": csv.QUOTE_NONE,
        "skipinitialspace": True,
        "keep_default_na": False,
        "engine": "c",
        "index_col": False,
        "low_memory": False,  # one pass: reading in chunks and concatenating costs a quarter more
    }
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pd.read_csv(  # type: ignore[call-overload, no-any-return]
                io.BytesIO(data), dtype=dtypes, thousands=",", na_values=missing, **options
            )
    except (ValueError, OverflowError, pd.errors.ParserError):
        pass
    try:
        return pd.read_csv(  # type: ignore[call-overload, no-any-return]
            io.BytesIO(data), dtype="string", na_values=[""], **options
        )
    except (ValueError, pd.errors.ParserError) as exc:
        raise origin.error(f"unreadable table: {str(exc).strip()[:200]}") from None


def _rows_in_python(rows: str, columns: list[Span], origin: Origin) -> pd.DataFrame:
    """The rows cut in Python, by character (rows with non-ASCII text before their last
    column, or no free separator byte): linear, a few microseconds per cell."""
    starts = [a for a, _ in columns]
    bounds = list(zip(starts, starts[1:] + [None], strict=True))
    out: list[list[str | None]] = [[] for _ in columns]
    for row, line in enumerate(ln.rstrip("\r") for ln in rows.split("\n") if ln.strip()):
        for (_, end), nxt in zip(columns[:-1], starts[1:], strict=True):
            if line[end:nxt].strip():
                raise _outside(origin, row)
        for i, (a, b) in enumerate(bounds):
            out[i].append(line[a:b].strip() or None)
    return pd.DataFrame({f"c{i}": pd.array(col, dtype="string") for i, col in enumerate(out)})


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
