"""The steps `profiler.pipeline.run_pipeline` wires together, each named for what it does."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from profiler import schema, store
from profiler.collect import env
from profiler.collect.runner import StageOutcome, collect_stage, preflight
from profiler.progress import Progress, event_sink
from variants.registry import get_model

REFERENCE_CACHE = "_reference"  # raw/_reference: the float64 logits, computed once per run

if TYPE_CHECKING:
    from profiler.pipeline import SweepSettings


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


def uses_gpu(settings: SweepSettings) -> bool:
    """Whether any chosen stage runs on the GPU (a CPU-only study needs no CUDA device)."""
    spec = get_model(settings.model)
    return any(spec.stage_class(key).uses_gpu for key in settings.stages)


def check_machine(settings: SweepSettings, backend: str | None = None) -> None:
    """Fail before any stage runs when this machine cannot run the chosen stages or backend.

    Raises: NoCudaDevice when a chosen stage uses the GPU and there is none; ToolNotFound when
    the backend's profiler (cupti-python, nsys, ncu) is missing.
    """
    if uses_gpu(settings):
        env.require_cuda()
    preflight(settings.job(settings.stages[0], backend=backend))


def run_meta(settings: SweepSettings, version: str) -> dict[str, Any]:
    """run.json's content, less the tables list and the ceilings measured later."""
    spec = get_model(settings.model)
    machine = env.machine_info()
    return {
        "profgen_version": version,
        "model": spec.name,
        "model_title": spec.title,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": settings.command,
        "source": "sweep",
        "settings": {
            "images": settings.images,
            "repeat": settings.repeat,
            "warmup": settings.warmup,
            "backend": settings.backend,
            "metrics": settings.metrics,
            "stages": list(settings.stages),
            "batch_sizes": list(settings.batch_sizes) or None,
            "data": str(settings.data) if settings.data else None,
            "stage_timeout_s": settings.stage_timeout_s,
        },
        "machine": machine,
        "git": machine.pop("git", {}),
        "stages": list(settings.stages),
    }


def collect_stages(
    settings: SweepSettings, raw: Path, progress: Progress
) -> list[tuple[int, StageOutcome]]:
    """Run every chosen stage in its own worker, in study order. Returns (order, outcome) pairs."""
    spec = get_model(settings.model)
    chosen = [(spec.stage_keys.index(k), spec.stage_class(k)) for k in settings.stages]
    progress.begin([(cls.key, cls.title) for _, cls in chosen])
    outcomes = []
    for order, cls in chosen:
        job = settings.job(
            cls.key,
            cache_dir=raw / REFERENCE_CACHE,
            profiled_repeats=getattr(cls, "profiled_repeats", None),
        )
        outcome = collect_stage(job, raw / cls.key, event_sink(progress, cls.key))
        progress.finish(cls.key, outcome.status, outcome_summary(outcome))
        outcomes.append((order, outcome))
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
            job = settings.job(key, backend="none", batch=batch, cache_dir=raw / REFERENCE_CACHE)
            outcomes.append(
                collect_stage(job, raw / key / f"batch-{batch}", event_sink(progress, key))
            )
    return outcomes


def measure_ceilings(settings: SweepSettings, raw: Path, progress: Progress) -> dict[str, Any]:
    """The machine's measured copy bandwidths and FP32 rate (GPU studies only); an error is
    recorded in the run, not hidden."""
    from profiler.collect import ceilings
    from profiler.errors import ProfgenError

    if not uses_gpu(settings):
        return {}
    progress.event("ceilings", "measuring copy bandwidth and FP32 rate")
    try:
        return dict(ceilings.measure(raw / "ceilings"))
    except ProfgenError as exc:
        return {"error": str(exc)}


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
    """Refuse a baseline from another GPU model, driver major version or image count before
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
    """Write report.html, each stage's Chrome trace, and the CI outputs asked for, all through
    `profiler.files` (none may overwrite the baseline)."""
    from profiler.render import chrome_trace, html, outputs

    html.write_report(run, path / "report.html")
    chrome_trace.write_traces(run, path / "raw")
    regressions = run.table(schema.REGRESSIONS.name)
    baseline = outputs.run_files(settings.baseline) if settings.baseline else []
    outputs.write_ci_outputs(run, regressions, settings.summary, settings.junit, baseline)


def exit_code(run: store.Run) -> int:
    """3 when a stage failed (in this run, or in the baseline it was compared with), 1 when a
    check found a regression, else 0."""
    from profiler.analyze import regress
    from profiler.errors import EXIT_OK, EXIT_STAGE_FAILED

    stages = run.table(schema.STAGES.name)
    failed = stages["status"].isin([schema.FAIL, schema.TIMEOUT, schema.ERROR]).any()
    regressed = regress.exit_code(run.table(schema.REGRESSIONS.name))
    return max(EXIT_STAGE_FAILED if failed else EXIT_OK, regressed)
