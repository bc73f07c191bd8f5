"""Output of a profiler other than nvprof, Nsight Systems and Nsight Compute, or of one that
came before them, in a file in which detection found no table profgen reads
(`unusable.describe` asks): what the refusal says the file holds.

- a CPU profiler's output: a gprof profile (`Each sample counts as 0.01 seconds.` above its
  flat profile, `granularity: each sample hit covers ...` above its call graph) or a Python
  cProfile/pstats listing (the header `ncalls tottime percall cumtime percall
  filename:lineno(function)`);
- a log of the CUDA command-line profiler that came before nvprof (`CUDA_PROFILE=1` or
  `COMPUTE_PROFILE=1`): lines `method=[ memcpyHtoD ] gputime=[ 1.312 ] cputime=[ 2.020 ]`;
- the summary of THAPI's `iprof` (Argonne's tracer of MPI, Level Zero, OpenCL, CUDA and HIP
  calls, as on Aurora): tables of `|`-separated cells under a header `Name | Time | Time(%) |
  Calls | Average | Min | Max |`, one per backend (`BACKEND_MPI | 2 Hostnames | ...`).

Only the lines detection read are looked at, one at a time, with no pattern that can backtrack.
"""

from __future__ import annotations

from profiler.parse import cell_quotes

READS = "profgen imports nvprof, Nsight Systems and Nsight Compute output"


_IPROF_HEADER = ["Name", "Time", "Time(%)", "Calls", "Average", "Min", "Max"]


_GPROF_MARKS = ("Each sample counts as ", "granularity: each sample hit covers ")


_PSTATS_HEADER = ["ncalls", "tottime", "percall", "cumtime", "percall", "filename:lineno(function)"]


def cpu_profile(lines: list[str]) -> str | None:
    for line in lines:
        text = line.strip()
        if text.startswith(_GPROF_MARKS):
            return (
                f"it is a gprof profile ({cell_quotes.shown_cell(text, 60)}): "
                "CPU time per function; "
                f"{READS}"
            )
        if text.startswith("ncalls") and text.split() == _PSTATS_HEADER:
            return (
                "it is a Python cProfile/pstats listing (`ncalls tottime percall cumtime "
                f"percall filename:lineno(function)`): CPU time per Python function; {READS}"
            )
    return None


_LEGACY_MARKS = ("method=[ ", "gputime=[ ")


_LEGACY_ROWS = 3  # records that make a log (one could be quoted in prose)


def legacy_profiler_log(lines: list[str]) -> str | None:
    """What the file is when a line of `lines` is a record of the CUDA command-line profiler
    that came before nvprof (`method=[ name ] gputime=[ us ] cputime=[ us ]`)."""
    rows = [at for at, line in enumerate(lines) if all(mark in line for mark in _LEGACY_MARKS)]
    if len(rows) < _LEGACY_ROWS:
        return None
    return (
        f"it holds {len(rows)} records of the CUDA command-line profiler that came before nvprof "
        f"(`CUDA_PROFILE=1`/`COMPUTE_PROFILE=1`, from line {rows[0] + 1}: "
        f"{cell_quotes.shown_cell(lines[rows[0]].strip(), 80)}): the format nvprof (CUDA 5 on) "
        f"replaced, which profgen does not read; {READS}"
    )


def iprof_summary(lines: list[str]) -> str | None:
    """What the file is when a line of `lines` is the header of a THAPI `iprof` table (`Name |
    Time | Time(%) | Calls | Average | Min | Max |`, cells split at `|`)."""
    at = next((at for at, line in enumerate(lines) if _iprof_cells(line) == _IPROF_HEADER), None)
    if at is None:
        return None
    return (
        f"it is the summary of THAPI's iprof (its table header `{' | '.join(_IPROF_HEADER)}` "
        f"at line {at + 1}): per-backend tables of the MPI, Level "
        "Zero, OpenCL or CUDA calls a tracer other than NVIDIA's recorded, which profgen does "
        f"not read; {READS}"
    )


def _iprof_cells(line: str) -> list[str]:
    """The `|`-separated cells of `line`, stripped, without the empty one after its last `|`."""
    cells = [cell.strip() for cell in line.split("|")]
    return cells[:-1] if cells and not cells[-1] else cells
