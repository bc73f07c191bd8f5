"""What a sweep (or a single `profgen run`) is asked to do, typed and checked before any GPU
time is spent. The CLI builds these from its arguments; the library never sees argparse."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from profiler import defaults
from profiler.collect.discovery import StudyInfo
from profiler.collect.stagejob import StageJob
from profiler.errors import UsageError


@dataclass(frozen=True)
class SweepSettings:
    """A sweep of `stages` of `study`. `stage_timeout_s` None: each stage's own limit, else
    the default; a value given here applies to every stage."""

    study: StudyInfo
    stages: tuple[str, ...]
    items: int
    repeat: int = defaults.REPEAT
    warmup: int = defaults.WARMUP
    backend: str = defaults.DEFAULT_BACKEND
    metrics: bool = False
    batch_sizes: tuple[int, ...] = ()
    data: Path | None = None
    model_file: Path | None = None
    stage_timeout_s: float | None = None
    out_root: Path = Path("reports")
    baseline: Path | None = None
    fail_on: tuple[str, ...] = ()
    allow_mismatch: bool = False
    summary: Path | None = None
    junit: Path | None = None
    command: str = field(default_factory=lambda: shlex.join(["profgen", *sys.argv[1:]]))

    def job(self, key: str, backend: str | None = None, batch: int | None = None) -> StageJob:
        """The worker job of stage `key` (`batch` set: a batch-size point, never profiled)."""
        stage = self.study.stage(key)
        timeout = self.stage_timeout_s or stage.timeout_s or defaults.STAGE_TIMEOUT_S
        return StageJob(
            study=self.study,
            stage=stage,
            items=self.items,
            repeat=self.repeat,
            warmup=self.warmup,
            backend=self.backend if backend is None else backend,
            metrics=self.metrics if batch is None else False,
            batch=batch,
            data=self.data,
            model_file=self.model_file,
            timeout_s=timeout,
            profiled_repeats=stage.profiled_repeats or defaults.PROFILED_REPEATS,
        )

    @property
    def uses_gpu(self) -> bool:
        """Whether any chosen stage runs on the GPU (a CPU-only study needs no CUDA device)."""
        return any(self.study.stage(key).uses_gpu for key in self.stages)


def check_settings(settings: SweepSettings) -> SweepSettings:
    """Refuse what cannot work, before anything runs. Returns `settings`.

    Raises: UsageError for an unknown stage, a duplicate, a missing or unreadable --data file
    (or a study that reads none), --fail-on without --baseline, and outputs that are
    directories, not files, or the baseline itself.
    """
    if not settings.stages:
        raise UsageError(f"study {settings.study.name} has no stages to run")
    for key in settings.stages:
        settings.study.stage(key)  # UsageError naming the valid stages
    if len(set(settings.stages)) != len(settings.stages):
        raise UsageError(f"--stages names a stage twice: {','.join(settings.stages)}")
    if settings.data is not None:
        if not settings.study.reads_data:
            raise UsageError(f"study {settings.study.name} reads no --data file")
        _check_data(settings.data)
    if settings.model_file is not None:
        if not settings.study.reads_model:
            raise UsageError(f"study {settings.study.name} reads no --onnx model file")
        _check_data(settings.model_file, "--onnx")
    if settings.fail_on and settings.baseline is None:
        raise UsageError("--fail-on needs --baseline (a run directory or a baseline file)")
    from profiler.render.outputs import check_ci_outputs, run_files

    baseline = run_files(settings.baseline) if settings.baseline else []
    check_ci_outputs(settings.summary, settings.junit, baseline)
    if settings.out_root.exists() and not settings.out_root.is_dir():
        raise UsageError(f"--out {settings.out_root}: exists and is not a directory")
    return settings


def _check_data(path: Path, flag: str = "--data") -> None:
    """A --data (or --onnx) file must be a readable regular file (a FIFO would block the
    workers)."""
    import os
    import stat

    try:
        st = os.stat(path)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: {(exc.strerror or str(exc)).lower()}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{flag} {path}: not a regular file")
    if not os.access(path, os.R_OK):
        raise UsageError(f"{flag} {path}: not readable")
