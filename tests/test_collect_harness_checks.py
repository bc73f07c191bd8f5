"""The harness times a pass's calls back to back and checks every call's outputs after the last
one (or, past the bytes it may hold, between calls, with a note)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from profiler.collect import harness, worker
from profiler.study import Compare

RULE = Compare(rtol=1e-4, atol=0.0, scale="row", topk=1)


class Log:
    """One list of what happened, in order: syncs, calls, checks."""

    def __init__(self):
        self.events = []


class Runtime:
    def __init__(self, log):
        self.log = log

    def synchronize(self):
        self.log.events.append("sync")


class Rule:
    """The comparison rule, logging each check."""

    def __init__(self, log):
        self.log = log

    def check(self, out, ref):
        self.log.events.append("check")
        return RULE.check(out, ref)

    def describe(self):
        return RULE.describe()


class Doubler:
    """Outputs twice the input's first ten values; the calls in `wrong` (1-based) add 1 to one
    value. With `reuse`, every call writes into and returns the same buffer, as a stage with an
    output buffer of its own does."""

    def __init__(self, log, wrong=(), reuse=False):
        self.log, self.wrong, self.reuse = log, set(wrong), reuse
        self.calls = 0
        self.buffer = None

    def infer(self, x):
        self.calls += 1
        self.log.events.append(f"infer {self.calls}")
        out = (x.reshape(len(x), -1)[:, :10] * 2).astype(np.float32)
        if self.calls in self.wrong:
            out[len(x) // 2, 3] += 1
        if not self.reuse:
            return out
        if self.buffer is None:
            self.buffer = np.empty_like(out)
        self.buffer[...] = out
        return self.buffer


def setup(wrong=(), reuse=False, held_bytes=None):
    log = Log()
    x = np.random.default_rng(0).random((6, 1, 4, 4)).astype(np.float32) + 1
    ref = x.reshape(6, -1)[:, :10].astype(np.float64) * 2
    checks = harness.Checks(ref, Rule(log), held_bytes=held_bytes)
    call = harness.Call(Doubler(log, wrong, reuse), x, 6, "m:s", Runtime(log))
    return log, call, checks


def test_calls_run_back_to_back_and_are_checked_after_the_last():
    log, call, checks = setup()
    harness.warm_up(call, 1, checks)
    harness.timed_calls(call, "timed", 3, checks)
    assert log.events == [
        "infer 1", "sync",  # warm-up, held
        "sync", "infer 2", "sync", "sync", "infer 3", "sync", "sync", "infer 4", "sync",
        "check", "check", "check", "check",
    ]
    assert checks.calls == 4 and not checks.failures and not checks.notes


@pytest.mark.parametrize("reuse", [False, True])
def test_the_kth_wrong_output_still_fails(reuse):
    log, call, checks = setup(wrong={3}, reuse=reuse)
    harness.warm_up(call, 1, checks)
    harness.timed_calls(call, "timed", 4, checks)
    assert checks.calls == 5
    assert checks.reason().startswith("timed call 2: 1 values outside allclose")
    assert len(checks.failures) == 1


def test_outputs_past_the_held_bytes_are_checked_between_calls_with_a_note():
    # one call's output is 6 x 10 float32 = 240 bytes: three calls do not fit in 500
    log, call, checks = setup(wrong={2}, held_bytes=500)
    harness.timed_calls(call, "timed", 3, checks)
    assert log.events == [
        "sync", "infer 1", "sync", "check",
        "sync", "infer 2", "sync", "check",
        "sync", "infer 3", "sync", "check",
    ]
    assert checks.calls == 3 and checks.reason().startswith("timed call 2:")
    assert checks.notes == [
        "outputs checked between calls, not after the timed repeats: they would pass the "
        "500 bytes held for checking"
    ]


def test_the_metrics_call_checks_its_warm_up():
    log, call, checks = setup(wrong={1})
    harness.metrics_pass(call, checks)
    assert log.events.count("check") == 2 and checks.reason().startswith("warm-up 1:")
    assert not checks.held


WRONG_STUDY = '''
import numpy as np
from profiler.study import Compare, Stage, Study

STUDY = Study("wrong", title="Wrong once", unit="rows",
              inputs=lambda n: np.random.default_rng(0).random((n, 8)).astype(np.float32),
              reference=lambda x: np.tanh(x.astype(np.float64)),
              compare=Compare(rtol=1e-6, atol=1e-7))


class WrongOnce(Stage):
    """Wrong on one call

    The fourth call (the third timed one, after a warm-up) gives one wrong value."""
    calls = 0

    def infer(self, x):
        WrongOnce.calls += 1
        out = np.tanh(x)
        if WrongOnce.calls == 4:
            out[1, 2] += 0.5
        return out


STUDY.add(WrongOnce, key="wrong", runtime="cpu")
'''


@pytest.mark.parametrize("held", [None, 100])
def test_the_worker_fails_a_stage_wrong_on_one_timed_call(tmp_path, monkeypatch, held):
    if held is not None:
        monkeypatch.setattr(harness, "HELD_BYTES", held)
    study = tmp_path / "wrong_study.py"
    study.write_text(WRONG_STUDY)
    args = worker.parse_args(
        ["run", "--study", str(study), "--stage", "wrong", "--items", "16", "--warmup", "1",
         "--repeat", "4", "--profiled-repeats", "1", "--out", str(tmp_path / "o"),
         "--result", str(tmp_path / "r.json")]
    )
    result = json.loads(json.dumps(worker.run(args)))
    assert result["status"] == "FAIL" and result["checked_calls"] == 5
    assert result["reason"].startswith("timed call 3: 1 values outside allclose")
    held_note = [n for n in result["notes"] if "checked between calls" in n]
    assert bool(held_note) == (held is not None)
