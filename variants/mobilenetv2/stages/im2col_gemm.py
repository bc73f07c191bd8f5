"""The known case's method: Im2Col + GEMM for every convolution."""

from __future__ import annotations

from variants.onnxplan.gpu import Im2ColStage


class Im2ColGemm(Im2ColStage):
    """Im2Col + cuBLAS GEMM

    Every Conv unrolled by an Im2Col kernel into a column buffer (channels x taps rows, one
    column per output pixel), then one cuBLAS SGEMM per group and item (CuPy's matmul,
    batched; TF32 off) writes the NCHW output, then a bias kernel; ReLU6 and Add stay separate
    kernels, the classifier is a cuBLAS GEMM. Depthwise convolutions become batches of tiny
    1 x 9 GEMMs: the method's known weak spot.
    """
