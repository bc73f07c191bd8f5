"""The device side of the stream engine, through the stage's own runtime: streams, timing
events, page-locked staging buffers, asynchronous copies and CUDA graphs.

`CupyDevice` drives CuPy stages (LeNet's hand-written kernels) and captures graphs with
CUDA's stream capture; `TorchDevice` drives PyTorch stages and captures with `torch.cuda.graph`
(whose allocator keeps the graph's memory in a pool of its own, one pool per lane here).
Frameworks are imported inside the methods, never at import time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

#: an asynchronous copy of a lane's first n rows, bound to its buffers: copy(n, stream)
Copy = Callable[[int, Any], None]


def _host_address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


class CupyDevice:
    """Through CuPy's runtime bindings directly, bound once here: the calls a batch makes (four
    event records, two copies, one query a poll) cost a driver call each and no Python lookups
    or imports (an import inside a method is about a microsecond a call)."""

    name = "cupy"

    def __init__(self) -> None:
        import cupy
        import cupyx
        from cupy.cuda import runtime

        self._cupy, self._cupyx, self._rt = cupy, cupyx, runtime
        self._record, self._query = runtime.eventRecord, runtime.eventQuery
        self._elapsed, self._memcpy = runtime.eventElapsedTime, runtime.memcpyAsync

    def stream(self) -> Any:
        return self._cupy.cuda.Stream(non_blocking=True)

    def event(self) -> Any:
        return self._cupy.cuda.Event()

    def record(self, event: Any, stream: Any) -> None:
        self._record(event.ptr, stream.ptr)

    def query(self, event: Any) -> bool:
        return self._query(event.ptr) == 0  # cudaSuccess; cudaErrorNotReady while pending

    def elapsed_ms(self, start: Any, end: Any) -> float:
        return float(self._elapsed(start.ptr, end.ptr))

    def pinned(self, shape: tuple[int, ...], dtype: Any) -> tuple[np.ndarray, Any]:
        arr = self._cupyx.empty_pinned(shape, dtype=dtype)
        return arr, arr

    def item_shape(self, device_array: Any) -> tuple[tuple[int, ...], Any]:
        return tuple(device_array.shape[1:]), np.dtype(device_array.dtype)

    def h2d(self, dst: Any, src: np.ndarray) -> Copy:
        """The copy of the first n rows of page-locked `src` into device `dst`, its addresses
        and row size read once here (numpy's `.ctypes` costs microseconds a call)."""
        return self._copier(dst.data.ptr, _host_address(src), dst.nbytes // len(dst), 1)

    def d2h(self, dst: np.ndarray, src: Any) -> Copy:
        return self._copier(_host_address(dst), src.data.ptr, src.nbytes // len(src), 2)

    def _copier(self, dst: int, src: int, row_bytes: int, kind: int) -> Copy:
        memcpy = self._memcpy

        def copy(n: int, stream: Any) -> None:
            memcpy(dst, src, n * row_bytes, kind, stream.ptr)

        return copy

    def capture(self, fn: Callable[[], None], stream: Any, pool: Any) -> Any:
        stream.begin_capture()
        try:
            fn()
        finally:
            graph = stream.end_capture()
        return graph

    def graph_pool(self) -> Any:
        return None

    def launch(self, graph: Any, stream: Any) -> None:
        graph.launch(stream)

    def synchronize(self) -> None:
        self._rt.deviceSynchronize()


class TorchDevice:
    name = "torch"

    def stream(self) -> Any:
        import torch

        return torch.cuda.Stream()

    def event(self) -> Any:
        import torch

        return torch.cuda.Event(enable_timing=True)

    def record(self, event: Any, stream: Any) -> None:
        event.record(stream)

    def query(self, event: Any) -> bool:
        return bool(event.query())

    def elapsed_ms(self, start: Any, end: Any) -> float:
        return float(start.elapsed_time(end))

    def pinned(self, shape: tuple[int, ...], dtype: Any) -> tuple[np.ndarray, Any]:
        import torch

        tdtype = torch.from_numpy(np.empty(0, dtype=dtype)).dtype
        t = torch.empty(shape, dtype=tdtype, pin_memory=True)
        return t.numpy(), t

    def item_shape(self, device_array: Any) -> tuple[tuple[int, ...], Any]:
        import torch

        dtype = torch.empty(0, dtype=device_array.dtype).numpy().dtype
        return tuple(device_array.shape[1:]), dtype

    def h2d(self, dst: Any, src: Any) -> Copy:
        """The asynchronous copy of the first n rows of `src` into `dst` on a stream."""
        import torch

        def copy(n: int, stream: Any) -> None:
            with torch.cuda.stream(stream):
                dst[:n].copy_(src[:n], non_blocking=True)

        return copy

    def d2h(self, dst: Any, src: Any) -> Copy:
        return self.h2d(dst, src)

    def capture(self, fn: Callable[[], None], stream: Any, pool: Any) -> Any:
        import torch

        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=pool, stream=stream):
            fn()
        return graph

    def graph_pool(self) -> Any:
        import torch

        return torch.cuda.graph_pool_handle()

    def launch(self, graph: Any, stream: Any) -> None:
        import torch

        with torch.cuda.stream(stream):
            graph.replay()

    def synchronize(self) -> None:
        import torch

        torch.cuda.synchronize()


DEVICES: dict[str, Any] = {"cupy": CupyDevice, "torch": TorchDevice}
