"""Framework reference: PyTorch eager on the GPU (cuDNN), fp32 with TF32 off."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler.ranges import range as phase
from profiler.study import Stage


class TorchGpu(Stage):
    """PyTorch eager (cuDNN)

    The plan's layers as PyTorch modules built from the ONNX weights (Conv2d, Hardtanh for
    ReLU6, the residual sums, AdaptiveAvgPool2d, Linear), run eagerly on the GPU in fp32 with
    TF32 off and cuDNN's autotuner on; an NVTX range per ONNX node from module hooks, the
    input copied in and the logits out on every call.
    """

    def prepare(self, model: Any, batch: int) -> None:
        import torch

        from variants.onnxplan.torch_plan import PlanModule

        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
        self._net = PlanModule(model.plan).to("cuda").eval()

    def infer(self, images: np.ndarray) -> np.ndarray:
        import torch

        with torch.inference_mode():
            with phase("h2d"):
                x = torch.from_numpy(np.ascontiguousarray(images, np.float32)).to("cuda")
            logits = self._net(x)
            with phase("d2h"):
                return logits.float().cpu().numpy()  # float32 logits from a half stage too

    def release(self) -> None:
        vars(self).clear()
