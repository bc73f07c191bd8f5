"""Nsight Systems `nsys stats --format csv` output -> profgen's tables.

Two layouts are read: a folder written with `--output PREFIX` (one `PREFIX_<report>.csv` per
report; a bare `<report>.csv` is accepted too) and one capture of stdout with every report
concatenated, separated by `Processing [...] with [...]...` lines (or `** ... (<report>):`
banners), `Generating SQLite file ...` lines and blank lines.

| nsys report (old name) | table |
| --- | --- |
| cuda_gpu_trace (gputrace) | `gpu_trace` |
| cuda_api_trace | `api_trace` |
| nvtx_gpu_proj_trace | `range_trace` |
| cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum | `gpu_activities` (1) |
| cuda_api_sum (cudaapisum) | `api_calls`, only when there is no api trace |
| nvtx_sum (nvtxsum) [+ nvtx_gpu_proj_sum] | `ranges` |

(1) only when there is no gpu trace; old names gpukernsum, gpumemtimesum, gpumemsizesum.

Header spellings of every nsys version seen are accepted (`Time(%)`/`Time (%)`,
`Average`/`Avg (ns)`, `Calls`/`Instances`/`Num Calls`/`Count`/`Operations`,
`Start(sec)`/`Start (ns)`, ...); units are taken from the headers and converted to integer ns
and bytes. Reports profgen does not use
(osrt_sum, nvtx_kern_sum, ...) are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from profiler import files
from profiler.errors import ParseError
from profiler.parse import csvtext, nsys_tables
from profiler.parse.values import LineCounter, Origin

EXPECTED = "nsys stats --format csv output (cuda_gpu_trace, cuda_gpu_kern_sum, cuda_api_sum, ...)"

# Every report profgen reads, by canonical name, and the old names nsys used before 2021.
REPORTS = (
    "cuda_gpu_trace",
    "cuda_api_trace",
    "nvtx_gpu_proj_trace",
    "cuda_gpu_kern_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_mem_size_sum",
    "cuda_api_sum",
    "nvtx_sum",
    "nvtx_gpu_proj_sum",
)
OLD_NAMES = {
    "gputrace": "cuda_gpu_trace",
    "gpukernsum": "cuda_gpu_kern_sum",
    "gpumemtimesum": "cuda_gpu_mem_time_sum",
    "gpumemsizesum": "cuda_gpu_mem_size_sum",
    "cudaapisum": "cuda_api_sum",
    "nvtxsum": "nvtx_sum",
    "cudaapitrace": "cuda_api_trace",
}
_NAMES = sorted([*REPORTS, *OLD_NAMES], key=len, reverse=True)

# A run of blank lines between paragraphs. Every pattern here runs in time and memory linear in
# the text: single character classes, possessive repeats, no nested quantifiers (a repeated
# group such as `(?:[ \t]*\n)+` costs re a backtracking entry per repeat: 1.2 GB for a
# 10-million-line run).
_PARAGRAPH_BREAK = re.compile(r"\n[\n \t\r]*\n")
# Lines that are no CSV: markers that name the report that follows, and nsys's chatter.
_SPECIAL = re.compile(
    r"^(?:(?P<marker>(?:Processing|Running) \[|[ \t]*\*\*)"
    r"|Generating SQLite file|Exporting|SKIPPED:|NOTICE:|WARNING:|ERROR:|\[[0-9]+/[0-9]+\]"
    r"|Generated:|Using |Report file)[^\n]*",
    re.MULTILINE,
)
_LEADING_BLANKS = re.compile(r"(?:[ \t\r]*\n)*+")
_SCRIPT = re.compile(r"\] with \[(?P<script>[^\]\n]*)\]")
_RUNNING = re.compile(r"^Running \[(?P<script>[^\s\]]+)")
_BANNER = re.compile(r"\((?P<banner>[A-Za-z_]+)\):?[ \t\r]*\Z")


def canonical_report(name: str) -> str | None:
    """`overlap_cuda_gpu_kern_sum` or `gpukernsum` -> its canonical report name; else None."""
    stem = name[:-3] if name.endswith(".py") else name
    for known in _NAMES:
        if stem == known or stem.endswith("_" + known):
            return OLD_NAMES.get(known, known)
    return None


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
        header = csvtext.read_head(file, f"nsys {report} CSV").split("\n", 1)[0]
        _check_header(header, report, file)  # before the whole file is read
        data = csvtext.read_text(file, f"nsys {report} CSV").encode("utf-8")
        frame = read_report(data, header, report, Origin(file, f"nsys {report} CSV", data))
        if len(frame):
            frames[report] = (frame, file)
    return nsys_tables.build(frames, stage)


def read_stats_stdout(path: str | Path, stage: str) -> dict[str, pd.DataFrame]:
    """Read one capture of `nsys stats --format csv` stdout with several reports in it.

    Returns: tables by name, as `read_stats_dir`.

    Raises: ParseError when its first 64 KiB hold no nsys line, no report can be found in the
        text, or a report is corrupt.
    """
    path = Path(path)
    head = csvtext.read_head(path, EXPECTED)
    if not any(_SPECIAL.match(ln) or identify(ln) for ln in head.splitlines()):
        raise ParseError(path, EXPECTED, "its start has no nsys report header or nsys line")
    text = csvtext.read_text(path, EXPECTED)
    frames: dict[str, tuple[pd.DataFrame, Path]] = {}
    found = False
    for report, block, first_line, dropped in split_stdout(text):
        header = block.split("\n", 1)[0]
        report = report or identify(header)
        if report is not None and report not in frames:
            found = True
            origin = Origin(path, f"nsys {report} CSV", block, first_line, dropped=dropped)
            frame = read_report(block, header, report, origin)
            if len(frame):
                frames[report] = (frame, path)
    if not found:
        raise ParseError(path, EXPECTED, "no nsys report header found")
    if not frames:
        raise ParseError(path, EXPECTED, "its reports have a header but no rows")
    return nsys_tables.build(frames, stage)


def read_gpu_trace(path: str | Path, stage: str) -> pd.DataFrame:
    """Read one `cuda_gpu_trace` (or `gputrace`) CSV file.

    Returns: DataFrame with `schema.GPU_TRACE` columns.

    Raises: ParseError when the file is not a readable nsys gpu trace.
    """
    path = Path(path)
    expected = "nsys cuda_gpu_trace CSV"
    header = csvtext.read_head(path, expected).split("\n", 1)[0]
    _check_header(header, "cuda_gpu_trace", path)
    data = csvtext.read_text(path, expected).encode("utf-8")
    frame = read_report(data, header, "cuda_gpu_trace", Origin(path, expected, data))
    return nsys_tables.gpu_trace(frame, stage, path)


Block = tuple[str | None, str, int, tuple[int, ...]]


def split_stdout(text: str) -> list[Block]:
    """Cut a stdout capture into blocks of CSV text: (report named by the marker before it, or
    None; the text; the file line of its first line; the file lines of nsys chatter removed from
    inside it). Paragraphs end at blank lines and at markers; other nsys lines are dropped.

    Linear in the text: paragraphs and special lines are found by patterns that cannot
    backtrack, and only those lines are visited in Python.
    """
    lines = LineCounter(text)
    blocks: list[Block] = []
    pending: list[str | None] = [None]  # the report the next block is under
    start = 0
    for brk in [*_PARAGRAPH_BREAK.finditer(text), None]:
        end = len(text) if brk is None else brk.start() + 1
        _paragraph(text, start, end, lines, pending, blocks)
        start = len(text) if brk is None else brk.end()
    return blocks


def _paragraph(
    text: str,
    start: int,
    end: int,
    lines: LineCounter,
    pending: list[str | None],
    blocks: list[Block],
) -> None:
    """The blocks of one paragraph `text[start:end]`, appended to `blocks`; `pending[0]` is the
    report the last marker named, for the next block."""
    pieces: list[tuple[int, int]] = []
    dropped: list[int] = []
    first = 0

    def add(a: int, b: int) -> None:
        nonlocal first
        if not pieces:
            a = _LEADING_BLANKS.match(text, a, b).end()  # type: ignore[union-attr]
            if a >= b:
                return
            first = lines.at(a)
        pieces.append((a, b))

    def flush() -> None:
        body = "".join(text[a:b] for a, b in pieces)
        if body.strip():
            blocks.append((pending[0], body, first, tuple(dropped)))
            pending[0] = None
        pieces.clear()
        dropped.clear()

    pos = start
    for special in _SPECIAL.finditer(text, start, end):
        if special.start() > pos:
            add(pos, special.start())
        if special["marker"] is not None:
            flush()
            pending[0] = _marker_report(special.group())
        elif pieces:
            dropped.append(lines.at(special.start()))
        pos = min(special.end() + 1, end)
    if end > pos:
        add(pos, end)
    flush()


def identify(header_line: str) -> str | None:
    """Which report a CSV header line belongs to, from its columns; None when it is none of them."""
    keys = {nsys_tables.key(c)[0] for c in csvtext.header_cells(header_line)}
    if "grdx" in keys:
        return "cuda_gpu_trace"
    if "projectedstart" in keys:
        return "nvtx_gpu_proj_trace"
    if "totalprojtime" in keys:
        return "nvtx_gpu_proj_sum"
    if {"start", "duration", "name", "corrid"} <= keys:
        return "cuda_api_trace"
    if "operation" in keys:
        return "cuda_gpu_mem_time_sum" if "totaltime" in keys else "cuda_gpu_mem_size_sum"
    if "range" in keys and "totaltime" in keys:
        return "nvtx_sum"
    if "name" in keys and "totaltime" in keys:
        return "cuda_gpu_kern_sum" if "instances" in keys else "cuda_api_sum"
    return None


def read_report(source: str | bytes, header: str, report: str, origin: Origin) -> pd.DataFrame:
    """Parse one report's CSV text into `nsys_tables` fields (no rows: only its header).

    Args:
        source: the report's CSV text, header line first.
        header: its first line.
        report: the canonical report name it should be.
        origin: where the text is in its file (named in errors).

    Raises: ParseError when the header is not that report's or a row is malformed.
    """
    _check_header(header, report, origin.path)
    return nsys_tables.parse(source, header, report, origin)


def _check_header(header: str, report: str, path: Path) -> None:
    found = identify(header)
    if found != report:
        what = f"an nsys {found} report" if found else f"header {header.strip()[:120]!r}"
        raise ParseError(path, f"nsys {report} CSV", f"found {what}")


def _marker_report(line: str) -> str | None:
    """The report a marker line names: `Processing [...] with [.../cuda_api_sum.py]`, `Running
    [.../cuda_api_sum.py ...]` or a banner ` ** CUDA API Summary (cuda_api_sum):`."""
    found = _SCRIPT.search(line) or _RUNNING.match(line) or _BANNER.search(line.rstrip())
    if found is None:
        return None
    name = found.groupdict().get("script") or found.groupdict().get("banner") or ""
    return canonical_report(Path(name).name)
