"""Rows of a summary table seen without their header line: what they are rows of.

People paste the rows of nvprof's summary from its `GPU activities:` line down, or an `nsys
stats` table's rows without its heading; detection (which finds a table by its header) then sees
nothing. `row_kind` says what the cells of one such line are: `profiler.parse.unusable` names
the rows in a refusal, and `profiler.parse.pasted` puts nvprof's header back above rows that
start with their type (nvprof 9.0 on prints one header, always the same, above such rows), and
the header of nsys's CUDA API summary above `nsys stats` rows that are all CUDA API calls
(`api_row`: only the API summary has rows named so, and its header is fixed by its width), and
nvprof's header and `API calls:` type above nvprof rows that are (`untyped_nvprof_api_row`).
Rows of nvprof's gpu trace pasted without its header (`trace_row`) are only named: the trace's
columns depend on its options and are found from its header.
"""

from __future__ import annotations

import re

NVPROF, NSYS = "nvprof", "nsys"
NVPROF_TYPES = (["GPU", "activities:"], ["API", "calls:"])
NVPROF_UNITS = ("ns", "us", "ms", "s")
# A CUDA runtime or driver entry point as nsys and nvprof name it (`cudaMalloc`, `cuLaunchKernel`,
# `cuMemAlloc_v2`, `cudaGraphExecUpdate_v10020`): one word, so nothing to backtrack over.
_CUDA_API = re.compile(r"cu(?:da)?[A-Z][A-Za-z0-9_]*\Z")
# The header (and rule) nsys prints above its CUDA API summary, by the summary's columns: 7 in
# 2020.x (`CUDA API Statistics:`, tests/data/nsys/2020.4.3/omp-offload-stats.txt), 8 in 2021.1-2
# (StdDev added: tests/data/nsys/2021.2.4/ncar-miniweather-stats.ipynb), 9 from 2021.3 on
# (`cuda_api_sum`, Med added: tests/data/nsys/2023.2.3/derivative-stats.txt).
API_HEADERS = {
    7: b" Time(%)  Total Time (ns)  Num Calls    Average      Minimum     Maximum     Name\n"
    b" -------  ---------------  ---------  ------------  ----------  ----------  ------\n",
    8: b" Time(%)  Total Time (ns)  Num Calls    Average      Minimum     Maximum     StdDev"
    b"     Name\n"
    b" -------  ---------------  ---------  ------------  ----------  ----------  ---------"
    b"  ------\n",
    9: b" Time (%)  Total Time (ns)  Num Calls   Avg (ns)    Med (ns)  Min (ns)   Max (ns)"
    b"   StdDev (ns)   Name\n"
    b" --------  ---------------  ---------  -----------  --------  --------  ----------"
    b"  ------------  ------\n",
}


def row_kind(cells: list[str]) -> str | None:
    """What the cells of a line are a row of: `NVPROF` (a summary row), `NSYS` (a row of an
    `nsys stats` table: times in ns, without units) or None (neither)."""
    if cells[:2] in NVPROF_TYPES:
        cells = cells[2:]
    if len(cells) < 7:
        return None
    if cells[0].endswith("%") and number(cells[0][:-1]) is not None:
        times = [cells[1], *cells[3:6]]
        timed = all(_timed(t) for t in times)
        return NVPROF if timed and cells[2].isdigit() else None
    share, numbers = number(cells[0]), [number(c.replace(",", "")) for c in cells[1:6]]
    whole = cells[1].replace(",", "").isdigit() and cells[2].replace(",", "").isdigit()
    if share is None or not 0 <= share <= 100 or not whole or None in numbers:
        return None
    return NSYS


def api_row(cells: list[str]) -> bool:
    """Whether the cells are a row of nsys's CUDA API summary (`API_HEADERS`' widths): a share,
    numbers up to the last cell, and that a CUDA runtime or driver entry point."""
    if len(cells) not in API_HEADERS or row_kind(cells) != NSYS:
        return False
    rest = [number(c.replace(",", "")) for c in cells[6:-1]]
    return None not in rest and _CUDA_API.match(cells[-1]) is not None


def untyped_nvprof_api_row(cells: list[str]) -> bool:
    """Whether the cells are an nvprof summary row with no row type (not a type's first row)
    that names a CUDA runtime or driver entry point: one of nvprof's `API calls:` rows."""
    return (
        len(cells) == 7
        and cells[:2] not in NVPROF_TYPES
        and row_kind(cells) == NVPROF
        and _CUDA_API.match(cells[-1]) is not None
    )


def typed_nvprof_row(cells: list[str]) -> bool:
    """Whether the cells are an nvprof summary row that starts with its type (`GPU
    activities:` or `API calls:`), the first row of a type's rows."""
    return cells[:2] in NVPROF_TYPES and row_kind(cells) == NVPROF


def trace_row(cells: list[str]) -> bool:
    """Whether the cells are a row of nvprof's text gpu trace (`--print-gpu-trace`): a start
    time with its unit, a duration with its unit (or `-`: a CPU page fault), then a grid size
    (`(20 10 1)`, a kernel) or `-` (a copy, a Unified Memory event), and more cells after."""
    if len(cells) < 8 or not _timed(cells[0]) or not (cells[1] == "-" or _timed(cells[1])):
        return False
    return cells[2] == "-" or cells[2].startswith("(")


def api_trace_row(cells: list[str]) -> bool:
    """Whether the cells are a row of nvprof's text API trace (`--print-api-trace`): a start
    time with its unit, a duration with its unit, then a CUDA call (`cudaLaunch`, `cuCtxCreate`,
    a launch's kernel after it in brackets)."""
    return len(cells) >= 3 and _timed(cells[0]) and _timed(cells[1]) and cells[2].startswith("cu")


def _timed(text: str) -> bool:
    """Whether `text` is a time as nvprof prints it: a number and its unit (`287.20ms`)."""
    return text.endswith(NVPROF_UNITS) and number(text.rstrip("nums")) is not None


def number(text: str) -> float | None:
    """`text` as a finite number, or None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if abs(value) < float("inf") else None
