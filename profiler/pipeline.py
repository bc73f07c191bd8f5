"""The sweep, wired in one short function: collect -> parse -> analyze -> store -> render.

`run_pipeline(settings)` runs every stage of a study in its own worker process, turns what the
workers and profilers wrote into the tables of `profiler.schema`, derives the summaries, writes
the run directory and its report under a temporary name, and renames it when it is complete.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from profiler import schema, store
from profiler import sweep_steps as steps
from profiler.analyze.assemble import assemble_tables
from profiler.collect.runner import collect_stage
from profiler.parse.outcome import parse_outcome
from profiler.progress import NullProgress, Progress, event_sink
from profiler.settings import SweepSettings


@dataclass(frozen=True)
class SweepResult:
    path: Path
    exit_code: int
    run: store.Run


def run_one(settings: SweepSettings, progress: Progress | None = None) -> pd.DataFrame:
    """Time one stage and check it against the reference, in a worker process (no profiler).

    Returns: the stage's row, a DataFrame with `schema.STAGES` columns.
    Raises: NoCudaDevice.
    """
    steps.check_machine(settings, backend="none")
    progress = progress or NullProgress()
    key = settings.stages[0]
    with tempfile.TemporaryDirectory(prefix="profgen-run-") as tmp:
        job = settings.job(key, backend="none")
        outcome = collect_stage(job, Path(tmp), on_event=event_sink(progress, key))
        return parse_outcome(outcome, settings.study.order(key))[schema.STAGES.name]


def run_pipeline(settings: SweepSettings, progress: Progress | None = None) -> SweepResult:
    """Run the sweep and write its run directory and report. Returns the run's path and exit code.

    Raises: NoCudaDevice, ToolNotFound, BaselineMismatch, UsageError (all before any stage runs).
    """
    progress = progress or NullProgress()
    reference = steps.load_reference(settings)  # fail fast, before the GPU
    steps.check_machine(settings)
    meta = steps.run_meta(settings)
    steps.check_baseline(reference, meta, settings)
    tmp = store.start_run(settings.out_root, settings.study.name)
    outcomes = steps.collect_stages(settings, tmp / "raw", progress)  # collect
    sweep_outcomes = steps.collect_batch_sweep(settings, tmp / "raw", progress)
    meta["ceilings"] = steps.measure_ceilings(settings, tmp / "raw", progress)
    tables = [parse_outcome(o, order) for order, o in outcomes]  # parse
    tables.extend(parse_outcome(o, None) for o in sweep_outcomes)
    run = store.Run(meta=meta, tables=assemble_tables(tables, settings.study.name))  # analyze
    regressions = steps.compare(run, reference, settings)
    if regressions is not None:
        run.tables[schema.REGRESSIONS.name] = regressions
    store.save_run(run, tmp)  # store
    path = store.publish(run, tmp, lambda: steps.render(run, tmp, settings))  # render
    steps.write_ci_outputs(run, settings)
    return SweepResult(path=path, exit_code=steps.exit_code(run), run=run)
