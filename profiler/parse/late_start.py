"""Where a file's profiler output starts when its first 64 KiB hold none: a long run log (a
build, the program's own output) with nvprof's, ncu's or nsys's output further down.

Detection reads a file's first 64 KiB (`csvtext.HEAD_BYTES`), which decide almost every file
without the rest being read. Only when they recognise nothing and the file goes on does `find`
look through the whole file for a line that a profiler's output starts with or holds early: a
`==PID==`, `========` or `==PROF==` line (any line starting `==`), a table header's `(%)`,
`Duration` or `Invocations`, ncu's `Section: ` and CSV `"Process ID"`, nsys's `Executing '`
and `Statistics` (its ` ** ` titles have a header under them). Each is found with `bytes.find`
on the file mapped into memory (no pattern, nothing copied), always onwards from where it was
last found. A line holding one is taken when detection recognises it as the start of one tool's
output (`detect.tool_kind`), alone or with the line under it (a header over its rule). A line
of program output that holds one of those words costs the reading of it and the next (at most
8 KiB) once, and about 25 us. Linear in the file: about 1 s per 100 MB of program output, plus
that per line holding such a word.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from pathlib import Path

from profiler.parse import csvtext, detect

MARKS = (
    b"\n==",
    b"(%)",
    b"Duration",
    b"Invocations",
    b"Section: ",
    b'"Process ID"',
    b"Executing '",
    b"Statistics",
)
_LOOK = 8192  # the bytes read from a line that may start a profiler's output


@dataclass(frozen=True)
class Start:
    """Where the profiler output starts: its byte offset and its line (from 1)."""

    offset: int
    line: int


def find(path: Path) -> Start | None:
    """The first line of the file at `path` that starts a profiler's output, when the file is
    longer than the 64 KiB detection reads; else None (or when it cannot be read: detection has
    said why already)."""
    try:
        with path.open("rb") as handle:
            if path.stat().st_size <= csvtext.HEAD_BYTES:
                return None
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _first(data)
    except (OSError, ValueError):
        return None


def _first(data: mmap.mmap) -> Start | None:
    """`find` in the file's bytes. `pos` is always a line's start: the first one not yet
    passed over (a `\\n==` mark is looked for from the newline before it)."""
    next_at = [data.find(mark) for mark in MARKS]
    pos = 0
    while True:
        low = max(pos - 1, 0)
        for k, at in enumerate(next_at):
            if 0 <= at < low:
                next_at[k] = data.find(MARKS[k], low)
        found = [at for at in next_at if at >= 0]
        if not found:
            return None
        hit = min(found)
        if data[hit : hit + 1] == b"\n":  # `\n==`: the line after it
            start = hit + 1
        else:
            start = data.rfind(b"\n", pos, hit) + 1 or pos
        if _starts_output(data, start):
            return Start(start, 1 + _count_lines(data, start))
        pos = data.find(b"\n", start) + 1
        if not pos:
            return None


def _starts_output(data: mmap.mmap, start: int) -> bool:
    """Whether the line at `start` starts one tool's output: alone, or with the next line (at
    most `_LOOK` bytes) when that one alone does not (a header over its rule)."""
    end = data.find(b"\n", start, start + _LOOK)
    end = -1 if end < 0 else data.find(b"\n", end + 1, start + _LOOK)
    first, _, second = data[start : end if end >= 0 else start + _LOOK].partition(b"\n")
    if detect.tool_kind(first.decode("utf-8", "replace")) is not None:
        return True
    if not second or detect.tool_kind((first + b"\n" + second).decode("utf-8", "replace")) is None:
        return False
    return detect.tool_kind(second.decode("utf-8", "replace")) is None  # a header over its rule


def _count_lines(data: mmap.mmap, end: int) -> int:
    """The newlines before `end`, counted a chunk at a time (nothing large copied at once)."""
    step, count = 1 << 24, 0
    for at in range(0, end, step):
        count += data[at : min(at + step, end)].count(b"\n")
    return count
