"""The parent side of a stage: spawn its worker(s), enforce the time limit, read the verdict.

`collect_stage(job, raw_dir)` runs one stage and never raises for the stage's own failure: a
crash, a CUDA error, wrong logits, a signal or a timeout all become the outcome's status and
reason, and the worker's output stays in `raw_dir/worker.log`. It raises ProfgenError subclasses
only for problems of the whole sweep: an unknown backend (UsageError), a missing tool
(ToolNotFound), a profiler that itself fails (ProfilerRunError). Ctrl-C kills the running child's
process group and re-raises KeyboardInterrupt.

Passes per backend (each line one process):
- `none`:  worker: timed pass and checks.
- `cupti`: worker: timed pass, then the profiled pass traced in-process -> `cupti.npz`.
- `nsys`:  worker: timed pass; then `nsys profile` of a worker running the profiled pass inside
           the CUDA profiler API capture range -> `<stage>.nsys-rep`; then `nsys stats` ->
           `nsys_<report>.csv`.
- `metrics=True` adds: `ncu` of a worker running one call in the stage range -> `ncu.csv`.

`raw_dir/result.json` (written atomically, always) merges what the workers reported with the
final status; `profiler.parse.worker` turns it into the `stages` and `samples` rows.
"""

from __future__ import annotations

import importlib.util
import json
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from profiler import schema
from profiler.collect import ncu as ncu_mod
from profiler.collect import nsys as nsys_mod
from profiler.collect.tools import kill_group, run_tool, spawn, tail
from profiler.collect.worker import EVENT_PREFIX, write_json
from profiler.errors import ProfilerRunError, ToolNotFound, UsageError

BACKENDS = ("cupti", "nsys", "none")
TOOL_GRACE_S = 300.0  # extra time nsys/ncu get after the stage's own limit (report writing)
KILL_MARGIN_S = 15.0  # the runner kills a worker this long after its own watchdog should fire
_WATCHDOG = re.compile(r"^Timeout \(\d+:\d\d:\d\d(\.\d+)?\)!", re.MULTILINE)

EventSink = Callable[[str], None]


@dataclass(frozen=True)
class StageJob:
    """One stage to collect. `batch` None: all images in one `infer` call. `metrics_images`:
    images of the ncu pass (None: all; set it to e.g. 8 for per-image stages). `cache_dir`:
    folder shared by a sweep's stages where workers keep the float64 reference logits (saves
    recomputing them for every stage and pass). `stage_ref`: `module:Class` of a stage outside
    the registry (tests). `timeout_s` limits each process of the stage."""

    model: str
    stage: str
    images: int
    repeat: int
    warmup: int
    backend: str
    metrics: bool = False
    batch: int | None = None
    data: Path | None = None
    timeout_s: float = 600.0
    profiled_repeats: int = 3
    metrics_images: int | None = None
    cache_dir: Path | None = None
    stage_ref: str | None = None

    @property
    def range_name(self) -> str:
        return f"{self.model}:{self.stage}"


@dataclass
class StageOutcome:
    """What became of a stage. `files` names what the backends wrote: `result`, `log`,
    `cupti` (npz), `nsys-rep`, `nsys:<report>` (one CSV per nsys stats report), `ncu` (CSV)."""

    job: StageJob
    status: str
    reason: str
    raw_dir: Path
    result: dict[str, Any] | None
    files: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == schema.PASS


@dataclass
class _Run:
    """One finished child process: `ok`, or `timeout`/`crash` with a reason; its result file."""

    state: str
    reason: str = ""
    result: dict[str, Any] | None = None
    returncode: int | None = None


