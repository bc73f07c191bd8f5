"""Framework reference: PyTorch eager on the GPU (cuDNN), fp32 with TF32 off."""

from __future__ import annotations

from variants.mobilenetv2.stages.torch_gpu import TorchGpu as _PlanTorchGpu


class TorchGpu(_PlanTorchGpu):
    """PyTorch eager (cuDNN)

    The plan's layers as PyTorch modules built from the ONNX weights (Conv2d, BatchNorm2d in
    eval mode, ReLU, the residual sums, MaxPool2d, AdaptiveAvgPool2d, Linear), run eagerly on
    the GPU in fp32 with TF32 off and cuDNN's autotuner on; one NVTX range per phase (stem,
    each block's conv1, conv2, downsample and tail, head) from module hooks, the input copied
    in and the logits out on every call.
    """
