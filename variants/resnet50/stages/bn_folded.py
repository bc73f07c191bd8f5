"""BatchNorm folded into the convolutions' weights and bias."""

from __future__ import annotations

from variants.onnxplan.gemm_stages import FoldedStage


class BnFolded(FoldedStage):
    """BatchNorm folded

    Each BatchNormalization folded into the convolution before it (weights scaled per output
    channel, the shift a bias; in float64, then rounded to float32): the 53 BatchNorm kernels
    disappear and a bias kernel follows each cuBLAS GEMM instead; the Add and ReLU kernels
    stay.
    """
