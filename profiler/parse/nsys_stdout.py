"""A capture of `nsys stats` (or `nsys profile --stats=true`) output -> one block per report.

What the versions print around their tables, all understood here:

- 2025.x-2023.2: `Processing [x.sqlite] with [.../cuda_api_sum.py]...`, a banner
  ` ** CUDA API Summary (cuda_api_sum):`, `SKIPPED: x.sqlite does not contain ...`;
- 2024.x-2022.x `--stats=true`: `[5/8] Executing 'cuda_api_sum' stats report` (or
  `'cudaapisum'`; `[ 5/11]`, the counter padded, when it runs ten reports or more), and in
  2022 a heading `CUDA API Statistics:` under it;
- 2021.x-2020.x: headings alone (`CUDA Kernel Statistics:`, `CUDA Memory Operation Statistics
  (by time):`, `(by size in KiB):`), `Exporting [.../gputrace.py x.sqlite] to console...`,
  `Running [.../cudaapisum.py ...]`;
- 2019.x: `Generating CUDA API Statistics...` then `CUDA API Statistics (nanoseconds)`,
  `CUDA Memory Operation Statistics (KiB)`.

A Markdown code fence ends a table as a marker does (naming no report).

A marker names the report of the table that follows it; a marker of a report profgen does not
use (`osrt_sum`, `Operating System Runtime API Statistics:`, ...) makes that table skipped, since
its header alone would pass for a CUDA API summary. A table without a marker is known by its
header. Progress bars, `Generated:` lines and the program's own output are dropped.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from profiler.parse import nsys_fields, nsys_rule
from profiler.parse.table_origin import LineCounter

SKIP = ""  # the report of a block under a marker of a report profgen does not read

# Every pattern here runs in time and memory linear in the text: single character classes,
# possessive or bounded repeats, no nested quantifiers (a repeated group such as
# `(?:[ \t]*\n)+` costs re a backtracking entry per repeat: 1.2 GB for a 10-million-line run).
# Lines that are no table: markers that name the report that follows (a Markdown code fence
# is one that names none: it ends the table above it, as a README closes a block right under
# the last row), and nsys's chatter.
_SPECIAL_LINE = (
    r"(?:(?P<marker>(?:Processing|Running|Exporting) \[|[ \t]*\*\*"
    r"|\[ {0,3}[0-9]+/[0-9]+\] Executing '|[A-Z][A-Za-z /-]{0,60} Statistics\b"
    r"|[ \t]{0,3}(?:```|~~~))"
    r"|Generating |Exporting|SKIPPED:|NOTICE:|WARNING:|ERROR:|\[ {0,3}[0-9]+/[0-9]+\]"
    r"|Generated:|Using |Report file|Processing events|Saving temporary|Saved report"
    r"|Creating final|Capturing symbol|Collecting data|Exported successfully)[^\n]*"
)
_SPECIAL = re.compile(_SPECIAL_LINE)  # matched at a line's start
# A 2020-2021 heading indented as a Markdown code block or a notebook's output exported to
# Markdown (`    Operating System Runtime API Statistics:`): a marker when it starts a paragraph
# (only there: a blank-led line is passed over as a table row is, `_BREAK_OR_SPECIAL`).
_INDENTED_HEADING = re.compile(r"[ \t]{1,8}(?P<marker>[A-Z][A-Za-z /-]{0,60} Statistics\b)[^\n]*")
# One pass over the newlines finds both what ends a paragraph, a run of blank lines (`brk`:
# tried first), and the special lines inside one. A pattern that starts with a literal is
# searched for that literal first, several times faster than `^` in MULTILINE mode over a
# million-row table, and one pass instead of two halves the time spent walking the text.
# The lookahead first passes over a line that can be neither (one led by blanks, then a byte
# other than `*`, a fence's backtick or tilde, or a line end, as a table row is), a third of
# the time of trying each.
_BREAK_OR_SPECIAL = re.compile(
    r"\n(?=[ \t]*+[\n\r*`~]|[A-Z\[])(?:(?P<brk>[\n \t\r]*\n)|(?P<line>" + _SPECIAL_LINE + "))"
)
_LEADING_BLANKS = re.compile(r"(?:[ \t\r]*\n)*+")
_SPACES = re.compile(r"\s*+")  # what str.isspace() takes
# A table row after which `_BREAK_OR_SPECIAL` cannot match (`_plain_rows`): bytes it may not
# start with, and bytes its first one that is no blank or tab may not be.
PLAIN_RUN = 256  # rows: fewer are left to the pattern
_LEAD = 16
_BLOCK_BYTES = 1 << 20
_NOT_START = np.zeros(256, dtype=bool)
_NOT_START[[*range(ord("A"), ord("Z") + 1), ord("[")]] = True
_NOT_FIRST = np.zeros(256, dtype=bool)
_NOT_FIRST[[ord("\n"), ord("\r"), ord("*"), ord("`"), ord("~"), ord(" "), ord("\t")]] = True
# The same patterns over the bytes of an ASCII capture (`split_ascii`).
_BYTES = {
    pattern: re.compile(pattern.pattern.encode("ascii"))
    for pattern in (_SPECIAL, _BREAK_OR_SPECIAL, _LEADING_BLANKS, _INDENTED_HEADING)
}
_BYTES[_SPACES] = re.compile(rb"[\s\x1c-\x1f]*+")
_SCRIPT = re.compile(r"\] with \[(?P<script>[^\]\n]*)\]")
_RUNNING = re.compile(r"^(?:Running|Exporting) \[(?P<script>[^\s\]]+)")
_EXECUTING = re.compile(r"^\[ {0,3}[0-9]+/[0-9]+\] Executing '(?P<script>[^'\n]*)'")
_BANNER = re.compile(r"\((?P<banner>[A-Za-z_]+)\):?[ \t\r]*\Z")
_HEADINGS = (
    ("cuda api statistics", "cuda_api_sum"),
    ("cuda kernel statistics", "cuda_gpu_kern_sum"),
    ("nvtx push-pop range statistics", "nvtx_sum"),
    ("nvtx range statistics", "nvtx_sum"),
)
_HEADING_UNIT = re.compile(r"\((?:by size in )?(?P<unit>KiB|MiB|GiB|KB|MB|GB|B)\)")


@dataclass(frozen=True)
class Block:
    """A table of a capture and where it came from; its text is made only when asked for (a
    reader that takes the rows of an ASCII capture from its bytes never needs it, and a
    million rows cost a fifth of a second to decode).

    Attributes:
        report: the report its marker names (canonical), `SKIP`, or None (no marker).
        first_line: the file line of its first line.
        dropped: file lines of nsys chatter removed from inside it.
        units: units a heading gives for fields whose header has none (`{"total": "KiB"}`).
        at: where `text` starts in the capture (-1: it is pieces of it, chatter dropped).
        source: the capture it was cut from (a str, or the bytes of an ASCII capture).
        pieces: the (start, end) in `source` of the parts `text` joins.
    """

    report: str | None
    first_line: int
    dropped: tuple[int, ...]
    units: dict[str, str]
    at: int
    source: str | bytes = field(repr=False, compare=False)
    pieces: tuple[tuple[int, int], ...] = field(repr=False, compare=False)

    @cached_property
    def text(self) -> str:
        """The table, header line first."""
        return "".join(_decoded(self.source, a, b) for a, b in self.pieces)

    @property
    def span(self) -> tuple[int, int] | None:
        """Where `text` lies in the capture, when it is one piece of it (else None)."""
        return (self.at, self.pieces[0][1]) if self.at >= 0 else None

    def head(self) -> str:
        """`text` up to the end of its second line (a header and its rule), the rest uncut."""
        if len(self.pieces) > 1:
            return _head(self.text, 0, len(self.text))
        return _head(self.source, *self.pieces[0])

    def header_rule(self) -> tuple[str, str]:
        """Its first two lines (a table's header and rule, if it is a table); the second empty
        when it has one line."""
        one, _, rest = self.head().partition("\n")
        return one, rest.split("\n", 1)[0]

    def less_first_line(self) -> Block | None:
        """The block without its first line (a command or caption typed right above a table,
        no blank line between), or None when that line is all of its first piece."""
        a, b = self.pieces[0]
        end = self.source.find(b"\n" if isinstance(self.source, bytes) else "\n", a, b)  # type: ignore[arg-type]
        if end < 0 or end + 1 >= b:
            return None
        pieces = ((end + 1, b), *self.pieces[1:])
        at = end + 1 if self.at >= 0 else -1
        return dataclasses.replace(self, first_line=self.first_line + 1, at=at, pieces=pieces)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Block) and self._key() == other._key()

    def _key(self) -> tuple[object, ...]:
        return (self.report, self.text, self.first_line, self.dropped, self.units, self.at)


def split_stdout(text: str) -> list[Block]:
    """Cut a capture into blocks of table text (CSV or column text), each with the report its
    marker names. Paragraphs end at blank lines and at markers; other nsys lines are dropped.

    Linear in the text: paragraphs and special lines are found by patterns that cannot
    backtrack, and only those lines are visited in Python.
    """
    return _split(text)


def split_ascii(data: bytes) -> list[Block]:
    """`split_stdout(data.decode())` of an ASCII capture, without a decoded copy of all of it:
    the patterns run over the bytes, and only the blocks (and markers) are decoded. A block's
    `at` is then where it starts in `data`.

    Raises: UnicodeDecodeError for bytes that are not ASCII (the caller decodes those).
    """
    return _split(data)


def _split(text: str | bytes) -> list[Block]:
    lines = LineCounter(text)
    blocks: list[Block] = []
    pending: list[tuple[str | None, dict[str, str]]] = [(None, {})]
    start = 0
    specials = _first_special(text, start)
    for found in _matches(text):
        if found["brk"] is None:
            specials.append((found.start("line"), found.end("line"), found["marker"] is not None))
            continue
        _paragraph(text, start, found.start() + 1, lines, pending, blocks, specials)
        start = found.end()
        specials = _first_special(text, start)
    _paragraph(text, start, len(text), lines, pending, blocks, specials)
    return blocks


def _matches(text: str | bytes) -> Iterator[re.Match[Any]]:
    """`_BREAK_OR_SPECIAL`'s matches in `text`, in order. Over bytes, a run of table rows it
    cannot match at (`_plain_rows`) is jumped over: a million rows of column text cost a fifth
    of a second to walk line by line, a fiftieth to check with NumPy."""
    pattern = _pattern(_BREAK_OR_SPECIAL, text)
    if isinstance(text, str):
        yield from pattern.finditer(text)
        return
    pos = _past_rows(text, 0, 0)
    while (found := pattern.search(text, pos)) is not None:
        yield found
        end = found.end()  # (a break ends after a newline, a special line before one)
        pos = _past_rows(text, end if found["brk"] is not None else end + 1, end)


def _past_rows(data: bytes, line: int, pos: int) -> int:
    """Where to search on from `pos`, the end of a match: the newline that ends the plain rows
    from the start of the next line (`line`), when there are `PLAIN_RUN` of them or more."""
    rows, width = _plain_rows(data, line)
    return line + rows * width - 1 if rows else pos


def _plain_rows(data: bytes, at: int) -> tuple[int, int]:
    """How many lines from `at` (a line start) are rows of one width, and that width: lines
    after whose newline `_BREAK_OR_SPECIAL` cannot match (`_plain`). (0, 0) when they are fewer
    than `PLAIN_RUN`.

    The rows are checked in blocks that double in size up to `_BLOCK_BYTES` (which stay in the
    cache while they are checked), so that the work is in proportion to the rows found: this
    runs after every match.
    """
    width = data.find(b"\n", at) - at + 1
    many = (len(data) - at) // width if width >= 2 else 0
    if many < PLAIN_RUN or data[at + PLAIN_RUN * width - 1] != 10:  # (no table: a byte read)
        return 0, 0
    done, size = 0, PLAIN_RUN
    while done < many:
        rows = min(size, many - done)
        block = np.ndarray((rows, width), dtype=np.uint8, buffer=data, offset=at + done * width)
        good = _plain(block)
        done += good
        if good < rows:
            break
        size = max(size, min(2 * size, _BLOCK_BYTES // width))
    return (done, width) if done >= PLAIN_RUN else (0, 0)


def _plain(rows: np.ndarray) -> int:
    """How many of the first rows (a 2-D array of bytes) are one line each (a newline last and
    nowhere else) that starts with no capital letter or `[`, and whose first byte that is no
    blank or tab (in its first `_LEAD`) is no line end, `*`, backtick or tilde: what
    `_BREAK_OR_SPECIAL`'s lookahead needs after the newline before it."""
    newline = rows == 10
    if np.count_nonzero(newline) == len(rows) and newline[:, -1].all():
        lines = np.ones(len(rows), dtype=bool)
    else:
        lines = newline[:, -1] & ~newline[:, :-1].any(axis=1)
    lead = rows[:, :_LEAD]
    solid = (lead != 32) & (lead != 9)
    first = lead[np.arange(len(lead)), solid.argmax(axis=1)]  # (a blank when none: not plain)
    plain = lines & ~_NOT_FIRST[first] & ~_NOT_START[rows[:, 0]]
    return len(rows) if plain.all() else int(plain.argmin())


def _pattern(pattern: re.Pattern[str], text: str | bytes) -> re.Pattern[Any]:
    """`pattern`, or its twin over bytes for bytes."""
    return pattern if isinstance(text, str) else _BYTES[pattern]


def _decoded(text: str | bytes, a: int, b: int) -> str:
    """`text[a:b]` as a str (bytes: ASCII, decoded without a copy of the bytes first)."""
    return text[a:b] if isinstance(text, str) else str(memoryview(text)[a:b], "ascii")


def _head(text: str | bytes, a: int, b: int) -> str:
    """`text[a:b]` up to the end of its second line, as a str."""
    newline = "\n" if isinstance(text, str) else b"\n"
    one = text.find(newline, a, b)  # type: ignore[arg-type]
    two = text.find(newline, one + 1, b) if one >= 0 else -1  # type: ignore[arg-type]
    return _decoded(text, a, b if two < 0 else two + 1)


def _blank(text: str | bytes, a: int, b: int) -> bool:
    """`text[a:b].isspace()` without the copy (bytes: ASCII, whose spaces for str include the
    separators 0x1C to 0x1F)."""
    return _pattern(_SPACES, text).match(text, a, b).end() == b  # type: ignore[union-attr, arg-type]


def _first_special(text: str | bytes, start: int) -> list[tuple[int, int, bool]]:
    """The special line a paragraph starts with (the pass over newlines sees the others), or
    the indented heading it starts with."""
    first = _pattern(_SPECIAL, text).match(text, start)  # type: ignore[arg-type]
    if first is None:
        first = _pattern(_INDENTED_HEADING, text).match(text, start)  # type: ignore[arg-type]
    return [] if first is None else [(first.start(), first.end(), first["marker"] is not None)]


def _paragraph(
    text: str | bytes,
    start: int,
    end: int,
    lines: LineCounter,
    pending: list[tuple[str | None, dict[str, str]]],
    blocks: list[Block],
    specials: list[tuple[int, int, bool]],
) -> None:
    """The blocks of one paragraph `text[start:end]`, appended to `blocks`; `pending[0]` is the
    report (and units) the last marker named, for the next block; `specials` are the (start,
    end, is a marker) of its special lines."""
    pieces: list[tuple[int, int]] = []
    dropped: list[int] = []
    first = 0

    def add(a: int, b: int) -> None:
        nonlocal first
        if not pieces:
            a = _pattern(_LEADING_BLANKS, text).match(text, a, b).end()  # type: ignore[union-attr, arg-type]
            if a >= b:
                return
            first = lines.at(a)
        pieces.append((a, b))

    def flush() -> None:
        if pieces and not all(_blank(text, a, b) for a, b in pieces) and not _tail(text, pieces):
            at = pieces[0][0] if len(pieces) == 1 else -1
            report, units = pending[0]
            blocks.append(Block(report, first, tuple(dropped), units, at, text, tuple(pieces)))
            pending[0] = (None, {})
        pieces.clear()
        dropped.clear()

    pos = start
    for a, b, is_marker in specials:
        if a > pos:
            add(pos, a)
        if is_marker:
            flush()
            found = marker(_decoded(text, a, b))
            if found[0] is not None or pending[0][0] is None:
                pending[0] = found
        elif pieces:
            dropped.append(lines.at(a))
        pos = min(b + 1, end)
    if end > pos:
        add(pos, end)
    flush()


def _tail(text: str | bytes, pieces: list[tuple[int, int]]) -> bool:
    """Whether a block is the `...` of a marker line a terminal wrapped onto a line of its own
    (`Processing [...cuda_gpu_kern_sum.py]` then `...`): no table, and the marker above it still
    names the table below."""
    if len(pieces) != 1 or pieces[0][1] - pieces[0][0] > 16:
        return False
    return _decoded(text, *pieces[0]).strip() == "..."


def marker(line: str) -> tuple[str | None, dict[str, str]]:
    """The report a marker line names (canonical, or `SKIP` for one profgen does not read) and
    the units its heading gives; (None, {}) for a line that names none (a progress bar)."""
    text = line.strip()
    if text.endswith((":", ")")) and " Statistics" in text and not text.startswith("**"):
        return _heading(text)
    name = named(line)
    if name is None:
        return None, {}
    return nsys_fields.canonical_report(Path(name).name) or SKIP, {}


def named(line: str) -> str | None:
    """The report or script a marker line names as written (`cuda_api_sum`,
    `/opt/.../cudaapisum.py`, `nvtx_sum`), or None: what a run names once and a second run
    names again."""
    found = (
        _SCRIPT.search(line)
        or _RUNNING.match(line)
        or _EXECUTING.match(line)
        or _BANNER.search(line.rstrip())
    )
    if found is None:
        return None
    return found.groupdict().get("script") or found.groupdict().get("banner") or ""


def _heading(text: str) -> tuple[str | None, dict[str, str]]:
    """`CUDA Kernel Statistics:`, `CUDA Memory Operation Statistics (by size in KiB):`, ..."""
    lower = text.lower()
    unit = _HEADING_UNIT.search(text)
    if lower.startswith("cuda memory operation statistics"):
        if unit or "size" in lower:
            return "cuda_gpu_mem_size_sum", ({"total": unit["unit"]} if unit else {})
        return "cuda_gpu_mem_time_sum", {}
    report = next((r for prefix, r in _HEADINGS if lower.startswith(prefix)), SKIP)
    return report, {}


def recognise(head: str) -> bool:
    """Whether the start of a file looks like nsys stats output: a marker line, a CSV header of
    a report, or a column-text header of one over its rule."""
    previous = ""
    for line in head.splitlines():
        if _SPECIAL.match(line) and marker(line)[0]:
            return True
        if "," in line and nsys_fields.identify(line):
            return True
        if previous.strip() and nsys_rule.is_rule(line):
            cells = nsys_rule.header_cells(previous, nsys_rule.columns_under(previous, line))
            if nsys_fields.identify_cells(cells):
                return True
        previous = line
    return False
