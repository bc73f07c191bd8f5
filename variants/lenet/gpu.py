"""CuPy helpers shared by the LeNet CUDA stages: compile the .cu files, upload weights, page-locked
host arrays, copies and kernel launches.

CuPy is imported inside the functions, so importing this module (as every stage module does)
needs neither CuPy nor a GPU. Every copy goes through the CUDA runtime calls CuPy wraps, which
raise `cupy.cuda.runtime.CUDARuntimeError` on a failure; a kernel that faults is reported by the
next copy or synchronisation, and every stage ends its `infer` with one, so nothing fails silently.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from profiler.errors import UsageError

KERNELS = Path(__file__).with_name("kernels")
#: NVRTC options: C++17 and no fast-math (the results must stay within 1e-4 of the float64
#: reference).
COMPILE_OPTIONS: tuple[str, ...] = ("-std=c++17",)
INCLUDE = '#include "common.cuh"'
CONSTANT_DECL = re.compile(r"__constant__\s+float\s+(\w+)\s*\[([^\]]+)\]")

IMAGE_FLOATS = 28 * 28
IMAGE_BYTES = IMAGE_FLOATS * 4
CLASSES = 10
LOGIT_BYTES = CLASSES * 4


def source(name: str) -> str:
    """The CUDA C of kernels/<name>.cu with common.cuh pasted in place of its #include, so that
    CuPy's compile cache, keyed on the source text, sees a change to either file."""
    text = (KERNELS / f"{name}.cu").read_text()
    common = (KERNELS / "common.cuh").read_text().replace("#pragma once\n", "")
    return text.replace(INCLUDE, common)


def compile_module(name: str, defines: Iterable[str] = ()) -> Any:
    """Compile kernels/<name>.cu with NVRTC into a loaded `cupy.RawModule`.

    Each call gives a module of its own, so two stages in one process never share the
    `__constant__` weights of a module. Raises: cupy's CompileException on a compile error.
    """
    import cupy

    options = COMPILE_OPTIONS + tuple(f"-D{d}" for d in defines)
    module = cupy.RawModule(code=source(name), options=options)
    module.compile()
    return module


def kernels(module: Any, names: Sequence[str]) -> dict[str, Any]:
    """The `cupy.RawKernel`s called `names` in `module` (extern "C" names)."""
    return {n: module.get_function(n) for n in names}


def upload(weights: Mapping[str, np.ndarray], transpose: Iterable[str] = ()) -> dict[str, Any]:
    """Every weight as a contiguous float32 device array; names in `transpose` are stored
    transposed, (in, out) instead of PyTorch's (out, in)."""
    import cupy

    flip = set(transpose)
    out = {}
    for name, value in weights.items():
        arr = np.asarray(value, dtype=np.float32)
        out[name] = cupy.asarray(np.ascontiguousarray(arr.T if name in flip else arr))
    return out


def constant_sizes(name: str) -> dict[str, int]:
    """Bytes of every `__constant__ float sym[a * b]` array declared in kernels/<name>.cu."""
    sizes = {}
    for sym, dims in CONSTANT_DECL.findall(source(name)):
        if not re.fullmatch(r"[\d\s*]+", dims):
            raise UsageError(f"kernels/{name}.cu: size of {sym} is not a product of integers")
        sizes[sym] = 4 * math.prod(int(d) for d in dims.split("*"))
    return sizes


def set_constants(module: Any, name: str, values: Mapping[str, np.ndarray]) -> None:
    """Copy each float32 array of `values` into the `__constant__` array of the same name in
    `module`, compiled from kernels/<name>.cu. Raises: UsageError on a size mismatch."""
    import cupy

    sizes = constant_sizes(name)
    for symbol, value in values.items():
        host = np.ascontiguousarray(value, dtype=np.float32).ravel()
        if sizes.get(symbol) != host.nbytes:
            raise UsageError(
                f"kernels/{name}.cu: __constant__ {symbol} holds {sizes.get(symbol)} bytes, "
                f"{host.nbytes} given"
            )
        ptr = module.get_global(symbol).ptr
        cupy.cuda.runtime.memcpy(ptr, host.ctypes.data, host.nbytes, 1)  # host to device


