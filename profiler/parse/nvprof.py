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

Refused with a reason: nvprof output with no table profgen reads (`No kernels were profiled.`,
an error, a warning page), quoting nvprof's own message; a metric table with no rows; a gpu
trace of Unified Memory events only; one summary per device; a gpu trace whose column alignment
(or its line breaks too) a web page lost.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from profiler.errors import ParseError
from profiler.parse import (
    csvtext,
    headings,
    nvprof_api_csv,
    nvprof_cdp,
    nvprof_export,
    nvprof_metrics,
    nvprof_summary,
    nvprof_trace,
    nvprof_unfinished,
    nvprof_unread,
    values,
)
from profiler.parse import lines as parse_lines
from profiler.parse.values import LineCounter, Origin

EXPECTED = (
    "nvprof output: a summary (text or --csv), a gpu trace (--print-gpu-trace, text or --csv), "
    "an API trace (--print-api-trace, text or --csv), or --metrics/--events output (text or "
    "--csv)"
)
GPU, API = nvprof_summary.GPU, nvprof_summary.API

# Every pattern runs in linear time: single character classes, no nested quantifiers; rows are
# cut into fields with str.split or at fixed columns, never with a pattern (the old row pattern
# took 44 s on a 100 KB run of spaces).
_S = r"[ \t]+"
_HEADER = re.compile(
    r'^(?:(?P<csv_trace>"Start","Duration",)'
    r'|(?P<csv_summary>(?:"Type",)?"Time\(%\)","Time","Calls","Avg","Min","Max","Name"[ \t\r]*$)'
    r'|(?P<csv_metrics>"Device","Kernel","Invocations","(?:Metric|Event) Name",)'
    rf"|(?P<text_summary>[ \t]*(?:Type{_S})?Time\(%\){_S}Time{_S}Calls"
    rf"(?: \(host\){_S}Calls \(device\))?{_S}Avg{_S}Min{_S}Max"
    rf"{_S}Name[ \t\r]*$)"
    rf"|(?P<text_trace>[ \t]*Start{_S}Duration{_S}(?:Grid Size|Name))"
    rf"|(?P<text_metrics>[ \t]*Invocations{_S}(?:Metric Name{_S}Metric Description|Event Name)"
    rf"{_S}Min{_S}Max{_S}Avg))",
    re.MULTILINE,
)
_HEADER_WORDS = ("Time(%)", "Duration", "Invocations")  # every header holds one of them
_NVPROF_LINE = re.compile(r"^(?:==[0-9]+==|========) ", re.MULTILINE)
# The line above a table without a Type column names its rows: `==PID== API calls:`, `========
# OpenACC (excl):` (`========` when nvprof reads a saved profile, none when pasted without them).
_SECTION = re.compile(r"(?:==[0-9]+== |======== )?(?P<name>[^:=\n]{1,40}):[ \t\r]*\Z")
_RESULT = "Profiling result:"
_APPLICATION = "Profiling application: "
_NVTX = "NVTX result:"
# A table ends at a blank line, a line starting `==`, a Markdown code fence (``` or ~~~: a log
# pasted into a README or an issue), the end of a C block comment (`*/`, ` * ***/`: a log kept in
# a source file's comment), or a message nvprof itself printed (`nvprof: ...: Assertion ...
# failed.`, when it aborts after its tables). Possessive blanks and stars: the search tries every
# newline of a table, and a line's leading blanks are read once, not again for each way it could
# end.
# what ends a table: nvprof's next line, a fence, a block comment's close, `#endif` (a C file
# keeps output between `#if 0` and `#endif`), a blank line
_TABLE_END = re.compile(
    r"\n(?:==|nvprof: |[ \t]*+(?:```|~~~|\*[* \t]*+/|#[ \t]*+endif\b|[ \t\r]*+(?:\n|\Z)))"
)
# A gpu trace's header words inside a line: a page ran the trace's lines together (`_nothing`)
_TRACE_WORDS = " Start Duration Grid Size "
_RUN_TOGETHER = (
    "an nvprof gpu trace whose line breaks and column alignment the page it was copied from lost "
    "(its header `Start Duration Grid Size ... Name` and rows run together, one space apart, in "
    "one line with the text around them): its rows and cells cannot be told apart"
)
_ENDED = "it ended before nvprof's `Profiling result:`, with no table"
_ABORTED = "\nnvprof: "  # nvprof's own message when it aborts (`_note_abort`)
_SAYS = re.compile(
    r"^[ \t]*+(?:==[0-9]+== |======== )?(?P<msg>(?:Error|Warning|Generated result file): [^\n]*"
    r"|No kernels were profiled\.|No API activities were profiled\.|No events/metrics were "
    r"profiled\.)",
    re.MULTILINE,
)
_TIME_UNITS = ("ns", "us", "ms", "s")  # two-letter units first: `ms` also ends with `s`
_SUMMARY_KINDS = ("text_summary", "csv_summary")
_KIND_OF = {  # table kind -> what it gives
    "text_summary": "summary",
    "csv_summary": "summary",
    "text_trace": "trace",
    "csv_trace": "trace",
    "text_metrics": "metrics",
    "csv_metrics": "metrics",
}
_METRIC_KINDS = ("text_metrics", "csv_metrics")
_FROM_BYTES = ("text_trace", "text_metrics", "text_summary")  # read from an ASCII file's bytes


