"""Report files a user hands to `profgen import`, turned into text the parsers read.

An Nsight Systems report (.nsys-rep, .qdrep, .sqlite) goes through the real `nsys stats`, one
CSV per report; an Nsight Compute report (.ncu-rep) through `ncu --import --csv`. Neither tool
writes beside the user's file: `nsys stats` exports a .sqlite next to its input, so it is given
a copy of the report in a temporary folder, which is removed afterwards.

Where a tool is missing (or ncu fails on a report), a .sqlite is read with Python's sqlite3
(`nsys_sqlite`) and an Nsight Compute report with NVIDIA's report reader for Python
(`ncu_pyreport`); the note each returns says so, and the importer warns with it.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from profiler.collect import ncu as ncu_tool
from profiler.collect import ncu_pyreport, nsys_sqlite, tools
from profiler.collect import nsys as nsys_tool
from profiler.collect.tools import describe_exit
from profiler.errors import ProfgenError, ProfilerRunError, ToolNotFound

TIMEOUT_S = 600.0
NSYS_LOG = "nsys-stats.log"
NCU_OUTPUT = "ncu-import.csv"


def nsys_stats(report: Path, out_dir: Path, timeout: float = TIMEOUT_S) -> tuple[Path, str]:
    """Run `nsys stats` on a copy of `report`, its CSV files (`nsys_<report>.csv`) and log
    written into `out_dir`; returns `out_dir`, and what its reader should know (''). Nothing is
    written beside `report`.

    Where nsys is not installed, an export (.sqlite) is read with Python's sqlite3 instead
    (`nsys_sqlite`: its CUDA traces, no NVTX ranges), and the note says so.

    Raises: ToolNotFound when nsys is not installed (before anything is copied) and the report
        is no .sqlite, or is one sqlite3 cannot read (its reason added); ProfilerRunError when
        nsys stats fails.
    """
    try:
        nsys = nsys_tool.find_nsys()
    except ToolNotFound as missing:
        if report.suffix.lower() != ".sqlite":
            raise
        try:
            nsys_sqlite.stats_dir(report, out_dir)
        except ProfgenError as unread:
            raise _also(missing, str(unread)) from None
        return (
            out_dir,
            "read with Python's sqlite3 (its CUDA traces, no NVTX ranges): nsys was not found",
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="profgen-nsys-") as work:
        copy = Path(work) / f"report{report.suffix.lower()}"
        shutil.copyfile(report, copy)
        cmd = nsys_tool.stats_cmd(nsys, copy, out_dir / nsys_tool.STATS_PREFIX)
        tools.run_tool(cmd, out_dir / NSYS_LOG, timeout=timeout, cwd=Path(work))
    return out_dir, ""


def ncu_import(report: Path, out_dir: Path, timeout: float = TIMEOUT_S) -> tuple[Path, str]:
    """Run `ncu --import report --csv --page raw`; returns the file in `out_dir` that holds
    its output (the command line first, then ncu's CSV), and what its reader should know ('').

    Where ncu is not installed, or fails on the report (ncu 2025.3.1 crashes on a 2019 report),
    the report is read with NVIDIA's report reader for Python instead (`ncu_pyreport`), when
    that is installed: the file then holds its page, and the note says so and why.

    Raises: ToolNotFound when neither ncu nor the reader is installed; ProfilerRunError when
        ncu fails and the reader is not installed or cannot read the report either.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    output = out_dir / NCU_OUTPUT
    try:
        ncu = ncu_tool.find_ncu()
    except ToolNotFound as missing:
        return output, _read_in_python(report, output, missing, "ncu was not found", timeout)
    try:
        tools.run_tool(ncu_tool.import_cmd(ncu, report), output, timeout=timeout)
    except ProfilerRunError as failed:
        why = f"{failed.cmd[0]} --import failed on it ({describe_exit(failed.returncode)})"
        return output, _read_in_python(report, output, failed, why, timeout, ncu)
    return output, ""


def _read_in_python(
    report: Path,
    output: Path,
    failure: ProfgenError,
    why: str,
    timeout: float,
    ncu: Path | None = None,
) -> str:
    """Write the report's raw page, as NVIDIA's report reader for Python reads it (in a child
    process: `ncu_pyreport.read`, given `timeout` seconds as ncu is), into `output`; returns the
    note that says so and `why` (ncu is missing, or failed: the reader may then come with
    `ncu`'s install).

    Raises: `failure` (ncu's) when the reader is not there, or cannot read the report either
        (its reason then added to ncu's, `_also`).
    """
    with tempfile.TemporaryDirectory(prefix="profgen-ncu-report-") as work:
        page = Path(work) / "page.csv"
        try:
            ncu_pyreport.read(report, page, ncu, timeout)
        except ToolNotFound:
            if isinstance(failure, ToolNotFound):
                raise ToolNotFound(f"{failure}, or install {ncu_pyreport.PACKAGE}") from None
            raise failure from None
        except ProfgenError as unread:
            raise _also(failure, str(unread)) from None
        note = f"read with {ncu_pyreport.PACKAGE}: {why}"
        with open(output, "a", encoding="utf-8") as out, open(page, encoding="utf-8") as text:
            out.write(f"# {note}\n")
            shutil.copyfileobj(text, out)
    return note


def _also(failure: ProfgenError, reason: str) -> ProfgenError:
    """A tool's `failure` (nsys or ncu not found, or ncu failed) with the fallback reader's
    `reason` added: to a missing tool's one line, or to a failed run's hint."""
    if isinstance(failure, ProfilerRunError):
        hint = f"{failure.hint}; {reason}" if failure.hint else reason
        return ProfilerRunError(failure.cmd, failure.returncode, failure.log_tail, hint)
    return type(failure)(f"{failure}; {reason}")
