"""Framework CPU baseline: PyTorch on the CPU."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from profiler.ranges import range as phase
from profiler.study import Stage


def forward(x: Any, w: Mapping[str, Any]) -> Any:
    """LeNet-5 through torch.nn.functional, one named phase per layer."""
    import torch.nn.functional as F

    with phase("conv1"):
        x = F.relu(F.conv2d(x, w["conv1.weight"], w["conv1.bias"]))
    with phase("pool1"):
        x = F.max_pool2d(x, 2)
    with phase("conv2"):
        x = F.relu(F.conv2d(x, w["conv2.weight"], w["conv2.bias"]))
    with phase("pool2"):
        x = F.max_pool2d(x, 2).flatten(1)
    with phase("fc1"):
        x = F.relu(F.linear(x, w["fc1.weight"], w["fc1.bias"]))
    with phase("fc2"):
        x = F.relu(F.linear(x, w["fc2.weight"], w["fc2.bias"]))
    with phase("fc3"):
        return F.linear(x, w["fc3.weight"], w["fc3.bias"])


def torch_weights(weights: Mapping[str, np.ndarray], device: str) -> dict[str, Any]:
    """Every weight as a float32 torch tensor on `device`, with TF32 turned off (it would put
    the logits about 1e-3 from the float64 reference)."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return {
        k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)).to(device)
        for k, v in weights.items()
    }


class TorchCpu(Stage):
    """Framework CPU baseline

    PyTorch's own CPU operators (conv2d, max_pool2d, linear) on all the machine's cores: the
    reference point a user gets without writing any GPU code.
    """

    def prepare(self, model: Any, batch: int) -> None:
        self._w = torch_weights(model.weights, "cpu")

    def infer(self, images: np.ndarray) -> np.ndarray:
        import torch

        x = torch.from_numpy(np.ascontiguousarray(images, dtype=np.float32))
        with torch.inference_mode():
            return forward(x, self._w).numpy()
