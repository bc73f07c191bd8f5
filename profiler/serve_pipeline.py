"""`profgen serve`, wired in one short function: collect -> parse -> analyze -> store -> render.

A serving run is a run like any other: `reports/<study>-serve-<UTC time>/` with run.json
(`source: serve`), the tables `serve_points`, `serve_windows` and `serve_histogram`, the
worker's records under raw/serve/, report.html, and a regressions table when a baseline is
given (p99 and throughput per point, the same noise-aware rule as a sweep's stages).
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from profiler import schema, store
from profiler.collect import env
from profiler.collect.discovery import StudyInfo
from profiler.collect.serve.runner import ServeJob, collect_serving
from profiler.errors import EXIT_OK, EXIT_STAGE_FAILED, UsageError
from profiler.progress import NullProgress, Progress, event_sink


@dataclass(frozen=True)
class ServeSettings:
    study: StudyInfo
    job: ServeJob
    slo_ms: float = 1.0
    keep_records: bool = False
    out_root: Path = Path("reports")
    baseline: Path | None = None
    fail_on: tuple[str, ...] = ()
    allow_mismatch: bool = False
    command: str = field(default_factory=lambda: shlex.join(["profgen", *sys.argv[1:]]))


@dataclass(frozen=True)
class ServeResult:
    path: Path
    exit_code: int
    run: store.Run


def check_settings(s: ServeSettings) -> ServeSettings:
    """Raises: UsageError for an unknown stage, a bad check, --fail-on without a baseline."""
    from profiler.analyze import checks

    s.study.stage(s.job.stage)
    if s.fail_on and s.baseline is None:
        raise UsageError("--fail-on needs --baseline")
    for text in s.fail_on:
        checks.parse_check(text)
    if not s.slo_ms > 0:
        raise UsageError("--slo-ms must be positive")
    return s


def run_serve(settings: ServeSettings, progress: Progress | None = None) -> ServeResult:
    """Serve the stage under every load point and write the run directory and its report.

    Raises: NoCudaDevice, BaselineMismatch, UsageError, RunNotFound (before anything runs).
    """
    from profiler.baseline import check_compatible, load_reference

    progress = progress or NullProgress()
    reference = load_reference(settings.baseline) if settings.baseline else None
    if settings.study.stage(settings.job.stage).uses_gpu:
        env.require_cuda()
    meta = run_meta(settings)
    if reference is not None:
        found = check_compatible(reference, store.Run(meta=meta), settings.allow_mismatch)
        meta["baseline"] = {"path": str(settings.baseline), "mismatches": found}
    tmp = store.start_run(settings.out_root, f"{settings.study.name}-serve")
    raw = tmp / "raw" / "serve"
    key = settings.job.stage
    progress.begin([(key, settings.study.stage(key).title)])
    result = collect_serving(settings.job, raw, event_sink(progress, key))  # collect
    progress.finish(key, result.get("status", schema.ERROR), result.get("reason", ""))
    progress.end()
    run = store.Run(meta=meta | {"serve": _serve_meta(result)}, tables=analyse(result, raw))
    if reference is not None:  # analyze: the gate
        run.tables[schema.REGRESSIONS.name] = compare(reference, run, settings.fail_on)
    store.save_run(run, tmp)  # store

    def render_then_drop_records() -> None:
        render(run, tmp, settings)  # render
        if not settings.keep_records:
            drop_records(raw)

    path = store.publish(run, tmp, render_then_drop_records)
    return ServeResult(path, exit_code(run, result), run)


def analyse(result: dict[str, Any], raw: Path) -> dict[str, pd.DataFrame]:
    """parse + analyze: every point's records -> the serving tables."""
    from profiler.analyze import serving
    from profiler.parse.serve import read_point

    done = [serving.analyse_point(p, read_point(raw, p)) for p in result.get("points", [])]
    tables = {schema.SERVE_POINTS.name: serving.points_table([d.row for d in done])}
    for name, part in (
        (schema.SERVE_WINDOWS.name, "windows"),
        (schema.SERVE_HISTOGRAM.name, "histogram"),
    ):
        frames = [getattr(d, part) for d in done]
        tables[name] = (
            pd.concat(frames, ignore_index=True) if frames else schema.empty(schema.table(name))
        )
    return tables


def compare(reference: store.Run, run: store.Run, fail_on: tuple[str, ...]) -> pd.DataFrame:
    from profiler.analyze import regress

    checks = [regress.parse_check(t) for t in (fail_on or regress.SERVE_DEFAULT_CHECKS)]
    return regress.evaluate(reference, run, checks)


def exit_code(run: store.Run, result: dict[str, Any]) -> int:
    """3 when the worker failed or an answer was wrong, 1 for a regression, else 0."""
    from profiler.analyze import regress

    if result.get("status") not in (schema.PASS, schema.SKIPPED):
        return EXIT_STAGE_FAILED
    if run.has(schema.REGRESSIONS.name):
        return regress.exit_code(run.table(schema.REGRESSIONS.name))
    return EXIT_OK


def run_meta(settings: ServeSettings) -> dict[str, Any]:
    job = settings.job
    return env.run_meta(
        settings.study,
        settings.command,
        "serve",
        {
            "stage": job.stage,
            "engine": job.engine,
            "concurrency": list(job.concurrency),
            "rates": list(job.rates),
            "request_items": job.request_items,
            "max_batch": list(job.max_batch),
            "max_wait_us": list(job.max_wait_us),
            "streams": list(job.streams),
            "graphs": list(job.graphs),
            "warmup_s": job.warmup_s,
            "duration_s": job.duration_s,
            "slo_ms": settings.slo_ms,
            "check_every": job.check_every,
            "keep_records": settings.keep_records,
            "items": None,
        },
        [job.stage],
    )


def _serve_meta(result: dict[str, Any]) -> dict[str, Any]:
    return {
        k: result.get(k)
        for k in ("status", "reason", "stage", "title", "runtime", "groups", "notes")
    }


def drop_records(raw: Path) -> None:
    """Delete the per-request records (`<point>.npz`, megabytes a point): the tables, the
    report and the trace hold what they showed; `--keep-records` keeps them for re-analysis."""
    for path in raw.glob("*.npz"):
        path.unlink()


def render(run: store.Run, path: Path, settings: ServeSettings) -> None:
    """report.html and the Chrome trace of one second of the best point."""
    from profiler.render import html, serve_trace

    serve_trace.write_best_trace(run, path / "raw" / "serve", settings.slo_ms * 1e6)
    html.write_report(run, path / "report.html")
