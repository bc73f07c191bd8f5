"""CUDA baseline: the study's starting point, one image at a time with a synchronise after
every launch."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler.ranges import range as phase
from variants.cuda import build, memory
from variants.lenet import gpu
from variants.lenet.stages._cuda import CudaStage
from variants.lenet.stages._layered import (
    GENERIC_KERNELS,
    activation_buffers,
    device_synchronize,
    generic_plan,
)


class CudaBaseline(CudaStage):
    """CUDA baseline

    Hand-written generic kernels (Conv_ReLu, MaxPool, Linear_ReLu) run one image at a time from
    cached device buffers: a blocking cudaMemcpy of its 3 KB in, seven launches each followed by
    cudaDeviceSynchronize, and a blocking copy of its 10 logits out, so the time is launch and
    synchronisation latency, not arithmetic.
    """

    def prepare(self, model: Any, batch: int) -> None:
        self._batch = batch
        self._module = gpu.compile_module("generic")
        kernels = build.kernels(self._module, GENERIC_KERNELS)
        self._w = memory.upload(model.weights)
        self._a = activation_buffers(1)  # cached device buffers for one image
        self._buffers = dict(self._a)
        plan = generic_plan(kernels, self._w, self._a, 1)
        self._plan = [(ln.phase, ln.packed()) for ln in plan]
        self._in_ptr = self._a["input"].data.ptr
        self._out_ptr = self._a["fc3"].data.ptr

    def infer(self, images: np.ndarray) -> np.ndarray:
        images = gpu.check_images(images, self._batch)
        out = np.empty((len(images), 10), dtype=np.float32)
        for i in range(len(images)):
            with phase("h2d"):
                memory.h2d(self._in_ptr, images, i * gpu.IMAGE_BYTES, gpu.IMAGE_BYTES)
            for name, packed in self._plan:
                with phase(name):
                    packed()
                    device_synchronize()
            with phase("d2h"):
                memory.d2h(out, i * gpu.LOGIT_BYTES, self._out_ptr, gpu.LOGIT_BYTES)
        return out

