"""The case exactly: the tails of res3.2-res3.4 as one fused kernel, nothing else changed."""

from __future__ import annotations

from variants.onnxplan.gemm_stages import FusedGemmStage

#: the phases the case fused: Conv+BN+Add+ReLU of res3.2, res3.3 and res3.4
RES3_TAILS = frozenset({"res3.2/tail", "res3.3/tail", "res3.4/tail"})


class FuseRes3(FusedGemmStage):
    """Fused tail of res3.2-3.4

    The BatchNorm-folded stage with the Conv+BN+Add+ReLU tail of res3.2, res3.3 and res3.4
    (a 1x1 convolution 128 -> 512 channels on 28 x 28) computed by one hand-written kernel:
    a tiled SGEMM over the whole batch's pixels (128 x 128 output tiles, 8-deep k slices
    double-buffered in shared memory, 8 x 8 outputs a thread, fp32 FMA) that adds the bias
    and the block's input and applies ReLU before its single write. Every other phase
    launches exactly the kernels of bn_folded.
    """

    fused_phases = RES3_TAILS
