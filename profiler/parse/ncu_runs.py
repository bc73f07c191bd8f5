"""A file of ncu's text output that holds several ncu runs (notes that paste the result of each
step without a fence) -> one set of tables per run.

ncu names the process it profiles in its `==PROF== Connected to process 11139 (...)` and
`==PROF== Disconnected from process 11139` lines. A run ends where such a line names a process
that the run has not named, after the run's kernel results: that line starts the next run. The
processes of one run (`--target-processes all`: a parent and its children) all connect before
any result is printed, so they stay one run. A file whose runs its text does not tell apart
this way is one run, as before; so is one whose launch IDs repeat (each run's `==PROF==
Profiling "k" - 0` lines numbering its launches from 0), whose rows the IDs do not tell apart.

Notes that paste each run's results with no process lines, each in a code fence of its own or
under a heading of its own, are cut as nvprof's pasted runs are (`nvprof_runs.pasted_runs`: where
what a run has comes again): a run ends where a fence or heading line (`headings.breaks`), or a
line that opens or closes a C comment (runs pasted into a source file, one per `/* */` block),
stands between two launches and the launch after it is of a kernel the run already has. So
does ncu's `[1490314] app@127.0.0.1` line, which heads the results of each process it profiled,
when it names another process than the line before it (runs pasted into one fence, told apart
by these lines alone): a process's launches are never parted, and the processes of one run that
launch kernels of their own stay one run, as their text cannot tell them from two runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from profiler.parse import headings, lines, ncu_text, nvprof_runs

_MARK = b"==PROF== "
_PROCESS = re.compile(rb"==PROF== (?:Connected to|Disconnected from) process ([0-9]{1,12})\b")
# ncu's `[pid] app@host` line, above the results of the process it names
_RESULTS_OF = re.compile(rb"[ \t]*\[([0-9]{1,12})\] [^\s@]{1,256}@[^\s]{1,256}[ \t\r]*")


def read_runs(path: str | Path, stage: str) -> nvprof_runs.Runs:
    """The runs of a file of ncu text output, each with its tables, the line of its first
    launch's kernel line and the Markdown heading it is quoted under (see the module
    docstring): one run when the file tells none apart.

    Raises: ParseError as `ncu_text.read_tables`.
    """
    tables, placed = ncu_text.read_placed(path, stage)
    kernel_lines = placed.kernel_lines
    unique = len(set(placed.ids)) == len(placed.ids)  # (else rows cannot be told apart by id)
    starts = run_starts(placed.data, kernel_lines) if unique else []
    process = next(_processes(placed.data), None)
    if process is None and "metrics" in tables:
        starts = block_starts(placed.data, kernel_lines, list(tables["metrics"]["name"]))
        starts = starts if unique or _distinct(placed.ids, kernel_lines, starts) else []
    if not starts:
        return nvprof_runs.Runs([nvprof_runs.Run(tables, int(kernel_lines[0]) + 1)], [])
    run_of = np.searchsorted(np.array([line for line, _ in starts]), kernel_lines, side="right")
    ids = np.array(placed.ids)
    at = [process.start() if process else int(_offsets(placed.data)[kernel_lines[0]])]
    at += [offset for _, offset in starts]
    above = headings.above(
        lambda a, b: placed.data[a:b].decode("utf-8", "replace"), [[(a, a)] for a in at]
    )
    in_order = placed.ids == list(range(len(placed.ids)))  # (numbered in file order)
    runs = []
    for n, heading in enumerate(above):
        mine = run_of == n
        line = int(kernel_lines[mine][0]) + 1
        first = int(ids[mine][0]) if in_order else 0  # each run's launches from 0, as ncu's
        mine_only = _only(tables, placed, np.flatnonzero(mine), first)
        runs.append(nvprof_runs.Run(mine_only, line, heading=heading))
    return nvprof_runs.Runs(runs, [])


def run_starts(data: bytes, kernel_lines: np.ndarray) -> list[tuple[int, int]]:
    """The line index (0-based) and offset of each `==PROF==` process line that starts a run
    after the first (see the module docstring); each run has a launch."""
    starts: list[tuple[int, int]] = []
    names: set[bytes] = set()
    since, line, pos = -1, 0, 0  # the current run's first line; a line index and its offset
    for found in _processes(data):
        line, pos = line + data.count(b"\n", pos, found.start()), found.start()
        results = np.searchsorted(kernel_lines, line) > np.searchsorted(kernel_lines, since)
        if results and found[1] not in names:
            starts.append((line, pos))
            since, names = line, set()
        names.add(found[1])
    if starts and not (kernel_lines > starts[-1][0]).any():
        starts.pop()  # (a process line after the last result: no run of its own)
    return starts


def block_starts(data: bytes, kernel_lines: np.ndarray, names: list[str]) -> list[tuple[int, int]]:
    """The line index (0-based) and offset of each kernel line that starts a run after the
    first in notes that paste one run per block or heading (see the module docstring); `names`
    are the launches' kernels, in file order."""
    breaks = headings.breaks(data) + _comment_breaks(data) + _process_breaks(data)
    marks = np.array(sorted(breaks), dtype=np.int64)
    if not len(marks):
        return []
    offsets = _offsets(data)[kernel_lines]
    parted = np.diff(np.searchsorted(marks, offsets)) > 0  # a mark between launch n and n + 1
    starts: list[tuple[int, int]] = []
    had = {names[0]}
    for n in range(1, len(names)):
        if parted[n - 1] and names[n] in had:
            starts.append((int(kernel_lines[n]), int(offsets[n])))
            had = set()
        had.add(names[n])
    return starts


