"""CUDA graphs for small batches: a call's copy in, kernel and copy out captured once per batch
size and replayed as one launch."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler.ranges import range as phase
from variants.cuda import memory
from variants.lenet import gpu
from variants.lenet.stages.uint8_input import Uint8Input

#: the largest batch replayed from a graph; larger ones are chunked and overlapped as before
GRAPH_MAX_BATCH = 1024


class Graph(Uint8Input):
    """CUDA graphs for small batches

    For a batch of up to 1,024 images the copy in, the one kernel and the copy out are captured
    once per batch size into a CUDA graph and then replayed by one launch, so a small call costs
    one host-side copy of its uint8 pixels into the page-locked buffer the graph reads, one
    graph launch and one synchronise instead of three separately issued operations, and larger
    batches run chunked and overlapped as in uint8_input.
    """

    def prepare(self, model: Any, batch: int) -> None:
        super().prepare(model, batch)
        self._staging = memory.pinned_empty((min(batch, GRAPH_MAX_BATCH), 1, 28, 28), np.uint8)
        self._buffers["host_input"] = self._staging
        self._graphs: dict[int, Any] = {}

    def infer(self, images: np.ndarray) -> np.ndarray:
        images = self.check(images)
        n = len(images)
        if n == 0:
            return self._empty_logits()
        if n > GRAPH_MAX_BATCH:
            self.issue(images, n)
            return self._out[:n].copy()
        stream = self._streams[0]
        with phase("stage"):
            np.copyto(self._staging[:n], images)
        with phase("graph"):
            graph = self._graphs.get(n) or self.capture(n)
            graph.launch(stream)
        with phase("sync"):
            stream.synchronize()
        return self._out[:n].copy()

    def capture(self, n: int) -> Any:
        """The graph of a call of `n` images (one chunk: n is under the chunking threshold),
        captured on the first stream; kept for the next call of that size."""
        stream = self._streams[0]
        ((start, count, _, launches),) = self.plan(n)
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
