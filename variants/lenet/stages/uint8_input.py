"""uint8 input: the images cross PCIe as the bytes an IDX file holds and become floats on the
device, inside the one kernel."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler.errors import UsageError
from variants.cuda import memory
from variants.lenet.stages.one_kernel import OneKernel


def quantize(images: np.ndarray) -> np.ndarray:
    """The uint8 pixels (n, 1, 28, 28) whose normalisation (v / 255) is nearest to `images`
    (clipped to 0..255): exactly the IDX bytes for images made by `data.normalize`."""
    x = np.asarray(images, dtype=np.float32)
    return np.clip(np.rint(x * np.float32(255.0)), 0, 255).astype(np.uint8)


def dequantize(pixels: np.ndarray) -> np.ndarray:
    """What the kernel computes from uint8 pixels: float32 v / 255, as `data.normalize` does."""
    return np.asarray(pixels).astype(np.float32) / np.float32(255.0)


class Uint8Input(OneKernel):
    """uint8 input converted on the device

    The images stay the uint8 bytes of the IDX file in page-locked memory and cross PCIe as
    784 bytes an image instead of 3,136, a quarter of the copy that bounds every fp32 stage,
    read in place by the one kernel (the page-locked memory is mapped into the GPU's address
    space) sixteen bytes a load and turned into v / 255 as each block stages its images in
    shared memory, the logits written straight into the page-locked output, so a call is one
    launch and each block computes as soon as its own images have crossed PCIe, now that the
    kernel rather than the copy bounds the call, with the conv weights in constant memory as in
    one_kernel_const (6-8% faster than shared memory read in place, on three leases), and the
    result is checked against the reference computed on those same dequantised images (pageable
    input is copied in chunks).
    """

    in_place = True
    const_weights = True
    input_dtype = np.uint8

    def reference_input(self, images: np.ndarray) -> np.ndarray:
        return dequantize(quantize(images))

    def host_input(self, images: np.ndarray) -> np.ndarray:
        return memory.pinned_copy(quantize(images))

    def check(self, images: Any) -> np.ndarray:
        if images.dtype != np.uint8 or images.shape[1:] != (1, 28, 28):
            raise UsageError(
                f"expected uint8 images of shape (n, 1, 28, 28), got {images.dtype} {images.shape}"
            )
        if len(images) > self._batch:
            raise UsageError(
                f"{len(images)} images given, but the stage was prepared for {self._batch}"
            )
        return np.ascontiguousarray(images)
