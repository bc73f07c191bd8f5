"""nvprof's GPU trace (`--print-gpu-trace`), as text and as `--csv`, -> `schema.GPU_TRACE`.

- `--csv`: `"Start","Duration","Grid X",...,"Name"[,"Correlation_ID"]` and a units row under the
  header (`s,ms,,,,,,,,B,B,MB,GB/s,...`).
- text: a fixed-width table. Every column but `Name` is right-aligned and ends where its header
  word ends; `Name` starts where its header word starts. A cell may hold single spaces
  (`(32768 1 1)`, `TITAN Xp (0)`, `PC 0x4034d6`), so rows are cut at the header's column edges,
  never at spaces, and a row whose cells cross an edge (a re-spaced paste) is refused by line.
  Times and sizes carry their units (`308.93ms`, `1.7920us`, `8.0000KB`, `254.72MB`); `-` is
  no value. The device column is cut to its width (`Quadro GP100 (0`): the ordinal is read when
  it is there, else left missing.

Unified Memory rows (page faults, migrations, thrashes) are not GPU activities and are dropped.
Kernel names carry their correlation id in both layouts of older nvprof and in the text layout
(`kernel(float*) [218]`); it is moved into `correlation_id`. Sizes use binary prefixes (a
40000-byte copy is `39.0625KB`). Distinct cell values are parsed once, so a million-row trace
costs a few passes over its columns: an ASCII table's rows are grouped by their tails (middle
columns and name) with NumPy over its bytes (`byte_spans`), its times read once per layout, and
its text is made only when a row must be cut as a string.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import cast

import numpy as np
import pandas as pd

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import byte_spans, csvtext, gpuops, lines, nvprof_summary, tokens, values
from profiler.parse.values import Origin

_CSV_FIELDS = {
    "Start": "start",
    "Duration": "duration",
    "Grid X": "grid_x",
    "Grid Y": "grid_y",
    "Grid Z": "grid_z",
    "Block X": "block_x",
    "Block Y": "block_y",
    "Block Z": "block_z",
    "Registers Per Thread": "registers",
    "Static SMem": "ssmem",
    "Dynamic SMem": "dsmem",
    "Size": "bytes",
    "SrcMemType": "src",
    "DstMemType": "dst",
    "Device": "device",
    "Stream": "stream",
    "Name": "name",
    "Correlation_ID": "corr",
}
# text header word (footnote star dropped) -> field; other columns (Throughput, Context,
# Unified Memory, Virtual Address) are not read
_TEXT_FIELDS = {
    "Start": "start",
    "Duration": "duration",
    "Grid Size": "grid",
    "Block Size": "block",
    "Regs": "registers",
    "SSMem": "ssmem",
    "DSMem": "dsmem",
    "Size": "bytes",
    "SrcMemType": "src",
    "DstMemType": "dst",
    "Device": "device",
    "Stream": "stream",
}
# what a gpu trace is when a web page ran its cells together with single spaces
_ALIGNMENT_LOST = (
    "an nvprof gpu trace whose column alignment the page it was copied from lost (`Start Duration "
    "Grid Size ... Name`, cells one space apart): its cells (a grid size `(20 10 1)`, a device "
    "name) cannot be told apart"
)
_HEADER_CELL = re.compile(r"\S+(?: \S+)*")  # words joined by single spaces: linear, unambiguous
# The gpu trace header's first title (its blanks before it), and a row's first cell (with them).
_START_TITLE = re.compile(r"( *)Start")
_FIRST_CELL = re.compile(r" *[0-9][^ ]*s(?= )")
_FIRST_ROW = 512  # a row's first cell lies in this many characters after the header
_CORR_SUFFIX = re.compile(r"^(?P<name>.*\S) \[(?P<corr>[0-9]{1,18})\]\Z")
_UNIFIED = "[Unified Memory"
# A table's fields, the data rows (0-based) they are, and how many data rows it has.
_Read = tuple[dict[str, pd.Series], np.ndarray, int]
# The ASCII bytes `str.strip()` strips.
_BLANK = np.zeros(256, dtype=bool)
_BLANK[[c for c in range(128) if chr(c).isspace()]] = True
_TWO_LETTER_UNITS = {unit: csvtext.NS_PER_UNIT[unit] for unit in ("ns", "us", "ms")}


def csv_trace(origin: Origin, stage: str) -> pd.DataFrame:
    """The `--print-gpu-trace --csv` table: units from the row under the header.

    Returns: DataFrame with `schema.GPU_TRACE` columns (Unified Memory rows dropped).

    Raises: ParseError for a repeated column, a missing units row, a truncated last row or a bad
        cell (named by line and column).
    """
    cells = csvtext.header_cells(str(origin.text).split("\n", 1)[0])
    csvtext.check_header(cells, origin.path, origin.expected)
    labels = ("Name", "Device", "SrcMemType", "DstMemType")
    raw = csvtext.read_csv_text(
        origin.text, origin, dtype={c: "category" if c in labels else "string" for c in _CSV_FIELDS}
    )
    if len(raw) < 1 or "Name" not in raw or not pd.isna(raw["Name"].iloc[0]):
        raise origin.error(f"line {origin.first_line + 1}: no units row under the trace header")
    units = raw.iloc[0].astype("string").fillna("")
    raw = raw.iloc[1:].set_axis(pd.RangeIndex(len(raw) - 1))  # data rows from 0, as in origin
    csvtext.check_last_row(origin, len(cells), len(raw) - 1)
    rows = len(raw)
    raw = raw[~raw["Name"].astype("string").str.startswith(_UNIFIED).fillna(False)]
    _note_unified(rows - len(raw), origin)
    fields = {
        _CSV_FIELDS[c]: _csv_column(raw[c], str(units[c]), origin, c)
        for c in raw.columns
        if c in _CSV_FIELDS
    }
    _check_present(fields, origin, {"start": "Start", "duration": "Duration", "name": "Name"})
    values.check_total(fields["duration"], origin, "Duration")
    return _trace_table(pd.DataFrame(fields, index=raw.index), stage)


def _csv_column(cells: pd.Series, unit: str, origin: Origin, column: str) -> pd.Series:
    field = _CSV_FIELDS[column]
    if field in ("name", "device", "src", "dst"):
        return values.cap_names(cells)
    if field in ("start", "duration"):
        factor = csvtext.time_factor(unit, origin.path, column)
        return values.integers(cells, origin, column, values.TIME, factor)
    if field in ("ssmem", "dsmem", "bytes"):
        factor = csvtext.byte_factor(unit, origin.path, column, binary=True)
        return values.integers(cells, origin, column, values.SIZE, factor)
    return values.integers(cells, origin, column, values.COUNT)


def text_trace(
    origin: Origin,
    stage: str,
    raw: memoryview | bytes | None = None,
    breaks: np.ndarray | None = None,
    full: Callable[[], Origin] | None = None,
) -> pd.DataFrame:
    """The text `--print-gpu-trace` table (`origin.text` starts at its header).

    An ASCII table whose rows all line up and hold plain numbers is read with NumPy passes over
    its bytes (`_fast_fields`); any other, and any row the fast path does not take as it is, is
    read row by row (`_plain_fields`), which also says what is wrong with a bad one.

    Args:
        origin: the table's text and place.
        stage: the stage key of every row.
        raw: the table's bytes, when its text is ASCII (else it is encoded here when it is).
        breaks: the offsets of the newlines in `raw`, when known.
        full: given with `raw` and an `origin` without its text: the origin with its text,
            made only when the table is read the plain way or a message names a line (the
            fast path reads the bytes; a million-row table's text is then never made).

    Returns: DataFrame with `schema.GPU_TRACE` columns (Unified Memory rows dropped); empty
        when every row is a Unified Memory one.

    Raises: ParseError naming the line of a row that does not line up with the header, or the
        line and column of a bad cell.
    """
    lazy = full is not None and raw is not None and not origin.text
    text = _Text(None if lazy else str(origin.text), raw if lazy and raw is not None else b"")
    end = text.find_newline()
    header = _aligned_header(text.cut(0, end), text.cut(end + 1, end + 1 + _FIRST_ROW))
    columns = _text_columns(header, origin)
    found = _fast_fields(text, columns, origin, raw, breaks)
    if found is None and full is not None and lazy:
        origin = full()
    fields, keep, rows = found or _plain_fields(str(origin.text), columns, origin)
    _note_unified(rows - len(keep), origin)
    try:
        _checked(fields, origin)
    except ParseError:
        if full is None or not lazy:
            raise
        _checked(fields, full())  # (raises, naming the line)
    return _trace_table(pd.DataFrame(fields, index=pd.Index(keep)), stage)


def _aligned_header(header: str, after: str) -> str:
    """`header` moved to line up with the first row in `after` (the text after it): a paste
    that trimmed or indented the header line alone (`Start` ends left or right of where the
    row's first cell, its right-aligned start time, ends) would be refused at every column."""
    row = after.split("\n", 1)[0]
    title, first = _START_TITLE.match(header), _FIRST_CELL.match(row)
    if title is None or first is None:
        return header
    shift = first.end() - title.end()
    if shift > 0:
        return " " * shift + header
    return header[-shift:] if len(title[1]) >= -shift else header


def text_api_trace(origin: Origin, stage: str) -> pd.DataFrame:
    """The text `--print-api-trace` table (`origin.text` starts at its `Start  Duration  Name`
    header): one row per CUDA runtime or driver call. nvprof writes a launch as
    `cudaLaunchKernel (kernel(float*) [129])`: the call's name is the word before ` (`, and the
    number in brackets its correlation id.

    Returns: DataFrame with `schema.API_TRACE` columns (thread unknown).

    Raises: ParseError as `text_trace`.
    """
    text = str(origin.text)
    columns = _text_columns(text.split("\n", 1)[0], origin)
    fields = _plain_fields(text, columns, origin)[0]
    _checked(fields, origin)
    start = fields["start"].to_numpy(dtype="float64").round().astype("int64")
    duration = fields["duration"].to_numpy(dtype="float64").round().astype("int64")
    found, codes = gpuops.lookup(fields["name"], _api_call)
    pairs = [cast("tuple[str, int] | None", pair) for pair in found]
    calls = [None if pair is None else pair[0] for pair in pairs]
    ids = np.array([-1 if pair is None else pair[1] for pair in pairs] + [-1], dtype="int64")
    rows = pd.RangeIndex(len(codes))
    correlation = pd.Series(ids[codes], index=rows, dtype="Int64")  # code -1: the -1 put last
    trace = pd.DataFrame(
        {
            "stage": pd.Series(stage, index=rows, dtype="string"),
            "repeat": np.full(len(rows), -1, dtype="int64"),
            "name": gpuops.strings(calls, codes, rows),
            "start_ns": start,
            "end_ns": start + duration,
            "duration_ns": duration,
            "thread": pd.Series(pd.NA, index=rows, dtype="Int64"),
            "correlation_id": correlation.mask(correlation < 0),
        },
        index=rows,
    )
    return schema.validate(trace, schema.API_TRACE)


def _api_call(cell: object) -> tuple[str, int] | None:
    """`cudaLaunchKernel (kernel(float*) [129])` -> (`cudaLaunchKernel`, 129); `cudaFree` ->
    (`cudaFree`, -1): no correlation id."""
    if not isinstance(cell, str):
        return None
    cut = cell.find(" (")
    if cut < 0 or not cell.endswith("])"):
        return cell, -1
    number = cell[cell.rfind("[") + 1 : -2]
    known = number.isascii() and number.isdigit() and len(number) <= 18
    return cell[:cut], int(number) if known else -1


def _note_unified(left_out: int, origin: Origin) -> None:
    """Say (`values.ReadNote`) that `left_out` Unified Memory rows of the trace at `origin`
    were left out, if any."""
    if left_out:
        rows = f"{left_out} Unified Memory row{'s' if left_out > 1 else ''}"
        values.read_note(
            f"line {origin.first_line}: nvprof's gpu trace: {rows} (page faults and migrations, "
            "no kernel, copy or memset) left out: profgen has no table for them",
            origin.first_line,
        )


def _checked(fields: dict[str, pd.Series], origin: Origin) -> None:
    """Start, Duration and Name in every row; the durations' total in range.

    Raises: ParseError naming the line of the first row without one, or the column."""
    _check_present(fields, origin, {"start": "Start", "duration": "Duration", "name": "Name"})
    values.check_total(fields["duration"], origin, "Duration")


class _Text:
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


def _plain_fields(
    text: str, columns: dict[str, tuple[int, int]], origin: Origin
) -> _Read:
    """The fields of the kept rows, the data rows they are, and how many data rows there are:
    every row cut as a string.

    Raises: ParseError as `text_trace`.
    """
    _, *lines = text.split("\n")
    rows = [ln.rstrip("\r") for ln in lines if ln.strip()]  # data rows, as Origin counts them
    start = columns["Name"][0] - 1  # a space, then the name to the end of the row
    names, codes = _cells([row[start:] for row in rows], None, origin, "Name", np.arange(len(rows)))
    keep = _kept(names, codes)
    kept = [rows[i] for i in keep] if len(keep) < len(rows) else rows
    fields = _text_field("name", names, codes[keep], pd.Index(keep), origin, "Name")
    for column, cells in _fixed_cells(kept, columns, keep, origin).items():
        fields.update(
            _text_field(_TEXT_FIELDS[column.rstrip("*")], *cells, pd.Index(keep), origin, column)
        )
    return fields, keep, len(rows)


def _kept(names: pd.Series, codes: np.ndarray) -> np.ndarray:
    """The data rows that are no Unified Memory event."""
    unified = names.astype(str).str.startswith(_UNIFIED).to_numpy(dtype=bool)
    return np.flatnonzero(~np.append(unified, False)[codes])


def _fixed_cells(
    rows: list[str], columns: dict[str, tuple[int, int]], labels: np.ndarray, origin: Origin
) -> dict[str, tuple[pd.Series, np.ndarray]]:
    """The distinct values and per-row codes of every column profgen reads but Name. Start and
    Duration are cut from every row; the columns between them and Name, which repeat (grids,
    registers, devices, streams), are cut from the distinct middles of the rows only.

    Raises: ParseError as `_cells`.
    """
    read = _read_columns(columns)
    out = {}
    for column in ("Start", "Duration"):
        a, b = read.pop(column)
        out[column] = _cells([row[a : b + 1] for row in rows], b - a, origin, column, labels)
    if not read:
        return out
    low, high = _middle(columns, read)
    middles, codes = pd.factorize(np.asarray([row[low:high] for row in rows], dtype=object))[::-1]
    out.update(_middle_cells(middles, codes, read, low, labels, origin))
    return out


def _read_columns(columns: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """The columns profgen reads (Name aside), by header word."""
    return {c: span for c, span in columns.items() if _TEXT_FIELDS.get(c.rstrip("*"))}


def _middle(
    columns: dict[str, tuple[int, int]], read: dict[str, tuple[int, int]]
) -> tuple[int, int]:
    """Where the middle of a row starts and ends: from Duration's end to past the last column
    read before Name."""
    return columns["Duration"][1], max(b for a, b in read.values()) + 1


def _middle_cells(
    middles: np.ndarray,
    codes: np.ndarray,
    read: dict[str, tuple[int, int]],
    low: int,
    labels: np.ndarray,
    origin: Origin,
) -> dict[str, tuple[pd.Series, np.ndarray]]:
    """The columns `read` (Start and Duration aside) of the distinct row middles `middles`
    (`codes`: each row's), as `_cells` gives them per row.

    Raises: ParseError as `_cells`.
    """
    out = {}
    firsts = labels[byte_spans.first_rows(codes)]  # (codes numbered as pd.factorize does)
    for column, (a, b) in read.items():
        raw = [middle[a - low : b - low + 1] for middle in middles]
        cats, inner = _cells(raw, b - a, origin, column, firsts)
        out[column] = (cats, np.append(inner, -1)[codes])
    return out


def _fast_fields(
    text: str | _Text,
    columns: dict[str, tuple[int, int]],
    origin: Origin,
    raw: memoryview | bytes | None = None,
    breaks: np.ndarray | None = None,
) -> _Read | None:
    """`_plain_fields` of an ASCII table whose rows all reach past the start of Name, with
    single-token plain decimal times: the rows are found and Start and Duration read with NumPy
    over the bytes, the names and row middles grouped over the bytes and read per distinct
    value. `text` may be the bytes alone (`_Text`). None when the table is not such a table,
    or holds anything the plain path would refuse (which then says why, as before).
    """
    read = _read_columns(columns)
    name_at = columns["Name"][0]
    text = text if isinstance(text, _Text) else _Text(text, b"")
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
    text: _Text,
    codes: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    columns: dict[str, tuple[int, int]],
    read: dict[str, tuple[int, int]],
    origin: Origin,
) -> _Read | None:
    """`_fast_fields` once the rows are found and their names known to be there.

    Raises: ParseError as `_plain_fields` (the caller then reads the table the plain way).
    """
    name_at = columns["Name"][0]
    read = dict(read)
    times = {column: read.pop(column) for column in ("Start", "Duration")}
    low, high = _middle(columns, read) if read else (name_at, name_at)
    names, middles = _names_and_middles(text, codes, start, end, (low, high, name_at))
    name_codes, distinct = names
    if "-" in set(distinct):
        return None
    firsts = byte_spans.first_rows(name_codes)  # (numbered as pd.factorize does)
    by_first = pd.Series(distinct, index=firsts, dtype=object)
    keep = _kept(by_first, name_codes)
    index = pd.Index(keep)
    fields = _text_field("name", by_first, name_codes[keep], index, origin, "Name")
    read_times = _fast_times(codes, start[keep], list(times.values()))
    if read_times is None:
        return None
    for column, ns in zip(times, read_times, strict=True):
        whole = pd.arrays.IntegerArray(ns, np.zeros(len(ns), dtype=bool))
        fields[column.lower()] = pd.Series(whole, index=index, copy=False)
    if read:
        middle_codes, distinct = middles(keep)
        found = _middle_cells(np.asarray(distinct, object), middle_codes, read, low, keep, origin)
        for column, cells in found.items():
            field = _TEXT_FIELDS[column.rstrip("*")]
            fields.update(_text_field(field, *cells, index, origin, column))
    return fields, keep, len(name_codes)


_SAMPLE = 4096  # rows whose tails tell whether the tails repeat


def _names_and_middles(
    text: _Text, codes: np.ndarray, start: np.ndarray, end: np.ndarray, spans: tuple[int, int, int]
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
    text: _Text, codes: np.ndarray, at: np.ndarray, size: np.ndarray
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
    `0.50000s`), in whole ns as `nvprof_summary.times` and `values.whole` give them; None for
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


def _text_columns(header: str, origin: Origin) -> dict[str, tuple[int, int]]:
    """Header word -> (start, end) of its cells: from the previous column's end to its own end
    (right-aligned); for `Name`, (its start, -1): to the end of the row.

    Raises: ParseError when the header does not end with `Name`, is single-spaced (a page that
        lost the alignment) or repeats a column.
    """
    words = [(m.group(), m.start(), m.end()) for m in _HEADER_CELL.finditer(header.rstrip("\r"))]
    if len(words) == 1 and words[0][0].endswith(" Name"):
        raise origin.error(f"line {origin.first_line}: {_ALIGNMENT_LOST}")
    if not words or words[-1][0] != "Name":
        raise origin.error(f"line {origin.first_line}: a gpu trace header ends with Name")
    csvtext.check_header([w for w, _, _ in words], origin.path, origin.expected)
    spans, edge = {}, 0
    for word, _, end in words[:-1]:
        spans[word] = (edge, end)
        edge = end
    spans["Name"] = (words[-1][1], -1)
    return spans


def _cells(
    raw: list[str], width: int | None, origin: Origin, column: str, rows: np.ndarray
) -> tuple[pd.Series, np.ndarray]:
    """One column's distinct values (stripped; `-` and blank are no value) and each element's
    code into them (-1: no value). `raw` holds each cell with the character after it, which must
    be a space (or the row's end), or for Name (`width` None) the character before it; `rows`
    the data row of each element. The values are indexed by the first row that holds each, so
    that a bad one is named by its line.

    Raises: ParseError naming the line of the first row whose value crosses the column's edge.
    """
    codes, uniques = pd.factorize(np.asarray(raw, dtype=object), use_na_sentinel=False)
    cats = pd.Series(uniques, dtype=object)
    if width is None:
        crossed = (cats.str.len() > 0) & ~cats.str.startswith(" ")
    else:
        crossed = (cats.str.len() > width) & ~cats.str.endswith(" ")
    if crossed.any():
        row = int(_first_rows(codes, rows, len(cats))[crossed.to_numpy(dtype=bool)].min())
        raise origin.error(
            f"line {origin.line(row)}: the row does not line up with the gpu trace header at "
            f"column {column!r} (was it re-spaced?)"
        )
    again, stripped = pd.factorize(cats.str.strip().to_numpy(dtype=object))
    codes = again[codes]
    codes = np.where(np.isin(stripped, ["", "-"])[codes], -1, codes)
    firsts = _first_rows(codes, rows, len(stripped))
    return pd.Series(stripped, index=firsts, dtype=object), codes


def _first_rows(codes: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """The data row (`rows[i]` is element i's) where each of the `n` codes first appears; the
    first row for a code that does not (no message names it)."""
    first = np.zeros(n, dtype="int64")
    seen, at = np.unique(codes, return_index=True)
    ok = seen >= 0
    first[seen[ok]] = at[ok]
    return rows[first] if len(rows) else first


def _whole_rows(per_value: np.ndarray, codes: np.ndarray, index: pd.Index) -> pd.Series:
    """Row i gets `per_value[codes[i]]` rounded, as `values.whole` rounds it; code -1 gets NA.
    (Rounded once per value, then taken per row.)"""
    number = np.append(per_value.astype("float64"), np.nan)
    missing = np.isnan(number)
    ints = np.where(missing, 0, np.rint(number)).astype("int64")
    # code -1 takes the last of them: the NaN appended
    return pd.Series(pd.arrays.IntegerArray(ints[codes], missing[codes]), index=index, copy=False)


def _text_field(
    field: str, cats: pd.Series, codes: np.ndarray, index: pd.Index, origin: Origin, column: str
) -> dict[str, pd.Series]:
    """One text column's distinct values and codes -> its fields (`grid` -> `grid_x`, ...).

    Raises: ParseError naming the line and column of a bad cell.
    """
    if field == "device":
        return {field: _categorical(cats.map(_device_ordinal).tolist(), codes, index)}
    if field in ("name", "src", "dst"):
        cat = pd.Categorical.from_codes(codes, categories=pd.Index(cats.to_numpy(), dtype=object))
        series = pd.Series(cat, index=index)
        return {field: values.cap_names(series) if field == "name" else series}
    if field in ("grid", "block"):
        parts = _dims(cats, origin, column)
        return {
            f"{field}_{axis}": _whole_rows(p, codes, index)
            for axis, p in zip("xyz", parts, strict=True)
        }
    if field in ("start", "duration"):
        per_value = nvprof_summary.times(cats, origin, column).to_numpy(dtype="float64")
    elif field in ("ssmem", "dsmem", "bytes"):
        per_value = _sizes(cats, origin, column)
    else:  # registers, stream
        per_value = values.numbers(cats, origin, column, values.COUNT).to_numpy(dtype="float64")
    return {field: _whole_rows(per_value, codes, index)}


def _dims(cats: pd.Series, origin: Origin, column: str) -> list[np.ndarray]:
    """`(32768 1 1)` -> x, y and z, one array per axis over the distinct values.

    Raises: ParseError naming the line and column of a value that is not three numbers in
        parentheses.
    """
    inner = cats.str.removeprefix("(").str.removesuffix(")").str.split()
    sizes = inner.map(lambda parts: len(parts) if isinstance(parts, list) else 0)
    shape = cats.str.startswith("(") & cats.str.endswith(")") & (sizes == 3)
    bad = np.flatnonzero(~shape.to_numpy(dtype=bool) & ~cats.isin(["", "-"]).to_numpy(dtype=bool))
    if len(bad):
        cell = values.shown_cell(str(cats.iloc[bad[0]]))
        raise origin.cell_error(int(cats.index[bad[0]]), column, f"{cell} is not (x y z)")
    parts = inner.where(shape, None)
    return [
        values.numbers(parts.str[axis], origin, column, values.COUNT).to_numpy(dtype="float64")
        for axis in range(3)
    ]


def _sizes(cats: pd.Series, origin: Origin, column: str) -> np.ndarray:
    """`8.0000KB`, `0B`, `254.72MB` -> bytes (binary prefixes), over the distinct values.

    Raises: ParseError naming the line and column of a value without a size unit.
    """
    text = cats.astype(str)
    digits = text.str.rstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    units = [t[len(d) :] for t, d in zip(text, digits, strict=True)]
    factor = np.array([csvtext.BINARY_BYTES.get(u.lower(), np.nan) for u in units])
    missing = cats.isin(["", "-"]).to_numpy(dtype=bool)
    bad = np.flatnonzero(np.isnan(factor) & ~missing)
    if len(bad):
        cell = values.shown_cell(str(cats.iloc[bad[0]]))
        raise origin.cell_error(
            int(cats.index[bad[0]]), column, f"{cell} is not a size such as 8.0000KB"
        )
    numbers = digits.where(~missing, None).set_axis(cats.index)
    checked = values.numbers(
        numbers, origin, column, values.SIZE, np.nan_to_num(factor, nan=1.0), cats
    )
    return checked.to_numpy(dtype="float64")


def _device_ordinal(label: object) -> str | None:
    """`TITAN Xp (0)` -> `0`; a label nvprof cut to its column (`Quadro GP100 (0`) keeps its
    ordinal when the digits are there; `Tesla P100-PCIE` has none."""
    text = str(label)
    at = text.rfind("(")
    digits = text[at + 1 :].removesuffix(")") if at >= 0 else ""
    return digits if digits.isdigit() and len(digits) < 6 else None


def _check_present(fields: dict[str, pd.Series], origin: Origin, required: dict[str, str]) -> None:
    """Every row has a value in each `required` field (field -> column).

    Raises: ParseError naming the column, and the line of the first row without a value.
    """
    for field, column in required.items():
        if field not in fields:
            raise origin.cell_error(None, column, "the trace has no such column")
        empty = np.flatnonzero(fields[field].isna().to_numpy())
        if len(empty):
            row = int(fields[field].index[empty[0]])
            raise origin.cell_error(row, column, "no value (truncated file?)")


def _trace_table(f: pd.DataFrame, stage: str) -> pd.DataFrame:
    names, corr = _split_correlation(f["name"])
    return gpuops.trace_table(f.assign(name=names, corr=f["corr"] if "corr" in f else corr), stage)


def _split_correlation(names: pd.Series) -> tuple[pd.Series, pd.Series]:
    """`kernel(float*) [218]` -> (`kernel(float*)`, 218), by distinct value; the names as a
    categorical (what `gpuops.trace_table` reads them as)."""

    def name_of(v: object) -> str | None:
        match = _CORR_SUFFIX.match(v) if isinstance(v, str) else None
        return match["name"] if match else (v if isinstance(v, str) else None)

    def corr_of(v: object) -> int | None:
        match = _CORR_SUFFIX.match(v) if isinstance(v, str) else None
        return int(match["corr"]) if match else None

    found, codes = gpuops.lookup(names, name_of)
    return _categorical(found, codes, names.index), gpuops.map_ints(names, corr_of)


def _categorical(found: list[object], codes: np.ndarray, index: pd.Index) -> pd.Series:
    """A categorical Series whose row i is `found[codes[i]]`; code -1 or a None value -> NA
    (the values of `gpuops.strings`, without a string per row)."""
    inner, distinct = pd.factorize(pd.Series(found, dtype=object))  # None -> -1
    rows = np.append(inner, -1)[np.where(codes < 0, len(found), codes)]
    categories = pd.Index(distinct, dtype=object)
    return pd.Series(pd.Categorical.from_codes(rows, categories=categories), index=index)
