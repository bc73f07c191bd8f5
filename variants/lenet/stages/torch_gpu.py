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
        import torch

        self._w = torch_weights(model.weights, "cuda")
        self._in = torch.empty((batch, 1, 28, 28), dtype=torch.float32, device="cuda")
        self._out = torch.empty((batch, 10), dtype=torch.float32, device="cuda")

    def serve_buffers(self) -> tuple[Any, Any]:
        """The serving stream protocol (profiler.collect.serve.engines): device images and
        logits as torch tensors, `batch` of each; torch eager, or a torch CUDA graph when the
        server captures `enqueue`."""
        return self._in, self._out

    def enqueue(self, n: int, stream: Any) -> None:
        """The forward pass over the first `n` images on `stream` (a torch stream)."""
        import torch

        with torch.cuda.stream(stream), torch.no_grad():
            self._out[:n].copy_(forward(self._in[:n], self._w))

    def infer(self, images: np.ndarray) -> np.ndarray:
        import torch

        with torch.inference_mode():
            with phase("h2d"):
                x = torch.from_numpy(np.ascontiguousarray(images, dtype=np.float32)).to("cuda")
            logits = forward(x, self._w)
            with phase("d2h"):
                return logits.cpu().numpy()  # a blocking copy: nothing is left in flight
