"""Convolution kernel optimisation: Conv1_ReLu and Conv2_ReLu specialised for LeNet's shapes."""

from __future__ import annotations

from variants.lenet.stages._layered import LayeredStage


class ConvOpt(LayeredStage):
    """Convolution kernel optimisation

    The generic Conv_ReLu is replaced by Conv1_ReLu and Conv2_ReLu with compile-time sizes, the
    5x5 window unrolled, weights in constant memory (a warp-wide broadcast) and each block's
    images staged in shared memory, and each thread computes every output channel of its pixel,
    so every input value is read once from shared memory instead of once per channel from
    global memory.
    """

    conv_kernels = "specialised"
    fc_kernels = "generic"
    sync_each = True
    pinned = False