class AsciiText:
    """An ASCII file's text held as its bytes, `whole[start:end]` (a section of a capture is a
    range of the capture's bytes, not copied): what `_tables` searches, each cut made a `str`
    only when taken (the whole text of a 200 MB file as a `str` costs 0.15 s). `data` is the
    text's bytes (a view of the range); `find` and `rfind` search the range as `bytes` methods
    search `data`."""

    def __init__(self, whole: bytes, start: int = 0, end: int | None = None) -> None:
        end = len(whole) if end is None else end
        self.whole, self.start, self.size = whole, start, end - start
        self.data: bytes | memoryview = (
            whole if (start, end) == (0, len(whole)) else memoryview(whole)[start:end]
        )

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, cut: slice) -> str:
        return str(self.data[cut], "ascii")

    def __str__(self) -> str:
        return str(self.data, "ascii")

    def find(self, sub: str, start: int = 0, end: int | None = None) -> int:
        return self._search(self.whole.find, sub, start, end)

    def rfind(self, sub: str, start: int = 0, end: int | None = None) -> int:
        return self._search(self.whole.rfind, sub, start, end)

    def count(self, sub: str, start: int, end: int, /) -> int:
        """`str.count` over `text[start:end]` for positions in the text (`values.LineCounter`)."""
        return self.whole.count(sub.encode("ascii"), self.start + start, self.start + end)

    def _search(
        self, method: Callable[[bytes, int, int | None], int], sub: str, start: int, end: int | None
    ) -> int:
        """`method` (`whole.find` or `whole.rfind`) over the text, `start` and `end` read as
        `bytes.find` reads them (from the end when negative, clipped to the text), the offset
        found made the text's."""
        if self.data is self.whole:
            return method(sub.encode("ascii"), start, end)
        n = self.size
        start = max(start + n, 0) if start < 0 else start
        end = n if end is None else max(end + n, 0) if end < 0 else min(end, n)
        if start > n:
            return -1
        found = method(sub.encode("ascii"), self.start + start, self.start + end)
        return found if found < 0 else found - self.start


Text = str | AsciiText


def _match(pattern: re.Pattern[str], text: Text, pos: int) -> re.Match[Any] | None:
    """`pattern.match(text, pos)`; on an `AsciiText`, its twin for bytes on the bytes (the
    patterns hold ASCII only: the same matches)."""
    if isinstance(text, str):
        return pattern.match(text, pos)
    return _for_bytes(pattern).match(text.data, pos)


@functools.cache
def _for_bytes(pattern: re.Pattern[str]) -> re.Pattern[bytes]:
    return re.compile(pattern.pattern.encode("ascii"), pattern.flags & ~re.UNICODE)


