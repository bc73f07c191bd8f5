"""Framework reference: onnxruntime on the CPU."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler.ranges import range as phase
from profiler.study import Stage


class OrtCpu(Stage):
    """onnxruntime (CPU)

    The ONNX file itself run by onnxruntime's CPU execution provider, all graph optimisations
    on, one intra-op thread per core (its default).
    """

    def prepare(self, model: Any, batch: int) -> None:
        import onnxruntime

        self._session = onnxruntime.InferenceSession(
            str(model.path), providers=["CPUExecutionProvider"]
        )
        self._input = self._session.get_inputs()[0].name

    def infer(self, images: np.ndarray) -> np.ndarray:
        with phase("onnxruntime"):
            x = np.ascontiguousarray(images, np.float32)
            return np.asarray(self._session.run(None, {self._input: x})[0])

    def release(self) -> None:
        vars(self).clear()
