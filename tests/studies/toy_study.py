"""A CPU-only study for end-to-end tests of the sweep: a stage that computes the reference
(PASS) and one that permutes it (FAIL). Run through its file: `profgen sweep
tests/studies/toy_study.py`."""

from __future__ import annotations

import numpy as np

from profiler import ranges
from profiler.study import Compare, Study

STUDY = Study(
    "toy",
    title="CPU-only toy study",
    unit="rows",
    inputs=lambda n: np.random.default_rng(0).standard_normal((n, 8)).astype(np.float32),
    reference=lambda x: np.tanh(x.astype(np.float64)),
    compare=Compare(rtol=1e-5, atol=1e-6, topk=1),
    default_items=24,
    layers=lambda model: [{"node": "tanh", "op": "Tanh", "kind": "activation", "in_shape": "8",
                           "out_shape": "8", "flops": 8, "bytes": 64, "weight_bytes": 0}],
)


@STUDY.stage(runtime="cpu", role="baseline")
def ref(x):
    """Reference on the CPU

    tanh in float32, NumPy.
    """
    with ranges.range("tanh"):
        return np.tanh(x)


@STUDY.stage(runtime="cpu")
def wrong(x):
    """Wrong outputs

    Every row reversed.
    """
    return np.tanh(x)[:, ::-1].copy()