@dataclass(frozen=True)
class Table:
    """One table found in a file: its kind (a group of `_HEADER`), its text and place, the row
    type of its untyped rows (`GPU`, or `API` under an `API calls:` line), the run it belongs
    to (how many `Profiling result:` lines come before it) and whether it is an NVTX range's
    summary (under an `NVTX result:` line of its run)."""

    kind: str
    origin: Origin
    section: str
    run: int
    nvtx: bool = False
    raw: memoryview | None = None  # the table's bytes, when the file is ASCII
    breaks: np.ndarray | None = field(default=None, compare=False)  # its newlines in `raw`
    # its lines with their leads (`parse.lines`), offsets in `raw`, when the file is ASCII
    lines: parse_lines.Lines | None = field(default=None, compare=False, repr=False)
    # A text table read from its bytes: the file's text and where the table starts in it (its
    # origin's text is then left empty: `full_origin` cuts it, if it is needed at all)
    whole: Text | None = field(default=None, compare=False, repr=False)
    at: int = field(default=0, compare=False)
    above: str = field(default="", compare=False)  # the line right above its header

    def full_origin(self) -> Origin:
        """The table's origin with its text."""
        if self.whole is None or self.raw is None:
            return self.origin
        text = self.whole[self.at : self.at + len(self.raw)]
        return dataclasses.replace(self.origin, text=text)

    @property
    def size(self) -> int:
        """The table's length in the file's text, from its header to the line that ends it."""
        return len(self.raw) if self.raw is not None else len(self.origin.text)

    def header(self) -> str:
        """The table's first line."""
        if self.whole is None or self.raw is None:
            text = str(self.origin.text)
            cut = text.find("\n")
            return text if cut < 0 else text[:cut]  # (split would copy the rest)
        cut = self.whole.find("\n", self.at, self.at + len(self.raw))
        return self.whole[self.at : self.at + len(self.raw) if cut < 0 else cut]


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
    _check_one_run(tables, csvtext.source_path(path))
    return _read_one(text, tables, stage, csvtext.source_path(path))


@dataclass(frozen=True)
class Run:
    """One nvprof run of a file: its tables, the line its tables start at, the command it
    profiled (`==PID== Profiling application: ./prog args`), when the log shows it, and the
    Markdown heading it is quoted under, when a README quotes it under one (`_headings`)."""

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


def read_runs(path: str | Path | csvtext.Held, stage: str) -> Runs:
    """Read a file of nvprof output that may hold several runs (a log of one run per step).

    A file is read as one run, as `read_log` reads it, unless two runs (each after its
    `Profiling result:` line) give tables of one kind; then each run that has tables is read on
    its own (titled by the Markdown heading it is quoted under, when it names no command), and
    each that has none (`No kernels were profiled.`, an error) is left out, said so in nvprof's
    own words; a file read as one run says so too of a run with no table that
    nvprof's own message explains (`_said_empty`). A paste without those lines whose summaries
    or gpu traces repeat (a README that quotes each step's summary in a block of its own) is cut
    into runs where they repeat (`_pasted_runs`).

    Args:
        path: as `read_log`.
        stage: the stage key written into every table (of every run).

    Returns: `Runs`; one run with no command for a file read as one.

    Raises: ParseError as `read_log`, except for several runs.
    """
    text, tables, leads = _found(path)
    name = csvtext.source_path(path)
    pasted = _pasted_runs(tables)
    if pasted is not None:
        return Runs(
            [
                Run(_read(got, stage, name), got[0].origin.first_line, heading=heading)
                for got, heading in zip(pasted, _headings(text, pasted), strict=True)
            ],
            [],
        )
    markers = _marker_lines(text, _RESULT, leads)
    if _several_runs(tables) is None:
        first = Run(_read_one(text, tables, stage, name), tables[0].origin.first_line)
        empty = _said_empty(text, markers, {table.run for table in tables})
        return Runs([first], sorted(empty + _unfinished(text, markers, leads)))
    by_run: dict[int, list[Table]] = {}
    for table in tables:
        by_run.setdefault(table.run, []).append(table)
    kept, left_out, line = [], [], LineCounter(text)
    order = sorted(by_run)
    titles = dict(zip(order, _headings(text, [by_run[r] for r in order]), strict=True))
    for run in range(len(markers) + 1):
        start = markers[run - 1] if run else 0
        before = markers[run - 2] if run > 1 else 0
        if run in by_run:
            got = by_run[run]
            command = _command(text, before, start if run else got[0].at)
            at_line = got[0].origin.first_line
            kept.append(Run(_read(got, stage, name), at_line, command, titles[run]))
        elif run:
            end = markers[run] if run < len(markers) else len(text)
            left_out.append((line.at(start), _nothing(text[start:end])))
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
        if run not in with_tables and _quoted(said) is not None:
            out.append((line.at(results[run - 1]), _nothing(said)))
    return out


