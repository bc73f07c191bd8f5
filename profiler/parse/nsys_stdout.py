"""A capture of `nsys stats` (or `nsys profile --stats=true`) output -> one block per report.

What the versions print around their tables, all understood here:

- 2025.x-2023.2: `Processing [x.sqlite] with [.../cuda_api_sum.py]...`, a banner
  ` ** CUDA API Summary (cuda_api_sum):`, `SKIPPED: x.sqlite does not contain ...`;
- 2024.x-2022.x `--stats=true`: `[5/8] Executing 'cuda_api_sum' stats report` (or
  `'cudaapisum'`), and in 2022 a heading `CUDA API Statistics:` under it;
- 2021.x-2020.x: headings alone (`CUDA Kernel Statistics:`, `CUDA Memory Operation Statistics
  (by time):`, `(by size in KiB):`), `Exporting [.../gputrace.py x.sqlite] to console...`,
  `Running [.../cudaapisum.py ...]`;
- 2019.x: `Generating CUDA API Statistics...` then `CUDA API Statistics (nanoseconds)`,
  `CUDA Memory Operation Statistics (KiB)`.

A marker names the report of the table that follows it; a marker of a report profgen does not
use (`osrt_sum`, `Operating System Runtime API Statistics:`, ...) makes that table skipped, since
its header alone would pass for a CUDA API summary. A table without a marker is known by its
header. Progress bars, `Generated:` lines and the program's own output are dropped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from profiler.parse import nsys_fields, nsys_text
from profiler.parse.values import LineCounter

SKIP = ""  # the report of a block under a marker of a report profgen does not read

# Every pattern here runs in time and memory linear in the text: single character classes,
# possessive or bounded repeats, no nested quantifiers (a repeated group such as
# `(?:[ \t]*\n)+` costs re a backtracking entry per repeat: 1.2 GB for a 10-million-line run).
# Lines that are no table: markers that name the report that follows, and nsys's chatter.
_SPECIAL_LINE = (
    r"(?:(?P<marker>(?:Processing|Running|Exporting) \[|[ \t]*\*\*"
    r"|\[[0-9]+/[0-9]+\] Executing '|[A-Z][A-Za-z /-]{0,60} Statistics\b)"
    r"|Generating |Exporting|SKIPPED:|NOTICE:|WARNING:|ERROR:|\[[0-9]+/[0-9]+\]"
    r"|Generated:|Using |Report file|Processing events|Saving temporary|Saved report"
    r"|Creating final|Capturing symbol|Collecting data|Exported successfully)[^\n]*"
)
_SPECIAL = re.compile(_SPECIAL_LINE)  # matched at a line's start
# One pass over the newlines finds both what ends a paragraph, a run of blank lines (`brk`:
# tried first), and the special lines inside one. A pattern that starts with a literal is
# searched for that literal first, several times faster than `^` in MULTILINE mode over a
# million-row table, and one pass instead of two halves the time spent walking the text.
_BREAK_OR_SPECIAL = re.compile(r"\n(?:(?P<brk>[\n \t\r]*\n)|(?P<line>" + _SPECIAL_LINE + "))")
_LEADING_BLANKS = re.compile(r"(?:[ \t\r]*\n)*+")
_SCRIPT = re.compile(r"\] with \[(?P<script>[^\]\n]*)\]")
_RUNNING = re.compile(r"^(?:Running|Exporting) \[(?P<script>[^\s\]]+)")
_EXECUTING = re.compile(r"^\[[0-9]+/[0-9]+\] Executing '(?P<script>[^'\n]*)'")
_BANNER = re.compile(r"\((?P<banner>[A-Za-z_]+)\):?[ \t\r]*\Z")
_HEADINGS = (
    ("cuda api statistics", "cuda_api_sum"),
    ("cuda kernel statistics", "cuda_gpu_kern_sum"),
    ("nvtx push-pop range statistics", "nvtx_sum"),
    ("nvtx range statistics", "nvtx_sum"),
)
_HEADING_UNIT = re.compile(r"\((?:by size in )?(?P<unit>KiB|MiB|GiB|KB|MB|GB|B)\)")


class Block(NamedTuple):
    """A table's text and where it came from.

    Attributes:
        report: the report its marker names (canonical), `SKIP`, or None (no marker).
        text: the table, header line first.
        first_line: the file line of its first line.
        dropped: file lines of nsys chatter removed from inside it.
        units: units a heading gives for fields whose header has none (`{"total": "KiB"}`).
    """

    report: str | None
    text: str
    first_line: int
    dropped: tuple[int, ...]
    units: dict[str, str]


def split_stdout(text: str) -> list[Block]:
    """Cut a capture into blocks of table text (CSV or column text), each with the report its
    marker names. Paragraphs end at blank lines and at markers; other nsys lines are dropped.

    Linear in the text: paragraphs and special lines are found by patterns that cannot
    backtrack, and only those lines are visited in Python.
    """
    lines = LineCounter(text)
    blocks: list[Block] = []
    pending: list[tuple[str | None, dict[str, str]]] = [(None, {})]
    start = 0
    specials = _first_special(text, start)
    for found in _BREAK_OR_SPECIAL.finditer(text):
        if found["brk"] is None:
            specials.append((found.start("line"), found.end("line"), found["marker"] is not None))
            continue
        _paragraph(text, start, found.start() + 1, lines, pending, blocks, specials)
        start = found.end()
        specials = _first_special(text, start)
    _paragraph(text, start, len(text), lines, pending, blocks, specials)
    return blocks


def _first_special(text: str, start: int) -> list[tuple[int, int, bool]]:
    """The special line a paragraph starts with (the pass over newlines sees the others)."""
    first = _SPECIAL.match(text, start)
    return [] if first is None else [(first.start(), first.end(), first["marker"] is not None)]


def _paragraph(
    text: str,
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
            a = _LEADING_BLANKS.match(text, a, b).end()  # type: ignore[union-attr]
            if a >= b:
                return
            first = lines.at(a)
        pieces.append((a, b))

    def flush() -> None:
        body = text[pieces[0][0] : pieces[0][1]] if len(pieces) == 1 else ""
        body = body or "".join(text[a:b] for a, b in pieces)
        if body and not body.isspace():  # (`strip` would copy a million-row table)
            blocks.append(Block(pending[0][0], body, first, tuple(dropped), pending[0][1]))
            pending[0] = (None, {})
        pieces.clear()
        dropped.clear()

    pos = start
    for a, b, is_marker in specials:
        if a > pos:
            add(pos, a)
        if is_marker:
            flush()
            found = marker(text[a:b])
            if found[0] is not None or pending[0][0] is None:
                pending[0] = found
        elif pieces:
            dropped.append(lines.at(a))
        pos = min(b + 1, end)
    if end > pos:
        add(pos, end)
    flush()


def marker(line: str) -> tuple[str | None, dict[str, str]]:
    """The report a marker line names (canonical, or `SKIP` for one profgen does not read) and
    the units its heading gives; (None, {}) for a line that names none (a progress bar)."""
    text = line.strip()
    if text.endswith((":", ")")) and " Statistics" in text and not text.startswith("**"):
        return _heading(text)
    found = (
        _SCRIPT.search(line)
        or _RUNNING.match(line)
        or _EXECUTING.match(line)
        or _BANNER.search(line.rstrip())
    )
    if found is None:
        return None, {}
    name = found.groupdict().get("script") or found.groupdict().get("banner") or ""
    return nsys_fields.canonical_report(Path(name).name) or SKIP, {}


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
        if previous.strip() and nsys_text.is_rule(line):
            cells = nsys_text.header_cells(previous, nsys_text.spans(line))
            if nsys_fields.identify_cells(cells):
                return True
        previous = line
    return False
