"""`profgen import` of a paste whose shape hides a profiler's output (`parse.pasted`).

A double-spaced paste (a blank line after every line: an email reply to a GitHub issue) is read
as single-spaced whatever it holds: no file that imports as it is has no two non-blank lines in
a row (every table has its header above a row), so none changes. Nor does one where an nvprof
row type stands alone on its line above the summary row it belongs to (nvprof never prints it
so): such a hand-edited paste is read with each type joined to its row, whatever else it holds,
and so is a README that lays an nvprof summary out as a Markdown pipe table (`| GPU activities:
|  51.53% | ... |`: nvprof prints no bars), read with the bars of its pipe tables made spaces
and their `|---|` rules left out.
A paste quoted with `>` is read without its quote marks only when profgen recognises nothing in
the file as it is and does in the quoted lines unquoted: a file that is read today (with a
quoted copy of some earlier output beside its own, say) is read as before. So are nvprof summary
rows pasted from their `GPU activities:` (or `API calls:`) line down: nvprof's header is put
back above them only when nothing in the file is recognised as it is (or unquoted), and so is
the header of nsys's CUDA API summary above `nsys stats` rows that all name CUDA API calls. So
is a source file that keeps its program's output in `//` line comments or in a `/* */` comment
with a star down its left side (` * text`), and a script that keeps its commands' output in `#`
comments: each is read without the comment marks only when nothing in it is recognised
otherwise. A Jupyter notebook whose cells printed nothing recognised is read
from the fenced blocks of its Markdown cells (`published.notebook_blocks`: a course notebook,
its outputs cleared, that shows the output a run gives in its prose).
`nsys stats --format table` output, its tables drawn in boxes, is read with the boxes of nsys's
reports taken off (`parse.boxed`: a box whose header is no nsys report's, a program's own table,
is left as it is), whatever else the file holds, and a
file that is not UTF-8 but Windows text (`parse.codepage`: nsys on Windows writes the `…` of a
cut cell as cp1252's byte 0x85) is read as cp1252 (its boxes taken off too) only when it is
otherwise refused.
A file whose first 64 KiB hold no profiler output (a long run log) is read from the line where
some starts further on, when nothing in it is recognised otherwise (`parse.late_start`).

A paste read so is read as a file of those bytes named by its own path (`csvtext.Held`): the
file itself is what `raw/` keeps. Every line number a refusal, a warning, a technique or a
capture's section gives is made the file's own, and a warning (or a refusal) says what was
undone.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from profiler import files
from profiler.errors import DataError, ParseError
from profiler.import_runs import Run
from profiler.parse import (
    boxed,
    codepage,
    csvtext,
    detect,
    late_start,
    pasted,
    piped_nsys,
    published,
    unusable,
)

_QUOTE = re.compile(r"^ {0,3}>", re.MULTILINE)
_COMMENT = re.compile(r"^[ \t]*+//", re.MULTILINE)
_STAR = re.compile(r"^[ \t]*+\*(?:[ \t]|$)", re.MULTILINE)  # ` * text`: a block comment's line
_HASH = re.compile(r"^[ \t]*+#", re.MULTILINE)
_INDENTED_CSV = re.compile(r'^[ \t]++"[^"\n]{1,200}","', re.MULTILINE)  # `  "Type","Time(%)",...`
# an nvprof summary's header or typed row as a Markdown pipe-table row: `| Type | Time(%) |`
_PIPED_NVPROF = re.compile(
    r"^[ \t]*+\|[ \t]*+(?:Type[ \t]*+\||GPU activities:|API calls:)", re.MULTILINE
)
# an `nsys stats` table as a Markdown pipe-table row: a cell that names an nsys column with its
# unit (`| Time (%) | Total Time (ns) |`, `| Start (ns) |`, `| Total (MB) |`)
_PIPED_NSYS = re.compile(
    r"^[ \t]*+\|[^\n]*?\|[ \t]*+(?:Total Time \(ns\)|Start \(ns\)|Total \(MB\))[ \t]*+\|",
    re.MULTILINE,
)
_BOXED = re.compile(r"^[ \t]*+\+-++\+", re.MULTILINE)  # a box's rule: `+----+---`
_TYPED_ROW = re.compile(r"^[ \t]*(?:GPU activities|API calls):", re.MULTILINE)
_LONE_TYPE = re.compile(r"^[ \t]*+(?:GPU activities|API calls):[ \t\r]*+$", re.MULTILINE)
_API_NAME = re.compile(r"[ \t]cu[A-Za-z]\w*[ \t]*$", re.MULTILINE)  # ends an API summary row
_BINARY_SUFFIXES = detect.REPORT_SUFFIXES + detect.NCU_REPORT_SUFFIXES


@dataclass(frozen=True)
class Input:
    """One `--stage` input: the file or folder as given (`path`, named in every message and kept
    in `raw/`), its kind, and the paste's shape undone (`shape`: None for a file read as it
    is)."""

    path: Path
    kind: str
    shape: pasted.Reshaped | None = None

    @property
    def source(self) -> Path | csvtext.Held:
        """What the readers read: the file, or its text with the paste's shape undone."""
        return self.path if self.shape is None else csvtext.Held(self.path, self.shape.data)


