"""What the worker does to a stage, pass by pass: warm-ups, timed calls, the profiled pass under
a tracer, the metrics call, and the correctness check of every call.

Every call runs in the stage range `<study>:<stage>` and is timed by the host clock between two
synchronisations of the stage's runtime (`profiler.collect.runtimes`). A pass's calls run back to
back: each call's outputs are copied aside and checked after the pass's last call, because a
check between timed calls leaves the GPU idle long enough (milliseconds for 10,000 LeNet images)
to slow the next call (a 10 ms gap before each call moved LeNet's one_kernel from 0.70 to 0.89 ms
on an H100). Every call is still checked; when the outputs of a pass would pass `HELD_BYTES`,
its calls are checked as they come, as before, and the run's notes say so.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from profiler import ranges
from profiler.study import Compare

EVENT_PREFIX = "@@profgen "
#: the most bytes of outputs held for checking after a pass's last call
HELD_BYTES = 256 * 1024 * 1024
#: how the staged table's times are taken (run.json's settings.timing)
TIMING = (
    "host clock around each call, between two synchronisations; the repeats run back to back "
    "and every call's outputs are checked after the last timed repeat"
)


def emit(event: str, **extra: Any) -> None:
    """Tell the runner what the worker is doing (one machine-readable stdout line)."""
    sys.stdout.write(EVENT_PREFIX + json.dumps({"event": event, **extra}) + "\n")
    sys.stdout.flush()


@dataclass
class Call:
    """How to call one stage: its instance, its input, items per `infer` call, the range name
    and the runtime that synchronises it."""

    stage: Any
    x: np.ndarray
    batch: int
    name: str
    runtime: Any


def infer_all(stage: Any, x: np.ndarray, batch: int) -> np.ndarray:
    """Outputs for every item, `batch` items per `infer` call."""
    if batch >= len(x):
        return np.asarray(stage.infer(x))
    return np.concatenate(
        [np.asarray(stage.infer(x[i : i + batch])) for i in range(0, len(x), batch)]
    )


class Checks:
    """The worst correctness verdict over every checked call.

    `add` checks an output now; `hold` keeps a copy of it for `check_held`, so that a pass's
    calls run back to back (a copy, not the array itself: a stage may hand out a buffer that its
    next call overwrites, or a page-locked array its memory pool would otherwise replace by a
    new allocation inside the next timed call).
    """

    def __init__(self, ref: np.ndarray, rule: Compare, held_bytes: int | None = None) -> None:
        self.ref = ref
        self.rule = rule
        self.max_rel_err = 0.0
        self.max_abs_err = 0.0
        self.topk_mismatches: int | None = None
        self.failures: list[str] = []
        self.calls = 0
        self.held_bytes = HELD_BYTES if held_bytes is None else held_bytes
        self.held: list[tuple[np.ndarray, str]] = []
        self.notes: list[str] = []
        self._between = False  # this pass's outputs are checked as they come

    def add(self, out: np.ndarray, what: str) -> None:
        verdict = self.rule.check(out, self.ref)
        self.calls += 1
        self.max_rel_err = max(self.max_rel_err, verdict.max_rel_err)
        self.max_abs_err = max(self.max_abs_err, verdict.max_abs_err)
        if verdict.topk_mismatches is not None:
            self.topk_mismatches = max(self.topk_mismatches or 0, verdict.topk_mismatches)
        if not verdict.passed:
            self.failures.append(f"{what}: {verdict.reason}")

    def hold(self, out: np.ndarray, what: str, calls_left: int = 1) -> None:
        """Keep a copy of `out` for `check_held`. When it and the `calls_left - 1` outputs still
        to come, as large, would pass `held_bytes`, check it now instead, and every output until
        the next `check_held` (the pass's calls are then checked as they come, and noted)."""
        out = np.asarray(out)
        held = sum(kept.nbytes for kept, _ in self.held)
        if self._between or held + out.nbytes * max(calls_left, 1) > self.held_bytes:
            self._between = True
            note = (
                f"outputs checked between calls, not after the timed repeats: they would "
                f"pass the {self.held_bytes:,} bytes held for checking"
            )
            if note not in self.notes:
                self.notes.append(note)
            self.add(out, what)
            return
        self.held.append((np.array(out, copy=True), what))

    def check_held(self) -> None:
        """Check every held output, in the order the calls ran, and let them go."""
        held, self.held, self._between = self.held, [], False
        for out, what in held:
            self.add(out, what)

    def reason(self) -> str:
        """'' when every call passed, else the first failure and how many calls failed."""
        if not self.failures:
            return ""
        more = len(self.failures) - 1
        return self.failures[0] + (
            f" (and {more} more of {self.calls} checked calls)" if more else ""
        )

    def summary(self) -> dict[str, Any]:
        return {
            "max_rel_err": self.max_rel_err,
            "max_abs_err": self.max_abs_err,
            "topk_mismatches": self.topk_mismatches,
            "checked_calls": self.calls,
            "comparison": self.rule.describe(),
        }


def timed_calls(
    call: Call,
    label: str,
    count: int,
    checks: Checks,
    after_each: Callable[[], None] | None = None,
) -> list[int]:
    """`count` calls back to back, each in the stage range, timed between two
    synchronisations (ns); their outputs are checked after the last one (`Checks.hold`), with
    any a warm-up held before them.

    `after_each` runs after each call, outside its timing (the tracer's flush).
    """
    times = []
    sync = call.runtime.synchronize
    for i in range(count):
        emit(f"{label} {i + 1}/{count}")
        sync()
        t0 = time.perf_counter_ns()
        with ranges.range(call.name):
            out = infer_all(call.stage, call.x, call.batch)
        sync()
        times.append(time.perf_counter_ns() - t0)
        if after_each is not None:
            after_each()
        checks.hold(out, f"{label} call {i + 1}", count - i)
    checks.check_held()
    return times


def warm_up(call: Call, count: int, checks: Checks) -> None:
    """`count` untimed calls; their outputs are held, checked with the next pass's."""
    for i in range(count):
        emit(f"warm-up {i + 1}/{count}")
        checks.hold(infer_all(call.stage, call.x, call.batch), f"warm-up {i + 1}", count - i)
    call.runtime.synchronize()


def profiled_pass(
    call: Call, tracer: str, repeats: int, warmup: int, out_dir: Path, checks: Checks
) -> dict[str, Any]:
    """The profiled repeats under `tracer`; returns their host times and the trace's facts.

    `cupti` traces in-process and writes `cupti.npz` into `out_dir`; `profiler-api` warms up,
    then brackets the repeats with the runtime's profiler start/stop (nsys's capture range);
    `none` only times them.
    """
    info: dict[str, Any] = {"tracer": tracer}
    if tracer == "cupti":
        from profiler.collect.cupti import CuptiTracer

        cupti = CuptiTracer()
        cupti.start()
        # each repeat's records are handed over between repeats, so that cupti-python's slow
        # per-record work (about 8 us a record) does not run on its thread during the next one
        info["profiled_ns"] = timed_calls(call, "profiling", repeats, checks, cupti.flush)
        emit("saving trace")
        cupti.stop()
        info["records"] = cupti.save(out_dir / "cupti.npz")
        info["buffers"] = dict(cupti.paths)
    elif tracer == "profiler-api":
        warm_up(call, max(1, warmup), checks)
        capture = capture_runtime(call.runtime)
        capture.profiler_start()
        info["profiled_ns"] = timed_calls(call, "profiling", repeats, checks)
        capture.profiler_stop()
    else:
        info["profiled_ns"] = timed_calls(call, "profiling", repeats, checks)
    return info


def capture_runtime(runtime: Any) -> Any:
    """The runtime that opens nsys's capture range for a stage: its own, or for a CPU stage
    (whose runtime has no CUDA profiler API) libcudart's, so that nsys still records the
    stage's ranges and its (empty) GPU side instead of writing no report at all."""
    if runtime.uses_gpu:
        return runtime
    from profiler.collect.runtimes import CudartRuntime

    return CudartRuntime()


def metrics_pass(call: Call, checks: Checks) -> None:
    """One warm-up outside the stage range, then the one call ncu's NVTX filter selects."""
    warm_up(call, 1, checks)
    emit("metrics")
    with ranges.range(call.name):
        out = infer_all(call.stage, call.x, call.batch)
    call.runtime.synchronize()
    checks.check_held()
    checks.add(out, "metrics call")
