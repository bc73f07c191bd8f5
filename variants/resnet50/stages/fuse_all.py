"""The same fusion everywhere."""

from __future__ import annotations

from variants.onnxplan.gemm_stages import FusedGemmStage


class FuseAll(FusedGemmStage):
    """Fused everywhere

    Every convolution through the fused SGEMM: the tail of every bottleneck (bias, residual
    and ReLU in the epilogue), conv1 and conv2 of every block and the stem with bias and ReLU
    fused, the downsample with its bias; 1x1 stride-1 convolutions straight on the NCHW input,
    the 3x3, 7x7 and strided 1x1 ones as an implicit GEMM (the kernel gathers each input tap
    itself: no Im2Col buffer). The classifier is the same kernel; the pools keep theirs.
    """
