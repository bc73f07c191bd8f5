"""Legacy nvprof output -> profgen's tables.

Everything nvprof prints that profgen has a table for, with or without the `==PID==` prefixes
(people paste logs without them), found anywhere in a file (a terminal capture, a README):

- summaries (`nvprof_summary`): the text table after `Profiling result:` (`Type  Time(%)  Time
  Calls  Avg  Min  Max  Name` with `GPU activities:` / `API calls:` rows, CUDA 9 and later; or
  without `Type`, an `API calls:` line above the API table, before CUDA 9), the `--csv` table with
  its units row (`,%,ms,,us,us,ms,`), `--print-gpu-summary` and `--print-api-summary`
  -> `gpu_activities`, `api_calls`;
- the gpu trace (`nvprof_trace`), text and `--csv` -> `gpu_trace`;
- the API trace (`--print-api-trace`: `Start  Duration  Name`), text and `--csv`
  (`nvprof_api_csv`) -> `api_trace` (the importer summarises it into `api_calls`);
- `--metrics` / `--events`, text and `--csv` (`nvprof_metrics`) -> `counters` (every row) and
  `metrics` (what maps).

A file may hold tables of several kinds (a summary and metrics, events and metrics, a summary
of one run and a gpu trace of the next, as a README shows them); each becomes its table. A file
where several runs (each after its `Profiling result:` line) give tables of one kind, as a README
that shows one log per step, is read run by run (`read_runs`: the importer makes each run a
stage of its own); `read_log` refuses it. NVTX range summaries (under `NVTX result:`) become
the `ranges` table.

This module reads a log's tables into those tables and says why a file is refused; the log's
text is `nvprof_text`'s, finding its tables `nvprof_tables`'s, telling its runs apart
`nvprof_runs`'s, and quoting nvprof's own messages `nvprof_says`'s.

Refused with a reason: nvprof output with no table profgen reads (`No kernels were profiled.`,
an error, a warning page), quoting nvprof's own message; a summary of rows profgen has no table
for only (`OpenACC (excl):`), quoting it too; a metric table with no rows; a gpu
trace of Unified Memory events only; one summary per device; a gpu trace whose column alignment
(or its line breaks too) a web page lost.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pandas as pd

from profiler.errors import ParseError
from profiler.parse import (
    cell_quotes,
    csvtext,
    nvprof_api_csv,
    nvprof_metrics,
    nvprof_runs,
    nvprof_says,
    nvprof_summary,
    nvprof_summary_csv,
    nvprof_summary_text,
    nvprof_tables,
    nvprof_trace,
    nvprof_trace_csv,
    nvprof_unfinished,
    nvprof_unread,
    reader_notes,
    values,
)
from profiler.parse import lines as parse_lines
from profiler.parse.nvprof_runs import Run, Runs
from profiler.parse.nvprof_tables import EXPECTED, Table
from profiler.parse.nvprof_text import AsciiText, Text
from profiler.parse.table_origin import LineCounter, Origin

# A summary row of a type profgen has no table for, at its line's start: PGI's `OpenACC (excl):`
# and `OpenMP (incl):` rows (possessive blanks: nothing to backtrack over)
_OTHER_TYPE = re.compile(r"^[ \t]*+(Open(?:ACC|MP) \((?:excl|incl)\)):", re.MULTILINE)
_OTHER_TYPES = [f"Open{api} ({part})" for api in ("ACC", "MP") for part in ("excl", "incl")]

_NVPROF_LINE = re.compile(r"^(?:==[0-9]+==|========) ", re.MULTILINE)
_ENDED = "it ended before nvprof's `Profiling result:`, with no table"
_TIME_UNITS = ("ns", "us", "ms", "s")  # two-letter units first: `ms` also ends with `s`
_METRIC_KINDS = ("text_metrics", "csv_metrics")


def read_log(path: str | Path | csvtext.Held, stage: str) -> dict[str, pd.DataFrame]:
    """Read one file of nvprof output, of one run (`read_runs` reads a file of several).

    Args:
        path: the file, with whatever nvprof, the shell and the program printed around its tables
            (or its bytes, held).
        stage: the stage key written into every table.

    Returns: the tables the file has, by `schema` name: `gpu_activities` and/or `api_calls` (a
        summary), `gpu_trace`, `counters` and `metrics`.

    Raises: ParseError when the file's first 64 KiB have no nvprof line nor table header, it has
        no table profgen reads (quoting nvprof's own message when it has one), it holds several
        runs, a table is malformed or truncated, or a cell is no number in range (naming its
        line and column).
    """
    text, tables, _ = _found(path)
    nvprof_runs.check_one_run(tables, csvtext.source_path(path))
    return _read_one(text, tables, stage, csvtext.source_path(path))


def read_runs(path: str | Path | csvtext.Held, stage: str) -> Runs:
    """Read a file of nvprof output that may hold several runs (a log of one run per step).

    A file is read as one run, as `read_log` reads it, unless two runs (each after its
    `Profiling result:` line) give tables of one kind; then each run that has tables is read on
    its own (titled by the Markdown heading it is quoted under, when it names no command), and
    each that has none (`No kernels were profiled.`, an error) is left out, said so in nvprof's
    own words; a file read as one run says so too of a run with no table that
    nvprof's own message explains (`_said_empty`). A paste without those lines whose summaries
    or gpu traces repeat (a README that quotes each step's summary in a block of its own) is cut
    into runs where they repeat (`nvprof_runs.pasted_runs`), and so are the tables above a
    file's first `Profiling result:` line (notes that quote a few runs' tables bare, then
    others whole: `nvprof_runs.unmarked`).

    Args:
        path: as `read_log`.
        stage: the stage key written into every table (of every run).

    Returns: `Runs`; one run with no command for a file read as one.

    Raises: ParseError as `read_log`, except for several runs.
    """
    text, tables, leads = _found(path)
    name = csvtext.source_path(path)
    pasted = nvprof_runs.pasted_runs(tables)
    if pasted is not None:
        return Runs(
            [
                Run(_read(got, stage, name), got[0].origin.first_line, heading=heading)
                for got, heading in zip(pasted, nvprof_runs.headings(text, pasted), strict=True)
            ],
            [],
        )
    markers = nvprof_tables.marker_lines(text, nvprof_tables.RESULT, leads)
    unmarked = nvprof_runs.unmarked([table for table in tables if not table.run])
    if nvprof_runs.several_runs(tables) is None and len(unmarked) < 2:
        first = Run(_read_one(text, tables, stage, name), tables[0].origin.first_line)
        empty = _said_empty(text, markers, {table.run for table in tables})
        return Runs([first], sorted(empty + _unfinished(text, markers, leads)))
    by_run: dict[int, list[list[Table]]] = {}
    for table in tables:
        by_run.setdefault(table.run, [[]])[0].append(table)
    if 0 in by_run:  # above the first `Profiling result:` line: cut where their kinds repeat
        by_run[0] = unmarked
    kept, left_out, line = [], [], LineCounter(text)
    parts = [part for run in sorted(by_run) for part in by_run[run]]
    titles = iter(nvprof_runs.headings(text, parts))
    for run in range(len(markers) + 1):
        start = markers[run - 1] if run else 0
        before = markers[run - 2] if run > 1 else 0
        for got in by_run.get(run, []):
            command = nvprof_runs.command(text, before, start if run else got[0].at)
            at_line = got[0].origin.first_line
            kept.append(Run(_read(got, stage, name), at_line, command, next(titles)))
        if run and run not in by_run:
            end = markers[run] if run < len(markers) else len(text)
            left_out.append((line.at(start), nvprof_says.nothing(text[start:end])))
    return Runs(kept, sorted(left_out + _unfinished(text, markers, leads)))


def _said_empty(text: Text, results: list[int], with_tables: set[int]) -> list[tuple[int, str]]:
    """The runs (each after its `Profiling result:` line, at `results`) that give no table and
    whose text has nvprof's own word on why (`No kernels were profiled.`, an error), each with
    its line and that word: a file read as one run (another run's tables) says it left them
    out. A run with no such word is passed over, as `_unfinished` passes one over."""
    line, out = LineCounter(text), []
    for run in range(1, len(results) + 1):
        end = results[run] if run < len(results) else len(text)
        said = text[results[run - 1] : end]
        if run not in with_tables and nvprof_says.quoted(said) is not None:
            out.append((line.at(results[run - 1]), nvprof_says.nothing(said)))
    return out


def _unfinished(
    text: Text, results: list[int], leads: parse_lines.Lines | None
) -> list[tuple[int, str]]:
    """The runs nvprof started and never printed a result for (`nvprof_unfinished`) that its
    own message explains (its error), each with its start line and that message. A run with
    no message is passed over as before: a README's excerpt cuts logs anywhere. `leads`, as
    `_found` gives them, spare a search through the whole text for each marker."""
    found = nvprof_unfinished.unfinished(
        text, results, lambda m: nvprof_tables.marker_lines(text, m, leads)
    )
    line, out = LineCounter(text), []
    for at, own in found:
        quoted = nvprof_says.quoted(own)
        if quoted is not None:
            out.append((line.at(at), f"{_ENDED}; nvprof says: {quoted}"))
    return out


def _found(path: str | Path | csvtext.Held) -> tuple[Text, list[Table], parse_lines.Lines | None]:
    """The file's text, its tables, and the leads of its lines (`parse.lines`) when it is ASCII
    (None otherwise), which `nvprof_tables.marker_lines` searches by.

    Raises: ParseError when the file's start is no nvprof output or it has no table.
    """
    name = csvtext.source_path(path)
    head = csvtext.read_head(path, EXPECTED)
    if not looks_like(head):
        raise ParseError(name, EXPECTED, "no nvprof table header nor ==PID== line at its start")
    text = _text(path)
    data = text.data if isinstance(text, AsciiText) else None
    leads = None if data is None else parse_lines.split_led(data)
    tables = nvprof_tables.tables(text, name, data, leads)
    if not tables:
        raise ParseError(name, EXPECTED, nvprof_says.nothing(str(text)))
    nvprof_says.note_abort(text, tables)
    nvprof_unread.note(text, lambda title: nvprof_tables.marker_lines(text, title, leads))
    return text, tables, leads


def _read_one(text: Text, tables: list[Table], stage: str, path: Path) -> dict[str, pd.DataFrame]:
    """`_read` of a file read as one run; a summary without rows is refused with nvprof's own
    words when the text has some (`No kernels were profiled.`, an error): why it is empty is
    then not only a cut.

    Raises: ParseError as `_read`, and naming the kind of its rows (quoting nvprof's words too)
        when every summary row is of a kind profgen has no table for (`_other_rows_only`).
    """
    try:
        out = _read(tables, stage, path)
    except nvprof_summary.NoRows as exc:
        quoted = nvprof_says.quoted(str(text))
        if quoted is None:
            raise
        raise ParseError(path, EXPECTED, f"{exc.detail}; nvprof says: {quoted}") from None
    other = None if any(len(t) for t in out.values()) else _other_rows_only(tables)
    if other is not None:
        quoted = nvprof_says.quoted(str(text))
        raise ParseError(
            path, EXPECTED, other + ("" if quoted is None else f"; nvprof says: {quoted}")
        )
    return out


def _other_rows_only(tables: list[Table]) -> str | None:
    """What a run's summaries are when every row of them is of a kind profgen has no table
    for (`OpenACC (excl):`, `OpenMP (incl):`: PGI's OpenACC and OpenMP rows, read as neither
    GPU activities nor API calls), or None when they have none or no such row."""
    parts = _summary_rows(
        [t for t in tables if t.kind in nvprof_tables.SUMMARY_KINDS and not t.nvtx]
    )
    kinds = list(dict.fromkeys(str(kind) for _, rows in parts for kind in rows["type"].dropna()))
    if not kinds or nvprof_summary.GPU in kinds or nvprof_summary.API in kinds:
        return None
    named = " and ".join(f"`{kind}:`" for kind in kinds)
    return (
        f"its summary at line {parts[0][0].first_line} holds only {named} rows, which profgen "
        "does not import (it reads an nvprof summary's `GPU activities:` and `API calls:` rows)"
    )


def _read(tables: list[Table], stage: str, path: Path) -> dict[str, pd.DataFrame]:
    """The tables of one run, by `schema` name (see `read_log`)."""
    out: dict[str, pd.DataFrame] = {}
    summaries = [t for t in tables if t.kind in nvprof_tables.SUMMARY_KINDS and not t.nvtx]
    file = Origin(path, EXPECTED)
    if summaries:
        every, names = _summary_parts(summaries)
        devices = [nvprof_runs.device_line(t.above) for t in summaries]
        again = set(nvprof_summary.requoted(every, devices))
        parts = [part for k, part in enumerate(every) if k not in again]
        names = [named for k, named in enumerate(names) if k not in again]
        out.update(nvprof_summary.summary_tables(parts, stage, file, names))
        if any(len(t) for t in out.values()):
            _note_other_rows(summaries, [rows for _, rows in every])
    ranges = [t for t in tables if t.nvtx]
    if ranges:
        out["ranges"] = nvprof_summary.range_table(_summary_rows(ranges), stage)
    traces = [t for t in tables if t.kind in ("csv_trace", "text_trace")]
    api_traces = [t for t in traces if nvprof_tables.is_api_trace(t)]
    traces = [t for t in traces if t not in api_traces]
    if traces:
        out["gpu_trace"] = _gpu_trace(traces, stage, path)
    if api_traces:
        api = [_api_trace(t, stage) for t in api_traces]
        out["api_trace"] = pd.concat(api, ignore_index=True) if len(api) > 1 else api[0]
    metrics = [t for t in tables if t.kind in _METRIC_KINDS]
    if metrics:
        out.update(_metrics(metrics, stage, path))
        if not any(len(t) for t in out.values()):
            raise ParseError(path, EXPECTED, "its metric/event table has no rows (cut short?)")
    return out


def _note_other_rows(summaries: list[Table], rows: list[pd.DataFrame]) -> None:
    """Warn (`reader_notes.ReadNote`) naming the first `OpenACC (excl):` or `OpenMP (incl):` row
    of a summary that has GPU activities or API calls as well: PGI's rows, read as neither, are
    left out (tests/data/nvprof/9.x/openacc-v100-cnn-summary-openacc-excl-rows-cut.md), not
    passed over without a word. Only a table whose read `rows` hold such a type is searched for
    its line (a million-row summary is not made text again)."""
    for table, read in zip(summaries, rows, strict=True):
        if not read["type"].isin(_OTHER_TYPES).any():
            continue
        text = str(table.full_origin().text)
        found = _OTHER_TYPE.search(text)
        if found is not None:
            line = table.origin.first_line + text.count("\n", 0, found.start())
            said = (
                f"line {line}: nvprof's `{found.group(1)}:` rows left out: profgen has no table "
                "for them (it reads a summary's GPU activities and API calls)"
            )
            warnings.warn(reader_notes.ReadNote(said, line), stacklevel=4)
            return


def _text(source: str | Path | csvtext.Held) -> Text:
    """The file's text: its bytes when they are ASCII (held bytes known to be ASCII: their
    range of the buffer that holds them, not copied or checked again).

    Raises: ParseError as `csvtext.read_utf8_ascii`.
    """
    held = csvtext.held_ascii(source)
    if held is not None:
        return AsciiText(*held)
    data, ascii = csvtext.read_utf8_ascii(source, EXPECTED)
    return AsciiText(data) if ascii else data.decode("utf-8")


def looks_like(head: str) -> bool:
    """True when the start of a file is nvprof output: an `==PID==` or `========` line, or the
    header of a table nvprof writes."""
    if _NVPROF_LINE.search(head):
        return True
    return any(
        nvprof_tables.is_table_header(line)
        for line in head.splitlines()
        if nvprof_tables.has_header_word(line)
    )


def parse_time(text: str, path: Path) -> float:
    """`1.8260ms` -> 1826000.0 ns.

    Raises: ParseError for text that is not a number in range with a time unit.
    """
    try:
        unit = next(u for u in _TIME_UNITS if text.endswith(u))
        return values.scalar(text[: -len(unit)], values.TIME, csvtext.NS_PER_UNIT[unit])
    except (StopIteration, ValueError):
        raise ParseError(
            path, EXPECTED, f"{cell_quotes.shown_cell(text)} is not a time such as 1.8260ms"
        ) from None


def _summary_rows(tables: list[Table]) -> list[tuple[Origin, pd.DataFrame]]:
    """Each summary table's origin and rows (`nvprof_summary_cells.COLUMNS`)."""
    return _summary_parts(tables)[0]


def _summary_parts(
    tables: list[Table],
) -> tuple[list[tuple[Origin, pd.DataFrame]], list[nvprof_summary_text.Names | None]]:
    """`_summary_rows`, and each text table's `nvprof_summary_text.Names` (None for the
    others)."""
    out: list[tuple[Origin, pd.DataFrame]] = []
    names: list[nvprof_summary_text.Names | None] = []
    for table in tables:
        if table.kind == "csv_summary":
            out.append((table.origin, nvprof_summary_csv.csv_rows(table.origin, table.section)))
            names.append(None)
        else:
            rows, named = nvprof_summary_text.text_rows_named(
                table.origin, table.section, table.raw, table.lines
            )
            out.append((table.origin, rows))
            names.append(named)
    return out, names


def _api_trace(table: Table, stage: str) -> pd.DataFrame:
    """An API trace table -> `api_trace`."""
    if table.kind == "csv_trace":
        return nvprof_api_csv.api_trace(table.origin, stage)
    return nvprof_trace.text_api_trace(table.full_origin(), stage)


def _gpu_trace(tables: list[Table], stage: str, path: Path) -> pd.DataFrame:
    """Gpu trace tables -> one `gpu_trace`.

    Raises: ParseError for an API trace, or a trace with no kernel, copy or memset.
    """
    parts = []
    for table in tables:
        header = table.header()
        if "Grid Size" not in header and '"Grid X"' not in header:
            raise table.origin.error(
                f"line {table.origin.first_line}: an API trace (--print-api-trace); profgen "
                "reads nvprof's summaries, gpu trace and metrics"
            )
        if table.kind == "csv_trace":
            parts.append(nvprof_trace_csv.csv_trace(table.origin, stage))
        else:
            parts.append(
                nvprof_trace.text_trace(
                    table.origin, stage, table.raw, table.breaks, table.full_origin
                )
            )
    trace = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    if trace.empty:
        raise ParseError(
            path,
            EXPECTED,
            "its gpu trace holds Unified Memory events only (page faults, migrations): "
            "no kernel, copy or memset",
        )
    if trace["start_ns"].is_monotonic_increasing:  # as sorted: the rows numbered from 0
        return trace.reset_index(drop=True)
    return trace.sort_values("start_ns", kind="stable", ignore_index=True)


def _metrics(tables: list[Table], stage: str, path: Path) -> dict[str, pd.DataFrame]:
    """Metric and event tables -> `counters` (every row) and, when some metric maps, `metrics`
    (a row per kernel).

    Raises: ParseError for a bad row or cell, or as `nvprof_metrics.table`.
    """
    rows = [
        nvprof_metrics.text_rows(t.origin, t.raw, t.breaks, t.above)
        if t.kind == "text_metrics"
        else nvprof_metrics.csv_rows(t.origin)
        for t in tables
    ]
    return nvprof_metrics.table(rows, stage, Origin(path, EXPECTED))
