"""Finding studies and learning their stages, from the parent process.

Built-in and third-party studies register in the `profgen.studies` entry-point group (name =
`module:ATTRIBUTE` of a `profiler.study.Study`). A user's own study is named by its file,
`path/to/study.py[:NAME]`, or by `package.module:NAME`. The parent never imports a study: it
asks a worker process to describe it (`python -m profiler.collect.worker describe`), as JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from profiler.collect.harness import EVENT_PREFIX
from profiler.collect.loading import split_ref
from profiler.errors import EXIT_USAGE, UsageError

ENTRY_POINT_GROUP = "profgen.studies"
DESCRIBE_TIMEOUT_S = 300.0
#: building a study's model (MobileNetV2: ~20 s on two cores, ResNet-50: longer)
MODEL_FILE_TIMEOUT_S = 900.0
ERROR_PREFIX = "profgen: error: "


@dataclass(frozen=True)
class StageInfo:
    """A stage as its study describes it (see `profiler.study.StageSpec.describe`)."""

    key: str
    title: str
    technique: str
    role: str
    runtime: str
    uses_gpu: bool
    needs: tuple[str, ...] = ()
    profiled_repeats: int | None = None
    ncu_items: int | None = None
    timeout_s: float | None = None
    compare: str | None = None


@dataclass(frozen=True)
class StudyInfo:
    """A study as its worker described it, and the reference that loads it again."""

    ref: str
    name: str
    title: str
    unit: str
    version: str
    default_items: int
    reads_data: bool
    compare: str
    stages: tuple[StageInfo, ...]
    reads_model: bool = False
    default_repeat: int | None = None

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(s.key for s in self.stages)

    def stage(self, key: str) -> StageInfo:
        """The stage `key`. Raises: UsageError naming the valid keys."""
        for info in self.stages:
            if info.key == key:
                return info
        choices = ", ".join(self.keys) or "none"
        raise UsageError(f"unknown stage {key!r} of study {self.name}; choose from: {choices}")

    def order(self, key: str) -> int:
        return self.keys.index(key)


def entry_points() -> dict[str, str]:
    """Installed studies: entry-point name -> `module:ATTRIBUTE`."""
    found = metadata.entry_points(group=ENTRY_POINT_GROUP)
    return {ep.name: ep.value for ep in sorted(found, key=lambda ep: ep.name)}


def resolve(text: str) -> str:
    """The reference a worker loads `text` by: an installed study's `module:ATTRIBUTE`, an
    absolute `path.py[:NAME]`, or `module:NAME` as given.

    Raises: UsageError for an unknown name or a study file that does not exist.
    """
    head, attr, is_path = split_ref(text)
    if is_path:
        path = Path(head).expanduser().resolve()
        if not path.is_file():
            raise UsageError(f"study file {head}: not found")
        return f"{path}:{attr}" if attr else str(path)
    if attr:
        return text
    known = entry_points()
    if text not in known:
        names = ", ".join(known) or "none installed"
        raise UsageError(
            f"unknown study {text!r}; installed: {names}; or give a study file (path/to/study.py)"
        )
    return known[text]


def describe(
    text: str, timeout: float = DESCRIBE_TIMEOUT_S, model_file: Path | None = None
) -> StudyInfo:
    """Resolve `text` and ask a worker to describe the study (after loading its model from
    `model_file` when given, so a bad model file is refused before any stage runs).

    Raises: UsageError when the study cannot be loaded (its import fails, it holds no Study),
    with the last line of the worker's error output and where the whole of it was saved;
    the worker's own one-line error when the model file is refused.
    """
    ref = resolve(text)
    cmd = [sys.executable, "-m", "profiler.collect.worker", "describe", "--study", ref]
    cmd += ["--model", str(model_file)] if model_file is not None else []
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UsageError(f"study {text}: describing it took over {timeout:g} s") from None
    payload = _study_event(done.stdout)
    if done.returncode != 0 or payload is None:
        _raise_worker_error(done)
        raise UsageError(_load_failure(text, done))
    return study_info(payload)


def model_file(text: str, timeout: float = MODEL_FILE_TIMEOUT_S) -> Path:
    """The path of the study's model file, built by a worker first if the study builds it.

    Raises: UsageError when the study cannot be loaded or declares no model file.
    """
    ref = resolve(text)
    cmd = [sys.executable, "-m", "profiler.collect.worker", "model-file", "--study", ref]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UsageError(f"study {text}: building its model took over {timeout:g} s") from None
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(EVENT_PREFIX):
            event = json.loads(line[len(EVENT_PREFIX) :])
            if event.get("event") == "model_file":
                return Path(event["path"])
    _raise_worker_error(done)
    raise UsageError(_load_failure(text, done))


def _raise_worker_error(done: subprocess.CompletedProcess[str]) -> None:
    """Raise the worker's own one-line usage error (`profgen: error: ...`, exit 2), if any."""
    lines = done.stderr.strip().splitlines()
    if done.returncode == EXIT_USAGE and len(lines) == 1 and lines[0].startswith(ERROR_PREFIX):
        raise UsageError(lines[0][len(ERROR_PREFIX) :])


def _study_event(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.splitlines()):
        if line.startswith(EVENT_PREFIX):
            event = json.loads(line[len(EVENT_PREFIX) :])
            if event.get("event") == "study":
                return dict(event["study"])
    return None


def _load_failure(text: str, done: subprocess.CompletedProcess[str]) -> str:
    from profiler.collect.process import last_error_line
    from profiler.crashlog import write_log

    output = f"$ {' '.join(done.args)}\n{done.stdout}{done.stderr}"
    log = write_log("study", output)
    why = last_error_line(done.stderr) or f"exit status {done.returncode}"
    if why.startswith("profiler.errors.UsageError: "):
        why = why.split(": ", 1)[1]
    return f"cannot load study {text}: {why} (full output: {log})"


def study_info(payload: dict[str, Any]) -> StudyInfo:
    """A StudyInfo from a worker's description."""
    stages = tuple(
        StageInfo(**{**s, "needs": tuple(s.get("needs", ()))}) for s in payload["stages"]
    )
    fields = {
        k: payload[k] for k in StudyInfo.__dataclass_fields__ if k != "stages" and k in payload
    }
    return StudyInfo(**fields, stages=stages)


def list_studies() -> list[StudyInfo]:
    """Every installed study, described (a study that cannot be loaded raises)."""
    return [describe(name) for name in entry_points()]
