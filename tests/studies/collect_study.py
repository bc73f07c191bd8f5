"""A CPU-only study for the collection tests: each stage is one way a stage can end.

Items are rows of 10 "logits"; the reference is their float64 copy, checked with a row-scaled
allclose and top-1 agreement, like LeNet's rule.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np

from profiler import ranges
from profiler.study import Compare, Stage, Study


def make_rows(n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    return rng.standard_normal((n, 10)).astype(np.float32)


STUDY = Study(
    "collect",
    title="Collection test study",
    unit="rows",
    inputs=make_rows,
    reference=lambda x: x.astype(np.float64),
    compare=Compare(rtol=1e-4, atol=0.0, scale="row", topk=1),
    default_items=12,
)


@STUDY.stage(key="ref", runtime="cpu", role="baseline")
class RefStage(Stage):
    """Reference on the CPU

    The float64 reference rounded to float32.
    """

    def prepare(self, model, batch):
        self.calls = 0

    def infer(self, x):
        self.calls += 1
        with ranges.range("forward"):
            return x.astype(np.float64).astype(np.float32)


@STUDY.stage(key="wrong", runtime="cpu")
class WrongStage(RefStage):
    """Wrong outputs"""

    def infer(self, x):
        return super().infer(x)[:, ::-1].copy()  # every row reversed: top-1 changes


@STUDY.stage(key="late_wrong", runtime="cpu")
class LateWrongStage(RefStage):
    """Right in the warm-up and the first timed call, wrong afterwards."""

    def infer(self, x):
        out = super().infer(x)
        return out if self.calls <= 2 else out * 1.01


@STUDY.stage(key="crash", runtime="cpu")
class CrashStage(RefStage):
    def infer(self, x):
        raise RuntimeError("illegal memory access in conv1 (simulated)")


@STUDY.stage(key="segfault", runtime="cpu")
class SegfaultStage(RefStage):
    def infer(self, x):
        os.kill(os.getpid(), signal.SIGSEGV)


@STUDY.stage(key="exit", runtime="cpu")
class ExitStage(RefStage):
    def prepare(self, model, batch):
        sys.stdout.write("about to exit\n")
        sys.stderr.write("prepare gave up: no device memory (simulated)\n")
        sys.exit(3)


@STUDY.stage(key="hang", runtime="cpu")
class HangStage(RefStage):
    def infer(self, x):
        time.sleep(3600)


@STUDY.stage(key="skip", runtime="cpu")
class SkipStage(RefStage):
    def unavailable(self):
        return "needs a unicorn, and this machine has none"

    def prepare(self, model, batch):
        raise AssertionError("a skipped stage is never prepared")


@STUDY.stage(key="needs_missing", runtime="cpu", needs=("no_such_module_profgen",))
def needs_missing(x):
    return x


@STUDY.stage(key="per_item", runtime="cpu", ncu_items=3, profiled_repeats=2)
def per_item(x):
    """Per-item stage: asks for a short metrics pass and two profiled repeats"""
    return x.astype(np.float32)


@STUDY.stage(key="fp16", runtime="cpu", compare=Compare(rtol=1e-2, atol=0.0, scale="row"))
def fp16(x):
    """Half precision, held to a looser rule of its own"""
    return x.astype(np.float16).astype(np.float32)


@STUDY.stage(key="fp16_strict", runtime="cpu")
def fp16_strict(x):
    """Half precision under the study's rule: fails"""
    return x.astype(np.float16).astype(np.float32)