def _unfinished(
    text: Text, results: list[int], leads: parse_lines.Lines | None
) -> list[tuple[int, str]]:
    """The runs nvprof started and never printed a result for (`nvprof_unfinished`) that its
    own message explains (its error), each with its start line and that message. A run with
    no message is passed over as before: a README's excerpt cuts logs anywhere. `leads`, as
    `_found` gives them, spare a search through the whole text for each marker."""
    found = nvprof_unfinished.unfinished(text, results, lambda m: _marker_lines(text, m, leads))
    line, out = LineCounter(text), []
    for at, own in found:
        quoted = _quoted(own)
        if quoted is not None:
            out.append((line.at(at), f"{_ENDED}; nvprof says: {quoted}"))
    return out


# What nvprof prints once a run (NVTX ranges aside): an event table and a metric table are one
# kind of table to the readers (`metrics`), but each comes once (`Event result:`, `Metric result:`).
_ONCE_A_RUN = ("summary", "trace", "api_trace", "events", "metrics")


def _pasted_runs(tables: list[Table]) -> list[list[Table]] | None:
    """The runs of a paste that left out nvprof's `Profiling result:` lines: a new run starts at
    each summary, gpu trace, event or metric table whose kind the run so far already has (a
    README that quotes one summary per optimisation step, each in its own block; a source file
    that keeps each variant's `Event result:` and `Metric result:` in its comment), with the
    tables after it.

    None when a `Profiling result:` line comes before a table (the runs are those lines'), when a
    summary has a `Device "..."` line right above it (`--print-summary-per-gpu`: one run's
    summaries, one per device; refused by the summary reader), or when no kind repeats."""
    if any(table.run for table in tables) or any(_device_line(t.above) for t in tables):
        return None
    runs: list[list[Table]] = [[]]
    seen: set[str] = set()
    for table in tables:
        kind = _once_kind(table)
        if kind in _ONCE_A_RUN and kind in seen:
            runs.append([])
            seen = set()
        runs[-1].append(table)
        seen.add(kind)
    return runs if len(runs) > 1 else None


def _once_kind(table: Table) -> str:
    """What a table is to `_pasted_runs`: what it gives (`_gives`), a table of events (`Event
    Name` in its header) `events`, not `metrics`."""
    kind = _gives(table)
    return "events" if kind == "metrics" and "Event Name" in table.header() else kind


def _gives(table: Table) -> str:
    """What a table gives: its kind's (`_KIND_OF`), `ranges` for an NVTX range's summary, and
    `api_trace` for an API trace (a run's gpu trace and API trace are two tables of it)."""
    if table.nvtx:
        return "ranges"
    if table.kind in ("csv_trace", "text_trace") and _is_api_trace(table):
        return "api_trace"
    return _KIND_OF[table.kind]


def _headings(text: Text, runs: list[list[Table]]) -> list[str | None]:
    """For each run of a paste (`_pasted_runs`), the Markdown heading it is quoted under
    (`headings.above`: nearest above its first table, below the run before's tables)."""
    spans = [[(t.at, t.at + t.size) for t in run] for run in runs]
    return headings.above(lambda start, end: text[start:end], spans)


def _device_line(line: str) -> bool:
    """Whether `line` is nvprof's `Device "NAME (N)"` line (after its `==PID==` prefix, if any)."""
    line = line.strip()
    if line.startswith("==") and "== " in line:
        line = line.split("== ", 1)[1].lstrip()
    return line.startswith('Device "')


def _command(text: Text, start: int, end: int) -> str | None:
    """The command of the last `Profiling application:` line in `text[start:end]`, if any."""
    at = text.rfind(_APPLICATION, start, end)
    if at < 0:
        return None
    stop = text.find("\n", at, end)
    command = text[at + len(_APPLICATION) : end if stop < 0 else stop].strip()
    return command[:200] or None


