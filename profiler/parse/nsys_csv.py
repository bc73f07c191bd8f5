"""Nsight Systems `nsys stats` output -> profgen's tables.

Three layouts are read: a folder written with `--format csv --output PREFIX` (one
`PREFIX_<report>.csv` per report; a bare `<report>.csv` is accepted too, also when nsys's
`Processing [...]` lines stand above its header), one capture of stdout in CSV with every report
concatenated, and one capture of the default column text (`nsys stats`, `nsys profile
--stats=true`) of any version from 2019.x to 2025.x. `nsys_stdout` finds the reports in a
capture (markers, headings, banners, `SKIPPED:` lines), `nsys_text` reads column text,
`nsys_fields` the headers and cells of every layout, `nsys_tables` builds the tables.

| nsys report (old name) | table |
| --- | --- |
| cuda_gpu_trace (gputrace) | `gpu_trace` |
| cuda_api_trace | `api_trace` |
| nvtx_gpu_proj_trace | `range_trace` |
| cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum | `gpu_activities` (1) |
| cuda_gpu_sum (kernels and memory operations, by `Category`) | `gpu_activities` (2) |
| cuda_api_sum (cudaapisum) | `api_calls`, only when there is no api trace |
| nvtx_sum (nvtxsum, nvtx_pushpop_sum, nvtx_startend_sum) [+ nvtx_gpu_proj_sum] | `ranges` |

(1) only when there is no gpu trace; old names gpukernsum, gpumemtimesum, gpumemsizesum; the
headings `CUDA Kernel Statistics`, `CUDA Memory Operation Statistics (by time|by size)`.
(2) only when there is neither a gpu trace nor a kernel or memory-time summary.

Units are taken from the headers (or the heading above a table) and converted to integer ns
and bytes. Reports profgen does not use (osrt_sum, nvtx_kern_sum, ...) are skipped. When a
capture holds a report twice (two runs), `read_stats_runs` reads each run the file tells apart
(`nsys_runs`), and `read_stats_stdout` the first table of each report.
"""

from __future__ import annotations

import csv
import re
import warnings
from collections.abc import Callable
from pathlib import Path, PurePath

import pandas as pd

from profiler import files
from profiler.errors import ParseError
from profiler.parse import (
    csvtext,
    nsys_fields,
    nsys_gaps,
    nsys_notes,
    nsys_runs,
    nsys_stdout,
    nsys_tables,
    nsys_text,
    nsys_wrapped,
    values,
)
from profiler.parse.nsys_fields import OLD_NAMES, REPORTS, canonical_report, identify
from profiler.parse.nsys_stdout import Block, split_stdout
from profiler.parse.values import Origin

__all__ = ["OLD_NAMES", "REPORTS", "Block", "canonical_report", "identify", "split_stdout"]

EXPECTED = "nsys stats output (cuda_gpu_trace, cuda_gpu_kern_sum, cuda_api_sum, ...)"


