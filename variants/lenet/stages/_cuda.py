"""What every hand-written CUDA stage of the LeNet study shares: the buffers a test may poison,
and releasing them."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler.study import Stage


class CudaStage(Stage):
    """A stage whose kernels are the CUDA C of variants/lenet/kernels, run through CuPy."""

    def __init__(self) -> None:
        self._batch = 0
        self._buffers: dict[str, Any] = {}

    def buffers(self) -> dict[str, Any]:
        """Every device array a call writes, and the host output buffer where there is one
        (CuPy or NumPy arrays, by name): tests fill them with NaN before a call so that an
        element no kernel writes shows up in the logits."""
        return dict(self._buffers)

    def release(self) -> None:
        """Drop every reference `prepare` took (buffers, weights, modules, streams), so that
        CuPy's memory pools can reuse the memory."""
        vars(self).clear()
        CudaStage.__init__(self)

    def _empty_logits(self) -> np.ndarray:
        return np.empty((0, 10), dtype=np.float32)
