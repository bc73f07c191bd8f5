"""The nvprof runs a log started and never finished: a `==PID== NVPROF is profiling process PID`
line with no `==PID== Profiling result:` line of that PID anywhere (the process ended in
nvprof's error, as `==12181== Error: Internal profiling error 1749:999.`, with no table).

`nvprof.read_runs` reports each such run that nvprof's own message explains as left out, with
the runs whose result had no table, so that a log of several runs does not drop its last one
without a word. Runs are told apart by
their PID (nvprof interleaves the lines of processes it profiles at once), so only a log whose
`Profiling result:` lines all carry their `==PID==` prefix is searched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

_STARTED = "NVPROF is profiling process "
_MAX_PREFIX = 24  # `==PID== ` is shorter than this


class Searched(Protocol):
    """A log's text: a `str`, or nvprof's `AsciiText` (its bytes searched as text)."""

    def __len__(self) -> int: ...

    def __getitem__(self, cut: slice, /) -> str: ...

    def find(self, sub: str, start: int = 0, end: int | None = None, /) -> int: ...


def unfinished(
    text: Searched, results: list[int], starts_of: Callable[[str], list[int]]
) -> list[tuple[int, str]]:
    """Each run started and never finished, in file order: where its start line begins and the
    lines of its PID (`==PID== ...`) from there on, joined.

    Args:
        text: the log.
        results: where each `Profiling result:` line begins.
        starts_of: where each line that is a given marker begins (`nvprof_tables.marker_lines`).
    """
    done = {_pid(text, at) for at in results}
    if not done or None in done:
        return []
    out = []
    for at in starts_of(_STARTED):
        pid = _pid(text, at)
        if pid is not None and pid not in done:
            out.append((at, _own_lines(text, at, pid)))
    return out


def _pid(text: Searched, at: int) -> str | None:
    """The PID of the `==PID== ` prefix of the line that begins at `at`, or None."""
    head = text[at : at + _MAX_PREFIX].lstrip(" \t")
    if not head.startswith("=="):
        return None
    pid = head[2:].split("==", 1)[0]
    return pid if pid.isdecimal() else None


def _own_lines(text: Searched, at: int, pid: str) -> str:
    """The lines from `at` on that carry the prefix `==pid== `, joined by newlines."""
    tag, out = f"=={pid}== ", []
    found = text.find(tag, at)
    while found >= 0:
        end = text.find("\n", found)
        out.append(text[found : len(text) if end < 0 else end])
        found = text.find(tag, found + len(tag))
    return "\n".join(out)
