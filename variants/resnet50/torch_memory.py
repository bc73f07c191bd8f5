"""Peak device memory of the torch_gpu stage's forward at a batch size (needs a GPU and torch).

`python -m variants.resnet50.torch_memory 2048` prepares the stage as a sweep does, runs one
forward of that many images (random, normalised-looking) and prints the peak of PyTorch's
allocator and the time of the forward: the check that `--batch 2048` fits an 80 GB GPU.
"""

from __future__ import annotations

import sys
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    import torch

    from variants.resnet50.stages.torch_gpu import TorchGpu
    from variants.resnet50.study import load

    batch = int((sys.argv[1:] if argv is None else argv)[0])
    net = load()
    stage = TorchGpu()
    stage.prepare(net, batch)
    x = stage.host_input(np.random.default_rng(0).standard_normal(
        (batch, *net.plan.input_shape), np.float32))
    for label in ("first (cuDNN autotune)", "second"):
        torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        out = stage.infer(x)
        seconds = time.perf_counter() - start
        peak = torch.cuda.max_memory_allocated() / 2**30
        print(f"torch_gpu batch {batch}, {label} forward: {seconds:.3f} s, peak allocated "
              f"{peak:.1f} GiB, logits {out.shape}, finite {bool(np.isfinite(out).all())}")
    stage.release()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
