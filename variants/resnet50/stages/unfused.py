"""The case's baseline: every op its own kernel, each reading and writing device memory."""

from __future__ import annotations

from variants.onnxplan.gemm_stages import SeparateOpsStage


class Unfused(SeparateOpsStage):
    """Unfused: a kernel per op

    Every Conv as an Im2Col kernel into a column buffer then one cuBLAS SGEMM per image
    (CuPy's matmul, batched; TF32 off); a 1x1 stride-1 convolution skips the Im2Col copy and
    multiplies the NCHW input directly. Then BatchNormalization, the residual Add and ReLU,
    each its own elementwise kernel reading and writing device memory; max and average pools
    their own kernels, the classifier a cuBLAS GEMM. The convolutions have no bias: no bias
    kernel. The images in and the logits out through page-locked host memory, as in every
    stage of the study.
    """
