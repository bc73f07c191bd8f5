"""A study that uses only PyTorch: the harness must time, synchronise and profile it through
torch's adapter, with CuPy absent (the GPU test blocks it with tests/studies/no_cupy)."""

from __future__ import annotations

import numpy as np

from profiler.ranges import range as phase
from profiler.study import Compare, Study

STUDY = Study(
    "torch_only",
    title="A torch-only study",
    unit="rows",
    inputs=lambda n: np.random.default_rng(1).standard_normal((n, 256)).astype(np.float32),
    reference=lambda x: np.maximum(x.astype(np.float64), 0.0) * 2.0,
    compare=Compare(rtol=1e-6, atol=1e-7),
    default_items=4096,
)


@STUDY.stage(role="baseline", runtime="torch")
def eager(x):
    """Eager PyTorch

    relu(x) * 2 on the GPU, copies in and out."""
    import torch

    with phase("h2d"):
        t = torch.from_numpy(x).cuda()
    with phase("relu_scale"):
        y = torch.relu(t) * 2
    with phase("d2h"):
        return y.cpu().numpy()


@STUDY.stage(runtime="torch")
class Resident:
    """Device-resident weights

    The same, into an output tensor allocated once in prepare."""

    def prepare(self, model, batch):
        import torch

        self.out = torch.empty((batch, 256), device="cuda")

    def infer(self, x):
        import torch

        t = torch.from_numpy(x).cuda()
        out = self.out[: len(x)]
        torch.clamp(t, min=0, out=out).mul_(2)
        return out.cpu().numpy()
