"""What LeNet's CUDA stages share beyond the generic helpers of `variants.cuda`: the kernels'
folder, the sizes of an image and of its logits, and the input check.

CuPy is imported inside the helpers, so importing this module needs neither CuPy nor a GPU.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from profiler.errors import UsageError
from variants.cuda import build

KERNELS = Path(__file__).with_name("kernels")

IMAGE_FLOATS = 28 * 28
IMAGE_BYTES = IMAGE_FLOATS * 4
CLASSES = 10
LOGIT_BYTES = CLASSES * 4


def kernel_file(name: str) -> Path:
    """kernels/<name>.cu."""
    return KERNELS / f"{name}.cu"


def compile_module(name: str, defines: Iterable[str] = ()) -> Any:
    """kernels/<name>.cu compiled into a loaded `cupy.RawModule` (see variants.cuda.build)."""
    return build.compile_module(kernel_file(name), defines)


def set_constants(module: Any, name: str, values: Mapping[str, np.ndarray]) -> None:
    """Fill the `__constant__` arrays of `module`, compiled from kernels/<name>.cu."""
    build.set_constants(module, kernel_file(name), values)


def check_images(images: np.ndarray, capacity: int) -> np.ndarray:
    """`images` as a C-contiguous float32 (n, 1, 28, 28) array of at most `capacity` images
    (no copy when it already is one). Raises: UsageError."""
    if images.ndim != 4 or images.shape[1:] != (1, 28, 28):
        raise UsageError(f"expected images of shape (n, 1, 28, 28), got {images.shape}")
    if len(images) > capacity:
        raise UsageError(f"{len(images)} images given, but the stage was prepared for {capacity}")
    return np.ascontiguousarray(images, dtype=np.float32)
