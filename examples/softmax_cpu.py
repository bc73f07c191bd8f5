"""The softmax study's CPU-only twin, NumPy variants (no GPU needed):
`profgen sweep examples/softmax_cpu.py --backend none`."""

import numpy as np

from profiler.ranges import range as phase
from profiler.study import Compare, Study

COLS = 1000


def reference(x):
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


study = Study(
    "softmax_cpu",
    title="Row-wise softmax on the CPU",
    unit="rows",
    default_items=2048,
    inputs=lambda n: np.random.default_rng(0).standard_normal((n, COLS), dtype=np.float32),
    reference=reference,
    compare=Compare(rtol=1e-5, atol=1e-9, scale="row", topk=1),
)


@study.stage(role="baseline", runtime="cpu")
def row_loop(x):
    """One row at a time

    A Python loop over the rows, three NumPy passes per row."""
    out = np.empty_like(x)
    for i, row in enumerate(x):
        e = np.exp(row - row.max())
        out[i] = e / e.sum()
    return out


@study.stage(runtime="cpu")
def vectorised(x):
    """Vectorised

    The same three passes over the whole array at once, in float32."""
    with phase("exp"):
        e = np.exp(x - x.max(axis=1, keepdims=True))
    with phase("normalise"):
        return e / e.sum(axis=1, keepdims=True)


@study.stage(runtime="cpu")
class InPlace:
    """In place

    The output buffer is allocated once in `prepare`, and every pass writes into it."""

    def prepare(self, model, batch):
        self.out = np.empty((batch, COLS), dtype=np.float32)

    def infer(self, x):
        out = self.out[: len(x)]
        np.subtract(x, x.max(axis=1, keepdims=True), out=out)
        np.exp(out, out=out)
        out /= out.sum(axis=1, keepdims=True)
        return out.copy()


@study.stage(role="framework", runtime="cpu", needs=("scipy",))
def scipy_softmax(x):
    """SciPy

    scipy.special.softmax along the rows."""
    from scipy.special import softmax

    return softmax(x, axis=1)
