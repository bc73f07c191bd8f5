"""Tables of nvprof's that profgen has no table for, said when a log holds them.

`nvprof --unified-memory-profiling per-process-device` (on by default from CUDA 8) prints a
`==PID== Unified Memory profiling result:` table of page migrations and faults under the
summary, and `nvprof --dependency-analysis` a `==PID== Dependency Analysis:` table of the
critical path. Neither is a GPU activity nor an API call: they are not read, and the reader says
so (`values.ReadNote`), naming each with its line, rather than passing over them without a word.
"""

from __future__ import annotations

import warnings
from typing import Protocol

from profiler.parse import values

# nvprof's line that titles each table, after its `==PID== ` (or `======== `) prefix
_TITLES = (
    ("Unified Memory profiling result:", "Unified Memory profiling result"),
    ("Dependency Analysis:", "Dependency Analysis (critical path)"),
)
_MAX_PREFIX = 24  # `==1234567== `: longer text before the title is no nvprof line of it


class _Searchable(Protocol):
    def find(self, sub: str, start: int = 0, end: int | None = None) -> int: ...
    def rfind(self, sub: str, start: int = 0, end: int | None = None) -> int: ...
    def count(self, sub: str, start: int, end: int, /) -> int: ...
    def __getitem__(self, cut: slice) -> str: ...


def note(text: _Searchable) -> None:
    """Warn (`values.ReadNote`) naming the first table of each kind above in `text` (an nvprof
    log, as `str` or `nvprof.AsciiText`) and its line: left out."""
    found = [(line, what) for title, what in _TITLES if (line := _line_of(text, title))]
    if not found:
        return
    said = ", ".join(f"{what} (line {line})" for line, what in sorted(found))
    first = min(line for line, _ in found)
    message = (
        f"line {first}: nvprof's {said} left out: profgen has no table for "
        f"{'them' if len(found) > 1 else 'it'}"
    )
    warnings.warn(values.ReadNote(message, first), stacklevel=3)


def _line_of(text: _Searchable, title: str) -> int | None:
    """The line (1-based) of the first nvprof line titled `title` (`==PID== ` before it, or
    `======== `), or None."""
    at = text.find(title)
    while at >= 0:
        start = text.rfind("\n", max(0, at - _MAX_PREFIX), at) + 1
        prefix = text[start:at]
        if start > 0 or at < _MAX_PREFIX:
            if prefix.startswith("==") and prefix.endswith("== "):
                return text.count("\n", 0, start) + 1
        at = text.find(title, at + len(title))
    return None