def _found(path: str | Path | csvtext.Held) -> tuple[Text, list[Table], parse_lines.Lines | None]:
    """The file's text, its tables, and the leads of its lines (`parse.lines`) when it is ASCII
    (None otherwise), which `_marker_lines` searches by.

    Raises: ParseError when the file's start is no nvprof output or it has no table.
    """
    name = csvtext.source_path(path)
    head = csvtext.read_head(path, EXPECTED)
    if not looks_like(head):
        raise ParseError(name, EXPECTED, "no nvprof table header nor ==PID== line at its start")
    text = _text(path)
    data = text.data if isinstance(text, AsciiText) else None
    leads = None if data is None else parse_lines.split_led(data)
    tables = _tables(text, name, data, leads)
    if not tables:
        raise ParseError(name, EXPECTED, _nothing(str(text)))
    _note_abort(text, tables)
    nvprof_unread.note(text, lambda title: _marker_lines(text, title, leads))
    return text, tables, leads


def _read_one(text: Text, tables: list[Table], stage: str, path: Path) -> dict[str, pd.DataFrame]:
    """`_read` of a file read as one run; a summary without rows is refused with nvprof's own
    words when the text has some (`No kernels were profiled.`, an error): why it is empty is
    then not only a cut.

    Raises: ParseError as `_read`.
    """
    try:
        return _read(tables, stage, path)
    except nvprof_summary.NoRows as exc:
        quoted = _quoted(str(text))
        if quoted is None:
            raise
        raise ParseError(path, EXPECTED, f"{exc.detail}; nvprof says: {quoted}") from None


def _read(tables: list[Table], stage: str, path: Path) -> dict[str, pd.DataFrame]:
    """The tables of one run, by `schema` name (see `read_log`)."""
    out: dict[str, pd.DataFrame] = {}
    summaries = [t for t in tables if t.kind in _SUMMARY_KINDS and not t.nvtx]
    file = Origin(path, EXPECTED)
    if summaries:
        parts, names = _summary_parts(summaries)
        out.update(nvprof_summary.summary_tables(parts, stage, file, names))
    ranges = [t for t in tables if t.nvtx]
    if ranges:
        out["ranges"] = nvprof_summary.range_table(_summary_rows(ranges), stage)
    traces = [t for t in tables if t.kind in ("csv_trace", "text_trace")]
    api_traces = [t for t in traces if _is_api_trace(t)]
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
    return any(is_table_header(line) for line in head.splitlines() if _has_header_word(line))


def is_table_header(line: str) -> bool:
    """True for the header line of a table nvprof writes."""
    return _HEADER.match(line) is not None


def parse_time(text: str, path: Path) -> float:
    """`1.8260ms` -> 1826000.0 ns.

    Raises: ParseError for text that is not a number in range with a time unit.
    """
    try:
        unit = next(u for u in _TIME_UNITS if text.endswith(u))
        return values.scalar(text[: -len(unit)], values.TIME, csvtext.NS_PER_UNIT[unit])
    except (StopIteration, ValueError):
        raise ParseError(
            path, EXPECTED, f"{values.shown_cell(text)} is not a time such as 1.8260ms"
        ) from None


def _has_header_word(line: str) -> bool:
    return any(word in line for word in _HEADER_WORDS)


def _headers(text: Text, leads: parse_lines.Lines | None = None) -> Iterator[re.Match[Any]]:
    """Every table header in the text, in order. Lines are picked by the words every header
    holds with str.find (or, given the leads of an ASCII text's lines, by their first non-blank
    byte: a header starts with `"`, `T`, `S` or `I`), then matched whole: a `^` pattern tried at
    every position of a 100 MB text would take seconds."""
    if leads is not None:
        for start in _lines_led_by(leads, b'"TSI').tolist():
            match = _match(_HEADER, text, start)
            if match is not None:
                yield match
        return
    starts = set()
    for word in _HEADER_WORDS:
        at = text.find(word)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            line_end = text.find("\n", at)
            at = -1 if line_end < 0 else text.find(word, line_end)
    for start in sorted(starts):
        match = _match(_HEADER, text, start)
        if match is not None:
            yield match