def detected(path: Path) -> Input:
    """The input at `path` with its kind (`detect.detect`) and, for a double-spaced, quoted or
    commented-out paste, one of nvprof summary or nsys API summary rows without their header or
    an nvprof summary as a Markdown pipe table, its shape undone (see the module docstring).

    Raises: ParseError as `detect.detect` for the file as it is read (a double-spaced one's line
        numbers the file's own, and what was undone said), or saying that an HTML page or a
        notebook shows no text (`published.nothing_shown`).
    """
    shape = _published(path) or _double_spaced(path)
    shape = _reshaped(path, shape, _PIPED_NVPROF, pasted.unpiped) or shape
    shape = _reshaped(path, shape, _BOXED, boxed.unboxed) or shape
    shape = _reshaped(path, shape, _LONE_TYPE, pasted.retyped) or shape
    shape = _reshaped(path, shape, _INDENTED_CSV, pasted.unindented) or shape
    if shape is not None and (nothing := published.nothing_shown(shape)) is not None:
        return _prose_blocks(path, shape, ParseError(path, detect.EXPECTED, nothing))
    try:
        return Input(path, detect.detect(Input(path, "", shape).source), shape)
    except ParseError as exc:
        refused = exc if shape is None else noted(exc, shape, path)
    quoted = _reshaped(path, shape, _QUOTE, pasted.unquoted)
    later = (
        (shape, _PIPED_NSYS, piped_nsys.unpiped),
        (quoted or shape, _TYPED_ROW, pasted.headed),
        (quoted or shape, _API_NAME, pasted.api_headed),
        (shape, _COMMENT, pasted.uncommented),
        (shape, _STAR, pasted.unstarred),
        (shape, _HASH, pasted.unhashed),
    )
    # in this order, each read (the file again) only when the ones before it detected nothing
    not_utf8 = shape is None and refused.detail.startswith(csvtext.NOT_UTF8)
    windows = (_windows(path) for _ in [0] if not_utf8)
    ways = (undone for way in later for undone in _with_csv_unindented(path, *way))
    for undone in itertools.chain([quoted], ways, windows):
        if undone is None:
            continue
        try:
            return Input(path, detect.detect(Input(path, "", undone).source), undone)
        except ParseError:
            continue
    late = _late(path) if shape is None else None
    if late is not None:
        return Input(path, detect.detect(Input(path, "", late).source), late)
    return _prose_blocks(path, shape, refused)


def pipes_left_out(inp: Input) -> list[str]:
    """A warning naming the lines of the nsys pipe tables of a text file that imported without
    them (its plain tables read; pipe tables are read only where a file has none:
    `piped_nsys`), if it has any."""
    if inp.shape and piped_nsys.PIPED in inp.shape.note:
        return []
    if not inp.path.is_file() or inp.path.suffix.lower() in _BINARY_SUFFIXES:
        return []
    data = inp.path.read_bytes()
    found = piped_nsys.header_lines(data) if b"|" in data else []
    if not found:
        return []
    lines = ", ".join(map(str, found))
    return [
        f"line(s) {lines}: {len(found)} nsys table(s) written as Markdown pipe tables left out: "
        "profgen reads a file's pipe tables only when it has no other table it reads (to import "
        "them, give them a file of their own)"
    ]


def _prose_blocks(path: Path, shape: pasted.Reshaped | None, refused: ParseError) -> Input:
    """The notebook at `path` read from the fenced blocks of its Markdown cells
    (`published.notebook_blocks`), when what its cells printed (`shape`) was `refused` and the
    blocks hold a profiler's output.

    Raises: `refused`, when `path` is no notebook or its blocks hold no profiler output."""
    if shape is None or not shape.note.startswith(published.NOTEBOOK):
        raise refused
    try:
        blocks = published.notebook_blocks(csvtext.read_utf8_ascii(path, detect.EXPECTED)[0])
        return Input(path, detect.detect(Input(path, "", blocks).source), blocks)
    except ParseError:
        raise refused from None


def noted(exc: ParseError, shape: pasted.Reshaped, path: Path) -> ParseError:
    """`exc` (about the text with `shape` undone) naming the file at `path` and its own line
    numbers, and saying what was undone, and why a summary header it then has is none nvprof
    prints (`pasted.lacking`)."""
    detail = shape.located(exc.detail) + "; " if exc.detail else ""
    why = pasted.lacking(shape)
    said = f"the file has {shape.note}" + (f", but {why}" if why else "")
    return ParseError(path, exc.expected, detail + said)


