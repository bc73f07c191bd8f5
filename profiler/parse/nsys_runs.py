"""The runs of a capture of `nsys stats` column text that prints a report again: a README that
quotes the reports of a program before and after a change, each under a line of its own.

nsys prints a report once a run, so a report's second table is another run's. Where the file
tells the runs apart, each is a run of its own (`runs`):

- by label: every table stands in a Markdown fence under a short line (`(Before)`, `## After`:
  the last line above the fence, at most `LABEL_LIMIT` characters; a table in the fence of
  the table above it has that table's label), the labels are two or more, and no label has a
  report twice. The tables of a label are a run, titled with it, in the order the labels come
  first: a README may interleave two runs' reports (`(Before)` API, `(After)` API, `(Before)`
  kernels, ...).
- in turn: each table of a report the run above has already starts a run, a fence or a
  Markdown heading stands between it and the table above (where none does, the last table of
  that run that one sets apart starts the new run instead: `## Using USM`, a fence of the
  program's output, then a fence of the API, kernel and memory tables), and every run starts
  with the report the first starts with, or the CUDA summaries of every run come in the order
  all nsys versions print them (`PRINTED`: a run whose author left its API table out).

Neither when a table's report is not sure (`Table.sure`).

Otherwise, when every table after the first repeated one is of a report read before it (the
same runs printed again), the first table of each report is read and the rest left out with a
warning (`first_of_each`); when one is not, reading the first of each would mix the runs, and
the file is refused (`mixed`).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from profiler.parse import cell_quotes, reader_notes

LABEL_LIMIT = 80  # characters of a line above a fence that may name a run
# The CUDA summaries in the order nsys prints them in every version (2019 to 2026; the NVTX and
# OS runtime ones moved, before them since 2021, after them before).
PRINTED = ("cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum")
_FENCE = re.compile(r" {0,3}(?:```|~~~)")
_HEADING = re.compile(r" {0,3}#{1,6}[ \t]")


@dataclass(frozen=True)
class Table:
    """A table of a report read from a capture: its report (canonical), its `nsys_fields`
    frame, its file line, the label above its fence (None: no fence stands above it since the
    table before, or the line above the fence is no label), whether a fence or a heading
    stands between it and the table before (`parted`), and whether its report is sure
    (`sure`: a marker names it, or the capture names its report nowhere; not: a table under no
    marker known by a header that some reports share, of a report a marker names elsewhere),
    and the report its marker printed where that is not `report` (`nvtx_pushpop_sum`, read as
    nvtx_sum; else None).
    """

    report: str
    frame: pd.DataFrame
    line: int
    label: str | None
    parted: bool
    sure: bool = True
    printed: str | None = None

    @property
    def shown(self) -> str:
        """The report as its marker printed it."""
        return self.printed or self.report


@dataclass(frozen=True)
class Run:
    """One run's tables and its label (the title of its stage), if any."""

    tables: list[Table]
    label: str | None = None

    def reports(self, path: Path) -> dict[str, tuple[pd.DataFrame, Path]]:
        """Its frames by report, each with the file (what `nsys_tables.build` takes)."""
        return {t.report: (t.frame, path) for t in self.tables}


def placed(gap: str) -> tuple[str | None, bool]:
    """(label, parted) of a table whose text above, since the table before, is `gap`: the
    last line above the last fence in it, when short and no fence itself (a heading without
    its `#` marks), and whether a fence or a Markdown heading is in it."""
    lines = gap.split("\n")
    fences = [n for n, line in enumerate(lines) if _FENCE.match(line)]
    parted = bool(fences) or any(_HEADING.match(line) for line in lines)
    above = [line.strip() for line in lines[: fences[-1]] if line.strip()] if fences else []
    if not above or _FENCE.match(above[-1]) or len(above[-1]) > LABEL_LIMIT:
        return None, parted
    return above[-1].lstrip("#").strip() or None, parted


def runs(tables: list[Table]) -> list[Run] | None:
    """The runs of `tables` (file order; see the module docstring): one when no report
    repeats; None when one does and the file does not tell the runs apart."""
    if len({t.report for t in tables}) == len(tables):
        return [Run(tables)]
    if not all(t.sure for t in tables):
        return None
    return _by_label(tables) or _in_turn(tables)