def _tables(
    text: Text,
    path: Path,
    data: bytes | memoryview | None = None,
    leads: parse_lines.Lines | None = None,
) -> list[Table]:
    """Every table in the text: its kind, its text (from the header to the blank, `==` or code
    fence line that ends it), its section, its run and whether it summarises an NVTX range.
    `data`, the text's bytes when it is ASCII, lets the lines that can matter be found with
    NumPy (`parse.lines`: its lines' `leads`, split here unless given) rather than with a few
    searches through the whole text (which may then be an `AsciiText`)."""
    if leads is None and data is not None:
        leads = parse_lines.split_led(data)
    line_of = LineCounter(text).at if leads is None else functools.partial(_line_of, leads)
    runs, nvtx = _marker_lines(text, _RESULT, leads), _marker_lines(text, _NVTX, leads)
    ends = None if leads is None else _lines_led_by(leads, b"=`~n*#", blank=True)
    found = []
    for match in _headers(text, leads):
        kind = next(k for k, v in match.groupdict().items() if v is not None)
        start = match.start()
        end = _table_end(text, start, ends)
        if kind == "text_summary" and text[start : match.end()].lstrip().startswith("Type"):
            end = _past_gaps(text, end, ends)
        end = end if kind.startswith("csv") else _before_prompt(text, start, end)
        above = text[text.rfind("\n", 0, max(start - 1, 0)) + 1 : max(start - 1, 0)]
        section = _section(above.strip(" \t"))
        skip = 1 if kind in ("csv_summary", "csv_trace") else 0  # the units row
        lazy = kind in _FROM_BYTES and data is not None
        shown = "" if lazy else text[start:end]
        cut = functools.partial(_cut, text, start, end) if lazy else None
        origin = Origin(path, EXPECTED, shown, line_of(start), skip, cut=cut)
        run = bisect.bisect(runs, start)
        in_nvtx = _last_before(nvtx, start) > _last_before(runs, start)
        raw = None if data is None else memoryview(data)[start:end]
        breaks = None if leads is None else _breaks(leads, start, end)
        in_nvtx = in_nvtx and kind in _SUMMARY_KINDS
        whole = text if lazy else None
        part = None if leads is None else leads.part(start, end)
        if kind == "text_summary" and nvprof_cdp.is_split(text[start : match.end()]):
            origin = nvprof_cdp.merged(origin)  # host and device calls as one column
            raw, part, whole = None, None, None
        found.append(
            Table(kind, origin, section, run, in_nvtx, raw, breaks, part, whole, start, above)
        )
    return found


def _line_of(leads: parse_lines.Lines, at: int) -> int:
    """The line (from 1) of the text's offset `at`."""
    return int(np.searchsorted(leads.start, at, side="right"))


def _cut(text: Text, start: int, end: int) -> str:
    """A table's text, cut from the file's only when a message counts its lines (`Origin.cut`):
    a copy of a 300 MB table costs 0.2 s."""
    return text[start:end]


def _breaks(leads: parse_lines.Lines, start: int, end: int) -> np.ndarray:
    """The offsets of the newlines in `[start, end)` of the text, from its start."""
    lo, hi = np.searchsorted(leads.end, [start, end])
    offsets: np.ndarray = leads.end[lo:hi] - start
    return offsets


def _table_end(text: Text, start: int, ends: np.ndarray | None) -> int:
    """Where the table whose header starts at `start` ends: after the newline before the first
    line that ends a table (`_TABLE_END`); `ends`, when known, holds the starts of the only lines
    that can (led by `=`, a backtick, `~`, `*`, `n` or `#`, blank, or led by what `parse.lines`
    does not know)."""
    if ends is None:
        end_match = _TABLE_END.search(str(text), start)
        return len(text) if end_match is None else end_match.start() + 1
    for line in ends[np.searchsorted(ends, start, side="right") :].tolist():
        if _match(_TABLE_END, text, line - 1):
            return int(line)
    return len(text)


def _past_gaps(text: Text, end: int, ends: np.ndarray | None) -> int:
    """`end`, or the end of the rows below the blank lines there when the first line after them
    is a typed summary row (`API calls:   42.14%  3.03300s ...`): nvprof prints none between a
    table's rows, but a paste that elides rows leaves them around its `...` (the ECE408 handouts
    of 2019: GPU activities, `...`, then API calls), and the rows below are the same table's."""
    while True:
        at = end
        while True:  # past the blank lines
            stop = text.find("\n", at)
            line = text[at : len(text) if stop < 0 else stop]
            if line.strip(" \t\r") or stop < 0:
                break
            at = stop + 1
        if at == end or not _typed_row(line):
            return end
        end = _table_end(text, at, ends)


def _typed_row(line: str) -> bool:
    """Whether a line is a summary row that starts with its type (`GPU activities:`, `API
    calls:`): seven fields after it, a share and a time first."""
    kind, sep, rest = line.strip().partition(":")
    fields = rest.split(None, 6)
    return (
        bool(sep)
        and kind in (GPU, API)
        and len(fields) == 7
        and fields[0].endswith("%")
        and fields[1].endswith("s")
    )


