"""The parent side of a stage: run its passes, each in a child process, and write its verdict.

`collect_stage(job, raw_dir)` runs one stage and never raises for the stage's own failure: a
crash, a CUDA error, wrong outputs, a signal or a timeout all become the outcome's status and
one-line reason, and the worker's output stays in `raw_dir/worker.log`. It raises ProfgenError
subclasses only for problems of the whole sweep: an unknown backend (UsageError), a missing tool
(ToolNotFound), a profiler that itself fails (ProfilerRunError). Ctrl-C kills the running child's
process group and re-raises KeyboardInterrupt.

Passes per backend (each line one process, see `profiler.collect.passes`):
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
from dataclasses import asdict
from pathlib import Path
from typing import Any

from profiler import defaults, schema
from profiler.collect import ncu as ncu_mod
from profiler.collect import nsys as nsys_mod
from profiler.collect import passes
from profiler.collect.process import EventSink
from profiler.collect.stagejob import StageJob, StageOutcome
from profiler.collect.worker import write_json
from profiler.errors import ToolNotFound, UsageError


def collect_stage(job: StageJob, raw_dir: Path, on_event: EventSink | None = None) -> StageOutcome:
    """Run `job`'s passes (see the module doc) and return its outcome.

    Raises:
        UsageError: unknown backend.
        ToolNotFound: cupti-python, nsys or ncu is needed and missing.
        ProfilerRunError: nsys or ncu failed for reasons of their own (with their log tail).
        KeyboardInterrupt: Ctrl-C; the running child was killed first.
    """
    tools = preflight(job.backend, job.metrics)
    raw_dir.mkdir(parents=True, exist_ok=True)
    emit = on_event or (lambda _event: None)
    outcome = StageOutcome(job, schema.ERROR, "", raw_dir, None, {"log": raw_dir / "worker.log"})
    run = passes.worker_pass(job, outcome, emit)
    if run.state == "ok" and outcome.status in (schema.PASS, schema.FAIL):
        if job.backend == "nsys":
            passes.nsys_pass(job, tools["nsys"], outcome, emit)
        if job.metrics and outcome.status in (schema.PASS, schema.FAIL):
            passes.ncu_pass(job, tools["ncu"], outcome, emit)
    _finish(outcome)
    return outcome


def preflight(backend: str, metrics: bool) -> dict[str, Path]:
    """Check the backend and find its tools before any GPU time is spent.

    Raises: UsageError, ToolNotFound.
    """
    if backend not in defaults.BACKENDS:
        raise UsageError(
            f"unknown backend {backend!r}; choose from: {', '.join(defaults.BACKENDS)}"
        )
    tools: dict[str, Path] = {}
    if backend == "cupti" and importlib.util.find_spec("cupti") is None:
        raise ToolNotFound(
            "the cupti backend needs NVIDIA's cupti-python: pip install cupti-python (the "
            "version of the driver's CUDA, e.g. 13.0.x), or use --backend nsys or --backend none"
        )
    if backend == "nsys":
        tools["nsys"] = nsys_mod.find_nsys()
    if metrics:
        tools["ncu"] = ncu_mod.find_ncu()
    return tools


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
    """What a stage whose worker wrote nothing is known to be, from its description."""
    return {
        "study": job.study.name,
        "unit": job.study.unit,
        "stage": job.key,
        "title": job.stage.title,
        "technique": job.stage.technique,
        "role": job.stage.role,
        "runtime": job.stage.runtime,
        "items": job.items,
        "batch": job.batch or job.items,
        "warmup": job.warmup,
        "repeat": job.repeat,
        "profiled_repeats": job.profiled_repeats,
        "timed_ns": [],
        "profiled_ns": [],
    }


def _jsonable_job(job: StageJob) -> dict[str, Any]:
    out = asdict(job)
    out["study"] = {k: out["study"][k] for k in ("ref", "name", "version")}
    out["stage"] = out["stage"]["key"]
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in out.items()}