def mixed(tables: list[Table]) -> str | None:
    """Why reading the first table of each report would mix runs: a table after the first
    repeated one is of a report not read before it (what and where); None when none is."""
    seen: set[str] = set()
    for n, table in enumerate(tables):
        if table.report in seen:
            new = [t for t in tables[n:] if t.report not in seen]
            if not new:
                return None
            return (
                f"it prints the {table.report} report again at line {table.line}, and the "
                f"{new[0].report} table at line {new[0].line} comes after that: reading the "
                "first table of each report would mix two runs, and nothing in the file (a "
                "label above each fence, or a fence or heading before each run in turn) "
                "tells them apart; give each run a file of its own"
            )
        seen.add(table.report)
    return None


def first_of_each(tables: list[Table], path: Path) -> dict[str, tuple[pd.DataFrame, Path]]:
    """The first table of each report, by report; the rest are left out with a warning
    (`reader_notes.ReadNote`)."""
    kept: dict[str, tuple[pd.DataFrame, Path]] = {}
    first: dict[str, Table] = {}
    again: list[tuple[int, str]] = []
    for table in tables:
        if table.report not in kept:
            kept[table.report], first[table.report] = (table.frame, path), table
        elif _one_kind_again(first[table.report], table):
            _say_one_kind(first[table.report], table)
        else:
            again.append((table.line, table.shown))
    _say_again(again)
    return kept


def _by_label(tables: list[Table]) -> list[Run] | None:
    """The runs the labels above the fences make, or None (see the module docstring)."""
    groups: dict[str, list[Table]] = {}
    label = None
    for table in tables:
        label = table.label if table.parted else label
        if label is None:
            return None
        groups.setdefault(label, []).append(table)
    if len(groups) < 2 or any(len({t.report for t in g}) < len(g) for g in groups.values()):
        return None
    return [Run(group, label) for label, group in groups.items()]


def _in_turn(tables: list[Table]) -> list[Run] | None:
    """The runs each table of a report read already starts, or None (see the module
    docstring)."""
    out = [[tables[0]]]
    for table in tables[1:]:
        run = out[-1]
        if table.report not in {t.report for t in run}:
            run.append(table)
        elif table.parted:
            out.append([table])
        else:
            cut = _last_parted(run)
            if cut is None or table.report in {t.report for t in run[cut:]}:
                return None
            out[-1:] = [run[:cut], [*run[cut:], table]]
    same_start = all(run[0].report == tables[0].report for run in out)
    if not same_start and not all(_in_print_order(run) for run in out):
        return None
    return [Run(run, run[0].label) for run in out]


def _last_parted(run: list[Table]) -> int | None:
    """Where in `run` its last table that a fence or heading sets apart from the table above
    stands (never its first); None when none is."""
    return next((n for n in range(len(run) - 1, 0, -1) if run[n].parted), None)


def _in_print_order(run: list[Table]) -> bool:
    """Whether the CUDA summaries of `run` come in the order nsys prints them (`PRINTED`)."""
    ranks = [PRINTED.index(t.report) for t in run if t.report in PRINTED]
    return ranks == sorted(ranks)


def _one_kind_again(kept: Table, table: Table) -> bool:
    """Whether `table` is a report of NVTX ranges of one kind (`nvtx_pushpop_sum`) printed after
    the nvtx_sum table `kept`, which holds its ranges (one run asked for both)."""
    return kept.printed is None and kept.report == "nvtx_sum" and table.printed is not None


def _say_one_kind(kept: Table, table: Table) -> None:
    """Warn (`reader_notes.ReadNote`) that `table` (`_one_kind_again`) was left out."""
    kind = "push/pop" if "pushpop" in table.shown else "start/end"
    said = (
        f"line {table.line}: the {table.shown} table left out: it repeats the {kind} ranges of "
        f"the nvtx_sum table at line {kept.line}, which profgen reads"
    )
    warnings.warn(reader_notes.ReadNote(said, table.line), stacklevel=4)


def _say_again(again: list[tuple[int, str]]) -> None:
    """Warn (`reader_notes.ReadNote`) that tables of reports read already, at (line, report)
    `again`, were left out: another run's output pasted under the first's with nothing between
    them that tells the runs apart (`capture` cuts runs whose markers name a report again)."""
    if not again:
        return
    line, reports = again[0][0], list(dict.fromkeys(report for _, report in again))
    shown, lines = cell_quotes.listed(reports), cell_quotes.listed(n for n, _ in again)
    said = (
        f"line {line}: {len(again)} more table{'s' if len(again) > 1 else ''} of reports read "
        f"above left out ({shown} at line {lines}): profgen reads the first table of each "
        "report (another run? give it a file of its own)"
    )
    warnings.warn(reader_notes.ReadNote(said, line), stacklevel=4)