def _before_prompt(text: Text, start: int, end: int) -> int:
    """`end`, or the start of the text table's last line when that line is no row but the shell
    prompt that followed the output (`user@host:~$`, `🍺 :code`): led by neither a blank nor a
    digit, as every row of a text table is, nor by `Device` (a metric table's device line)."""
    stop = end - 1 if end > start and text[end - 1 : end] == "\n" else end
    last = text.rfind("\n", start, stop) + 1
    line = text[last:stop] if last > start else ""
    if line.strip() and line[0] not in " \t\r0123456789" and not line.startswith("Device "):
        return last
    return end


def _lines_led_by(leads: parse_lines.Lines, firsts: bytes, blank: bool = False) -> np.ndarray:
    """The starts of the lines whose first non-blank byte is one of `firsts`, or is not known
    (led by 64 blanks or more), and, if `blank`, the blank lines."""
    pick = np.isin(leads.first, np.frombuffer(firsts, dtype=np.uint8)) & (leads.lead >= 0)
    pick |= leads.lead == parse_lines.UNKNOWN
    if blank:
        pick |= leads.lead == parse_lines.BLANK_LINE
    return leads.start[pick]


def _section(above: str) -> str:
    """The row type of a table without a Type column, from the line above it: `API calls`, an
    OpenACC or OpenMP section (not GPU activities), else GPU activities."""
    match = _SECTION.match(above)
    name = match["name"].strip() if match else ""
    return name if name == API or name.startswith(("OpenACC", "OpenMP")) else GPU


def _last_before(positions: list[int], at: int) -> int:
    index = bisect.bisect(positions, at)
    return positions[index - 1] if index else -1


def _marker_lines(text: Text, marker: str, leads: parse_lines.Lines | None = None) -> list[int]:
    """Where each line that is `marker` starts (after blanks and an `==PID==` prefix, if any).
    Given the leads of an ASCII text's lines, only the lines led by `=` or the marker's first
    character are searched (no other line can be one)."""
    if leads is not None:
        out = []
        for start in _lines_led_by(leads, f"={marker[0]}".encode()).tolist():
            stop = text.find("\n", start)
            out += _markers_in(text, marker, start, len(text) if stop < 0 else stop)
        return out
    return _markers_in(text, marker, 0, len(text))


def _markers_in(text: Text, marker: str, begin: int, stop: int) -> list[int]:
    """`_marker_lines` of `text[begin:stop]` (whole lines)."""
    out, at = [], text.find(marker, begin, stop)
    while at >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        prefix = text[line_start:at].lstrip(" \t")
        if not prefix or (prefix.startswith("==") and prefix.endswith("== ") and len(prefix) < 24):
            out.append(line_start)
        at = text.find(marker, at + len(marker), stop)
    return out


def _check_one_run(tables: list[Table], path: Path) -> None:
    """Tables of one kind (summaries, traces, metrics, NVTX ranges) must come from one nvprof
    run; a summary of one run and a trace of another (a README showing both) are read as both.

    Raises: ParseError when two runs give tables of one kind (`read_runs` reads such a file).
    """
    several = _several_runs(tables)
    if several is not None:
        lines = ", ".join(str(n) for n in list(several.values())[:8])
        raise ParseError(
            path,
            EXPECTED,
            f"it holds the output of {len(several)} nvprof runs (tables from lines {lines}); "
            "import each run as a stage of its own",
        )


def _several_runs(tables: list[Table]) -> dict[int, int] | None:
    """The runs (each with its first table's line) of the first kind of table that several runs
    give, or None when each kind comes from one run."""
    firsts: dict[str, dict[int, int]] = {}
    for table in tables:
        firsts.setdefault(_gives(table), {}).setdefault(table.run, table.origin.first_line)
    return next((runs for runs in firsts.values() if len(runs) > 1), None)