def relocated(
    inp: Input, runs: list[Run], extra: dict[str, Any]
) -> tuple[list[Run], dict[str, Any]]:
    """What `inp` gave (its runs, and run.json's additions: `warnings`, a capture's
    `sections`), every line number the file's own, and a warning that says what was undone."""
    shape = inp.shape
    if shape is None:
        return runs, extra
    moved = [
        replace(run, technique=shape.located(run.technique), place=shape.located(run.place))
        for run in runs
    ]
    out = dict(extra)
    out["warnings"] = [
        f"{inp.path}: the file has {shape.note}",
        *(shape.located(w) for w in extra.get("warnings", [])),
    ]
    if "sections" in extra:
        out["sections"] = [_section(s, shape) for s in extra["sections"]]
    return moved, out


def _section(entry: dict[str, Any], shape: pasted.Reshaped) -> dict[str, Any]:
    """A capture section's entry in run.json with the file's line numbers."""
    out = {**entry, "line": shape.file_line(entry["line"])}
    out["elided"] = [shape.file_line(n) for n in entry.get("elided", [])]
    for said in ("left_out", "cut_row"):
        if entry.get(said):
            out[said] = shape.located(entry[said])
    return out


def _text_file(path: Path) -> bool:
    """Whether `path` is a regular file that may hold text (not a report, a folder or a FIFO:
    `detect` says what those are)."""
    return path.suffix.lower() not in _BINARY_SUFFIXES and path.is_file()


def _published(path: Path) -> pasted.Reshaped | None:
    """The text of the file at `path` as the terminal printed it, when the file is an HTML page
    or a Jupyter notebook (`parse.published`); else None."""
    if not _text_file(path):
        return None
    try:
        head = csvtext.read_head(path, detect.EXPECTED)
        if published.is_html(head):
            return published.html_text(csvtext.read_utf8_ascii(path, detect.EXPECTED)[0])
        if published.is_notebook(head):
            return published.notebook_text(csvtext.read_utf8_ascii(path, detect.EXPECTED)[0])
    except ParseError:
        return None
    return None


def _double_spaced(path: Path) -> pasted.Reshaped | None:
    """The text of the file at `path` read as single-spaced, when it is a double-spaced paste;
    else None (a folder, a report, a file that is not text: `detect` says what it is)."""
    if not _text_file(path):
        return None
    try:
        if not pasted.double_spaced_head(csvtext.read_head(path, detect.EXPECTED)):
            return None
        data, _ = csvtext.read_utf8_ascii(path, detect.EXPECTED)
    except ParseError:
        return None
    return pasted.double_spaced(data)


def _windows(path: Path) -> pasted.Reshaped | None:
    """The text of the file at `path` read as cp1252, when it is not UTF-8 but is Windows text
    (`codepage`: nsys on Windows), its boxed tables laid out as column text; else None."""
    if not _text_file(path):
        return None
    try:
        text = codepage.windows_text(files.read_bytes(path))
    except DataError:
        return None
    if text is None:
        return None
    return _reshaped(path, text, _BOXED, boxed.unboxed) or text


def _late(path: Path) -> pasted.Reshaped | None:
    """The file at `path` from the line where a profiler's output starts, when its first 64 KiB
    hold none and it has some further on (`late_start`); else None."""
    if not _text_file(path):
        return None
    try:  # a file whose start says what it is (a metric list, gprof, ...) is that
        if unusable.describe(csvtext.read_head(path, detect.EXPECTED).splitlines()):
            return None
    except ParseError:
        return None
    start = late_start.find(path)
    if start is None:
        return None
    with path.open("rb") as handle:
        handle.seek(start.offset)
        data = handle.read()
    return pasted.Reshaped(data, np.array([start.line]), pasted.LATE.format(line=start.line))


def _with_csv_unindented(
    path: Path,
    shape: pasted.Reshaped | None,
    mark: re.Pattern[str],
    undo: Callable[[bytes], pasted.Reshaped | None],
) -> Iterator[pasted.Reshaped]:
    """`_reshaped` of the file, first with the indent of its CSV lines taken off too, when it
    then has some (`//   "ID","Process ID",...`: the blanks after a comment mark are the
    comment's, not the CSV's), then as it is; nothing when `undo` finds nothing."""
    undone = _reshaped(path, shape, mark, undo)
    if undone is None:
        return
    deeper = _reshaped(path, undone, _INDENTED_CSV, pasted.unindented)
    if deeper is not None:
        yield deeper
    yield undone


def _reshaped(
    path: Path,
    shape: pasted.Reshaped | None,
    mark: re.Pattern[str],
    undo: Callable[[bytes], pasted.Reshaped | None],
) -> pasted.Reshaped | None:
    """The text of the file at `path` (`shape` undone first, if any) with `undo`'s shape undone
    too, when its head holds `mark` (the lines `undo` looks for) and `undo` finds them; else
    None."""
    source = Input(path, "", shape).source
    try:
        if mark.search(csvtext.read_head(source, detect.EXPECTED)) is None:
            return None
        data, _ = csvtext.read_utf8_ascii(source, detect.EXPECTED)
    except ParseError:
        return None
    found = undo(data)
    if found is None or shape is None:
        return found
    return shape.then(found)
