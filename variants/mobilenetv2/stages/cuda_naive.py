"""The custom stages' baseline: one generic kernel per ONNX node."""

from __future__ import annotations

from variants.onnxplan.gpu import PlanStage


class CudaNaive(PlanStage):
    """Naive CUDA, a kernel per node

    One generic direct-convolution kernel (one thread per output element, looping over its
    group's input channels and the kernel taps) for every Conv, one launch per ONNX node;
    ReLU6 and the residual Add as separate elementwise kernels, GlobalAveragePool one thread
    per channel, the classifier one thread per logit. Activations live in a few reused device
    buffers; the input is copied in and the logits out on every call.
    """
