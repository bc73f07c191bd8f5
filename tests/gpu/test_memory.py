"""Page-locked memory's device addresses (marked gpu): `mapped_address` answers CuPy's pinned
pool from the host address without asking the runtime, and that answer is the runtime's."""

from __future__ import annotations

import numpy as np
import pytest

from variants.cuda import memory

pytestmark = pytest.mark.gpu


def views(pinned: np.ndarray) -> list[np.ndarray]:
    return [pinned, pinned[3:], pinned[1::2], pinned.reshape(-1), pinned[7:9, 4:]]


def test_pinned_pool_addresses_are_the_runtimes() -> None:
    pinned = memory.pinned_empty((64, 10))
    for view in views(pinned):
        assert memory._from_pinned_pool(view)
        assert memory.mapped_address(view) == memory.runtime_mapped_address(view)
        assert memory.mapped_address(view) is not None


DOUBLE = r"""
extern "C" __global__ void double_into(const float* src, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = 2.0f * src[i];
}
"""


def test_a_kernel_reads_and_writes_at_the_fast_address() -> None:
    """The address answered without the runtime is one a kernel can use: a kernel reads one
    half of a page-locked array and writes twice it into the other half, both in place."""
    import cupy

    host = memory.pinned_empty((1000,), np.float32)
    host[...] = np.arange(1000, dtype=np.float32)
    src = memory.mapped_address(host[:500])
    dst = memory.mapped_address(host[500:])
    assert src is not None and dst is not None
    kernel = cupy.RawKernel(DOUBLE, "double_into")
    kernel((4,), (128,), (np.uint64(src), np.uint64(dst), np.int32(500)))
    cupy.cuda.Device().synchronize()
    np.testing.assert_array_equal(host[500:], 2 * np.arange(500, dtype=np.float32))


def test_pageable_memory_has_no_mapped_address() -> None:
    pageable = np.zeros((64, 10), np.float32)
    assert not memory._from_pinned_pool(pageable)
    assert memory.mapped_address(pageable) is None
