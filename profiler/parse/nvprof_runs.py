"""The runs of an nvprof log: which run each table belongs to, a paste's runs cut where its
tables repeat (`pasted_runs`), a run's command and the Markdown heading it is quoted under, and
the check that tables of one kind come from one run (`check_one_run`); a run read (`Run`) and
the runs of a file (`Runs`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from profiler.errors import ParseError
from profiler.parse import headings as parse_headings
from profiler.parse import nvprof_tables
from profiler.parse.nvprof_tables import EXPECTED, Table
from profiler.parse.nvprof_text import Text

_APPLICATION = "Profiling application: "
_KIND_OF = {  # table kind -> what it gives
    "text_summary": "summary",
    "csv_summary": "summary",
    "text_trace": "trace",
    "csv_trace": "trace",
    "text_metrics": "metrics",
    "csv_metrics": "metrics",
}


@dataclass(frozen=True)
class Run:
    """One nvprof run of a file: its tables, the line its tables start at, the command it
    profiled (`==PID== Profiling application: ./prog args`), when the log shows it, and the
    Markdown heading it is quoted under, when a README quotes it under one (`headings`)."""

    tables: dict[str, pd.DataFrame]
    line: int
    command: str | None = None
    heading: str | None = None


@dataclass(frozen=True)
class Runs:
    """The runs of a file that have tables, in file order, and each run left out for having
    none: its `Profiling result:` line and why, in nvprof's words when it has some."""

    kept: list[Run]
    left_out: list[tuple[int, str]]


# What nvprof prints once a run (NVTX ranges aside): an event table and a metric table are one
# kind of table to the readers (`metrics`), but each comes once (`Event result:`, `Metric result:`).
_ONCE_A_RUN = ("summary", "trace", "api_trace", "events", "metrics")


def pasted_runs(tables: list[Table]) -> list[list[Table]] | None:
    """The runs of a paste that left out nvprof's `Profiling result:` lines: a new run starts at
    each summary, gpu trace, event or metric table whose kind the run so far already has (a
    README that quotes one summary per optimisation step, each in its own block; a source file
    that keeps each variant's `Event result:` and `Metric result:` in its comment), with the
    tables after it.

    None when a `Profiling result:` line comes before a table (the runs are those lines'), when a
    summary has a `Device "..."` line right above it (`--print-summary-per-gpu`: one run's
    summaries, one per device; refused by the summary reader), or when no kind repeats."""
    if any(table.run for table in tables):
        return None
    runs = unmarked(tables)
    return runs if len(runs) > 1 else None


def unmarked(tables: list[Table]) -> list[list[Table]]:
    """Tables that no `Profiling result:` line stands above (a paste's, or those above a
    file's first such line), cut into runs as `pasted_runs` cuts them: at each table whose
    kind the run so far already has. One run when a summary has a `Device "..."` line above
    it (`--print-summary-per-gpu`)."""
    if any(device_line(t.above) for t in tables):
        return [tables]
    runs: list[list[Table]] = [[]]
    seen: set[str] = set()
    for table in tables:
        kind = _once_kind(table)
        if kind in _ONCE_A_RUN and kind in seen:
            runs.append([])
            seen = set()
        runs[-1].append(table)
        seen.add(kind)
    return runs


def _once_kind(table: Table) -> str:
    """What a table is to `pasted_runs`: what it gives (`_gives`), a table of events (`Event
    Name` in its header) `events`, not `metrics`."""
    kind = _gives(table)
    return "events" if kind == "metrics" and "Event Name" in table.header() else kind


def _gives(table: Table) -> str:
    """What a table gives: its kind's (`_KIND_OF`), `ranges` for an NVTX range's summary, and
    `api_trace` for an API trace (a run's gpu trace and API trace are two tables of it)."""
    if table.nvtx:
        return "ranges"
    if table.kind in ("csv_trace", "text_trace") and nvprof_tables.is_api_trace(table):
        return "api_trace"
    return _KIND_OF[table.kind]


def headings(text: Text, runs: list[list[Table]]) -> list[str | None]:
    """For each run of a paste (`pasted_runs`), the Markdown heading it is quoted under
    (`parse.headings.above`: nearest above its first table, below the run before's tables)."""
    spans = [[(t.at, t.at + t.size) for t in run] for run in runs]
    return parse_headings.above(lambda start, end: text[start:end], spans)


def device_line(line: str) -> bool:
    """Whether `line` is nvprof's `Device "NAME (N)"` line (after its `==PID==` prefix, if any)."""
    line = line.strip()
    if line.startswith("==") and "== " in line:
        line = line.split("== ", 1)[1].lstrip()
    return line.startswith('Device "')


def command(text: Text, start: int, end: int) -> str | None:
    """The command of the last `Profiling application:` line in `text[start:end]`, if any."""
    at = text.rfind(_APPLICATION, start, end)
    if at < 0:
        return None
    stop = text.find("\n", at, end)
    command = text[at + len(_APPLICATION) : end if stop < 0 else stop].strip()
    return command[:200] or None


def check_one_run(tables: list[Table], path: Path) -> None:
    """Tables of one kind (summaries, traces, metrics, NVTX ranges) must come from one nvprof
    run; a summary of one run and a trace of another (a README showing both) are read as both.

    Raises: ParseError when two runs give tables of one kind (`read_runs` reads such a file).
    """
    several = several_runs(tables)
    if several is not None:
        lines = ", ".join(str(n) for n in list(several.values())[:8])
        raise ParseError(
            path,
            EXPECTED,
            f"it holds the output of {len(several)} nvprof runs (tables from lines {lines}); "
            "import each run as a stage of its own",
        )


def several_runs(tables: list[Table]) -> dict[int, int] | None:
    """The runs (each with its first table's line) of the first kind of table that several runs
    give, or None when each kind comes from one run."""
    firsts: dict[str, dict[int, int]] = {}
    for table in tables:
        firsts.setdefault(_gives(table), {}).setdefault(table.run, table.origin.first_line)
    return next((runs for runs in firsts.values() if len(runs) > 1), None)
