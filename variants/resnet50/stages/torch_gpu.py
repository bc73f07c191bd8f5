"""Framework reference: PyTorch eager on the GPU (cuDNN), fp32 with TF32 off."""

from __future__ import annotations

from typing import Any

import numpy as np

from variants.mobilenetv2.stages.torch_gpu import TorchGpu as _PlanTorchGpu


class TorchGpu(_PlanTorchGpu):
    """PyTorch eager (cuDNN)

    The plan's layers as PyTorch modules built from the ONNX weights (Conv2d without bias,
    BatchNorm2d in eval mode, ReLU, the residual sums, MaxPool2d, AdaptiveAvgPool2d, Linear),
    run eagerly on the GPU in fp32 with TF32 off and cuDNN's autotuner on, each activation
    freed after its last use; one NVTX range per phase (stem, each block's conv1, conv2,
    downsample and tail, head) from module hooks. The images are given in page-locked host
    memory, as to the custom stages, and copied in, the logits copied out, on every call.
    """

    def host_input(self, x: np.ndarray) -> np.ndarray:
        """The images in page-locked memory (torch's pinned allocator), seen as NumPy."""
        import torch

        self._pinned: Any = torch.empty(x.shape, dtype=torch.float32, pin_memory=True)
        host = self._pinned.numpy()
        host[...] = x
        return host
