"""A kernel per kind of layer, on the fused plan."""

from __future__ import annotations

from variants.onnxplan.fused_stages import SpecialisedStage


class Specialised(SpecialisedStage):
    """Specialised kernels

    On the fused plan, each kind of layer gets its own kernel, all in the NCHW layout: every
    1x1 convolution (and the classifier) is one tiled SGEMM over the whole batch's pixels
    (64 x 64 output tiles, 16-deep k slices in shared memory, 4 x 4 outputs a thread, bias,
    residual and ReLU6 in the epilogue), reading and writing NCHW directly; every 3x3
    depthwise convolution (stride 1 or 2) computes a 32 x 8 output tile from an input tile
    staged in shared memory, its 9 weights in registers; the 3-channel stem keeps the direct
    kernel.
    """
