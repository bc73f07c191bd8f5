"""The Markdown heading a README quotes a profiler run under (`## Change how we initialize
CuRAND`), so that the stage a run becomes is titled by its step (`profiler.import_runs`).

A file of several runs (nvprof summaries pasted one per step, nsys outputs each in a fence of its
own) is searched only outside the runs' own text (their tables, a capture's sections): a heading
is an ATX one (`#` to `######`, then a blank) outside code fences, the fences counted from the
file's start in that text (the runs' text holds none: a fence ends a table and cuts a capture's
section). A `# comment` inside a fenced block is no heading.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# A code fence or a heading line; the heading's blanks are read once (no backtracking).
_MARKDOWN_LINE = re.compile(
    r"^ {0,3}(?:(?P<fence>```|~~~)|#{1,6}[ \t]++(?P<heading>[^\n]*))", re.MULTILINE
)
_MARKDOWN_BYTES = re.compile(_MARKDOWN_LINE.pattern.encode(), re.MULTILINE)
LIMIT = 200  # characters of a heading kept in a title


def breaks(data: bytes) -> list[int]:
    """The offset of each Markdown code fence line or heading line of `data`: what parts two
    runs pasted one per block or heading. Found from their marks' literal bytes (a pattern
    tried at every line of a long text would cost), each checked at its line's start."""
    starts = set()
    for mark in b"`~#":  # (one byte: its search is memchr's)
        at = data.find(mark)
        while at >= 0:
            line = data.rfind(b"\n", 0, at) + 1
            if at - line <= 3 and _MARKDOWN_BYTES.match(data, line):
                starts.add(line)
            at = data.find(mark, at + 1)
    return sorted(starts)


def above(cut: Callable[[int, int], str], runs: list[list[tuple[int, int]]]) -> list[str | None]:
    """For each run, the heading nearest above its first span and below the run before's
    spans, if any.

    Args:
        cut: the file's text from one offset to another.
        runs: each run's spans (`(start, end)` offsets of its tables or sections), in file order.

    Returns: one heading (its text without the `#` marks) or None per run.
    """
    out: list[str | None] = []
    since, inside = 0, False
    for spans in runs:
        heading = None
        for n, (start, end) in enumerate(spans):
            for line in _MARKDOWN_LINE.finditer(cut(since, start) if start > since else ""):
                if line["fence"]:
                    inside = not inside
                elif not inside and n == 0:
                    heading = line["heading"].strip().rstrip("#").strip()[:LIMIT] or None
            since = max(since, end)
        out.append(heading)
    return out
