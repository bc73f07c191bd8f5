"""Half precision where it is safe, on the graph path: tensor-core GEMMs, fp32 accumulation."""

from __future__ import annotations

from variants.onnxplan.half import HalfGraphStage

#: The first layer run in half, measured (tests/test_mobilenetv2_fp16.py and the study's
#: HALF_RULE): on this seeded MobileNetV2 each half rounding of an early activation is
#: amplified by the layers after it, so half from the stem moves the logits by up to 14% (CPU
#: twins) or 19% (H100) of the row maximum, as much as a one-element bug does; half from
#: features.2 reaches 4%, from features.4 2%, from features.7 1.1% and from features.11 (the
#: layers features.11 to 18 and the classifier) 0.6% (CPU) and 0.71% (H100, 256 images).
HALF_FROM = "features.11.conv.0.0"


class Fp16(HalfGraphStage):
    """Half precision, tensor cores

    The graph stage with features.11 to 18 and the classifier in half precision, where
    rounding stays well below what a one-element bug moves (HALF_FROM): their activations
    stored as IEEE half (the block input rounded once), the 1x1 convolutions and the
    classifier on the tensor cores (mma.sync m16n8k16, half inputs, fp32 accumulation, 64 x
    64 output tiles of four warps) with bias, residual and ReLU6 applied in fp32 before the one
    rounding to half, the 3x3 depthwise convolutions and the average pool reading and writing
    half with fp32 arithmetic, the logits written in fp32; the earlier blocks run the tuned
    fp32 kernels.
    """

    half_from = HALF_FROM