def collect_stage(job: StageJob, raw_dir: Path, on_event: EventSink | None = None) -> StageOutcome:
    """Run `job`'s passes (see the module doc) and return its outcome.

    Raises:
        UsageError: unknown backend.
        ToolNotFound: cupti-python, nsys or ncu is needed and missing.
        ProfilerRunError: nsys or ncu failed for reasons of their own (with their log tail).
        KeyboardInterrupt: Ctrl-C; the running child was killed first.
    """
    tools = preflight(job)
    raw_dir.mkdir(parents=True, exist_ok=True)
    emit = on_event or (lambda _event: None)
    outcome = StageOutcome(job, schema.ERROR, "", raw_dir, None, {"log": raw_dir / "worker.log"})
    tracer = "cupti" if job.backend == "cupti" else "none"
    passes = ["timed", "profiled"] if job.backend == "cupti" else ["timed"]
    run = _run_worker(
        job,
        raw_dir,
        worker_cmd(job, raw_dir, passes, tracer, "worker-timed.json"),
        raw_dir / "worker-timed.json",
        job.timeout_s + KILL_MARGIN_S,
        emit,
        "",
    )
    _absorb(outcome, run, "")
    if run.state == "ok" and outcome.status in (schema.PASS, schema.FAIL):
        if job.backend == "cupti":
            outcome.files["cupti"] = raw_dir / "cupti.npz"
        if job.backend == "nsys":
            _nsys_pass(job, raw_dir, tools["nsys"], outcome, emit)
        if job.metrics and outcome.status in (schema.PASS, schema.FAIL):
            _ncu_pass(job, raw_dir, tools["ncu"], outcome, emit)
    _finish(outcome)
    return outcome


def preflight(job: StageJob) -> dict[str, Path]:
    """Check the backend and find its tools before any GPU time is spent.

    Raises: UsageError, ToolNotFound.
    """
    if job.backend not in BACKENDS:
        raise UsageError(f"unknown backend {job.backend!r}; choose from: {', '.join(BACKENDS)}")
    tools: dict[str, Path] = {}
    if job.backend == "cupti" and importlib.util.find_spec("cupti") is None:
        raise ToolNotFound(
            "the cupti backend needs NVIDIA's cupti-python: pip install cupti-python (the "
            "version of the driver's CUDA, e.g. 13.0.x), or use --backend nsys"
        )
    if job.backend == "nsys":
        tools["nsys"] = nsys_mod.find_nsys()
    if job.metrics:
        tools["ncu"] = ncu_mod.find_ncu()
    return tools


def worker_cmd(
    job: StageJob, raw_dir: Path, passes: Sequence[str], tracer: str, result: str
) -> list[str]:
    """The worker's command line for `passes` (the file `result` is written into raw_dir)."""
    flags: dict[str, object] = {
        "--model": job.model,
        "--stage": job.stage,
        "--images": job.images,
        "--warmup": job.warmup,
        "--repeat": job.repeat,
        "--profiled-repeats": job.profiled_repeats,
        "--passes": ",".join(passes),
        "--tracer": tracer,
        "--out": raw_dir,
        "--result": raw_dir / result,
        "--timeout": f"{job.timeout_s:g}",
        "--batch": job.batch,
        "--data": job.data,
        "--cache-dir": job.cache_dir,
        "--stage-ref": job.stage_ref,
        "--metrics-images": job.metrics_images if "metrics" in passes else None,
    }
    cmd = [sys.executable, "-m", "profiler.collect.worker"]
    for flag, value in flags.items():
        if value is not None:
            cmd += [flag, str(value)]
    return cmd


def _run_worker(
    job: StageJob,
    raw_dir: Path,
    cmd: list[str],
    result_path: Path,
    limit_s: float,
    emit: EventSink,
    prefix: str,
) -> _Run:
    """Run one child (a worker, or a profiler wrapping one) to completion or to `limit_s`."""
    log = raw_dir / "worker.log"
    with open(log, "a") as fh:
        fh.write(f"$ {' '.join(cmd)}\n")
    proc = spawn(cmd, log, stdout_pipe=True)
    events: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_read_stdout, args=(proc, log, events), daemon=True)
    reader.start()
    deadline = time.monotonic() + limit_s
    try:
        timed_out = _pump(proc, events, deadline, emit, prefix)
    except BaseException:  # KeyboardInterrupt included: never leave the stage running
        kill_group(proc)
        raise
    if timed_out:
        kill_group(proc)
    reader.join(timeout=10)
    kill_group(proc)  # leftovers of the group (a profiled child of nsys or ncu)
    return _judge(proc.returncode, timed_out, job, log, result_path)


def _read_stdout(proc: subprocess.Popen, log: Path, events: queue.Queue[str | None]) -> None:
    with open(log, "a") as fh:
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.startswith(EVENT_PREFIX):
                events.put(json.loads(line[len(EVENT_PREFIX) :]).get("event", ""))
            else:
                fh.write(line)
                fh.flush()
    events.put(None)