def _comment_breaks(data: bytes) -> list[int]:
    """The offset of each line of `data` that opens or closes a C comment block (`/*` at its
    start or `*/` at its end, blanks aside): runs pasted into a source file one per comment are
    parted by them as Markdown ones are by fences. Found from the marks' literal bytes."""
    starts = set()
    for mark in (b"/*", b"*/"):
        at = data.find(mark)
        while at >= 0:
            line = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            end = len(data) if end < 0 else end
            if not data[line:at].strip() if mark == b"/*" else not data[at + 2 : end].strip():
                starts.add(line)
            at = data.find(mark, at + 2)
    return sorted(starts)


def _process_breaks(data: bytes) -> list[int]:
    """The offset of each ncu `[pid] app@host` line of `data` that names another process than
    the one before it (see the module docstring). Found from their `@` (a line is looked at
    once, however many it holds)."""
    starts: list[int] = []
    last = None
    at = data.find(b"@")
    while at >= 0:
        line = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        found = _RESULTS_OF.fullmatch(data, line, end)
        if found is not None and found[1] != last:
            starts.append(line)
        last = found[1] if found is not None else last
        at = data.find(b"@", end)
    return starts


def _offsets(data: bytes) -> np.ndarray:
    """The offset of each line of `data` (by its 0-based index)."""
    return np.concatenate(([0], lines.newlines(data) + 1))


def _processes(data: bytes) -> Iterator[re.Match[bytes]]:
    """The `==PROF==` lines of `data` that name a process ncu connected to or disconnected from,
    in order: found by their literal start (a pattern anchored at every line of a million-row
    text would try each)."""
    at = data.find(_MARK)
    while at >= 0:
        found = _PROCESS.match(data, at) if at == 0 or data[at - 1] == 10 else None
        if found is not None:
            yield found
        at = data.find(_MARK, at + len(_MARK))


def _distinct(ids: list[int], kernel_lines: np.ndarray, starts: list[tuple[int, int]]) -> bool:
    """Whether the launch IDs `ids` are distinct within each run that `starts` begin, and each
    run after the first numbers its launches from 0 again (ncu's `==PROF== Profiling "k" - 0`
    lines of a run of its own)."""
    cuts = np.searchsorted(kernel_lines, [line for line, _ in starts])
    runs = np.split(np.asarray(ids), cuts)
    return all(len(set(run.tolist())) == len(run) for run in runs) and all(
        run[0] == 0 for run in runs[1:]
    )


def _only(
    tables: dict[str, pd.DataFrame], placed: ncu_text.Placed, launches: np.ndarray, first: int
) -> dict[str, pd.DataFrame]:
    """The rows of `tables` of the `launches` (their indices in file order: `metrics` has a
    row each, `counters` rows say theirs in `placed`), `first` taken from each `kernel_id`."""
    out = {}
    for name, table in tables.items():
        of = placed.counter_launches if name == "counters" else np.arange(len(table))
        rows = table[np.isin(of, launches)].reset_index(drop=True)
        out[name] = rows.assign(kernel_id=rows["kernel_id"] - first)
    return out