def pinned_empty(shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    """A NumPy array in page-locked host memory (CuPy's pinned memory pool)."""
    import cupyx

    return cupyx.empty_pinned(shape, dtype=dtype)


def device_empty(shape: tuple[int, ...]) -> Any:
    """An uninitialised float32 device array."""
    import cupy

    return cupy.empty(shape, dtype=cupy.float32)


def h2d(dst_ptr: int, src: np.ndarray, offset: int, nbytes: int, stream: Any = None) -> None:
    """Copy `nbytes` from `src` (starting `offset` bytes in) to device address `dst_ptr`.

    With a stream the copy is cudaMemcpyAsync on it (asynchronous only when `src` is
    page-locked); without, it is a blocking cudaMemcpy as the study's baseline did.
    """
    _copy(dst_ptr, src.ctypes.data + offset, nbytes, 1, stream)


def d2h(dst: np.ndarray, offset: int, src_ptr: int, nbytes: int, stream: Any = None) -> None:
    """Copy `nbytes` from device address `src_ptr` into `dst` (starting `offset` bytes in)."""
    _copy(dst.ctypes.data + offset, src_ptr, nbytes, 2, stream)


def _copy(dst: int, src: int, nbytes: int, kind: int, stream: Any) -> None:
    from cupy.cuda import runtime

    if stream is None:
        runtime.memcpy(dst, src, nbytes, kind)
    else:
        runtime.memcpyAsync(dst, src, nbytes, kind, stream.ptr)


def check_images(images: np.ndarray, capacity: int) -> np.ndarray:
    """`images` as a C-contiguous float32 (n, 1, 28, 28) array of at most `capacity` images
    (no copy when it already is one). Raises: UsageError."""
    if images.ndim != 4 or images.shape[1:] != (1, 28, 28):
        raise UsageError(f"expected images of shape (n, 1, 28, 28), got {images.shape}")
    if len(images) > capacity:
        raise UsageError(f"{len(images)} images given, but the stage was prepared for {capacity}")
    return np.ascontiguousarray(images, dtype=np.float32)


def grid_for(items: int, per_block: int) -> int:
    """Blocks needed for `items` work items at `per_block` each (at least 1)."""
    return max(1, -(-items // per_block))


def i32(value: int) -> np.int32:
    """A kernel's `int` argument (CuPy would pass a Python int as 64 bits)."""
    return np.int32(value)


class PackedLaunch:
    """A kernel launch whose arguments are packed once, in `__init__`, into the array of argument
    pointers cuLaunchKernel takes, so a call is a single driver call. CuPy's RawKernel call
    converts every argument again on each call, a cost the one-image-at-a-time baseline would pay
    70,000 times a pass. Arguments: CuPy arrays (their device address), numpy.int32 (an `int`)
    and Python ints (a device address). Raises: cupy's CUDADriverError when the launch fails.
    """

    def __init__(self, kernel: Any, grid: int, block: int, args: Sequence[Any]):
        import ctypes

        import cupy

        self._values = [_ctype(a) for a in args]  # kept alive: _params points into them
        self._params = (ctypes.c_void_p * len(self._values))(
            *(ctypes.addressof(v) for v in self._values)
        )
        self._params_ptr = ctypes.addressof(self._params)
        self._function = kernel.kernel.ptr
        self._launch = cupy.cuda.driver.launchKernel
        self.grid, self.block = grid, block

    def __call__(self, stream_ptr: int = 0) -> None:
        self._launch(
            self._function, self.grid, 1, 1, self.block, 1, 1, 0, stream_ptr, self._params_ptr, 0
        )


def _ctype(arg: Any) -> Any:
    import ctypes

    import cupy

    if isinstance(arg, cupy.ndarray):
        return ctypes.c_void_p(arg.data.ptr)
    if isinstance(arg, np.int32):
        return ctypes.c_int32(int(arg))
    if isinstance(arg, int):
        return ctypes.c_void_p(arg)
    raise TypeError(f"cannot pack a kernel argument of type {type(arg).__name__}")