def _pump(
    proc: subprocess.Popen,
    events: queue.Queue[str | None],
    deadline: float,
    emit: EventSink,
    prefix: str,
) -> bool:
    """Forward events until the child's output ends and it exits; True when `deadline` passed."""
    ended = False
    exited_at: float | None = None
    while True:
        now = time.monotonic()
        if proc.poll() is not None:
            exited_at = exited_at or now
            if ended or now - exited_at > 2.0:  # a leftover grandchild may hold the pipe open
                return False
        if now > deadline:
            return True
        try:
            event = events.get(timeout=0.1)
        except queue.Empty:
            continue
        if event is None:
            ended = True
        else:
            emit(prefix + event)


def _judge(
    returncode: int | None, timed_out: bool, job: StageJob, log: Path, result_path: Path
) -> _Run:
    text = "\n".join(ln for ln in tail(log, 24).splitlines() if not ln.startswith("$ "))
    text = "\n".join(text.splitlines()[-12:])
    if timed_out or (returncode and _WATCHDOG.search(_read(log))):
        return _Run(
            "timeout",
            f"stopped after the time limit of {job.timeout_s:g} s\n{text}",
            None,
            returncode,
        )
    result = json.loads(result_path.read_text()) if result_path.is_file() else None
    if returncode == 0 and result is not None:
        return _Run("ok", "", result, 0)
    return _Run("crash", f"{describe_exit(returncode)}\n{text}".rstrip(), result, returncode)


def describe_exit(returncode: int | None) -> str:
    """`exited with status 1` or `was killed by signal SIGSEGV`."""
    import signal

    if returncode is None:
        return "did not finish"
    if returncode < 0:
        try:
            return f"was killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}" if returncode else "exited without writing its result"


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""


def _absorb(outcome: StageOutcome, run: _Run, what: str) -> None:
    """Fold one child's verdict into the outcome (the worst status wins)."""
    label = f"{what}: " if what else "worker "
    if run.state == "timeout":
        outcome.status, outcome.reason = (
            schema.TIMEOUT,
            f"{what + ': ' if what else ''}{run.reason}",
        )
    elif run.state == "crash":
        outcome.status, outcome.reason = schema.ERROR, label + run.reason
    elif run.result is not None:
        status = run.result.get("status", schema.ERROR)
        if outcome.result is None:
            outcome.result = dict(run.result)
            outcome.status, outcome.reason = status, run.result.get("reason", "")
        elif status == schema.FAIL and outcome.status == schema.PASS:
            outcome.status, outcome.reason = status, f"{what}: {run.result.get('reason', '')}"
        outcome.notes += [n for n in run.result.get("notes", []) if n not in outcome.notes]


def _nsys_pass(
    job: StageJob, raw_dir: Path, nsys: Path, outcome: StageOutcome, emit: EventSink
) -> None:
    """The profiled pass under `nsys profile`, then `nsys stats` into CSV files."""
    rep_base = raw_dir / job.stage
    program = worker_cmd(job, raw_dir, ["profiled"], "profiler-api", "worker-nsys.json")
    cmd = nsys_mod.profile_cmd(nsys, rep_base, program)
    emit("nsys: starting")
    run = _run_worker(
        job,
        raw_dir,
        cmd,
        raw_dir / "worker-nsys.json",
        job.timeout_s + TOOL_GRACE_S,
        emit,
        "nsys: ",
    )
    _tool_failed(cmd, run, raw_dir / "worker.log")
    _absorb(outcome, run, "profiled pass under nsys")
    if run.state != "ok":
        return
    _merge_profiled(outcome, run.result)
    report = rep_base.with_suffix(".nsys-rep")
    if not report.is_file():
        log = tail(raw_dir / "worker.log")
        raise ProfilerRunError(cmd, 0, log, hint=_no_report_hint(rep_base))
    outcome.files["nsys-rep"] = report
    emit("nsys stats")
    stats_base = raw_dir / nsys_mod.STATS_PREFIX
    run_tool(nsys_mod.stats_cmd(nsys, report, stats_base), raw_dir / "nsys-stats.log", TOOL_GRACE_S)
    for name, path in nsys_mod.stats_outputs(stats_base).items():
        if path.is_file():
            outcome.files[f"nsys:{name}"] = path
        else:
            outcome.notes.append(f"nsys stats wrote no {name} report (no such data in the trace)")


