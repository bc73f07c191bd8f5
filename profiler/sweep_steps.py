"""The steps `profiler.pipeline.run_pipeline` wires together, each named for what it does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from profiler import schema, store
from profiler.collect import env, harness
from profiler.collect.runner import collect_stage, preflight
from profiler.collect.stagejob import StageOutcome
from profiler.errors import EXIT_OK, EXIT_STAGE_FAILED, NoCudaDevice
from profiler.progress import Progress, event_sink
from profiler.settings import SweepSettings

#: backends that trace the GPU: they need a CUDA device even for a CPU-only study
GPU_BACKENDS = ("cupti", "nsys")


def load_reference(settings: SweepSettings) -> store.Run | None:
    """The baseline to compare against, read and its checks parsed before any GPU time is spent.

    Raises: UsageError for a bad check, RunNotFound for an unreadable baseline.
    """
    if settings.baseline is None:
        return None
    from profiler.analyze import regress
    from profiler.baseline import load_reference as load

    for text in settings.fail_on:
        regress.parse_check(text)
    return load(settings.baseline)


def check_machine(settings: SweepSettings, backend: str | None = None) -> None:
    """Fail before any stage runs when this machine cannot run the chosen stages or backend.

    Raises: NoCudaDevice when a chosen stage uses the GPU, or the backend traces one, and there
    is none (saying which backend works instead); ToolNotFound when the backend's profiler
    (cupti-python, nsys, ncu) is missing.
    """
    backend = settings.backend if backend is None else backend
    if settings.uses_gpu:
        env.require_cuda()
    elif backend in GPU_BACKENDS or settings.metrics:
        try:
            env.require_cuda()
        except NoCudaDevice as exc:
            flag = "--metrics" if settings.metrics else f"--backend {backend}"
            raise NoCudaDevice(
                f"{flag} traces a GPU, and {exc}; these stages run on the CPU: use --backend none"
            ) from None
    preflight(backend, settings.metrics)


def run_meta(settings: SweepSettings) -> dict[str, Any]:
    """run.json's content, less the tables list and the ceilings measured later."""
    return env.run_meta(
        settings.study,
        settings.command,
        "sweep",
        {
            "items": settings.items,
            "repeat": settings.repeat,
            "warmup": settings.warmup,
            "backend": settings.backend,
            "metrics": settings.metrics,
            "stages": list(settings.stages),
            "batch_sizes": list(settings.batch_sizes) or None,
            "data": str(settings.data) if settings.data else None,
            "onnx": str(settings.model_file) if settings.model_file else None,
            "stage_timeout_s": settings.stage_timeout_s,
            "timing": harness.TIMING,
        },
        list(settings.stages),
    )


def collect_stages(
    settings: SweepSettings, raw: Path, progress: Progress
) -> list[tuple[int, StageOutcome]]:
    """Run every chosen stage in its own worker, in study order. Returns (order, outcome) pairs."""
    study = settings.study
    progress.begin([(key, study.stage(key).title) for key in settings.stages])
    outcomes = []
    for key in settings.stages:
        job = settings.job(key)
        outcome = collect_stage(job, raw / key, event_sink(progress, key))
        progress.finish(key, outcome.status, outcome_summary(outcome))
        outcomes.append((study.order(key), outcome))
    progress.end()
    return outcomes


def collect_batch_sweep(
    settings: SweepSettings, raw: Path, progress: Progress
) -> list[StageOutcome]:
    """Time the chosen stages at each `--batch-sizes` size (no profiler)."""
    outcomes = []
    for key in settings.stages if settings.batch_sizes else ():
        for batch in settings.batch_sizes:
            progress.event(key, f"batch {batch}")
            job = settings.job(key, backend="none", batch=batch)
            outcomes.append(
                collect_stage(job, raw / key / f"batch-{batch}", event_sink(progress, key))
            )
    return outcomes


def measure_ceilings(settings: SweepSettings, raw: Path, progress: Progress) -> dict[str, Any]:
    """The machine's measured copy bandwidths and FP32 rate (GPU studies only); an error is
    recorded in the run, not hidden."""
    from profiler.collect import ceilings
    from profiler.errors import ProfgenError

    if not settings.uses_gpu:
        return {}
    progress.event("ceilings", "measuring copy bandwidth and FP32 rate")
    try:
        return dict(ceilings.measure(raw / "ceilings"))
    except ProfgenError as exc:
        return {"error": str(exc).splitlines()[0]}


def outcome_summary(outcome: StageOutcome) -> str:
    """One short line for the progress display: the median time, or why the stage did not pass."""
    result = outcome.result or {}
    samples = result.get("timed_ns") or []
    if outcome.status == schema.PASS and samples:
        return f"{sorted(samples)[len(samples) // 2] / 1e9:.4g}s"
    return outcome.reason.splitlines()[0] if outcome.reason else outcome.status


def check_baseline(
    reference: store.Run | None, meta: dict[str, Any], settings: SweepSettings
) -> None:
    """Refuse a baseline from another GPU model, driver major version or item count before
    any stage runs; with --allow-mismatch, record the mismatches in `meta["baseline"]`.

    Raises: BaselineMismatch unless settings.allow_mismatch.
    """
    if reference is None:
        return
    from profiler.baseline import check_compatible

    mismatches = check_compatible(reference, store.Run(meta=meta), settings.allow_mismatch)
    meta["baseline"] = {"path": str(settings.baseline), "mismatches": mismatches}


def compare(
    run: store.Run, reference: store.Run | None, settings: SweepSettings
) -> pd.DataFrame | None:
    """The regressions table against the baseline (checked by `check_baseline`), or None."""
    if reference is None:
        return None
    from profiler.analyze import regress

    return regress.evaluate(reference, run, regress.resolve_checks(settings.fail_on))


def render(run: store.Run, path: Path, settings: SweepSettings) -> None:
    """Write report.html and each stage's Chrome trace into the run directory `path`."""
    from profiler.render import chrome_trace, html

    html.write_report(run, path / "report.html")
    chrome_trace.write_traces(run, path / "raw")


def write_ci_outputs(run: store.Run, settings: SweepSettings) -> None:
    """The Markdown summary and JUnit file asked for (never over the baseline's files)."""
    from profiler.render import outputs

    regressions = run.table(schema.REGRESSIONS.name)
    baseline = outputs.run_files(settings.baseline) if settings.baseline else []
    outputs.write_ci_outputs(run, regressions, settings.summary, settings.junit, baseline)


def exit_code(run: store.Run) -> int:
    """3 when a stage failed (in this run, or in the baseline it was compared with), 1 when a
    check found a regression, else 0."""
    from profiler.analyze import regress

    stages = run.table(schema.STAGES.name)
    failed = stages["status"].isin([schema.FAIL, schema.TIMEOUT, schema.ERROR]).any()
    regressed = regress.exit_code(run.table(schema.REGRESSIONS.name))
    return max(EXIT_STAGE_FAILED if failed else EXIT_OK, regressed)
