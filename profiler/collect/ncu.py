"""Nsight Compute: finding `ncu` and its command line as data.

ncu replays every kernel of the stage range `profgen@<model>:<stage>/` with an explicit metric
list and writes the raw page as CSV into its log file. `--clock-control none` leaves the GPU's
clocks as they are (ncu would otherwise lock them to base clocks), so its durations are replay
times at the clocks the card runs at, not comparable with trace times.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from profiler.collect.nsys import operand, program_args
from profiler.collect.tools import find_tool, output_of, tool_candidates
from profiler.errors import ToolNotFound
from profiler.ranges import DOMAIN

METRICS: tuple[str, ...] = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__registers_per_thread",
    "launch__grid_size",
    "launch__block_size",
)

# ncu's names of DRAM's byte counters differ by chip. ncu 2025.3.1's `--query-metrics --chips X`
# lists `dram__bytes_read`/`_write` for ga100, gh100, gb100, gb102 and gb110 (CC 8.0, 9.0, 10.x:
# A100, H100, B200, B300), `dram__bytes_op_read`/`_op_write` for gb202-gb207 (CC 12.0: the RTX 50
# series, RTX PRO 6000; so do the CC 12.0 runs of Charbel199/gpu-anatomy in tests/data/ncu/2025.x),
# and no `dram__` metric at all for gb10b (Jetson Thor, CC 11.0) or gb20b (GB10, CC 12.1), whose
# memory is the system's. ncu's own rule MemoryL2Compression.py asks for the `_op_` name at CC 12.0.
_OP_NAMES = {
    "dram__bytes_read.sum": "dram__bytes_op_read.sum",
    "dram__bytes_write.sum": "dram__bytes_op_write.sum",
}
_OP_NAMED = frozenset({(12, 0)})
_NO_DRAM = frozenset({(11, 0), (12, 1)})

# A safety net for stages that launch many small kernels (the per-image baseline launches 70,000
# for 10,000 images): ncu replays at most this many; give such stages `metrics_images` instead.
LAUNCH_LIMIT = 1000

_SEARCH = (
    "/opt/nvidia/nsight-compute/*/ncu",
    "/usr/local/cuda*/bin/ncu",
    "/usr/local/cuda*/nsight-compute*/ncu",
)


def metrics_for(cc: tuple[int, int] | None) -> tuple[str, ...]:
    """`METRICS` as ncu names them on a device of compute capability `cc` (major, minor): the
    DRAM byte counters' `_op_` names at CC 12.0, no `dram__` metric at CC 11.0 and 12.1 (see
    `_OP_NAMES`); `METRICS` as they are for any other CC, or when it is not known (None)."""
    if cc in _OP_NAMED:
        return tuple(_OP_NAMES.get(m, m) for m in METRICS)
    if cc in _NO_DRAM:
        return tuple(m for m in METRICS if not m.startswith("dram__"))
    return METRICS


def candidates(env: Mapping[str, str] | None = None) -> list[str]:
    """Where ncu is looked for, in order: $NCU, PATH, the usual install folders."""
    return tool_candidates("ncu", "NCU", _SEARCH, os.environ if env is None else env)


def find_ncu(env: Mapping[str, str] | None = None) -> Path:
    """The first executable ncu among `candidates(env)`.

    Raises: ToolNotFound naming the places looked at and how to point profgen at ncu.
    """
    return find_tool("ncu", "NCU", _SEARCH, "Nsight Compute", os.environ if env is None else env)


def nvtx_filter(range_name: str) -> str:
    """ncu's `--nvtx-include` expression for the push/pop range `range_name` of profgen."""
    return f"{DOMAIN}@{range_name}/"


def profile_cmd(
    ncu: Path,
    range_name: str,
    log_file: Path,
    program: Sequence[str],
    metrics: Sequence[str] = METRICS,
    launch_limit: int | None = LAUNCH_LIMIT,
) -> list[str]:
    """`ncu` collecting `metrics` for the kernels inside the range `range_name` (raw CSV), at
    most `launch_limit` of them (the rest of the program runs unprofiled). The log file is an
    absolute path and the program comes after every option, so no file name is ever read as
    an option."""
    cmd = [str(ncu), "--csv", "--page", "raw", "--nvtx", "--nvtx-include", nvtx_filter(range_name)]
    cmd += ["--metrics", ",".join(metrics), "--clock-control", "none"]
    cmd += ["--target-processes", "all", "--log-file", operand(log_file)]
    if launch_limit is not None:
        cmd += ["--launch-count", str(launch_limit)]
    return cmd + program_args(program)


def import_cmd(ncu: Path, report: Path) -> list[str]:
    """`ncu --import` printing a .ncu-rep's raw page as CSV (every metric it holds, one row per
    launch), numbers in base units (ns, bytes) so that none is rounded to a scaled unit."""
    return [str(ncu), "--import", operand(report), "--csv", "--page", "raw"] + [
        "--print-units",
        "base",
    ]


def version(ncu: Path, timeout: float = 30.0) -> str:
    """`2025.3.1.0` from `ncu --version`.

    Raises: ToolNotFound when ncu cannot be run or prints no version.
    """
    text = output_of([str(ncu), "--version"], timeout)
    for line in text.splitlines():
        if line.strip().startswith("Version"):
            return line.split()[1]
    raise ToolNotFound(f"{ncu} --version printed no version: {text.strip()[:200]!r}")
