"""Framework GPU, compiled: the PyTorch forward through torch.compile (Inductor), pinned input."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from profiler.ranges import range as phase
from variants.lenet.stages.torch_cpu import torch_weights
from variants.lenet.stages.torch_pinned import TorchPinned


def plain_forward(x: Any, w: Mapping[str, Any]) -> Any:
    """LeNet-5 through torch.nn.functional with no phase ranges inside: TorchDynamo cannot trace
    the NVTX calls of `torch_cpu.forward`'s phases, breaks the graph at each of them, and what
    it then runs are the eager kernels (the first sweeps' traces showed exactly eager's cuDNN
    and elementwise kernels under torch.compile)."""
    import torch.nn.functional as F

    x = F.max_pool2d(F.relu(F.conv2d(x, w["conv1.weight"], w["conv1.bias"])), 2)
    x = F.max_pool2d(F.relu(F.conv2d(x, w["conv2.weight"], w["conv2.bias"])), 2).flatten(1)
    x = F.relu(F.linear(x, w["fc1.weight"], w["fc1.bias"]))
    x = F.relu(F.linear(x, w["fc2.weight"], w["fc2.bias"]))
    return F.linear(x, w["fc3.weight"], w["fc3.bias"])


class TorchCompile(TorchPinned):
    """Framework GPU, torch.compile

    The same PyTorch forward compiled whole by torch.compile (TorchInductor: fused Triton
    kernels around the cuDNN convolutions and cuBLAS products, TF32 off) on page-locked input,
    compiled during the untimed warm-up calls, so the timed calls measure the compiled code.
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
        self._compiled = torch.compile(plain_forward)

    def forward(self, x: Any) -> Any:
        with phase("forward"):
            return self._compiled(x, self._w)
