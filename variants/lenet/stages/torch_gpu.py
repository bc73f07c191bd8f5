"""Framework GPU baseline: PyTorch on the GPU (cuDNN)."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler.ranges import range as phase
from profiler.study import Stage
from variants.lenet.stages.torch_cpu import forward, torch_weights


class TorchGpu(Stage):
    """Framework GPU baseline

    The same PyTorch operators on the GPU (cuDNN convolutions, cuBLAS linear layers, TF32 off),
    the input copied in from the pageable NumPy array the caller holds and the logits copied
    back out on every call.
    """

    def prepare(self, model: Any, batch: int) -> None:
        self._w = torch_weights(model.weights, "cuda")

    def infer(self, images: np.ndarray) -> np.ndarray:
        import torch

        with torch.inference_mode():
            with phase("h2d"):
                x = torch.from_numpy(np.ascontiguousarray(images, dtype=np.float32)).to("cuda")
            logits = forward(x, self._w)
            with phase("d2h"):
                return logits.cpu().numpy()  # a blocking copy: nothing is left in flight

