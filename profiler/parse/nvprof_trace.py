"""nvprof's GPU trace (`--print-gpu-trace`) as text -> `schema.GPU_TRACE`, and its API trace
(`--print-api-trace`) as text -> `schema.API_TRACE`; the `--csv` gpu trace is
`nvprof_trace_csv`'s.

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
40000-byte copy is `39.0625KB`). Distinct cell values are parsed once (`nvprof_trace_cells`), so
a million-row trace costs a few passes over its columns: an ASCII table's rows are grouped by
their tails (middle columns and name) with NumPy over its bytes (`byte_spans`), its times read
once per layout, and its text is made only when a row must be cut as a string
(`nvprof_trace_bytes`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import cast

import numpy as np
import pandas as pd

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import csvtext, gpuops, nvprof_trace_bytes, nvprof_trace_cells
from profiler.parse.table_origin import Origin

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


def text_trace(
    origin: Origin,
    stage: str,
    raw: memoryview | bytes | None = None,
    breaks: np.ndarray | None = None,
    full: Callable[[], Origin] | None = None,
) -> pd.DataFrame:
    """The text `--print-gpu-trace` table (`origin.text` starts at its header).

    An ASCII table whose rows all line up and hold plain numbers is read with NumPy passes over
    its bytes (`nvprof_trace_bytes.fast_fields`); any other, and any row the fast path does not
    take as it is, is read row by row (`_plain_fields`), which also says what is wrong with a
    bad one.

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
    text = nvprof_trace_bytes.Text(
        None if lazy else str(origin.text), raw if lazy and raw is not None else b""
    )
    end = text.find_newline()
    header = _aligned_header(text.cut(0, end), text.cut(end + 1, end + 1 + _FIRST_ROW))
    columns = _text_columns(header, origin)
    found = nvprof_trace_bytes.fast_fields(text, columns, origin, raw, breaks)
    if found is None and full is not None and lazy:
        origin = full()
    fields, keep, rows = found or _plain_fields(str(origin.text), columns, origin)
    nvprof_trace_cells.note_unified(rows - len(keep), origin)
    try:
        nvprof_trace_cells.checked(fields, origin)
    except ParseError:
        if full is None or not lazy:
            raise
        nvprof_trace_cells.checked(fields, full())  # (raises, naming the line)
    return nvprof_trace_cells.trace_table(pd.DataFrame(fields, index=pd.Index(keep)), stage)


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
    nvprof_trace_cells.checked(fields, origin)
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


def _plain_fields(
    text: str, columns: dict[str, tuple[int, int]], origin: Origin
) -> nvprof_trace_cells.Read:
    """The fields of the kept rows, the data rows they are, and how many data rows there are:
    every row cut as a string.

    Raises: ParseError as `text_trace`.
    """
    _, *lines = text.split("\n")
    rows = [ln.rstrip("\r") for ln in lines if ln.strip()]  # data rows, as Origin counts them
    start = columns["Name"][0] - 1  # a space, then the name to the end of the row
    names, codes = nvprof_trace_cells.cells(
        [row[start:] for row in rows], None, origin, "Name", np.arange(len(rows))
    )
    keep = nvprof_trace_cells.kept(names, codes)
    kept = [rows[i] for i in keep] if len(keep) < len(rows) else rows
    fields = nvprof_trace_cells.text_field(
        "name", names, codes[keep], pd.Index(keep), origin, "Name"
    )
    for column, cells in nvprof_trace_cells.fixed_cells(kept, columns, keep, origin).items():
        fields.update(
            nvprof_trace_cells.text_field(
                nvprof_trace_cells.TEXT_FIELDS[column.rstrip("*")],
                *cells,
                pd.Index(keep),
                origin,
                column,
            )
        )
    return fields, keep, len(rows)


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
