"""Image-parallel inference: the generic kernels over the whole batch, one launch per layer."""

from __future__ import annotations

from variants.lenet.stages._layered import LayeredStage


class BatchParallel(LayeredStage):
    """Image-parallel inference

    The same generic kernels now cover the whole batch in one launch per layer (one thread per
    output element) and the input moves in one 31 MB copy from pageable memory, so seven
    launches and syncs replace seven per image and the GPU's threads are all busy; a
    synchronise still follows every launch.
    """

    conv_kernels = "generic"
    fc_kernels = "generic"
    sync_each = True
    pinned = False
