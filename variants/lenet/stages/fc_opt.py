"""Fully-connected kernel optimisation: Linear1_ReLu, Linear2_ReLu and Linear3 specialised."""

from __future__ import annotations

from variants.lenet.stages._layered import LayeredStage


class FcOpt(LayeredStage):
    """Fully-connected kernel optimisation

    The generic Linear_ReLu is replaced by Linear1_ReLu, Linear2_ReLu and Linear3 with
    compile-time sizes: a block stages 16 images' input vectors in shared memory and each thread
    computes one neuron for all 16, so each weight is loaded once per 16 images instead of once
    per image.
    """

    conv_kernels = "specialised"
    fc_kernels = "specialised"
    sync_each = True
    pinned = False
