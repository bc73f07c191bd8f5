"""What the runner passes around for one stage: the job (what to run, how), its outcome (what
became of it), the worker's command line, and how each child's ending folds into the outcome."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiler import defaults, schema
from profiler.collect.discovery import StageInfo, StudyInfo
from profiler.collect.process import ChildRun


@dataclass(frozen=True)
class StageJob:
    """One stage to collect. `batch` None: all items in one `infer` call. `timeout_s` limits
    each process of the stage; `profiled_repeats` is the profiled pass's repeat count."""

    study: StudyInfo
    stage: StageInfo
    items: int
    repeat: int
    warmup: int
    backend: str
    metrics: bool = False
    batch: int | None = None
    data: Path | None = None
    model_file: Path | None = None
    timeout_s: float = defaults.STAGE_TIMEOUT_S
    profiled_repeats: int = defaults.PROFILED_REPEATS

    @property
    def key(self) -> str:
        return self.stage.key

    @property
    def range_name(self) -> str:
        """The stage range every call runs in (what ncu's NVTX filter selects)."""
        return f"{self.study.name}:{self.stage.key}"


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


def worker_cmd(
    job: StageJob, raw_dir: Path, passes: Sequence[str], tracer: str, result: str
) -> list[str]:
    """The worker's command line for `passes` (the file `result` is written into raw_dir)."""
    flags: dict[str, object] = {
        "--study": job.study.ref,
        "--stage": job.key,
        "--items": job.items,
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
        "--model": job.model_file,
        "--ncu-items": job.stage.ncu_items if "metrics" in passes else None,
    }
    cmd = [sys.executable, "-m", "profiler.collect.worker", "run"]
    for flag, value in flags.items():
        if value is not None:
            cmd.append(f"{flag}={value}")
    return cmd


def absorb(outcome: StageOutcome, run: ChildRun, what: str) -> None:
    """Fold one child's ending into the outcome (the worst status wins)."""
    label = f"{what}: " if what else "worker "
    if run.state == "timeout":
        outcome.status = schema.TIMEOUT
        outcome.reason = f"{what}: {run.reason}" if what else run.reason
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
