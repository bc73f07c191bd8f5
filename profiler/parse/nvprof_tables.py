"""The tables of an nvprof log: each table header found in the text (`headers`), where its table
ends, the row type of a table without a Type column, the `Profiling result:` and `NVTX result:`
marker lines, and each table found (`Table`): its kind, text, run and place."""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from profiler.parse import csvtext, nvprof_api_csv, nvprof_cdp, nvprof_summary, nvprof_text
from profiler.parse import lines as parse_lines
from profiler.parse.nvprof_text import Text
from profiler.parse.table_origin import LineCounter, Origin

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
# The line above a table without a Type column names its rows: `==PID== API calls:`, `========
# OpenACC (excl):` (`========` when nvprof reads a saved profile, none when pasted without them).
_SECTION = re.compile(r"(?:==[0-9]+== |======== )?(?P<name>[^:=\n]{1,40}):[ \t\r]*\Z")
RESULT = "Profiling result:"
_NVTX = "NVTX result:"
# A table ends at a blank line, a line starting `==`, a Markdown code fence (``` or ~~~: a log
# pasted into a README or an issue), the end of a C block comment (`*/`, ` * ***/`: a log kept in
# a source file's comment), or a message nvprof itself printed (`nvprof: ...: Assertion ...
# failed.`, when it aborts after its tables). Possessive blanks and stars: the search tries every
# newline of a table, and a line's leading blanks are read once, not again for each way it could
# end.
# what ends a table: nvprof's next line, a fence, a block comment's close, `#endif` (a C file
# keeps output between `#if 0` and `#endif`), a Markdown rule of dashes (`-------`: an author's
# line between runs pasted in one fence; nvprof prints none), a blank line
_TABLE_END = re.compile(
    r"\n(?:==|nvprof: |[ \t]*+(?:```|~~~|\*[* \t]*+/|#[ \t]*+endif\b|-{3,}+[ \t\r]*+(?:\n|\Z)"
    r"|[ \t\r]*+(?:\n|\Z)))"
)
SUMMARY_KINDS = ("text_summary", "csv_summary")
_FROM_BYTES = ("text_trace", "text_metrics", "text_summary")  # read from an ASCII file's bytes


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


def is_table_header(line: str) -> bool:
    """True for the header line of a table nvprof writes."""
    return _HEADER.match(line) is not None


def has_header_word(line: str) -> bool:
    return any(word in line for word in _HEADER_WORDS)


def _headers(text: Text, leads: parse_lines.Lines | None = None) -> Iterator[re.Match[Any]]:
    """Every table header in the text, in order. Lines are picked by the words every header
    holds with str.find (or, given the leads of an ASCII text's lines, by their first non-blank
    byte: a header starts with `"`, `T`, `S` or `I`), then matched whole: a `^` pattern tried at
    every position of a 100 MB text would take seconds."""
    if leads is not None:
        for start in _lines_led_by(leads, b'"TSI').tolist():
            match = nvprof_text.match(_HEADER, text, start)
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
        match = nvprof_text.match(_HEADER, text, start)
        if match is not None:
            yield match


def tables(
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
    runs, nvtx = marker_lines(text, RESULT, leads), marker_lines(text, _NVTX, leads)
    ends = None if leads is None else _lines_led_by(leads, b"=`~n*#-", blank=True)
    found = []
    for match in _headers(text, leads):
        kind = next(k for k, v in match.groupdict().items() if v is not None)
        start = match.start()
        end = _table_end(text, start, ends)
        if kind == "text_summary" and text[start : match.end()].lstrip().startswith("Type"):
            end = _past_gaps(text, end, ends, _typed_row)
        elif kind == "text_metrics":
            end = _past_gaps(text, end, ends, _kernel_line)
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
        in_nvtx = in_nvtx and kind in SUMMARY_KINDS
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
    that can (led by `=`, a backtick, `~`, `*`, `n`, `#` or `-`, blank, or led by what `parse.lines`
    does not know)."""
    if ends is None:
        end_match = _TABLE_END.search(str(text), start)
        return len(text) if end_match is None else end_match.start() + 1
    for line in ends[np.searchsorted(ends, start, side="right") :].tolist():
        if nvprof_text.match(_TABLE_END, text, line - 1):
            return int(line)
    return len(text)


def _past_gaps(
    text: Text, end: int, ends: np.ndarray | None, goes_on: Callable[[str], bool]
) -> int:
    """`end`, or the end of the rows below the blank lines there when the first line after them
    `goes_on` with the table: a typed summary row (`API calls:   42.14%  3.03300s ...`) below a
    summary, a `Kernel:` or `Device` line below a metric table. nvprof prints no blank line
    inside a table, but people add them: a paste that elides rows leaves them around its `...`
    (the ECE408 handouts of 2019: GPU activities, `...`, then API calls), and notes space a
    metric table's kernels apart (`Device "..."`, a blank line, then each `Kernel:` with its
    rows and a blank line: tests/data/nvprof/9.x/zh-reduce-integer-v100-metric-tables-blank-
    lines-in-comment-cut.cu); the lines below are the same table's."""
    while True:
        at = end
        while True:  # past the blank lines
            stop = text.find("\n", at)
            line = text[at : len(text) if stop < 0 else stop]
            if line.strip(" \t\r") or stop < 0:
                break
            at = stop + 1
        if at == end or not goes_on(line):
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


def _kernel_line(line: str) -> bool:
    """Whether a line starts a metric table's next kernel or device: `Kernel: <name>` or
    `Device "<name> (N)"`."""
    return line.lstrip(" \t").startswith(("Kernel: ", 'Device "'))


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


def marker_lines(text: Text, marker: str, leads: parse_lines.Lines | None = None) -> list[int]:
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
    """`marker_lines` of `text[begin:stop]` (whole lines)."""
    out, at = [], text.find(marker, begin, stop)
    while at >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        prefix = text[line_start:at].lstrip(" \t")
        if not prefix or (prefix.startswith("==") and prefix.endswith("== ") and len(prefix) < 24):
            out.append(line_start)
        at = text.find(marker, at + len(marker), stop)
    return out


def is_api_trace(table: Table) -> bool:
    """Whether a trace is `--print-api-trace`'s: `Start  Duration  Name`, or its `--csv`
    header (`"Start","Duration","Name","Correlation_ID"`), no launch columns."""
    if table.kind == "csv_trace":
        return nvprof_api_csv.is_api_header(csvtext.header_cells(table.header()))
    return table.header().split() == ["Start", "Duration", "Name"]
