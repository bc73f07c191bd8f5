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


class CupyDevice:
    name = "cupy"

    def stream(self) -> Any:
        import cupy

        return cupy.cuda.Stream(non_blocking=True)

    def event(self) -> Any:
        import cupy

        return cupy.cuda.Event()

    def record(self, event: Any, stream: Any) -> None:
        event.record(stream)

    def query(self, event: Any) -> bool:
        return bool(event.done)

    def elapsed_ms(self, start: Any, end: Any) -> float:
        import cupy

        return float(cupy.cuda.get_elapsed_time(start, end))

    def pinned(self, shape: tuple[int, ...], dtype: Any) -> tuple[np.ndarray, Any]:
        import cupyx

        arr = cupyx.empty_pinned(shape, dtype=dtype)
        return arr, arr

    def item_shape(self, device_array: Any) -> tuple[tuple[int, ...], Any]:
        return tuple(device_array.shape[1:]), np.dtype(device_array.dtype)

    def h2d(self, dst: Any, src: Any, n: int, stream: Any) -> None:
        from cupy.cuda import runtime

        nbytes = n * (dst.nbytes // len(dst))
        runtime.memcpyAsync(dst.data.ptr, src.ctypes.data, nbytes, 1, stream.ptr)

    def d2h(self, dst: Any, src: Any, n: int, stream: Any) -> None:
        from cupy.cuda import runtime

        nbytes = n * (src.nbytes // len(src))
        runtime.memcpyAsync(dst.ctypes.data, src.data.ptr, nbytes, 2, stream.ptr)

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
        import cupy

        cupy.cuda.runtime.deviceSynchronize()


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

    def h2d(self, dst: Any, src: Any, n: int, stream: Any) -> None:
        import torch

        with torch.cuda.stream(stream):
            dst[:n].copy_(src[:n], non_blocking=True)

    def d2h(self, dst: Any, src: Any, n: int, stream: Any) -> None:
        import torch

        with torch.cuda.stream(stream):
            dst[:n].copy_(src[:n], non_blocking=True)

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
