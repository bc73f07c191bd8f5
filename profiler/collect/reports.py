"""Report files a user hands to `profgen import`, turned into text the parsers read.

An Nsight Systems report (.nsys-rep, .qdrep, .sqlite) goes through the real `nsys stats`, one
CSV per report; an Nsight Compute report (.ncu-rep) through `ncu --import --csv`. Neither tool
writes beside the user's file: `nsys stats` exports a .sqlite next to its input, so it is given
a copy of the report in a temporary folder, which is removed afterwards.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from profiler.collect import ncu as ncu_tool
from profiler.collect import nsys as nsys_tool
from profiler.collect import tools

TIMEOUT_S = 600.0
NSYS_LOG = "nsys-stats.log"
NCU_OUTPUT = "ncu-import.csv"


def nsys_stats(report: Path, out_dir: Path, timeout: float = TIMEOUT_S) -> Path:
    """Run `nsys stats` on a copy of `report`, its CSV files (`nsys_<report>.csv`) and log
    written into `out_dir`; returns `out_dir`. Nothing is written beside `report`.

    Raises: ToolNotFound when nsys is not installed (before anything is copied);
        ProfilerRunError when nsys stats fails.
    """
    nsys = nsys_tool.find_nsys()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="profgen-nsys-") as work:
        copy = Path(work) / f"report{report.suffix.lower()}"
        shutil.copyfile(report, copy)
        cmd = nsys_tool.stats_cmd(nsys, copy, out_dir / nsys_tool.STATS_PREFIX)
        tools.run_tool(cmd, out_dir / NSYS_LOG, timeout=timeout, cwd=Path(work))
    return out_dir


def ncu_import(report: Path, out_dir: Path, timeout: float = TIMEOUT_S) -> Path:
    """Run `ncu --import report --csv --page raw`; returns the file in `out_dir` that holds
    its output (the command line first, then ncu's CSV).

    Raises: ToolNotFound when ncu is not installed; ProfilerRunError when ncu fails.
    """
    ncu = ncu_tool.find_ncu()
    out_dir.mkdir(parents=True, exist_ok=True)
    output = out_dir / NCU_OUTPUT
    tools.run_tool(ncu_tool.import_cmd(ncu, report), output, timeout=timeout)
    return output
