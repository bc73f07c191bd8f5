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

from profiler.errors import ParseError
from profiler.parse import csvtext, nsys_tables

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

_MARKER = re.compile(
    r"^(?:Processing|Running) \[.*?\] with \[(?P<script>[^\]]*)\](?: to \[[^\]]*\])?\.*.*$"
    r"|^Running \[(?P<script2>[^\s\]]+)[^\]]*\]\.*\s*$"
    r"|^\s*\*\*.*\((?P<banner>[A-Za-z_]+)\):?\s*$",
    re.MULTILINE,
)
_JUNK = re.compile(
    r"^(?:Generating SQLite file|Exporting|Processing \[|Running \[|SKIPPED:|NOTICE:|WARNING:"
    r"|ERROR:|\*\*|\[\d+/\d+\]|Generated:|Using |Report file)"
)


def canonical_report(name: str) -> str | None:
    """`overlap_cuda_gpu_kern_sum` or `gpukernsum` -> its canonical report name; else None."""
    stem = name[:-3] if name.endswith(".py") else name
    for known in _NAMES:
        if stem == known or stem.endswith("_" + known):
            return OLD_NAMES.get(known, known)
    return None


def read_stats_dir(path: str | Path, stage: str) -> dict[str, pd.DataFrame]:
    """Read a folder of `nsys stats --format csv --output PREFIX` files.

    Args:
        path: the folder.
        stage: the stage key written into every table.

    Returns: tables by name (`gpu_trace`, `api_trace`, `range_trace`, `gpu_activities`,
        `api_calls`, `ranges`), each a DataFrame with the `schema` table of that name;
        only the tables the folder's reports give.

    Raises: ParseError when the folder holds no nsys report CSV or a report is corrupt.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise ParseError(folder, f"a folder of {EXPECTED}", "it is not a folder")
    frames: dict[str, tuple[pd.DataFrame, Path]] = {}
    for file in sorted(folder.glob("*.csv")):
        report = canonical_report(file.stem)
        if file.stat().st_size == 0:  # nsys: "PROCESSED (EMPTY RESULTS)", e.g. no GPU work
            continue
        if report is not None and report not in frames:
            head = csvtext.read_head(file, f"nsys {report} CSV")
            frames[report] = (read_report(file, head.split("\n", 1)[0], report, file), file)
    if not frames:
        raise ParseError(folder, f"a folder of {EXPECTED}", "no file is named like an nsys report")
    return nsys_tables.build(frames, stage)


def read_stats_stdout(path: str | Path, stage: str) -> dict[str, pd.DataFrame]:
    """Read one capture of `nsys stats --format csv` stdout with several reports in it.

    Returns: tables by name, as `read_stats_dir`.

    Raises: ParseError when no report can be found in the text or a report is corrupt.
    """
    path = Path(path)
    text = csvtext.read_text(path, EXPECTED)
    frames: dict[str, tuple[pd.DataFrame, Path]] = {}
    for report, block in split_stdout(text):
        header = block.split("\n", 1)[0]
        report = report or identify(header)
        if report is not None and report not in frames:
            frames[report] = (read_report(block, header, report, path), path)
    if not frames:
        raise ParseError(path, EXPECTED, "no nsys report header found")
    return nsys_tables.build(frames, stage)


def read_gpu_trace(path: str | Path, stage: str) -> pd.DataFrame:
    """Read one `cuda_gpu_trace` (or `gputrace`) CSV file.

    Returns: DataFrame with `schema.GPU_TRACE` columns.

    Raises: ParseError when the file is not a readable nsys gpu trace.
    """
    path = Path(path)
    head = csvtext.read_head(path, "nsys cuda_gpu_trace CSV")
    frame = read_report(path, head.split("\n", 1)[0], "cuda_gpu_trace", path)
    return nsys_tables.gpu_trace(frame, stage, path)


def split_stdout(text: str) -> list[tuple[str | None, str]]:
    """Cut a stdout capture into (report name or None, CSV text) blocks, junk lines removed."""
    blocks: list[tuple[str | None, str]] = []
    marks = list(_MARKER.finditer(text))
    bounds = [(None, 0)] + [(_marker_report(m), m.end()) for m in marks]
    ends = [m.start() for m in marks] + [len(text)]
    for (report, start), end in zip(bounds, ends, strict=True):
        for paragraph in re.split(r"\n[ \t]*\r?\n", text[start:end]):
            lines = [ln for ln in paragraph.splitlines() if ln.strip() and not _JUNK.match(ln)]
            if lines:
                blocks.append((report, "\n".join(lines) + "\n"))
                report = None  # a second paragraph in one section is identified by its header
    return blocks


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


def read_report(source: str | Path, header: str, report: str, path: Path) -> pd.DataFrame:
    """Parse one report (CSV text, or a whole file when a Path) into `nsys_tables` fields.

    Args:
        source: the report's CSV text, or the file that holds only it.
        header: its first line.
        report: the canonical report name it should be.
        path: the file named in errors.

    Raises: ParseError when the header is not that report's or a row is malformed.
    """
    found = identify(header)
    if found != report:
        what = f"an nsys {found} report" if found else f"header {header.strip()[:120]!r}"
        raise ParseError(path, f"nsys {report} CSV", f"found {what}")
    return nsys_tables.parse(source, header, report, path)


def _marker_report(match: re.Match[str]) -> str | None:
    name = match["script"] or match["script2"] or match["banner"] or ""
    return canonical_report(Path(name).name)
