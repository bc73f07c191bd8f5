"""`profgen import` of a file that holds several profiler runs (of nvprof; of nsys or ncu in a
terminal capture, `profiler.import_capture`): one stage per run.

A log of one nvprof run per step (a README, a lab report, a terminal capture) would be refused
as mixing runs; instead each run that has tables becomes a stage of its own, keyed `KEY.1`,
`KEY.2`, ... in file order (numbered over the runs kept) and titled with the stage's title (its
key when it has none) and `run N of M`, then the command the run profiled when the log shows it
(`==PID== Profiling application: ./prog args`), else the Markdown heading a README quotes it
under (`## Change how we initialize CuRAND`). A capture of `nsys stats` text that prints a
report again is read likewise, run by run where the file tells the runs apart
(`parse.nsys_runs`: a label above each fence titles its run), and a file of ncu text output
whose `==PROF==` lines show a new process after a run's results (`parse.ncu_runs`).
`--repeats`, `--range` and `--title` given for KEY apply to each of its runs (the importer
passes them on). A file of one run is the stage KEY, as given.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from profiler import schema
from profiler.errors import UsageError
from profiler.parse import nsys_runs, nvprof, reader_notes

KEY_LIMIT = 64  # a stage key names a folder (`importer.KEY_PATTERN`)


@dataclass(frozen=True)
class Run:
    """What one input gave for one of its runs: its tables (keyed by the input's stage key),
    its technique, what its title says of it, if anything: the command it profiled, else the
    heading it is quoted under, and where in its file it is (`its tables from line 7`), said
    after its number among the runs kept (`stages`: a quote left out is not counted)."""

    tables: dict[str, pd.DataFrame]
    technique: str
    label: str | None = None
    place: str = ""


@dataclass(frozen=True)
class Stage:
    """One stage of the import: its key, the key of the input it comes from (whose `--repeats`
    and `--range` it takes), its title, tables (keyed by it) and technique."""

    key: str
    source: str
    title: str
    tables: dict[str, pd.DataFrame]
    technique: str


def stages(key: str, runs: list[Run], title: str, taken: Collection[str]) -> list[Stage]:
    """The stages of the input `key` gave `runs` (see the module docstring).

    Args:
        key: the input's stage key, as `--stage` gives it.
        runs: its runs, in file order (at least one).
        title: its title (`--title`, else its key).
        taken: every stage key `--stage` gives.

    Raises: UsageError when a run's key is given with `--stage` too or is over `KEY_LIMIT`
        characters.
    """
    if len(runs) == 1:
        return [Stage(key, key, title, runs[0].tables, _described(runs[0]))]
    out = []
    for n, run in enumerate(runs, 1):
        sub = f"{key}.{n}"
        if sub in taken or len(sub) > KEY_LIMIT:
            why = "is given with --stage too" if sub in taken else f"is over {KEY_LIMIT} characters"
            raise UsageError(
                f"--stage {key}: its file holds {len(runs)} profiler runs, each imported as a "
                f"stage ({key}.1 to {key}.{len(runs)}), but the key {sub[:80]!r} {why}"
            )
        said = f"{title}, run {n} of {len(runs)}" + (f": {run.label}" if run.label else "")
        technique = (
            f"{run.technique}: run {n} of {len(runs)}, {run.place}" if run.place else run.technique
        )
        out.append(Stage(sub, key, said, _keyed(run.tables, sub), technique))
    return out


def _described(run: Run) -> str:
    """The run's technique and, when it has one, its place in its file."""
    return f"{run.technique}: {run.place}" if run.place else run.technique


def nvprof_runs(
    found: nvprof.Runs, technique: str, trimmed: Sequence[reader_notes.ReadNote] = ()
) -> list[Run]:
    """The runs of a file of nvprof output (`nvprof.read_runs`), each with its technique: for a
    file of several, `technique`, the run's place and the runs left out since the run before
    (after the last kept run, with it), each with its line and why; and for each run the
    tables of its top rows only (`trimmed`, by their lines: `noted`)."""
    if len(found.kept) == 1:
        return [Run(found.kept[0].tables, noted(technique, trimmed))]
    out, since = [], 0
    for n, run in enumerate(found.kept, 1):
        until = run.line if n < len(found.kept) else float("inf")
        gaps = [f"line {line} ({why})" for line, why in found.left_out if since < line < until]
        said = f"its tables from line {run.line}"
        said += f"; runs left out: {'; '.join(gaps)}" if gaps else ""
        later = found.kept[n].line if n < len(found.kept) else float("inf")
        mine = [t for t in trimmed if (n == 1 or run.line <= t.line) and t.line < later]
        out.append(Run(run.tables, technique, run.command or run.heading, noted(said, mine)))
        since = run.line
    return out


def nsys_text_runs(
    found: list[tuple[nsys_runs.Run, dict[str, pd.DataFrame]]],
    technique: str,
    trimmed: Sequence[reader_notes.ReadNote] = (),
) -> list[Run]:
    """The runs of a capture of `nsys stats` output (`nsys_capture.read_stats_runs`), each with its
    technique: for a capture of several, `technique`, the run's place and its tables' lines;
    and for each run the tables of its top rows only (`trimmed`: a note is the run's whose
    table starts nearest above its line)."""
    if len(found) == 1:
        return [Run(found[0][1], noted(technique, trimmed))]
    starts = sorted((t.line, n) for n, (run, _) in enumerate(found) for t in run.tables)
    out = []
    for n, (run, tables) in enumerate(found):
        mine = [t for t in trimmed if _owner(starts, t.line) == n]
        lines = ", ".join(str(t.line) for t in run.tables)
        said = f"its tables at lines {lines}"
        out.append(Run(tables, technique, run.label, noted(said, mine)))
    return out


def _owner(starts: list[tuple[int, int]], line: int) -> int:
    """The run (`starts`: (line, run) of each table, ascending) whose table starts nearest at
    or above `line` (the first run's when none does)."""
    above = [n for start, n in starts if start <= line]
    return above[-1] if above else starts[0][1]


def noted(technique: str, trimmed: Sequence[reader_notes.ReadNote]) -> str:
    """A stage's technique with what its tables may lack (a `ReadNote` that is `partial`: a
    table of the top rows only covers part of the time), so that its time is not taken for the
    whole program's."""
    return technique + "".join(f"{schema.PARTIAL}{t}" for t in trimmed if t.partial)


def _keyed(tables: Mapping[str, pd.DataFrame], key: str) -> dict[str, pd.DataFrame]:
    """The tables with `key` in their `stage` column (its dtype kept)."""
    return {
        name: df.assign(stage=pd.Series(key, index=df.index, dtype=df["stage"].dtype))
        if "stage" in df
        else df
        for name, df in tables.items()
    }


def without_quotes(runs: list[Run]) -> tuple[list[Run], list[str]]:
    """`runs` less each that quotes an earlier one (a README that prints an excerpt of a table
    it printed whole above), and a warning for each left out: a run is a quote when it has
    times and every row of each of its tables is a row of that table of one earlier run, names
    and values alike (timing data measured again never repeats to the nanosecond; counters
    alone may, so a run of no times is kept), and that earlier run has a table or row it lacks
    (an excerpt). A run that repeats most rows, not all, is kept; so is one that repeats a run
    whole (one output pasted twice, as tests build two runs: what a README quotes again is an
    excerpt)."""
    kept: list[tuple[int, Run]] = []
    said: list[str] = []
    for n, run in enumerate(runs, 1):
        source = next((m for m, e in kept if _quotes(run, e)), None)
        if source is None:
            kept.append((n, run))
            continue
        said.append(
            f"run {n} of {len(runs)} in the file left out ({_described(run)}): every row of its "
            f"tables repeats run {source}'s ({_described(runs[source - 1])}): a quote, not a "
            "measurement"
        )
    return [run for _, run in kept], said


def _quotes(run: Run, earlier: Run) -> bool:
    """Whether `run` has times and is an excerpt of `earlier`: each of its tables' rows is a
    row of `earlier`'s table, and it lacks a table or a row `earlier` has."""
    if not any(_timed(df) for df in run.tables.values()):
        return False  # (counters measured again may well repeat: only times tell a quote)
    mine = {name: _rows(df) for name, df in run.tables.items() if len(df)}
    theirs = {name: _rows(df) for name, df in earlier.tables.items() if len(df)}
    if any(name not in theirs or not rows <= theirs[name] for name, rows in mine.items()):
        return False
    return any(len(mine.get(name, ())) < len(rows) for name, rows in theirs.items())


def _timed(df: pd.DataFrame) -> bool:
    """Whether a table holds a time (a `*_ns` cell with a value)."""
    times = [c for c in df.columns if str(c).endswith("_ns")]
    return bool(len(df) and times and df[times].notna().to_numpy().any())


def _rows(df: pd.DataFrame) -> set[tuple[str, ...]]:
    """A table's rows, each as the text of its cells, its `stage` column and shares (`*_pct`:
    of what else the table quoting it holds) left out."""
    shares = [c for c in df.columns if c == "stage" or str(c).endswith("_pct")]
    cells = df.drop(columns=shares).astype(str)
    return set(cells.itertuples(index=False, name=None))
