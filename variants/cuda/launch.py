"""Kernel launches: grid sizes, `int` arguments, and launches packed once for many calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def grid_for(items: int, per_block: int) -> int:
    """Blocks needed for `items` work items at `per_block` each (at least 1)."""
    return max(1, -(-items // per_block))


def i32(value: int) -> np.int32:
    """A kernel's `int` argument (CuPy would pass a Python int as 64 bits)."""
    return np.int32(value)


class PackedLaunch:
    """A kernel launch whose arguments are packed once, in `__init__`, into the array of argument
    pointers cuLaunchKernel takes, so a call is a single driver call. CuPy's RawKernel call
    converts every argument again on each call, a cost a one-item-at-a-time stage would pay
    tens of thousands of times a pass. Arguments: CuPy arrays (their device address),
    numpy.int32 (an `int`), numpy.int64 (a `long long`), numpy.float32 (a `float`) and Python
    ints (a device address). Grid and block: an int (x) or an (x, y, z) tuple. `shared_bytes`:
    dynamic shared memory per block (over 48 KB the kernel must first allow it, see
    `allow_shared`).
    Raises: cupy's CUDADriverError when the launch fails.
    """

    def __init__(
        self,
        kernel: Any,
        grid: int | tuple[int, int, int],
        block: int | tuple[int, int, int],
        args: Sequence[Any],
        shared_bytes: int = 0,
    ):
        import ctypes

        import cupy

        self._values = [_ctype(a) for a in args]  # kept alive: _params points into them
        self._params = (ctypes.c_void_p * len(self._values))(
            *(ctypes.addressof(v) for v in self._values)
        )
        self._params_ptr = ctypes.addressof(self._params)
        self._function = kernel.kernel.ptr
        self._launch = cupy.cuda.driver.launchKernel
        self.grid, self.block, self.shared_bytes = grid, block, shared_bytes
        self._dims = (*_dim3(grid), *_dim3(block))

    def set_address(self, index: int, address: int) -> None:
        """Point device-address argument `index` at `address` for the calls that follow (the
        packed array keeps pointing at the same value, so no repacking)."""
        self._values[index].value = address

    def __call__(self, stream_ptr: int = 0) -> None:
        self._launch(
            self._function, *self._dims, self.shared_bytes, stream_ptr, self._params_ptr, 0
        )


def _dim3(value: int | tuple[int, int, int]) -> tuple[int, int, int]:
    """A grid or block size as (x, y, z): an int is (value, 1, 1)."""
    return (value, 1, 1) if isinstance(value, int) else tuple(value)  # type: ignore[return-value]


def allow_shared(kernel: Any, nbytes: int) -> None:
    """Let `kernel` (a cupy.RawKernel) launch with `nbytes` of dynamic shared memory per block
    (cudaFuncAttributeMaxDynamicSharedMemorySize; needed above 48 KB)."""
    kernel.max_dynamic_shared_size_bytes = nbytes


def _ctype(arg: Any) -> Any:
    import ctypes

    import cupy

    if isinstance(arg, cupy.ndarray):
        return ctypes.c_void_p(arg.data.ptr)
    if isinstance(arg, np.int32):
        return ctypes.c_int32(int(arg))
    if isinstance(arg, np.int64):
        return ctypes.c_int64(int(arg))
    if isinstance(arg, np.float32):
        return ctypes.c_float(float(arg))
    if isinstance(arg, int):
        return ctypes.c_void_p(arg)
    raise TypeError(f"cannot pack a kernel argument of type {type(arg).__name__}")
