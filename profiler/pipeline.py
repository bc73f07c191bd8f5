"""The sweep, wired in one short function: collect -> parse -> analyze -> store -> render.

`run_pipeline(settings)` runs every stage of a study in its own worker process, turns what the
workers and profilers wrote into the tables of `profiler.schema`, derives the summaries, writes
the run directory (under a temporary name, renamed when complete) and renders its report.
"""

from __future__ import annotations

import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from profiler import __version__, schema, store
from profiler import sweep_steps as steps
from profiler.analyze.assemble import assemble_tables
from profiler.collect.runner import StageJob, collect_stage
from profiler.errors import UsageError
from profiler.parse.outcome import parse_outcome
from profiler.progress import NullProgress, Progress, event_sink
from variants.registry import get_model

# Profiled repeats per stage: 5 lets Mann-Whitney U (4 vs 4 at least) judge kernel changes.
PROFILED_REPEATS = 5


@dataclass(frozen=True)
class SweepSettings:
    """Everything a sweep (or a single `profgen run`) needs, validated before GPU time is spent."""

    model: str
    stages: tuple[str, ...]
    images: int
    repeat: int
    warmup: int
    backend: str = "cupti"
    metrics: bool = False
    batch_sizes: tuple[int, ...] = ()
    data: Path | None = None
    stage_timeout_s: float = 600.0
    out_root: Path = Path("reports")
    baseline: Path | None = None
    fail_on: tuple[str, ...] = ()
    allow_mismatch: bool = False
    summary: Path | None = None
    junit: Path | None = None
    command: str = field(default_factory=lambda: shlex.join(["profgen", *sys.argv[1:]]))

    def job(
        self,
        stage: str,
        backend: str | None = None,
        batch: int | None = None,
        cache_dir: Path | None = None,
        profiled_repeats: int | None = None,
    ) -> StageJob:
        """The worker job of `stage`; `cache_dir` keeps the reference logits between stages;
        `profiled_repeats` overrides PROFILED_REPEATS (a stage class may ask for fewer)."""
        return StageJob(
            model=self.model,
            stage=stage,
            images=self.images,
            repeat=self.repeat,
            warmup=self.warmup,
            backend=self.backend if backend is None else backend,
            metrics=self.metrics if batch is None else False,
            batch=batch,
            data=self.data,
            timeout_s=self.stage_timeout_s,
            profiled_repeats=profiled_repeats or PROFILED_REPEATS,
            cache_dir=cache_dir,
        )


@dataclass(frozen=True)
class SweepResult:
    path: Path
    exit_code: int
    run: store.Run


def settings_from_args(args: Any, stages: list[str] | None, backend: str) -> SweepSettings:
    """Build and validate settings from parsed CLI arguments.

    Raises: UsageError for an unknown model or stage, a missing data file, or `--fail-on`
    without `--baseline`.
    """
    spec = get_model(args.model)
    keys = tuple(stages) if stages else spec.stage_keys
    for key in keys:
        spec.stage_class(key)  # raises UsageError naming the valid stages
    if args.data is not None and not Path(args.data).is_file():
        raise UsageError(f"--data {args.data}: no such file")
    fail_on = tuple(getattr(args, "fail_on", ()) or ())
    baseline = getattr(args, "baseline", None)
    if fail_on and baseline is None:
        raise UsageError("--fail-on needs --baseline (a run directory or a baseline file)")
    return SweepSettings(
        model=spec.name,
        stages=keys,
        images=args.images,
        repeat=args.repeat,
        warmup=args.warmup,
        backend=backend,
        metrics=getattr(args, "metrics", False),
        batch_sizes=tuple(getattr(args, "batch_sizes", None) or ()),
        data=args.data,
        stage_timeout_s=getattr(args, "stage_timeout", 600.0),
        out_root=getattr(args, "out", Path("reports")),
        baseline=baseline,
        fail_on=fail_on,
        allow_mismatch=getattr(args, "allow_mismatch", False),
        summary=getattr(args, "summary", None),
        junit=getattr(args, "junit", None),
    )


def run_one(settings: SweepSettings, progress: Progress | None = None) -> pd.DataFrame:
    """Time one stage and check it against the reference, in a worker process (no profiler).

    Returns: the stage's row, a DataFrame with `schema.STAGES` columns.
    Raises: NoCudaDevice.
    """
    steps.check_machine(settings, backend="none")
    progress = progress or NullProgress()
    with tempfile.TemporaryDirectory(prefix="profgen-run-") as tmp:
        job = settings.job(settings.stages[0], backend="none")
        outcome = collect_stage(job, Path(tmp), on_event=event_sink(progress, job.stage))
        order = get_model(settings.model).stage_keys.index(job.stage)
        return parse_outcome(outcome, order)[schema.STAGES.name]


def run_pipeline(settings: SweepSettings, progress: Progress | None = None) -> SweepResult:
    """Run the sweep and write its run directory and report. Returns the run's path and exit code.

    Raises: NoCudaDevice, ToolNotFound, BaselineMismatch, UsageError (all before any stage runs).
    """
    progress = progress or NullProgress()
    reference = steps.load_reference(settings)  # fail fast, before the GPU
    steps.check_machine(settings)
    meta = steps.run_meta(settings, __version__)
    steps.check_baseline(reference, meta, settings)
    tmp = store.start_run(settings.out_root, settings.model)
    outcomes = steps.collect_stages(settings, tmp / "raw", progress)  # collect
    sweep_outcomes = steps.collect_batch_sweep(settings, tmp / "raw", progress)
    meta["ceilings"] = steps.measure_ceilings(settings, tmp / "raw", progress)
    tables = [parse_outcome(o, order) for order, o in outcomes]  # parse
    tables.extend(parse_outcome(o, None) for o in sweep_outcomes)
    run = store.Run(meta=meta, tables=assemble_tables(tables, settings.model))  # analyze
    regressions = steps.compare(run, reference, settings)
    if regressions is not None:
        run.tables[schema.REGRESSIONS.name] = regressions
    store.save_run(run, tmp)  # store
    path = store.finish_run(tmp)
    run.path = path
    steps.render(run, path, settings)  # render
    return SweepResult(path=path, exit_code=steps.exit_code(run), run=run)
