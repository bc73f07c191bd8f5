"""The passes of a stage, each one child process: the worker's own (timed, and profiled under
CUPTI), the profiled pass under `nsys profile` then `nsys stats`, and the metrics call under
`ncu`. Each folds its child's ending into the stage's outcome.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from profiler.collect import env
from profiler.collect import ncu as ncu_mod
from profiler.collect import nsys as nsys_mod
from profiler.collect.process import ChildRun, EventSink, run_child
from profiler.collect.stagejob import StageJob, StageOutcome, absorb, worker_cmd
from profiler.collect.tools import hint_for, run_tool, tail
from profiler.errors import ProfilerRunError

TOOL_GRACE_S = 300.0  # extra time nsys/ncu get after the stage's own limit (report writing)
KILL_MARGIN_S = 15.0  # the runner kills a worker this long after its own watchdog should fire


def worker_pass(job: StageJob, outcome: StageOutcome, emit: EventSink) -> ChildRun:
    """The timed pass, then (cupti backend) the profiled pass traced in-process."""
    raw_dir = outcome.raw_dir
    cupti = job.backend == "cupti"
    passes = ["timed", "profiled"] if cupti else ["timed"]
    cmd = worker_cmd(job, raw_dir, passes, "cupti" if cupti else "none", "worker-timed.json")
    run = _child(job, cmd, raw_dir, "worker-timed.json", KILL_MARGIN_S, emit, "")
    absorb(outcome, run, "")
    if cupti and run.state == "ok":
        outcome.files["cupti"] = raw_dir / "cupti.npz"
    return run


def nsys_pass(job: StageJob, nsys: Path, outcome: StageOutcome, emit: EventSink) -> None:
    """The profiled pass under `nsys profile`, then `nsys stats` into CSV files.

    Raises: ProfilerRunError when nsys fails or writes no report.
    """
    raw_dir = outcome.raw_dir
    rep_base = raw_dir / job.key
    program = worker_cmd(job, raw_dir, ["profiled"], "profiler-api", "worker-nsys.json")
    cmd = nsys_mod.profile_cmd(nsys, rep_base, program)
    emit("nsys: starting")
    run = _child(job, cmd, raw_dir, "worker-nsys.json", TOOL_GRACE_S, emit, "nsys: ")
    _tool_failed(cmd, run, raw_dir / "worker.log")
    absorb(outcome, run, "profiled pass under nsys")
    if run.state != "ok":
        return
    _merge_profiled(outcome, run.result)
    report = rep_base.with_suffix(".nsys-rep")
    if not report.is_file():
        raise ProfilerRunError(cmd, 0, tail(raw_dir / "worker.log"), hint=_no_report_hint(rep_base))
    outcome.files["nsys-rep"] = report
    emit("nsys stats")
    stats_base = raw_dir / nsys_mod.STATS_PREFIX
    run_tool(nsys_mod.stats_cmd(nsys, report, stats_base), raw_dir / "nsys-stats.log", TOOL_GRACE_S)
    for name, path in nsys_mod.stats_outputs(stats_base).items():
        if path.is_file():
            outcome.files[f"nsys:{name}"] = path
        else:
            outcome.notes.append(f"nsys stats wrote no {name} report (no such data in the trace)")


def ncu_pass(job: StageJob, ncu: Path, outcome: StageOutcome, emit: EventSink) -> None:
    """One call of the stage under ncu with the metric list as ncu names it on this device's
    compute capability (`ncu.metrics_for`) -> raw_dir/ncu.csv.

    Raises: ProfilerRunError when ncu may not read the counters or fails on its own.
    """
    raw_dir = outcome.raw_dir
    csv = raw_dir / "ncu.csv"
    program = worker_cmd(job, raw_dir, ["metrics"], "none", "worker-ncu.json")
    metrics = ncu_mod.metrics_for(env.compute_capability())
    cmd = ncu_mod.profile_cmd(ncu, job.range_name, csv, program, metrics)
    run = _child(job, cmd, raw_dir, "worker-ncu.json", TOOL_GRACE_S, emit, "ncu: ")
    text = _read(csv)
    if "ERR_NVGPUCTRPERM" in text or "LibraryNotLoaded" in text:
        raise ProfilerRunError(cmd, run.returncode, tail(csv), hint=hint_for(text))
    _tool_failed(cmd, run, csv)
    absorb(outcome, run, "metrics pass under ncu")
    if run.state != "ok":
        return
    rows = sum(1 for line in text.splitlines() if line.startswith('"') and line[1:2].isdigit())
    if rows:  # a CPU-only stage launches no kernel: ncu then writes no CSV table at all
        outcome.files["ncu"] = csv
    else:
        outcome.notes.append("ncu profiled no kernel in the stage range")
    if rows >= ncu_mod.LAUNCH_LIMIT:
        outcome.notes.append(f"ncu profiled only the first {rows} kernels of the stage range")
    if outcome.result is not None and run.result is not None:
        outcome.result["metrics_items"] = run.result.get("items")


def _child(
    job: StageJob,
    cmd: list[str],
    raw_dir: Path,
    result: str,
    grace_s: float,
    emit: EventSink,
    prefix: str,
) -> ChildRun:
    limit = job.timeout_s + grace_s
    log, result_path = raw_dir / "worker.log", raw_dir / result
    return run_child(cmd, log, result_path, limit, job.timeout_s, emit, prefix)


def _no_report_hint(rep_base: Path) -> str:
    if rep_base.with_suffix(".qdstrm").is_file():
        return hint_for("Unable to retrieve the importer version")
    return "nsys wrote no report: see the log above and run `profgen doctor`"


def _tool_failed(cmd: list[str], run: ChildRun, log: Path) -> None:
    """A profiler that exits non-zero although the stage's worker finished is a tool failure.

    Raises: ProfilerRunError with the log's tail and a hint.
    """
    if run.state == "crash" and run.result is not None:
        raise ProfilerRunError(cmd, run.returncode, tail(log), hint=hint_for(_read(log)))


def _merge_profiled(outcome: StageOutcome, result: dict[str, Any] | None) -> None:
    if outcome.result is not None and result is not None:
        outcome.result["profiled_ns"] = result.get("profiled_ns", [])
        outcome.result["trace"] = result.get("trace", {})


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""
