"""Why a capture of `nsys stats` output holds no table profgen reads, in words for the refusal
(`nsys_capture` asks them in turn): its reports went to files (`written_elsewhere`), nsys
skipped them (`all_skipped`) or printed none (`all_empty`), its tables are of reports profgen
does not use (`only_unused`, `os_runtime_only`; `unused_name` names such a report), or a table
is cut, rewritten or written by hand (`header_alone`, `not_nsys_layout`, `banners_alone`,
`csv_in_text`)."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from pathlib import PurePath

from profiler.parse import cell_quotes, nsys_fields, nsys_stdout
from profiler.parse.nsys_fields import REPORTS
from profiler.parse.nsys_stdout import Block


def written_elsewhere(head: str) -> str | None:
    """Where `nsys stats --output` wrote its reports instead, from the `Processing [x.sqlite]
    with [...] to [FILE]...` lines at the start of its log; None when it names no file."""
    mark = "] to ["
    for line in head.split("\n"):
        if line.startswith("Processing [") and mark in line:
            file = line.split(mark, 1)[1].split("]", 1)[0]
            folder = cell_quotes.shown_cell(str(PurePath(file).parent), 200)
            return (
                f"it is the log of `nsys stats --output`: the reports went to files such as "
                f"{cell_quotes.shown_cell(file, 200)}, not here; "
                f"import their folder {folder} instead"
            )
    return None


_SKIPPED = re.compile(r"^SKIPPED: [^\n]*+", re.M)  # linear: one possessive run per line
_LACKS = " does not contain "


def all_skipped(head: str) -> str | None:
    """Why a capture (or the log of `nsys stats` on a report) with `SKIPPED:` lines holds no
    report profgen reads: what nsys said the profile lacks, CUDA data first (`CUDA trace
    data`, ...); None when it has no such line."""
    said_by_line = (m[0].partition(_LACKS)[2].strip().rstrip(".") for m in _SKIPPED.finditer(head))
    lacks = list(dict.fromkeys(what for what in said_by_line if what))
    if not lacks:
        return None
    lacks.sort(key=lambda what: "CUDA" not in what)  # stable: file order within each kind
    said = cell_quotes.shown_cell(" nor ".join(lacks[:2]), 120)
    return (
        f"nsys skipped the reports profgen reads: the profile holds no {said} "
        f"({_why_no_cuda(head)}), and the tables it printed hold no GPU work"
    )


_WSL = re.compile(r"\bWSL", re.IGNORECASE)


def _why_no_cuda(head: str) -> str:
    """Why a profile may hold no CUDA data: the WSL its text names (where nsys may trace no GPU
    work), else a guess at a trace without CUDA."""
    if _WSL.search(head) is None:
        return "recorded without `-t cuda`?"
    return "recorded under WSL, which the text names"


def all_empty(head: str) -> str | None:
    """Why a `--stats=true` capture whose banners name reports profgen reads holds none of
    them: nsys printed no table under any (newer versions print nothing for an empty report);
    None when no banner names such a report."""
    shown = _reports_named(head, lambda line: line.startswith("["))
    if shown is None:
        return None
    return (
        f"nsys ran the reports profgen reads ({shown}) and printed no table under any: the "
        "profile holds no CUDA API calls, kernels or memory copies (did the program run on "
        "the GPU?)"
    )


def only_unused(head: str, blocks: list[Block]) -> str | None:
    """Why a capture in which no table of a report profgen reads was found, and some table sits
    under a marker of a report it does not use (`Running [.../osrtsum.py x.sqlite]...`), holds
    none it reads: those reports' names, and either that nsys printed no CUDA report (the file
    shows nsys's command or first lines above the tables and goes on past them: `_printed_all`)
    or that none is in it (a paste cut before them); None when no table sits under such a
    marker."""
    if not any(block.report == nsys_stdout.SKIP and block.text.strip() for block in blocks):
        return None
    marks = [line.strip() for line in head.split("\n") if _is_mark(line)]
    names = list(dict.fromkeys(name for name in map(unused_name, marks) if name))
    shown = cell_quotes.listed(names)
    said = f"its tables are all of nsys reports profgen does not use ({shown}), none of a CUDA "
    after = _printed_all(blocks)
    if after is None:
        return said + "API, kernel or memory-copy report (a paste cut before them?)"
    return said + (
        f"API, kernel or memory-copy report, and the file shows nsys's start above them and goes "
        f"on past them (line {after}): nsys printed none, as for a program that made no CUDA "
        "calls (a CPU-only program, or one profiled without `-t cuda`?)"
    )


# A line that runs nsys (`$ nsys stats x.nsys-rep`, `step2:nsys stats ...`) or starts the output
# of `nsys stats`; matched on at most 400 characters, one lazy run (no nested repeats)
_STARTS = re.compile(
    r"(?:^|.*?[\s:/(])nsys[ \t]+(?:stats|profile|nvprof)\b|Generating SQLite file "
)


def _printed_all(blocks: list[Block]) -> int | None:
    """The file line of the first text past the last table under a marker of a report profgen
    does not use (neither nsys's nor an elision mark), when a line above the first such table
    runs nsys or starts its output (`nsys stats ...`, `Generating SQLite file ...`): the paste
    holds all nsys printed. None otherwise."""
    tables = [n for n, b in enumerate(blocks) if b.report == nsys_stdout.SKIP and b.text.strip()]
    above = [line for b in blocks[: tables[0] if tables else 0] for line in b.text.split("\n")]
    if not tables or not any(_STARTS.match(line[:400]) for line in above):
        return None
    for block in blocks[tables[-1] + 1 :]:
        lines = block.text.split("\n")
        for n, line in enumerate(lines if block.report is None else []):
            if line.strip().strip(".…[] "):
                return block.first_line + n
    return None


def os_runtime_only(lines: list[int]) -> str | None:
    """Why a capture whose only tables are of OS calls (`poll`, `ioctl`, ...) under no marker
    holds none profgen reads; None when it has none."""
    if not lines:
        return None
    return (
        f"its table at line {lines[0]} is an OS runtime summary (osrt_sum: no CUDA API function "
        "among its names; its header is cuda_api_sum's), which profgen does not use, and no "
        "CUDA API, kernel or memory-copy report is in it"
    )


def header_alone(blocks: list[Block]) -> str | None:
    """Why a capture whose last table is a header with nothing under it (a paste that ends at
    the header of a report profgen reads) holds no table: that report and the header's line;
    None when no block is a header alone."""
    for at, block in enumerate(blocks):
        lines = [line for line in block.text.split("\n") if line.strip()]
        if block.report in REPORTS and len(lines) == 1:
            cells = re.split(r"\s{2,}", lines[0].strip())
            if nsys_fields.identify_cells(cells) == block.report:
                where = f"the {block.report} table at line {block.first_line}"
                below = blocks[at + 1].text.strip() if at + 1 < len(blocks) else ""
                if _THEMATIC_BREAK.fullmatch(below.split("\n", 1)[0]):
                    rows = below.split("\n")[1:] or _text_of(blocks, at + 2).split("\n")
                    return (
                        f"{where} has a Markdown rule (`---`) under its header in place of nsys's "
                        "dash runs, which mark its columns (the text rewritten by a Markdown "
                        "editor?)" + ("" if _lined_up(lines[0], rows) else _NOT_LINED_UP)
                    )
                return (
                    f"{where} is its header alone: the paste ends there, before its rule and rows"
                )
    return None


def _text_of(blocks: list[Block], at: int) -> str:
    """The text of `blocks[at]`; empty past the last."""
    return blocks[at].text if at < len(blocks) else ""


_THEMATIC_BREAK = re.compile(r"-{3,}")  # a Markdown rule, one run of dashes (nsys's has several)
_NOT_LINED_UP = (
    ", and its rows do not line up under it as nsys's do (the blanks that led its lines lost?): "
    "its columns cannot be told"
)


def _lined_up(header: str, rows: list[str]) -> bool:
    """Whether the rows (their first 64 with text) line up under `header` as nsys's do: each
    number, every column's but the last (the name), ends where the same column's number ends in
    every other row, and not left of the end of its header cell (nsys's rule, each column's
    dash run, is as wide as its header at least, and numbers end where it ends)."""
    cells = [m.end() for m in _HEADER_CELL.finditer(header)][:-1]
    ends = {
        tuple(m.end() for m in _WORD.finditer(row))[: len(cells)]
        for row in [row for row in rows if row.strip()][:64]
    }
    if len(ends) != 1:
        return False
    (found,) = ends
    return len(found) == len(cells) and all(a <= b for a, b in zip(cells, found, strict=True))


_HEADER_CELL = re.compile(r"\S+(?: \S+)*")  # a header cell: words one blank apart
_WORD = re.compile(r"\S+")


def not_nsys_layout(blocks: list[Block]) -> str | None:
    """Why a capture whose markers name reports profgen reads holds none of them, when a table
    is under one but its header lacks the columns nsys prints for that report (a table written
    or cut down by hand: `Time(%)  Total(ns)  Calls  Avg(ns)  Name`): that report, the table's
    line and its header; None when no such table is under a marker."""
    for block in blocks:
        lines = [line for line in block.text.split("\n") if line.strip()]
        if block.report in REPORTS and len(lines) > 1:
            header = cell_quotes.shown_cell(" ".join(lines[0].split()), 80)
            return (
                f"the {block.report} table at line {block.first_line} is not in nsys's layout: "
                f"its header {header} lacks the columns nsys prints for it (written or cut "
                "down by hand?)"
            )
    return None


def csv_in_text(head: str) -> str | None:
    """Why text whose only nsys table is written as CSV (`nsys stats --format csv`'s layout,
    quoted in a script's heredoc or a fixture) holds no table of column text: that report and
    its header's line; None when no line is an nsys report's CSV header."""
    for number, line in enumerate(head.split("\n"), 1):
        if line.count(",") < 3 or '"' not in line:
            continue
        report = nsys_fields.identify_cells(next(csv.reader([line])))
        if report is not None:
            return (
                f"line {number}: a {report} header in CSV (`nsys stats --format csv`'s layout) "
                "amid other text: profgen reads nsys CSV as a file of its own (a report a file, "
                "or a folder of them), not quoted in another"
            )
    return None


def banners_alone(head: str) -> str | None:
    """Why a capture whose ` ** CUDA API Summary (cuda_api_sum):` banners name reports profgen
    reads holds none of them: no table under any (nsys prints a banner only over a table, so
    the paste kept the banners and left the tables out); None when no banner names one."""
    shown = _reports_named(head, lambda line: line.lstrip()[:3] == "** ")
    if shown is None:
        return None
    return (
        f"its banners name reports profgen reads ({shown}) but no table is under any: the "
        "paste kept nsys's banners and left its tables out"
    )


def _reports_named(head: str, banner: Callable[[str], bool]) -> str | None:
    """The reports profgen reads that the lines of `head` picked by `banner` name, in order,
    each once, the first three shown; None when they name none."""
    named = (nsys_stdout.marker(line)[0] for line in head.split("\n") if banner(line))
    found = list(dict.fromkeys(report for report in named if report))
    if not found:
        return None
    return cell_quotes.listed(found)


_MARKS = ("Processing [", "Running [", "Exporting [", "[", "**")


def _is_mark(line: str) -> bool:
    """Whether `line` may name a report: a marker (`Running [...]`, ` ** ... (osrt_sum):`) or
    a 2020-2021 heading (`Operating System Runtime API Statistics:`)."""
    text = line.strip()
    return text.startswith(_MARKS) or (text.endswith(":") and " Statistics" in text)


def unused_name(line: str) -> str | None:
    """The name of the report a marker line names, when profgen does not use it: `osrtsum` of
    `Running [.../osrtsum.py x.sqlite]...`, `osrt_sum` of `** OS Runtime Summary (osrt_sum):`,
    the heading itself of `Operating System Runtime API Statistics:` (2020-2021, no name)."""
    report, _ = nsys_stdout.marker(line)
    if report != nsys_stdout.SKIP:
        return None
    name = nsys_stdout.named(line)
    if name is None and line.strip().endswith(":"):
        return line.strip().removesuffix(":")
    return PurePath(name).stem if name else None
