"""An ASCII nvprof text gpu trace read with NumPy over its bytes (`fast_fields`): its rows found
from its newlines, their tails (middle columns and name) grouped with NumPy (`byte_spans`), its
times read once per layout, and its text made only when a row must be cut as a string. Any
table this path does not take as it is goes back to being read row by row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np
import pandas as pd

from profiler.errors import ParseError
from profiler.parse import byte_spans, csvtext, lines, nvprof_trace_cells, tokens, values
from profiler.parse.table_origin import Origin

# The ASCII bytes `str.strip()` strips.
_BLANK = np.zeros(256, dtype=bool)
_BLANK[[c for c in range(128) if chr(c).isspace()]] = True
_TWO_LETTER_UNITS = {unit: csvtext.NS_PER_UNIT[unit] for unit in ("ns", "us", "ms")}


class Text:
    """A table's text, or (`text` None) its ASCII bytes, from which the text is made only when
    it is cut row by row."""

    def __init__(self, text: str | None, data: bytes | memoryview) -> None:
        self.text, self.data = text, data

    def __len__(self) -> int:
        return len(self.data) if self.text is None else len(self.text)

    def cut(self, a: int, b: int) -> str:
        """`text[a:b]` (a, b >= 0)."""
        return self.text[a:b] if self.text is not None else str(self.data[a:b], "ascii")

    def find_newline(self) -> int:
        """Where the first line ends (the length when it is the only one)."""
        if self.text is not None:
            at = self.text.find("\n")
        else:
            at = bytes(self.data[: 1 << 16]).find(b"\n")
            at = at if at >= 0 or len(self.data) <= 1 << 16 else bytes(self.data).find(b"\n")
        return len(self) if at < 0 else at

    def whole(self) -> str:
        if self.text is None:
            self.text = str(self.data, "ascii")
        return self.text


def fast_fields(
    text: str | Text,
    columns: dict[str, tuple[int, int]],
    origin: Origin,
    raw: memoryview | bytes | None = None,
    breaks: np.ndarray | None = None,
) -> nvprof_trace_cells.Read | None:
    """`nvprof_trace._plain_fields` of an ASCII table whose rows all reach past the start of
    Name, with single-token plain decimal times: the rows are found and Start and Duration read
    with NumPy over the bytes, the names and row middles grouped over the bytes and read per
    distinct value. `text` may be the bytes alone (`Text`). None when the table is not such a table,
    or holds anything the plain path would refuse (which then says why, as before).
    """
    read = nvprof_trace_cells.read_columns(columns)
    name_at = columns["Name"][0]
    text = text if isinstance(text, Text) else Text(text, b"")
    if text.text is not None and not text.text.isascii():
        return None
    if name_at < 1 or "Start" not in read or "Duration" not in read:
        return None
    data: bytes | memoryview = raw if raw is not None and len(raw) == len(text) else b""
    if not data:
        data, breaks = text.whole().encode("ascii"), None
    codes = np.frombuffer(data, dtype=np.uint8)
    rows = _row_spans(data, codes, breaks)
    if rows is None:
        return None
    start, end = rows
    if not len(start) or int((end - start).min()) <= name_at:  # every row has a name
        return None
    first, last = codes[start + name_at], codes[end - 1]
    if (codes[start + name_at - 1] != 32).any() or (_BLANK[first] | _BLANK[last]).any():
        return None  # a row across the edge of Name, or a name with blanks around it
    try:
        return _fast_cells(text, codes, start, end, columns, read, origin)
    except ParseError:
        return None  # the plain path says what is wrong (it finds the first error)


def _row_spans(
    data: bytes | memoryview, codes: np.ndarray, breaks: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """Where each data row (a non-empty line after the header, one `\\r` dropped from its end)
    starts and ends; None when a row still ends with `\\r`. `breaks`: the newlines, if known."""
    if breaks is None:
        breaks = lines.newlines(cast(bytes, data))  # (read through np.frombuffer: any buffer)
    start = breaks + 1
    end = np.append(breaks[1:], len(data))
    cr = np.flatnonzero(end > start)
    end[cr[codes[end[cr] - 1] == 13]] -= 1
    rows = np.flatnonzero(end > start)
    start, end = start[rows], end[rows]
    if (codes[end - 1] == 13).any():
        return None
    return start, end


def _fast_cells(
    text: Text,
    codes: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    columns: dict[str, tuple[int, int]],
    read: dict[str, tuple[int, int]],
    origin: Origin,
) -> nvprof_trace_cells.Read | None:
    """`fast_fields` once the rows are found and their names known to be there.

    Raises: ParseError as `nvprof_trace._plain_fields` (the caller then reads the table the
        plain way).
    """
    name_at = columns["Name"][0]
    read = dict(read)
    times = {column: read.pop(column) for column in ("Start", "Duration")}
    low, high = nvprof_trace_cells.middle(columns, read) if read else (name_at, name_at)
    names, middles = _names_and_middles(text, codes, start, end, (low, high, name_at))
    name_codes, distinct = names
    if "-" in set(distinct):
        return None
    firsts = byte_spans.first_rows(name_codes)  # (numbered as pd.factorize does)
    by_first = pd.Series(distinct, index=firsts, dtype=object)
    keep = nvprof_trace_cells.kept(by_first, name_codes)
    index = pd.Index(keep)
    fields = nvprof_trace_cells.text_field(
        "name", by_first, name_codes[keep], index, origin, "Name"
    )
    read_times = _fast_times(codes, start[keep], list(times.values()))
    if read_times is None:
        return None
    for column, ns in zip(times, read_times, strict=True):
        whole = pd.arrays.IntegerArray(ns, np.zeros(len(ns), dtype=bool))
        fields[column.lower()] = pd.Series(whole, index=index, copy=False)
    if read:
        middle_codes, distinct = middles(keep)
        found = nvprof_trace_cells.middle_cells(
            np.asarray(distinct, object), middle_codes, read, low, keep, origin
        )
        for column, cells in found.items():
            field = nvprof_trace_cells.TEXT_FIELDS[column.rstrip("*")]
            fields.update(nvprof_trace_cells.text_field(field, *cells, index, origin, column))
    return fields, keep, len(name_codes)


_SAMPLE = 4096  # rows whose tails tell whether the tails repeat


def _names_and_middles(
    text: Text, codes: np.ndarray, start: np.ndarray, end: np.ndarray, spans: tuple[int, int, int]
) -> tuple[tuple[np.ndarray, list[str]], Callable[[np.ndarray], tuple[np.ndarray, list[str]]]]:
    """Each row's name code and the distinct names (in order of first appearance, as
    `pd.factorize` gives them), and a function of the kept rows that gives their middles'
    codes and the distinct middles alike. `spans` are where a row's middle starts and ends and
    where its name starts; `codes` are the text's bytes. The tail of a row (its middle, whatever
    is between it and Name, and its name) is grouped with NumPy and split once per distinct tail
    when the tails repeat (a few kernels and copies), else the names are cut per row and the
    middles grouped on their own."""
    low, high, name_at = spans
    at, stop = start[:_SAMPLE].tolist(), end[:_SAMPLE].tolist()
    sample = len({text.cut(a + low, b) for a, b in zip(at, stop, strict=True)})
    if sample > min(len(start), _SAMPLE) // 4:
        cut, whole = zip(start.tolist(), end.tolist(), strict=True), text.whole()
        names = _factorized([whole[a + name_at : b] for a, b in cut])

        def middles(keep: np.ndarray) -> tuple[np.ndarray, list[str]]:
            return _spans(text, codes, start[keep] + low, np.full(len(keep), high - low))

        return names, middles
    tail_codes, tails = _spans(text, codes, start + low, end - start - low)
    names = _renumbered(tail_codes, [tail[name_at - low :] for tail in tails])

    def middles_of_tails(keep: np.ndarray) -> tuple[np.ndarray, list[str]]:
        return _renumbered(tail_codes[keep], [tail[: high - low] for tail in tails])

    return names, middles_of_tails


def _spans(
    text: Text, codes: np.ndarray, at: np.ndarray, size: np.ndarray
) -> tuple[np.ndarray, list[str]]:
    """`_factorized` of the cells `text[at[i] : at[i] + size[i]]` (an ASCII text, `codes` its
    bytes): grouped with NumPy (`byte_spans`) and cut once per distinct cell, or cut per row
    when `byte_spans` cannot group them."""
    found = byte_spans.factorize(codes, at, size)
    if found is None:
        whole = text.whole()
        return _factorized(
            [whole[a : a + n] for a, n in zip(at.tolist(), size.tolist(), strict=True)]
        )
    rows, firsts = found
    cut = zip(at[firsts].tolist(), size[firsts].tolist(), strict=True)
    return rows, [text.cut(a, a + n) for a, n in cut]


def _factorized(cells: list[str]) -> tuple[np.ndarray, list[str]]:
    codes, distinct = pd.factorize(np.asarray(cells, dtype=object))
    return codes, distinct.tolist()


def _renumbered(codes: np.ndarray, values: list[str]) -> tuple[np.ndarray, list[str]]:
    """`_factorized` of the cells `values[codes[i]]`, from the codes and values only."""
    value_codes, distinct = _factorized(values)
    rows, order = pd.factorize(value_codes[codes])
    return rows, [distinct[i] for i in order.tolist()]


def _fast_times(
    codes: np.ndarray, start: np.ndarray, spans: list[tuple[int, int]]
) -> list[np.ndarray] | None:
    """The cells `[a, b)` of each span of the rows starting at `start` (each followed by a
    space), each one right-aligned token of a plain decimal and a time unit (`1.8260ms`,
    `0.50000s`), in whole ns as `nvprof_summary_cells.times` and `values.whole` give them; None for
    any other cell. The bytes of all spans (Start and Duration lie side by side) and the byte
    after each are read from the rows at once."""
    low, high = min(a for a, _ in spans), max(b for _, b in spans) + 1
    block = byte_spans.cells(codes, start + low, -(-(high - low) // 8) * 8)
    out = []
    for a, b in spans:
        width = b - a
        if width < 2 or (block[:, b - low] != 32).any():
            return None
        ns = _times_of(block[:, a - low : b - low], width)
        if ns is None:
            return None
        out.append(ns)
    return out


def _times_of(wide: np.ndarray, width: int) -> np.ndarray | None:
    """`_times_of_cells` of the cells `wide[:, :width]`: read once per distinct cell when
    they repeat (a trace's durations: a few kernels and copies), else once per layout (its
    start times, each new)."""
    cells = wide[:, :width]
    sample = byte_spans.factorize_rows(cells[:_SAMPLE])
    if sample is None or len(sample[1]) > len(sample[0]) // 4:
        return _times_by_layout(wide, width)
    found = byte_spans.factorize_rows(cells)
    if found is None or len(found[1]) > len(cells) // 4:
        return _times_by_layout(wide, width)
    codes, firsts = found
    each = _times_of_cells(cells[firsts])
    return None if each is None else each[codes]


_LAYOUTS = 64  # layouts read one at a time, at most (more: the cells are read one by one)


def _times_by_layout(wide: np.ndarray, width: int) -> np.ndarray | None:
    """`_times_of_cells` of the cells `wide[:, :width]` (the bytes after them: whatever), read
    once per layout (the cell with its digits made 0: `0.00000s`, `00.000ms`). The cells of a
    layout have their digits in the same places and every other byte alike, so what
    `_times_of_cells` says of one (read, or left) holds for all, and their numbers are their
    digits times fixed powers of ten."""
    cells = wide[:, :width]
    digit = ((wide - np.uint8(48)) < 10).view(np.uint8)
    layout = wide & ~(digit * np.uint8(15))  # digits (0x30-0x39) made 0x30
    layout[:, width:] = 0
    found = byte_spans.factorize_rows(layout)
    if found is None or len(found[1]) > _LAYOUTS:
        return _times_of_cells(cells)
    codes, firsts = found
    ns = np.empty(len(cells), dtype=np.int64)
    for k, first in enumerate(firsts.tolist()):
        rows = np.flatnonzero(codes == k) if len(firsts) > 1 else slice(None)
        got = _layout_times(cells[rows], cells[first])
        if got is None:
            return None
        ns[rows] = got
    each = _times_of_cells(cells[firsts])
    if each is None or not np.array_equal(ns[firsts], each):
        return _times_of_cells(cells)  # (a layout read otherwise than cell by cell: never)
    return ns


def _layout_times(cells: np.ndarray, one: np.ndarray) -> np.ndarray | None:
    """`_times_of_cells` of cells of one layout, `one` of them."""
    if _times_of_cells(one[None, :]) is None:
        return None
    width = len(one)
    lead = int((one <= 32).sum())  # (right-aligned: every blank leads)
    unit = chr(one[-2]) + "s" if lead <= width - 2 else "s"
    factor = _TWO_LETTER_UNITS.get(unit, csvtext.NS_PER_UNIT["s"])
    number = range(lead, width - (1 if factor == csvtext.NS_PER_UNIT["s"] else 2))
    places = [j for j in number if 48 <= one[j] <= 57]
    dot = next((j for j in number if one[j] == 46), width)
    mantissa = np.zeros(len(cells), dtype=np.int64)
    for power, j in enumerate(reversed(places)):
        mantissa += (cells[:, j].astype(np.int64) - 48) * 10**power
    after = np.full(1, sum(j > dot for j in places))
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = mantissa / np.power(10.0, after) * factor
    if not (scaled < values.TIME.most).all():
        return None
    return np.rint(scaled).astype("int64")


def _times_of_cells(cell: np.ndarray) -> np.ndarray | None:
    """`_fast_times` of the cells, one per row of `cell` (bytes)."""
    count, width = cell.shape
    if (cell < 32).any():
        return None
    solid = cell > 32
    if not solid[:, -1].all() or (np.logical_or.accumulate(solid, axis=1) != solid).any():
        return None  # not right-aligned, or a blank inside
    lead = width - solid.sum(axis=1)
    before = np.where(lead <= width - 2, cell[:, -2], 0)
    if (cell[:, -1] != ord("s")).any():
        return None
    factor = np.full(count, csvtext.NS_PER_UNIT["s"])
    for unit, ns in _TWO_LETTER_UNITS.items():
        factor[before == ord(unit[0])] = ns
    drop = np.where(factor == csvtext.NS_PER_UNIT["s"], 1, 2)
    at = np.arange(count) * width
    number, plain = tokens.decimals(cell.ravel(), at + lead, at + width - drop)
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = number * factor
    if not plain.all() or not (scaled < values.TIME.most).all():
        return None
    return np.rint(scaled).astype("int64")
