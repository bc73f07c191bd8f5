"""Framework GPU baseline on pinned input: PyTorch eager with the images in page-locked memory."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler.ranges import range as phase
from variants.lenet.stages.torch_cpu import forward
from variants.lenet.stages.torch_gpu import TorchGpu


def pinned_images(images: np.ndarray) -> tuple[Any, np.ndarray]:
    """(the page-locked torch tensor, a NumPy view of it) holding a copy of `images`; keep the
    tensor alive as long as the view is used."""
    import torch

    tensor = torch.from_numpy(np.ascontiguousarray(images, dtype=np.float32)).pin_memory()
    return tensor, tensor.numpy()


class TorchPinned(TorchGpu):
    """Framework GPU baseline, pinned input

    The same PyTorch eager operators (cuDNN convolutions, cuBLAS linear layers, TF32 off) with
    the images in page-locked memory, as the custom stages from pinned on have them, so the
    31 MB input copy runs at full PCIe speed and the comparison is like for like.
    """

    def host_input(self, images: np.ndarray) -> np.ndarray:
        self._pinned, view = pinned_images(images)
        return view

    def infer(self, images: np.ndarray) -> np.ndarray:
        import torch

        with torch.inference_mode():
            with phase("h2d"):
                x = torch.from_numpy(images).to("cuda", non_blocking=True)
            logits = self.forward(x)
            with phase("d2h"):
                return logits.cpu().numpy()  # a blocking copy: nothing is left in flight

    def forward(self, x: Any) -> Any:
        return forward(x, self._w)