def _no_report_hint(rep_base: Path) -> str:
    if rep_base.with_suffix(".qdstrm").is_file():
        from profiler.collect.tools import hint_for

        return hint_for("Unable to retrieve the importer version")
    return "nsys wrote no report: see the log above and run `profgen doctor`"


def _tool_failed(cmd: list[str], run: _Run, log: Path) -> None:
    """A profiler that exits non-zero although the stage's worker finished is a tool failure.

    Raises: ProfilerRunError with the log's tail and a hint.
    """
    from profiler.collect.tools import hint_for

    if run.state == "crash" and run.result is not None:
        raise ProfilerRunError(cmd, run.returncode, tail(log), hint=hint_for(_read(log)))


def _merge_profiled(outcome: StageOutcome, result: dict[str, Any] | None) -> None:
    if outcome.result is not None and result is not None:
        outcome.result["profiled_ns"] = result.get("profiled_ns", [])
        outcome.result["trace"] = result.get("trace", {})


def _ncu_pass(
    job: StageJob, raw_dir: Path, ncu: Path, outcome: StageOutcome, emit: EventSink
) -> None:
    """One call of the stage under ncu with the metric list -> raw_dir/ncu.csv."""
    csv = raw_dir / "ncu.csv"
    program = worker_cmd(job, raw_dir, ["metrics"], "none", "worker-ncu.json")
    cmd = ncu_mod.profile_cmd(ncu, job.range_name, csv, program)
    run = _run_worker(
        job, raw_dir, cmd, raw_dir / "worker-ncu.json", job.timeout_s + TOOL_GRACE_S, emit, "ncu: "
    )
    text = _read(csv)
    if "ERR_NVGPUCTRPERM" in text or "LibraryNotLoaded" in text:
        from profiler.collect.tools import hint_for

        raise ProfilerRunError(cmd, run.returncode, tail(csv), hint=hint_for(text))
    _tool_failed(cmd, run, csv)
    _absorb(outcome, run, "metrics pass under ncu")
    if run.state == "ok":
        rows = sum(1 for line in text.splitlines() if line.startswith('"') and line[1:2].isdigit())
        if rows:  # a CPU-only stage launches no kernel: ncu then writes no CSV table at all
            outcome.files["ncu"] = csv
        else:
            outcome.notes.append("ncu profiled no kernel in the stage range")
        if rows >= ncu_mod.LAUNCH_LIMIT:
            outcome.notes.append(f"ncu profiled only the first {rows} kernels of the stage range")
        if outcome.result is not None and run.result is not None:
            outcome.result["metrics_images"] = run.result.get("images")


def _finish(outcome: StageOutcome) -> None:
    """Write raw_dir/result.json: the workers' results, the final status, reason, notes, files."""
    job = outcome.job
    result = outcome.result if outcome.result is not None else _empty_result(job)
    result.update(
        status=outcome.status,
        reason=outcome.reason,
        notes=outcome.notes,
        backend=job.backend,
        job=_jsonable_job(job),
        files={k: p.name for k, p in outcome.files.items() if p.is_file() or k == "log"},
    )
    outcome.result = result
    outcome.files["result"] = outcome.raw_dir / "result.json"
    write_json(outcome.files["result"], result)


def _empty_result(job: StageJob) -> dict[str, Any]:
    title, technique = _describe(job)
    return {
        "model": job.model,
        "stage": job.stage,
        "title": title,
        "technique": technique,
        "images": job.images,
        "batch": job.batch or job.images,
        "warmup": job.warmup,
        "repeat": job.repeat,
        "profiled_repeats": job.profiled_repeats,
        "timed_ns": [],
        "profiled_ns": [],
    }


def _describe(job: StageJob) -> tuple[str, str]:
    from profiler.collect.worker import load_stage_class

    try:
        cls = load_stage_class(job.model, job.stage, job.stage_ref)
    except Exception:  # noqa: BLE001 - a stage module that does not import: its worker already
        return job.stage, ""  # failed with the traceback, which is the outcome's reason
    return getattr(cls, "title", job.stage), getattr(cls, "technique", "")


def _jsonable_job(job: StageJob) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(job).items()}