def _note_abort(text: Text, tables: list[Table]) -> None:
    """Warn (`values.ReadNote`, partial) when nvprof aborted (its line `nvprof: <source file>:
    <line>: <function>: Assertion `...' failed.`, as when its OpenACC tracing fails): the tables
    it printed before may lack what it had not printed yet. The message quotes nvprof's line,
    its source file's folders left out. Only the text outside the tables is searched: such a
    line ends a table (`_TABLE_END`), so none lies inside one."""
    for low, high in _outside(tables, len(text)):
        for start in _nvprof_lines(text, low, high):
            end = text.find("\n", start)
            line = text[start : len(text) if end < 0 else end].rstrip()
            if line.endswith(" failed.") and ": Assertion " in line:
                where, _, rest = line.removeprefix("nvprof: ").partition(": ")
                shown = values.shown_cell(f"nvprof: {where.rsplit('/', 1)[-1]}: {rest}", 160)
                number = LineCounter(text).at(start)
                said = f"line {number}: nvprof aborted ({shown}): its output may be incomplete"
                warnings.warn(values.ReadNote(said, number, partial=True), stacklevel=2)
                return


def _nvprof_lines(text: Text, low: int, high: int) -> Iterator[int]:
    """The starts of the lines that begin with `nvprof: ` in `text[low:high]` (`low` 0, or
    a newline): the text's first line has no newline before it."""
    if low == 0 and text[: len(_ABORTED) - 1] == _ABORTED[1:]:
        yield 0
    at = text.find(_ABORTED, low, high)
    while at >= 0:
        yield at + 1
        at = text.find(_ABORTED, at + 1, high)


def _outside(tables: list[Table], size: int) -> Iterator[tuple[int, int]]:
    """The spans of a text of `size` characters that no table covers, each from the newline
    that ends the table before it (a line right under a table starts there)."""
    pos = 0
    for table in sorted(tables, key=lambda t: t.at):
        if table.at > pos:
            yield pos, table.at
        pos = max(pos, table.at + table.size - 1)
    yield pos, size


def _nothing(text: str) -> str:
    """Why a file with no table is refused, in nvprof's own words when it has some."""
    quoted = _quoted(text)
    if quoted is not None:
        exported = f": {nvprof_export.IMPORT_IT}" if nvprof_export.RESULT_FILE in quoted else ""
        return f"nvprof output with no table profgen reads; nvprof says: {quoted}{exported}"
    ran = text.find(_TRACE_WORDS)  # not at a line's start: no header was found there
    return "no nvprof table header found" if ran < 0 else _RUN_TOGETHER


def _quoted(text: str) -> str | None:
    """nvprof's own messages in `text` (its errors first, then what it found nothing of), the
    first two quoted, or None when it has none."""
    said = []
    for match in _SAYS.finditer(text):
        message = match["msg"].strip()
        if message not in said:
            said.append(message)
        if len(said) >= 8:
            break
    if not said:
        return None
    said.sort(key=lambda m: (not m.startswith(("Error", "Generated")), not m.startswith("No ")))
    return " / ".join(values.shown_cell(m, 160) for m in said[:2])


def _summary_rows(tables: list[Table]) -> list[tuple[Origin, pd.DataFrame]]:
    """Each summary table's origin and rows (`nvprof_summary.COLUMNS`)."""
    return _summary_parts(tables)[0]


def _summary_parts(
    tables: list[Table],
) -> tuple[list[tuple[Origin, pd.DataFrame]], list[nvprof_summary.Names | None]]:
    """`_summary_rows`, and each text table's `nvprof_summary.Names` (None for the others)."""
    out: list[tuple[Origin, pd.DataFrame]] = []
    names: list[nvprof_summary.Names | None] = []
    for table in tables:
        if table.kind == "csv_summary":
            out.append((table.origin, nvprof_summary.csv_rows(table.origin, table.section)))
            names.append(None)
        else:
            rows, named = nvprof_summary.text_rows_named(
                table.origin, table.section, table.raw, table.lines
            )
            out.append((table.origin, rows))
            names.append(named)
    return out, names


def _is_api_trace(table: Table) -> bool:
    """Whether a trace is `--print-api-trace`'s: `Start  Duration  Name`, or its `--csv`
    header (`"Start","Duration","Name","Correlation_ID"`), no launch columns."""
    if table.kind == "csv_trace":
        return nvprof_api_csv.is_api_header(csvtext.header_cells(table.header()))
    return table.header().split() == ["Start", "Duration", "Name"]


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
            parts.append(nvprof_trace.csv_trace(table.origin, stage))
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
