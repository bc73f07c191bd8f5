"""Device and page-locked host arrays, weight uploads and raw copies."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np


def upload(weights: Mapping[str, np.ndarray], transpose: Iterable[str] = ()) -> dict[str, Any]:
    """Every weight as a contiguous float32 device array; names in `transpose` are stored
    transposed (e.g. (in, out) instead of PyTorch's (out, in))."""
    import cupy

    flip = set(transpose)
    out = {}
    for name, value in weights.items():
        arr = np.asarray(value, dtype=np.float32)
        out[name] = cupy.asarray(np.ascontiguousarray(arr.T if name in flip else arr))
    return out


def pinned_empty(shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    """A NumPy array in page-locked host memory (CuPy's pinned memory pool)."""
    import cupyx

    return cupyx.empty_pinned(shape, dtype=dtype)


def pinned_copy(x: np.ndarray) -> np.ndarray:
    """`x` copied into page-locked host memory (what an application allocates once)."""
    pinned = pinned_empty(x.shape, x.dtype)
    pinned[...] = x
    return pinned


def is_pinned(x: np.ndarray) -> bool:
    """Whether `x`'s memory is page-locked host memory the CUDA runtime knows (an asynchronous
    copy from it can be captured into a CUDA graph)."""
    return mapped_address(x) is not None


def mapped_address(x: np.ndarray) -> int | None:
    """The device address of `x`'s first byte when its memory is page-locked host memory the
    CUDA runtime knows (mapped into the GPU's address space, so a kernel can read and write it
    in place, across PCIe), else None.

    Memory from CuPy's pinned pool (`pinned_empty`) on a device with unified addressing is
    answered without asking the runtime: there a page-locked allocation's device address is its
    host address (CUDA Runtime API, "Unified Addressing"), and the runtime's answer costs about
    4 us from Python, twice in every call of a stage read in place."""
    if _from_pinned_pool(x) and _unified_addressing():
        return int(x.ctypes.data)
    return runtime_mapped_address(x)


def runtime_mapped_address(x: np.ndarray) -> int | None:
    """`mapped_address` as the CUDA runtime answers it (cudaPointerGetAttributes)."""
    from cupy.cuda import runtime

    try:
        attrs = runtime.pointerGetAttributes(x.ctypes.data)
    except runtime.CUDARuntimeError:
        return None
    if int(attrs.type) != getattr(runtime, "memoryTypeHost", 1):  # cudaMemoryTypeHost
        return None
    return int(attrs.devicePointer)


def _from_pinned_pool(x: np.ndarray) -> bool:
    """Whether `x` is a view of an array made by `pinned_empty` (its memory a CuPy
    PinnedMemoryPointer, alive as long as `x` is)."""
    owner: Any = x
    while isinstance(owner, np.ndarray):
        owner = owner.base
    return isinstance(owner, _cupy().pinned_pointer)


@cache
def _unified_addressing_of(device: int) -> bool:
    """Whether `device` shares one address space with the host (cudaDevAttrUnifiedAddressing)."""
    from cupy.cuda import runtime

    attr = getattr(runtime, "cudaDevAttrUnifiedAddressing", 41)
    return bool(runtime.deviceGetAttribute(attr, device))


def _unified_addressing() -> bool:
    """Whether the current device shares one address space with the host."""
    return _unified_addressing_of(_cupy().current_device())


@dataclass(frozen=True)
class _CupyBits:
    """What `mapped_address`'s fast path asks CuPy on every call, bound once: an import inside
    a function costs about a microsecond a call."""

    pinned_pointer: type
    current_device: Callable[[], int]


@cache
def _cupy() -> _CupyBits:
    from cupy.cuda import pinned_memory, runtime

    return _CupyBits(pinned_memory.PinnedMemoryPointer, runtime.getDevice)


def device_empty(shape: tuple[int, ...], dtype: Any = np.float32) -> Any:
    """An uninitialised device array."""
    import cupy

    return cupy.empty(shape, dtype=dtype)


def h2d(dst_ptr: int, src: np.ndarray, offset: int, nbytes: int, stream: Any = None) -> None:
    """Copy `nbytes` from `src` (starting `offset` bytes in) to device address `dst_ptr`.

    With a stream the copy is cudaMemcpyAsync on it (asynchronous only when `src` is
    page-locked); without, it is a blocking cudaMemcpy.
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


def device_synchronize() -> None:
    """cudaDeviceSynchronize."""
    import cupy

    cupy.cuda.runtime.deviceSynchronize()