def report_files(path: str | Path) -> dict[str, Path]:
    """The files of a folder `read_stats_dir` reads: regular files (never a symbolic link, a
    FIFO or a device: checked with lstat) named `*.csv` like an nsys report, by report.

    Raises: ParseError when `path` is not a folder or two files give one report.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise ParseError(folder, f"a folder of {EXPECTED}", "it is not a folder")
    found: dict[str, Path] = {}
    for file in sorted(folder.glob("*.csv")):
        report = canonical_report(file.stem)
        if report is None or not files.is_regular_file(file):
            continue
        if report in found:
            raise ParseError(
                folder,
                f"a folder of {EXPECTED}",
                f"{found[report].name} and {file.name} both hold the {report} report",
            )
        found[report] = file
    return found


def read_stats_dir(path: str | Path, stage: str) -> dict[str, pd.DataFrame]:
    """Read a folder of `nsys stats --format csv --output PREFIX` files (see `report_files`).

    Args:
        path: the folder.
        stage: the stage key written into every table.

    Returns: tables by name (`gpu_trace`, `api_trace`, `range_trace`, `gpu_activities`,
        `api_calls`, `ranges`), each a DataFrame with the `schema` table of that name;
        only the tables the folder's reports give. A zero-byte report (nsys: "PROCESSED (EMPTY
        RESULTS)") or one with only its header has no data and gives no table.

    Raises: ParseError when the folder holds no nsys report CSV or a report is corrupt.
    """
    folder = Path(path)
    frames: dict[str, tuple[pd.DataFrame, Path]] = {}
    chosen = report_files(folder)
    if not chosen:
        raise ParseError(folder, f"a folder of {EXPECTED}", "no file is named like an nsys report")
    for report, file in chosen.items():
        if file.stat().st_size == 0:
            continue
        frame = _read_report_file(file, report)
        if len(frame):
            frames[report] = (frame, file)
    return nsys_tables.build(frames, stage)


def _read_report_file(file: Path, report: str) -> pd.DataFrame:
    """One report's CSV file: its header on the first line, or nsys's `Processing [...]` and
    `Generating SQLite file ...` lines above it (stdout redirected to the file).

    Raises: ParseError when the file holds no header of that report or the report is corrupt.
    """
    expected = f"nsys {report} CSV"
    head = csvtext.read_head(file, expected)
    header = head.split("\n", 1)[0]
    if identify(header) is None and nsys_stdout.recognise(head):
        text = csvtext.read_text(file, expected)
        for block in split_stdout(text):
            first = block.text.split("\n", 1)[0]
            if (block.report or identify(first)) == report and block.report != nsys_stdout.SKIP:
                origin = Origin(file, expected, block.text, block.first_line, dropped=block.dropped)
                return read_report(block.text, first, report, origin)
    _check_header(header, report, file)  # before the whole file is read
    data = csvtext.read_utf8(file, expected)
    return read_report(data, header, report, Origin(file, expected, data))


def read_stats_stdout(path: str | Path | csvtext.Held, stage: str) -> dict[str, pd.DataFrame]:
    """Read one capture of `nsys stats` output (CSV or column text) with several reports in it
    (a file, or its bytes held).

    Returns: tables by name, as `read_stats_dir`.

    Raises: ParseError when its first 64 KiB hold no nsys line, no report can be found in the
        text, or a report is corrupt.
    """
    return nsys_tables.build(read_stdout_reports(path), stage)


def read_stats_runs(
    path: str | Path | csvtext.Held, stage: str
) -> list[tuple[nsys_runs.Run, dict[str, pd.DataFrame]]]:
    """Read one capture of `nsys stats` output as `read_stats_stdout`, as one run per run it
    tells apart when it prints a report again (`nsys_runs`): each run and its tables.

    Raises: ParseError as `read_stats_stdout`, and when it prints a report again, does not
        tell the runs apart, and reading the first table of each report would mix them.
    """
    tables, file = _stdout_tables(path)
    found = nsys_runs.runs(tables)
    if found is None:
        why = nsys_runs.mixed(tables)
        if why is not None:
            raise ParseError(file, EXPECTED, why)
        first = nsys_runs.first_of_each(tables, file)
        return [(nsys_runs.Run(tables), nsys_tables.build(first, stage))]
    return [(run, nsys_tables.build(run.reports(file), stage)) for run in found]


def read_stdout_reports(path: str | Path | csvtext.Held) -> dict[str, tuple[pd.DataFrame, Path]]:
    """The reports of one capture, by canonical name: their `nsys_fields` frames (units
    applied) and the file (what `read_stats_stdout` builds its tables from); of a report
    printed again, the first table (`nsys_runs.first_of_each`, with a warning).

    Raises: ParseError as `read_stats_stdout`.
    """
    tables, file = _stdout_tables(path)
    return nsys_runs.first_of_each(tables, file)


@nsys_notes.said_once()  # (notes cut off the names of several tables: one warning)
def _stdout_tables(path: str | Path | csvtext.Held) -> tuple[list[nsys_runs.Table], Path]:
    """Every table with rows of a report profgen reads in one capture, in file order, and the
    file.

    Raises: ParseError as `read_stats_stdout`.
    """
    source, path = path, csvtext.source_path(path)
    head = csvtext.read_head(source, EXPECTED)
    if not nsys_stdout.recognise(head):
        raise ParseError(path, EXPECTED, "its start has no nsys report header or nsys line")
    data, ascii = csvtext.read_utf8_ascii(source, EXPECTED)  # (ASCII: a character is a byte)
    blocks = nsys_stdout.split_ascii(data) if ascii else split_stdout(data.decode("utf-8"))
    blocks = nsys_gaps.rejoined(blocks)  # a header or rows a paste set apart by a blank line
    tables: list[nsys_runs.Table] = []
    found, since = False, 0
    # A table under no report's name (its `[4/8] Executing 'osrt_sum'` line cut by the paste)
    # is known by its header only, which some reports share (osrt_sum's is cuda_api_sum's): a
    # report that the capture names elsewhere is that table's, not this one.
    named = [b.report for b in blocks if b.report not in (None, nsys_stdout.SKIP)]
    os_runtime: list[int] = []  # lines of tables of OS calls under no marker
    wrapped: list[ParseError] = []  # why each table a terminal wrapped was left out
    for block in blocks:
        if block.report == nsys_stdout.SKIP:
            continue
        block = _past_caption(block)
        span = block.span if ascii else None
        raw = None if span is None else (data, *span)
        read = {t.report for t in tables}
        done = [] if block.report is not None else [r for r in named if r not in read]
        try:
            report, frame = _read_block(block, path, done, raw)
        except ParseError as exc:
            if not nsys_wrapped.left_out(block, exc):
                raise
            wrapped.append(exc)
            continue
        if block.report is None and report == "cuda_api_sum" and _os_calls(frame):
            os_runtime.append(block.first_line)  # osrt_sum's header is cuda_api_sum's
            continue
        found = found or report is not None
        if report is not None and frame is not None and len(frame):
            start, end = block.pieces[0][0], block.pieces[-1][1]
            label, parted = nsys_runs.placed(_decoded(block.source, since, start))
            sure = block.report is not None or report not in named
            line = block.first_line
            tables.append(nsys_runs.Table(report, frame, line, label, parted, sure))
            since = end
    if not tables and wrapped:
        raise wrapped[0]
    if not found:
        reason = (
            _written_elsewhere(head)
            or all_skipped(head)
            or _all_empty(head)
            or only_unused(head, blocks)
            or _os_runtime_only(os_runtime)
            or _header_alone(blocks)
            or _not_nsys_layout(blocks)
            or _banners_alone(head)
            or _csv_in_text(head)
            or "no nsys report header found"
        )
        raise ParseError(path, EXPECTED, reason)
    if not tables:
        raise ParseError(path, EXPECTED, "its reports have a header but no rows")
    return tables, path


def _decoded(source: str | bytes, start: int, end: int) -> str:
    """`source[start:end]` as text (a capture's bytes are ASCII)."""
    cut = source[start:end]
    return cut.decode("ascii", "replace") if isinstance(cut, bytes) else cut


def _written_elsewhere(head: str) -> str | None:
    """Where `nsys stats --output` wrote its reports instead, from the `Processing [x.sqlite]
    with [...] to [FILE]...` lines at the start of its log; None when it names no file."""
    mark = "] to ["
    for line in head.split("\n"):
        if line.startswith("Processing [") and mark in line:
            file = line.split(mark, 1)[1].split("]", 1)[0]
            folder = values.shown_cell(str(PurePath(file).parent), 200)
            return (
                f"it is the log of `nsys stats --output`: the reports went to files such as "
                f"{values.shown_cell(file, 200)}, not here; import their folder {folder} instead"
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
    said = values.shown_cell(" nor ".join(lacks[:2]), 120)
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


def _all_empty(head: str) -> str | None:
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
    shown = values.listed(names)
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


def _os_calls(frame: pd.DataFrame | None) -> bool:
    """Whether a table read as a CUDA API summary under no marker is one of OS runtime calls
    (`osrt_sum`, whose header is the same): rows, and no name of a CUDA runtime or driver API
    function (`cudaMalloc`, `cuLaunchKernel`: every name in `cuda_api_sum` starts `cu`)."""
    if frame is None or not len(frame):
        return False
    return not frame["name"].astype("string").str.startswith("cu").fillna(False).any()


def _os_runtime_only(lines: list[int]) -> str | None:
    """Why a capture whose only tables are of OS calls (`poll`, `ioctl`, ...) under no marker
    holds none profgen reads; None when it has none."""
    if not lines:
        return None
    return (
        f"its table at line {lines[0]} is an OS runtime summary (osrt_sum: no CUDA API function "
        "among its names; its header is cuda_api_sum's), which profgen does not use, and no "
        "CUDA API, kernel or memory-copy report is in it"
    )


def _header_alone(blocks: list[Block]) -> str | None:
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


def _not_nsys_layout(blocks: list[Block]) -> str | None:
    """Why a capture whose markers name reports profgen reads holds none of them, when a table
    is under one but its header lacks the columns nsys prints for that report (a table written
    or cut down by hand: `Time(%)  Total(ns)  Calls  Avg(ns)  Name`): that report, the table's
    line and its header; None when no such table is under a marker."""
    for block in blocks:
        lines = [line for line in block.text.split("\n") if line.strip()]
        if block.report in REPORTS and len(lines) > 1:
            header = values.shown_cell(" ".join(lines[0].split()), 80)
            return (
                f"the {block.report} table at line {block.first_line} is not in nsys's layout: "
                f"its header {header} lacks the columns nsys prints for it (written or cut "
                "down by hand?)"
            )
    return None


def _csv_in_text(head: str) -> str | None:
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


def _banners_alone(head: str) -> str | None:
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
    return values.listed(found)


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


def _read_block(
    block: Block, path: Path, done: list[str], raw: tuple[bytes, int, int] | None = None
) -> tuple[str | None, pd.DataFrame | None]:
    """The report a block holds (None when it is no report) and its fields (None when that
    report is in `done`: one the capture names elsewhere, not this unnamed table); `raw`: the
    file's bytes and where the block starts and ends in them, when they are its characters one
    for one."""
    header, rule = block.header_rule()
    text = nsys_text.is_rule(rule)
    cells = nsys_text.header_cells(header, nsys_text.columns_under(header, rule)) if text else None
    cells = cells if cells is not None else csvtext.header_cells(header)
    report = _report_of(block, cells)
    if report is not None and not nsys_fields.has_fields(cells, report):
        nsys_wrapped.joined(block, header)  # (a table run together, said: left out as well)
        return None, None  # under a marker, but no table of it (the report was empty)
    if report is None or report in done:
        return report, None
    expected = f"nsys {report} report"
    if text:
        origin = Origin(path, expected, "", block.first_line, 1, block.dropped, cut=_text(block))
        return report, nsys_text.read_table(_text(block), report, origin, block.units, raw)
    source = block.text if raw is None else raw[0][raw[1] : raw[2]]  # (bytes: not decoded)
    origin = Origin(path, expected, source, block.first_line, dropped=block.dropped)
    if block.report is None:
        _check_header(header, report, path)
    return report, nsys_fields.parse(source, header, report, origin)


# The GPU summaries whose headers tell them apart: a kernel summary's `Instances` and `Name`, a
# memory summary's `Operation` with its time (or its sizes). No CUDA API summary has either.
_GPU_SUMS = frozenset(
    {"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "cuda_gpu_sum"}
)
_CALLS = frozenset({"calls", "numcalls"})  # a CUDA API (or OS runtime) summary's count of calls


_CAPTION_LINES = 3  # the lines of a command or caption typed right above a table


def _report_of(block: Block, cells: list[str]) -> str | None:
    """The report of a block's table (header `cells`): its marker's, or its header's when it has
    no marker. The processes of one job (MPI ranks) that print into one stream interleave one's
    banners with another's tables, so where the header contradicts the marker it wins, with a
    warning: a GPU summary's header under the banner of another report profgen reads is read as
    its header says, and a table of calls (`Num Calls`: CUDA API or OS runtime calls) under a
    GPU summary's banner is left out. Reading kernels as memory copies, or calls as kernels,
    would be a silent misread."""
    found, marked = nsys_fields.identify_cells(cells), block.report
    if marked in _GPU_SUMS and _CALLS & {nsys_fields.key(cell)[0] for cell in cells}:
        _contradicted(block, "a table of calls (CUDA API or OS runtime) under", "left out")
        return None
    if marked not in {*_GPU_SUMS, "cuda_api_sum"} or found not in _GPU_SUMS or found == marked:
        return marked or found
    _contradicted(block, f"a {found} table under", "read as its header says")
    return found


def _contradicted(block: Block, what: str, done: str) -> None:
    """Warn (`values.ReadNote`) that the table of `block` is not what its marker names."""
    said = (
        f"line {block.first_line}: {what} the banner of {block.report} (the output of several "
        f"processes interleaved?): {done}"
    )
    warnings.warn(values.ReadNote(said, block.first_line), stacklevel=4)


def _past_caption(block: Block) -> Block:
    """A block under no marker whose first lines (up to `_CAPTION_LINES`) are no table but
    whose next two are a report's column-text header and rule (`sudo nsys nvprof bin/x` typed
    right above its table; a README's heading and caption, `### CUDA` then `#### Table 1:
    cuda_api_sum`): the table below those lines. Any other block as it is."""
    if block.report is not None or nsys_text.is_rule(block.header_rule()[1]):
        return block
    rest = block
    for _ in range(_CAPTION_LINES):
        below = rest.less_first_line()
        if below is None:
            return block
        rest = below
        header, rule = rest.header_rule()
        if nsys_text.is_rule(rule):
            cells = nsys_text.header_cells(header, nsys_text.columns_under(header, rule))
            return rest if cells is not None and nsys_fields.identify_cells(cells) else block
    return block


def _text(block: Block) -> Callable[[], str]:
    """What gives a block's text, made only when called."""
    return lambda: block.text


def read_gpu_trace(path: str | Path, stage: str) -> pd.DataFrame:
    """Read one `cuda_gpu_trace` (or `gputrace`) CSV file.

    Returns: DataFrame with `schema.GPU_TRACE` columns.

    Raises: ParseError when the file is not a readable nsys gpu trace.
    """
    path = Path(path)
    frame = _read_report_file(path, "cuda_gpu_trace")
    return nsys_tables.gpu_trace(frame, stage, path)


def read_report(source: str | bytes, header: str, report: str, origin: Origin) -> pd.DataFrame:
    """Parse one report's CSV text into `nsys_fields` fields (no rows: only its header).

    Args:
        source: the report's CSV text, header line first.
        header: its first line.
        report: the canonical report name it should be.
        origin: where the text is in its file (named in errors).

    Raises: ParseError when the header is not that report's or a row is malformed.
    """
    _check_header(header, report, origin.path)
    return nsys_fields.parse(source, header, report, origin)


def _check_header(header: str, report: str, path: Path) -> None:
    found = identify(header)
    if found != report:
        what = f"an nsys {found} report" if found else f"header {header.strip()[:120]!r}"
        raise ParseError(path, f"nsys {report} CSV", f"found {what}")
