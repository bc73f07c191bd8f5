"""The known case's method: Im2Col + GEMM for every convolution."""

from __future__ import annotations

from variants.onnxplan.gpu import Im2ColStage


class Im2ColGemm(Im2ColStage):
    """Im2Col + cuBLAS GEMM

    Every Conv unrolled by an Im2Col kernel into a column buffer (channels x taps rows, one
    column per output pixel), then one cuBLAS SGEMM per group and item (CuPy's matmul,
    batched; TF32 off) writes the NCHW output, then a bias kernel; ReLU6 and Add stay separate
    kernels, the classifier is a cuBLAS GEMM. Depthwise convolutions become batches of tiny
    1 x 9 GEMMs: the method's known weak spot. The GEMM orientation is measured: the column
    buffer stored channels x taps by pixels and the weights output channels by taps, so cuBLAS
    (column-major) transposes neither and writes NCHW, is the fastest orientation that writes
    NCHW on the H100 at batch 256 (7.42 ms for the 35 one-group convolutions, against 7.48
    with the weights transposed, 7.50 both and 7.81 the columns); writing the output pixel-major
    takes 6.92 ms but leaves it NHWC, and a transpose back to NCHW would read and write every
    output again (by HBM bandwidth at least 0.7 ms for features.2.conv.0.0's 1.2 GB alone, more
    than the 0.5 ms saved; scripts/gemm_orientation.py).
    """
