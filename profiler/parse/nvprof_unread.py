"""Tables of nvprof's that profgen has no table for, said when a log holds them.

`nvprof --unified-memory-profiling per-process-device` (on by default from CUDA 8) prints a
`==PID== Unified Memory profiling result:` table of page migrations and faults under the
summary, and `nvprof --dependency-analysis` a `==PID== Dependency Analysis:` table of the
critical path. Neither is a GPU activity nor an API call: they are not read, and the reader says
so (`reader_notes.ReadNote`), naming each with its line, rather than passing over them without a
word.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Protocol

from profiler.parse import reader_notes

# nvprof's line that titles each table, after its `==PID== ` (or `======== `) prefix
_TITLES = (
    ("Unified Memory profiling result:", "Unified Memory profiling result"),
    ("Dependency Analysis:", "Dependency Analysis (critical path)"),
)
_MAX_PREFIX = 24  # `==1234567== `: longer text before the title is no nvprof line of it
# The Unified Memory table's header, which a paste may quote without the title line above it
_UNIFIED_HEADER = re.compile(
    r"^[ \t]*+Count[ \t]++Avg Size[ \t]++Min Size[ \t]++Max Size[ \t]++Total Size[ \t]++"
    r"Total Time[ \t]++Name",
    re.MULTILINE,
)


class _Searchable(Protocol):
    def __getitem__(self, cut: slice) -> str: ...
    def count(self, sub: str, start: int, end: int, /) -> int: ...


# The starts of the lines that are a given title (after blanks and an `==PID==` prefix, if any):
# `nvprof_tables.marker_lines`, which given the leads of an ASCII text's lines searches only those
# led by `=` (a 300 MB log is not searched whole twice).
MarkerLines = Callable[[str], list[int]]


def note(text: _Searchable, marker_lines: MarkerLines) -> None:
    """Warn (`reader_notes.ReadNote`) naming the first table of each kind above in `text` (an nvprof
    log, as `str` or `nvprof_text.AsciiText`; `marker_lines` finds its title lines) and its line:
    left out."""
    found = [
        (line, what) for title, what in _TITLES if (line := _line_of(text, marker_lines(title)))
    ]
    if not found:
        return
    said = ", ".join(f"{what} (line {line})" for line, what in sorted(found))
    first = min(line for line, _ in found)
    message = (
        f"line {first}: nvprof's {said} left out: profgen has no table for "
        f"{'them' if len(found) > 1 else 'it'}"
    )
    warnings.warn(reader_notes.ReadNote(message, first), stacklevel=3)


def _line_of(text: _Searchable, starts: list[int]) -> int | None:
    """The line (1-based) of the first of the title lines starting at `starts` whose title has
    nvprof's prefix (`==PID== ` or `======== ` before it, not the bare title), or None."""
    for start in starts:
        if text[start : start + _MAX_PREFIX].lstrip(" \t").startswith("=="):
            return text.count("\n", 0, start) + 1
    return None


def only(text: str) -> str | None:
    """Why a text with no table profgen reads is refused when it holds nvprof's Unified Memory
    table (its `Unified Memory profiling result:` title or its `Count  Avg Size ...` header):
    that it is the only kind of table there, and profgen has none for it; else None."""
    if _TITLES[0][0] not in text and _UNIFIED_HEADER.search(text) is None:
        return None
    return (
        "its only nvprof tables are Unified Memory profiling results (page migrations and "
        "faults: `Count Avg Size ... Total Time Name`), which profgen has no table for"
    )
