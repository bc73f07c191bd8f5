"""Fused epilogues: fewer kernels, fewer passes over device memory."""

from __future__ import annotations

from variants.onnxplan.fused_stages import FusedStage


class Fused(FusedStage):
    """Fused epilogues

    The plan with each ReLU6 folded into the epilogue of the convolution before it and each
    residual Add into the projection convolution's epilogue (it reads the block's input and
    writes the sum once): 52 convolution launches instead of 97 conv, ReLU6 and Add launches,
    still the generic direct-convolution kernel.
    """
