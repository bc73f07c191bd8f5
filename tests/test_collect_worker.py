"""The worker's pieces in this process: timing, checks, batching, arguments."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from profiler.collect import worker


class Doubler:
    """A stage whose logits are twice its input's first ten values; counts its calls."""

    def __init__(self):
        self.calls = []

    def infer(self, images):
        self.calls.append(len(images))
        return (images.reshape(len(images), -1)[:, :10] * 2).astype(np.float32)


def reference(x):
    return x.reshape(len(x), -1)[:, :10].astype(np.float64) * 2


def test_timed_calls_exclude_after_each_from_the_timing(monkeypatch):
    clock = itertools.count(step=10)
    monkeypatch.setattr(worker.time, "perf_counter_ns", lambda: next(clock))
    flushed = []

    def flush():
        flushed.append(1)
        for _ in range(1000):  # a slow flush: would add 10,000 to a call's time if inside
            next(clock)

    x = np.random.default_rng(0).random((7, 1, 4, 4)).astype(np.float32) + 1
    stage = Doubler()
    checks = worker.Checks(reference(x))
    times = worker.timed_calls(stage, x, 3, "profiling", 2, "m:s", lambda: None, checks, flush)
    assert times == [10, 10] and len(flushed) == 2
    assert stage.calls == [3, 3, 1, 3, 3, 1]  # 7 images, 3 per call, twice
    assert checks.calls == 2 and not checks.failures


def test_infer_all_batches_and_concatenates():
    x = np.arange(5 * 16, dtype=np.float32).reshape(5, 1, 4, 4)
    stage = Doubler()
    out = worker.infer_all(stage, x, 2)
    assert stage.calls == [2, 2, 1] and np.array_equal(out, reference(x).astype(np.float32))
    assert worker.infer_all(Doubler(), x, 5).shape == (5, 10)


def test_checks_keep_the_worst_and_the_first_failure():
    ref = np.eye(3, 10) * 10 + 1
    checks = worker.Checks(ref)
    checks.add(ref.astype(np.float32), "warm-up 1")
    checks.add((ref * 1.5).astype(np.float32), "timed call 1")
    checks.add((ref * 1.01).astype(np.float32), "timed call 2")
    assert checks.max_rel_err == pytest.approx(0.5)
    assert checks.reason().startswith("timed call 1: max relative error 0.5")
    assert checks.reason().endswith("(and 1 more of 3 checked calls)")


def test_arguments():
    args = worker.parse_args(
        [
            "--model",
            "lenet",
            "--stage",
            "pinned",
            "--images",
            "8",
            "--passes",
            "timed,profiled",
            "--out",
            "o",
            "--result",
            "r.json",
        ]
    )
    assert args.passes == ["timed", "profiled"] and args.tracer == "none" and args.timeout == 0
    with pytest.raises(SystemExit):
        worker.parse_args(
            [
                "--model",
                "m",
                "--stage",
                "s",
                "--images",
                "1",
                "--passes",
                "fast",
                "--out",
                "o",
                "--result",
                "r",
            ]
        )
