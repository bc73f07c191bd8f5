"""Framework GPU, compiled: the PyTorch forward through torch.compile (Inductor), pinned input."""

from __future__ import annotations

from typing import Any

from variants.lenet.stages.torch_cpu import forward, torch_weights
from variants.lenet.stages.torch_pinned import TorchPinned


class TorchCompile(TorchPinned):
    """Framework GPU, torch.compile

    The same PyTorch forward compiled by torch.compile (TorchInductor: fused Triton kernels
    around the cuDNN convolutions and cuBLAS products, TF32 off) on page-locked input, compiled
    during the untimed warm-up calls, so the timed calls measure the compiled code.
    """

    def unavailable(self) -> str | None:
        import importlib.util

        import torch

        if not hasattr(torch, "compile"):
            return f"torch {torch.__version__} has no torch.compile"
        if importlib.util.find_spec("triton") is None:
            return "torch.compile needs Triton on the GPU, and it is not installed"
        return None

    def prepare(self, model: Any, batch: int) -> None:
        import torch

        self._w = torch_weights(model.weights, "cuda")
        self._compiled = torch.compile(forward)

    def forward(self, x: Any) -> Any:
        return self._compiled(x, self._w)
