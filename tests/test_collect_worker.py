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


QUANTISED_STUDY = '''
import numpy as np
from profiler.study import Compare, Stage, Study

STUDY = Study("coarse", title="Coarse input", unit="rows",
              inputs=lambda n: np.random.default_rng(0).random((n, 8)).astype(np.float32),
              reference=lambda x: np.tanh(x.astype(np.float64)),
              compare=Compare(rtol=1e-6, atol=1e-7))


def to_format(x):
    return (np.rint(x * 4) / 4).astype(np.float32)  # what a 2-bit format keeps


class Coarse(Stage):
    """Input in a coarse format

    The input is stored in quarters and the stage computes on what it stored."""
    def infer(self, x):
        return np.tanh(to_format(x))


class CoarseChecked(Coarse):
    """Input in a coarse format, checked on it

    The same, and the stage names its input format, so it is checked on the same values."""
    def reference_input(self, x):
        return to_format(x)


class Exact(Stage):
    """Input format that holds the input

    A format that keeps every value."""
    def reference_input(self, x):
        return x.copy()

    def infer(self, x):
        return np.tanh(x)


STUDY.add(Coarse, key="coarse", runtime="cpu")
STUDY.add(CoarseChecked, key="checked", runtime="cpu")
STUDY.add(Exact, key="exact", runtime="cpu")
'''


@pytest.mark.parametrize(
    ("key", "status", "note"),
    [
        ("coarse", "FAIL", None),
        ("checked", "PASS", "computed on the input as the stage's own input format holds it"),
        ("exact", "PASS", "the stage's own input format holds the input exactly"),
    ],
)
def test_a_stage_is_checked_on_its_own_input_format(tmp_path, key, status, note):
    study = tmp_path / "coarse_study.py"
    study.write_text(QUANTISED_STUDY)
    args = worker.parse_args(
        [
            "run",
            "--study",
            str(study),
            "--stage",
            key,
            "--items",
            "16",
            "--repeat",
            "2",
            "--profiled-repeats",
            "1",
            "--out",
            str(tmp_path / "o"),
            "--result",
            str(tmp_path / "r.json"),
        ]
    )
    result = worker.run(args)
    assert result["status"] == status, result["reason"]
    notes = " ".join(result["notes"])
    assert (note in notes) if note else "reference" not in notes
