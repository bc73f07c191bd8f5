"""CUDA graphs: a call's copies and kernels captured once and replayed as one launch, per batch
size for small batches and per batch size and input buffer for large ones; on the uint8 input
(graph) and on the fp32 input (graph_fp32)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from profiler.ranges import range as phase
from variants.cuda import memory
from variants.lenet import gpu
from variants.lenet.stages._chunked import Chunk
from variants.lenet.stages.one_kernel import OneKernel
from variants.lenet.stages.uint8_input import Uint8Input

#: the largest batch replayed from a graph that reads a staging buffer of the stage's own: the
#: host copy into it outgrows what the graph saves above this (measured: graph faster than
#: uint8_input at 1, 4 and 16 images, slower at 64, 256 and 1,024 with the staging copy)
GRAPH_MAX_BATCH = 16
#: the smallest batch captured per (batch size, input buffer): a caller's buffers of a large
#: batch are few; of a small batch many (a 4,096-image input cut in 64s is 64 of them)
LARGE_GRAPH_MIN = 1025
#: graphs of large batches kept, one per (batch size, input buffer); the oldest goes first
LARGE_GRAPHS = 4


class Graphed(OneKernel):
    """The graph calls of a one-kernel stage (its input type is the stage's): up to
    GRAPH_MAX_BATCH images staged and replayed per batch size, from LARGE_GRAPH_MIN images on
    page-locked input every chunk replayed per batch size and input buffer, in between issued
    chunk by chunk."""

    #: large-batch graphs kept (0: large batches are issued chunk by chunk, uncaptured)
    large_graphs: int = LARGE_GRAPHS
    #: the chunking of a large batch's graph (see chunk_bounds; the host issues none of its
    #: chunks, so it may cut finer than the chunk-by-chunk path; None: the stage's own)
    graph_chunks: int | None = None
    graph_taper: int | None = None
    graph_lead: int | None = None

    def prepare(self, model: Any, batch: int) -> None:
        import cupy

        super().prepare(model, batch)
        shape = (min(batch, GRAPH_MAX_BATCH), 1, 28, 28)
        self._staging = memory.pinned_empty(shape, self.input_dtype)
        self._buffers["host_input"] = self._staging
        self._graphs: dict[int, Any] = {}
        self._large: OrderedDict[tuple[int, int], Any] = OrderedDict()
        self._events = [cupy.cuda.Event(disable_timing=True) for _ in range(len(self._streams))]

    def infer(self, images: np.ndarray) -> np.ndarray:
        images = self.check(images)
        n = len(images)
        if n == 0:
            return self._empty_logits()
        if n <= GRAPH_MAX_BATCH:
            return self.small_call(images, n)
        if n < LARGE_GRAPH_MIN or not self.large_graphs or not memory.is_pinned(images):
            return super().infer(images)  # (a copy from pageable memory cannot be captured)
        stream = self._streams[0]
        out = self.new_output(n)
        with phase("graph"):
            self.large_graph(images, n).launch(stream)
        with phase("d2h"):
            memory.d2h(out, 0, self._a["logits"].data.ptr, n * gpu.LOGIT_BYTES, stream)
        with phase("sync"):
            stream.synchronize()
        return out

    def small_call(self, images: np.ndarray, n: int) -> np.ndarray:
        """A call of at most GRAPH_MAX_BATCH images: staged, then replayed from its graph."""
        stream = self._streams[0]
        with phase("stage"):
            np.copyto(self._staging[:n], images)
        with phase("graph"):
            (self._graphs.get(n) or self.small_graph(n)).launch(stream)
        with phase("sync"):
            stream.synchronize()
        return self._out[:n].copy()

    def small_graph(self, n: int) -> Any:
        """The graph of a call of `n` <= GRAPH_MAX_BATCH images (one chunk) from the staging
        buffer into the stage's logits buffer, captured on the first stream and kept."""
        stream = self._streams[0]
        ((_, _, _, launches),) = self.plan(n)
        in_ptr, logits_ptr = self._a["input"].data.ptr, self._a["logits"].data.ptr
        stream.begin_capture()
        try:
            memory.h2d(in_ptr, self._staging, 0, n * self.image_bytes, stream)
            for _, packed in launches:
                packed(stream.ptr)
            memory.d2h(self._out, 0, logits_ptr, n * gpu.LOGIT_BYTES, stream)
        finally:
            graph = stream.end_capture()
        self._graphs[n] = graph
        return graph

    def graph_plan(self, n: int) -> list[Chunk]:
        """The chunks of a large batch's graph: the stage's plan, cut as the graph_* knobs say."""
        return self.cut(
            n,
            self.max_chunks if self.graph_chunks is None else self.graph_chunks,
            self.taper if self.graph_taper is None else self.graph_taper,
            self.lead if self.graph_lead is None else self.graph_lead,
        )

    def large_graph(self, images: np.ndarray, n: int) -> Any:
        """The graph of every chunk's copy in and kernel for `n` images read from `images`'s
        address, forked from the first stream over the others and joined back to it; captured
        on the first call with that buffer and size, the oldest of LARGE_GRAPHS dropped."""
        key = (n, images.ctypes.data)
        if key in self._large:
            self._large.move_to_end(key)
            return self._large[key]
        first, others = self._streams[0], self._streams[1:]
        in_ptr = self._a["input"].data.ptr
        first.begin_capture()
        try:
            self._events[0].record(first)
            for s in others:
                s.wait_event(self._events[0])
            for start, count, stream, launches in self.graph_plan(n):
                offset, nbytes = start * self.image_bytes, count * self.image_bytes
                memory.h2d(in_ptr + offset, images, offset, nbytes, stream)
                for _, packed in launches:
                    packed(stream.ptr)
            for event, s in zip(self._events[1:], others, strict=True):
                event.record(s)
                first.wait_event(event)
        finally:
            graph = first.end_capture()
        self._large[key] = graph
        if len(self._large) > self.large_graphs:
            self._large.popitem(last=False)
        return graph


class Graph(Graphed, Uint8Input):
    """CUDA graphs for small batches

    A call's launch sequence is captured once into a CUDA graph and then replayed by one launch:
    up to 16 images the copy in, the one kernel and the copy out, per batch size, after a
    host-side copy of the uint8 pixels into the page-locked buffer the graph reads, while larger
    batches run as in uint8_input, whose one launch reading the page-locked bytes in place
    leaves a graph nothing to save (its chunked copies, captured per batch size and input
    buffer, were measured slower than that launch: NOTES.md).
    """

    large_graphs = 0


class GraphFp32(Graphed):
    """CUDA graphs on fp32 input

    The graphs of the graph stage on the float32 images of one_kernel: up to 16 images staged
    and replayed per batch size, and above 1,024 images on page-locked input the chunks' copies
    and kernels replayed as one launch per batch size and input buffer, so that the copy that
    bounds every fp32 stage starts after one host call instead of after the host's first three
    cold ones, and the chunks follow each other with no host in between.
    """
