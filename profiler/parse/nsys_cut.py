"""Rows of `nsys stats` column text cut at their columns (`nsys_rule`) into a frame of cells,
named `c0`, `c1`, ... by position.

A cell must stay inside its column: text in the gap between two columns is refused with its
line, since it would otherwise shift a number into the wrong field. Rows of one width (as nsys
pads them) are read by `nsys_rows` with NumPy; anything it does not read (or rows of several
widths) is cut with numpy and parsed by pandas' C reader, with no Python per row, unless a row
holds non-ASCII text before its last column (then Python cuts the rows: still linear, slower).
"""

from __future__ import annotations

import csv
import io
import warnings

import numpy as np
import pandas as pd

from profiler.errors import ParseError
from profiler.parse import nsys_fields
from profiler.parse.nsys_rule import Span
from profiler.parse.table_origin import Origin

_CHUNK_BYTES = 1 << 20


# Bytes that can stand for the column separator: one the rows do not hold is used.
_DELIMITERS = (0x1F, 0x1E, 0x1D, 0x1C, 0x1B, 0x01)


def rows(
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
        return rows_in_python(rows, columns, origin)
    _check_gaps(arr, starts, ends, columns, origin)
    for _, end in columns[:-1]:
        pos = starts + end
        arr[pos[pos < ends]] = delimiter
    return _read(buf, chr(delimiter), cells, cols, origin)


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


def rows_in_python(rows: str, columns: list[Span], origin: Origin) -> pd.DataFrame:
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
