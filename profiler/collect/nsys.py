"""Nsight Systems: finding `nsys`, and its `profile` and `stats` command lines as data.

The worker's profiled pass runs under `nsys profile` with the capture range set to the CUDA
profiler API (`cudaProfilerStart`/`Stop`, which the worker calls around the profiled repeats),
so warm-ups and `prepare` stay out of the trace. `nsys stats` then writes one CSV per report
as `<output>_<report>.csv`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from profiler.collect.tools import find_tool, output_of, tool_candidates
from profiler.errors import ToolNotFound

# Reports `nsys stats` writes for a profiled stage (all exist in Nsight Systems 2025.3).
REPORTS: tuple[str, ...] = (
    "cuda_gpu_trace",
    "cuda_gpu_kern_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_mem_size_sum",
    "cuda_api_sum",
    "cuda_api_trace",
    "nvtx_sum",
    "nvtx_gpu_proj_trace",
    "nvtx_gpu_proj_sum",
)
STATS_PREFIX = "nsys"  # nsys stats --output <raw_dir>/nsys -> nsys_<report>.csv

_SEARCH = (
    "/opt/nvidia/nsight-systems/*/bin/nsys",
    "/usr/local/cuda*/bin/nsys",
    "/usr/local/cuda*/nsight-systems*/bin/nsys",
    "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys",  # the copy bundled with ncu
)


def candidates(env: Mapping[str, str] | None = None) -> list[str]:
    """Where nsys is looked for, in order: $NSYS, PATH, the usual install folders."""
    return tool_candidates("nsys", "NSYS", _SEARCH, os.environ if env is None else env)


def find_nsys(env: Mapping[str, str] | None = None) -> Path:
    """The first executable nsys among `candidates(env)`.

    Raises: ToolNotFound naming the places looked at and how to point profgen at nsys.
    """
    return find_tool("nsys", "NSYS", _SEARCH, "Nsight Systems", os.environ if env is None else env)


def operand(path: str | Path) -> str:
    """A path as a tool's argument that can never be read as an option: a relative path is
    made absolute (`--help.nsys-rep` -> `/cwd/--help.nsys-rep`)."""
    return os.path.abspath(path)


def program_args(program: Sequence[str]) -> list[str]:
    """The profiled command line, its program never taken for an option: `-x` -> `./-x`.

    A bare name (`python3`) is left to PATH."""
    args = [str(a) for a in program]
    if args and args[0].startswith("-"):
        args[0] = f"./{args[0]}"
    return args


def profile_cmd(
    nsys: Path, output: Path, program: Sequence[str], *, capture_range: bool = True
) -> list[str]:
    """`nsys profile` of `program`, writing `<output>.nsys-rep`. Paths are absolute and the
    program comes after every option, so no file name is ever read as an option."""
    cmd = [
        str(nsys),
        "profile",
        "--trace=cuda,nvtx",
        "--sample=none",
        "--cpuctxsw=none",
        "--force-overwrite=true",
        f"--output={operand(output)}",
    ]
    if capture_range:
        cmd += ["--capture-range=cudaProfilerApi", "--capture-range-end=stop"]
    return cmd + program_args(program)


def stats_cmd(
    nsys: Path, report: Path, output: Path, reports: Sequence[str] = REPORTS
) -> list[str]:
    """`nsys stats` writing one CSV per report as `<output>_<report>.csv`, times in ns. The
    report and output are absolute paths (a report named `--help.nsys-rep` stays a file).

    A .nsys-rep (or .qdrep) is exported afresh to a .sqlite beside it (`--force-export`); a
    .sqlite is read as it is, since there is nothing to export it from."""
    export = [] if Path(report).suffix.lower() == ".sqlite" else ["--force-export=true"]
    return [
        str(nsys),
        "stats",
        "--format",
        "csv",
        "--timeunit",
        "ns",
        *export,
        "--force-overwrite=true",
        "--output",
        operand(output),
        "--report",
        ",".join(reports),
        operand(report),
    ]


def stats_outputs(output: Path, reports: Sequence[str] = REPORTS) -> dict[str, Path]:
    """The CSV file `nsys stats --output <output>` writes for each report."""
    return {r: output.with_name(f"{output.name}_{r}.csv") for r in reports}


def version(nsys: Path, timeout: float = 30.0) -> str:
    """`2025.3.1.90-...` from `nsys --version`.

    Raises: ToolNotFound when nsys cannot be run or prints no version.
    """
    text = output_of([str(nsys), "--version"], timeout)
    words = text.split()
    if "version" not in words or words.index("version") + 1 >= len(words):
        raise ToolNotFound(f"{nsys} --version printed no version: {text.strip()[:200]!r}")
    return words[words.index("version") + 1]


def importer(nsys: Path) -> Path | None:
    """nsys's report importer (QdstrmImporter), which turns the raw capture into a .nsys-rep."""
    here = nsys.resolve().parent
    for cand in (here / "QdstrmImporter", here.parent / "host-linux-x64" / "QdstrmImporter"):
        if cand.is_file():
            return cand
    return None


def missing_libraries(
    program: Path, env: Mapping[str, str] | None = None, timeout: float = 30.0
) -> list[str]:
    """Shared libraries `program` needs that the loader cannot find (from `ldd`).

    Raises: ToolNotFound when ldd itself is missing.
    """
    text = output_of(["ldd", str(program)], timeout, env=env)
    return [ln.split("=>")[0].strip() for ln in text.splitlines() if "not found" in ln]
