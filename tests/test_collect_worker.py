"""The worker's pieces in this process: timing, checks, batching, arguments."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from profiler.collect import harness, runtimes, worker
from profiler.study import Compare


class Doubler:
    """A stage whose outputs are twice its input's first ten values; counts its calls."""

    def __init__(self):
        self.calls = []

    def infer(self, x):
        self.calls.append(len(x))
        return (x.reshape(len(x), -1)[:, :10] * 2).astype(np.float32)


def reference(x):
    return x.reshape(len(x), -1)[:, :10].astype(np.float64) * 2


RULE = Compare(rtol=1e-4, atol=0.0, scale="row", topk=1)


def test_timed_calls_exclude_after_each_from_the_timing(monkeypatch):
    clock = itertools.count(step=10)
    monkeypatch.setattr(harness.time, "perf_counter_ns", lambda: next(clock))
    flushed = []

    def flush():
        flushed.append(1)
        for _ in range(1000):  # a slow flush: would add 10,000 to a call's time if inside
            next(clock)

    x = np.random.default_rng(0).random((7, 1, 4, 4)).astype(np.float32) + 1
    stage = Doubler()
    checks = harness.Checks(reference(x), RULE)
    call = harness.Call(stage, x, 3, "m:s", runtimes.CpuRuntime())
    times = harness.timed_calls(call, "profiling", 2, checks, flush)
    assert times == [10, 10] and len(flushed) == 2
    assert stage.calls == [3, 3, 1, 3, 3, 1]  # 7 items, 3 per call, twice
    assert checks.calls == 2 and not checks.failures


def test_infer_all_batches_and_concatenates():
    x = np.arange(5 * 16, dtype=np.float32).reshape(5, 1, 4, 4)
    stage = Doubler()
    out = harness.infer_all(stage, x, 2)
    assert stage.calls == [2, 2, 1] and np.array_equal(out, reference(x).astype(np.float32))
    assert harness.infer_all(Doubler(), x, 5).shape == (5, 10)


def test_checks_keep_the_worst_and_the_first_failure():
    ref = np.eye(3, 10) * 10 + 1
    checks = harness.Checks(ref, RULE)
    checks.add(ref.astype(np.float32), "warm-up 1")
    checks.add((ref * 1.5).astype(np.float32), "timed call 1")
    checks.add((ref * 1.01).astype(np.float32), "timed call 2")
    assert checks.max_rel_err == pytest.approx(0.5)
    assert checks.reason().startswith("timed call 1: 30 values outside allclose")
    assert checks.reason().endswith("(and 1 more of 3 checked calls)")
    assert checks.summary()["topk_mismatches"] == 0


def test_arguments():
    args = worker.parse_args(
        ["run", "--study", "s.py", "--stage", "pinned", "--items", "8", "--profiled-repeats",
         "5", "--passes", "timed,profiled", "--out", "o", "--result", "r.json"]
    )
    assert args.passes == ["timed", "profiled"] and args.tracer == "none" and args.timeout == 0
    with pytest.raises(SystemExit):
        worker.parse_args(
            ["run", "--study", "m", "--stage", "s", "--items", "1", "--profiled-repeats", "1",
             "--passes", "fast", "--out", "o", "--result", "r"]
        )
    assert worker.parse_args(["describe", "--study", "x.py"]).mode == "describe"


def test_nsys_capture_range_for_a_cpu_stage_goes_through_cudart():
    cpu, torch = runtimes.CpuRuntime(), runtimes.TorchRuntime()
    assert isinstance(harness.capture_runtime(cpu), runtimes.CudartRuntime)
    assert harness.capture_runtime(torch) is torch
