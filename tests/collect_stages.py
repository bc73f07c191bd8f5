"""Tiny stages for the collection tests: CPU-only, each one a way a stage can end.

The worker imports them with `--stage-ref collect_stages:Name` (tests put this folder on
PYTHONPATH). They use the LeNet model's float64 reference as their "kernel".
"""

from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np

from profiler import ranges
from variants.base import Stage


class RefStage(Stage):
    key = "ref"
    title = "Reference on the CPU"
    technique = "The float64 reference rounded to float32."
    uses_gpu = False

    def prepare(self, model, batch):
        self.model = model
        self.calls = 0

    def infer(self, images):
        self.calls += 1
        with ranges.range("forward"):
            return self.model.reference(images).astype(np.float32)


class WrongStage(RefStage):
    key = "wrong"
    title = "Wrong logits"

    def infer(self, images):
        out = super().infer(images)
        return out[:, ::-1].copy()  # every class permuted: top-1 changes


class LateWrongStage(RefStage):
    """Right in the warm-up and the first timed call, wrong afterwards."""

    def infer(self, images):
        out = super().infer(images)
        return out if self.calls <= 2 else out * 1.01


class CrashStage(RefStage):
    def infer(self, images):
        raise RuntimeError("illegal memory access in conv1 (simulated)")


class SegfaultStage(RefStage):
    def infer(self, images):
        os.kill(os.getpid(), signal.SIGSEGV)


class ExitStage(RefStage):
    def prepare(self, model, batch):
        sys.stdout.write("about to exit\n")
        sys.stderr.write("prepare gave up: no device memory (simulated)\n")
        sys.exit(3)


class HangStage(RefStage):
    def infer(self, images):
        time.sleep(3600)


class SkipStage(RefStage):
    def unavailable(self):
        return "needs a unicorn, and this machine has none"

    def prepare(self, model, batch):
        raise AssertionError("a skipped stage is never prepared")


class PerImageStage(RefStage):
    """Asks for a short metrics pass, as a per-image stage does."""

    metrics_images = 3
