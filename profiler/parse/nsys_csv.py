"""Nsight Systems `nsys stats` output -> profgen's tables.

Three layouts are read: a folder written with `--format csv --output PREFIX` (one
`PREFIX_<report>.csv` per report; a bare `<report>.csv` is accepted too, also when nsys's
`Processing [...]` lines stand above its header), one capture of stdout in CSV with every report
concatenated, and one capture of the default column text (`nsys stats`, `nsys profile
--stats=true`) of any version from 2019.x to 2025.x. The folder is read here, a capture by
`nsys_capture`. `nsys_stdout` finds the reports in a capture (markers, headings, banners,
`SKIPPED:` lines), `nsys_text` reads column text, `nsys_fields` the headers and cells of every
layout, `nsys_tables` builds the tables.

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
and bytes. Reports profgen does not use (osrt_sum, nvtx_kern_sum, ...) are skipped.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from profiler import files
from profiler.errors import ParseError
from profiler.parse import csvtext, nsys_fields, nsys_stdout, nsys_tables
from profiler.parse.nsys_fields import OLD_NAMES, REPORTS, canonical_report, identify
from profiler.parse.nsys_no_table import unused_name
from profiler.parse.nsys_stdout import Block, split_stdout
from profiler.parse.table_origin import Origin

# unused_name: read from here by unusable_nsys (it lives in nsys_no_table)
__all__ = [
    "OLD_NAMES",
    "REPORTS",
    "Block",
    "canonical_report",
    "identify",
    "split_stdout",
    "unused_name",
]

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
    check_header(header, report, file)  # before the whole file is read
    data = csvtext.read_utf8(file, expected)
    return read_report(data, header, report, Origin(file, expected, data))


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
    check_header(header, report, origin.path)
    return nsys_fields.parse(source, header, report, origin)


def check_header(header: str, report: str, path: Path) -> None:
    found = identify(header)
    if found != report:
        what = f"an nsys {found} report" if found else f"header {header.strip()[:120]!r}"
        raise ParseError(path, f"nsys {report} CSV", f"found {what}")
