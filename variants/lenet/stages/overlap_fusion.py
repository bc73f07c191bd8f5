"""Copy/compute overlap and kernel fusion: the batch in chunks over several streams, three fused
kernels per chunk."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler.ranges import range as phase
from variants.cuda import build, launch, memory
from variants.lenet import gpu
from variants.lenet.stages._cuda import CudaStage
from variants.lenet.stages._layered import conv_constants, device_weights

CHUNKS = 8  # chunks per call (fewer when there are fewer images)
STREAMS = 4
ALIGN = 16  # a chunk's images are a multiple of this, the largest images-per-block below
CP1_IMGS, CP2_IMGS, FC_IMGS = 8, 4, 16  # images per block of the kernels in fused.cu
KERNELS = ("Conv1_ReLu_Pool1", "Conv2_ReLu_Pool2", "Linear_ReLu_Fused")
#: (start, count, stream, [(phase, launch)]) of one chunk
Chunk = tuple[int, int, Any, list[tuple[str, launch.PackedLaunch]]]


def chunk_bounds(n: int, chunks: int = CHUNKS, align: int = ALIGN) -> list[tuple[int, int]]:
    """(start, count) of each chunk: at most `chunks` of them, each a multiple of `align` images
    except the last, together covering 0..n."""
    size = -(-max(n, 1) // chunks)
    size = -(-size // align) * align
    return [(s, min(size, n - s)) for s in range(0, n, size)]


class OverlapFusion(CudaStage):
    """Copy/compute overlap and kernel fusion

    The batch is split into chunks issued round-robin over four streams, so while one chunk's
    images are copied in the previous chunks compute and copy their logits out, and each chunk
    runs three fused kernels (conv1+ReLU+pool, conv2+ReLU+pool, the three fully-connected
    layers) instead of seven, so the pre-pool maps and the hidden vectors never touch device
    memory: the copy-in is then nearly all that is left.
    """

    #: chunks per call (fewer with fewer images) and streams they are dealt over
    chunks: int = CHUNKS
    streams: int = STREAMS

    def prepare(self, model: Any, batch: int) -> None:
        import cupy

        self._batch = batch
        self._module = gpu.compile_module("fused")
        gpu.set_constants(self._module, "fused", conv_constants(model.weights))
        self._k = build.kernels(self._module, KERNELS)
        self._w = device_weights(model.weights, fc_transposed=True)
        self._a = {
            "input": memory.device_empty((batch, 784)),
            "pool1": memory.device_empty((batch, 6 * 12 * 12)),
            "pool2": memory.device_empty((batch, 256)),
            "logits": memory.device_empty((batch, 10)),
        }
        self._out = memory.pinned_empty((batch, 10))
        self._buffers = {**self._a, "host_logits": self._out}
        self._streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(self.streams)]
        self._plans: dict[int, list[Chunk]] = {}
        self._serve_plans: dict[int, list[launch.PackedLaunch]] = {}

    def host_input(self, images: np.ndarray) -> np.ndarray:
        return memory.pinned_copy(images)

    def infer(self, images: np.ndarray) -> np.ndarray:
        images = gpu.check_images(images, self._batch)
        n = len(images)
        if n == 0:
            return self._empty_logits()
        in_ptr, logits_ptr = self._a["input"].data.ptr, self._a["logits"].data.ptr
        for start, count, stream, launches in self.plan(n):
            with phase("h2d"):
                offset, nbytes = start * gpu.IMAGE_BYTES, count * gpu.IMAGE_BYTES
                memory.h2d(in_ptr + offset, images, offset, nbytes, stream)
            for name, packed in launches:
                with phase(name):
                    packed(stream.ptr)
            with phase("d2h"):
                offset, nbytes = start * gpu.LOGIT_BYTES, count * gpu.LOGIT_BYTES
                memory.d2h(self._out, offset, logits_ptr + offset, nbytes, stream)
        with phase("sync"):
            for stream in self._streams:
                stream.synchronize()
        return self._out[:n].copy()

    def serve_buffers(self) -> tuple[Any, Any]:
        """The serving stream protocol (profiler.collect.serve.engines): device images and
        logits, `batch` of each."""
        return self._a["input"], self._a["logits"]

    def enqueue(self, n: int, stream: Any) -> None:
        """The three fused kernels over the first `n` images as one chunk on `stream`: the
        server overlaps batches across its own streams instead of chunks across these."""
        if n not in self._serve_plans:
            self._serve_plans[n] = [packed for _, packed in self.launches(0, n)]
        for packed in self._serve_plans[n]:
            packed(stream.ptr)

    def plan(self, n: int) -> list[Chunk]:
        """(start, count, stream, [(phase, launch)]) of every chunk for `n` images, built once
        per batch size."""
        if n not in self._plans:
            self._plans[n] = [
                (start, count, self._streams[i % len(self._streams)], self.launches(start, count))
                for i, (start, count) in enumerate(chunk_bounds(n, self.chunks))
            ]
        return self._plans[n]

    def launches(self, start: int, count: int) -> list[tuple[str, launch.PackedLaunch]]:
        """The three fused kernels for images start..start+count."""
        ptr = {name: arr.data.ptr + start * arr.shape[1] * 4 for name, arr in self._a.items()}
        w, k, m = self._w, self._k, launch.i32(count)
        fc_weights = [w[f"fc{i}.{kind}"] for i in (1, 2, 3) for kind in ("weight", "bias")]
        fc_args = (ptr["pool2"], *fc_weights, ptr["logits"], m)
        conv1_args = (ptr["input"], ptr["pool1"], m)
        conv2_args = (ptr["pool1"], w["conv2.weight_t"], w["conv2.bias"], ptr["pool2"], m)

        def pack(kernel: str, per_block: int, threads: int, args: tuple) -> launch.PackedLaunch:
            return launch.PackedLaunch(k[kernel], launch.grid_for(count, per_block), threads, args)

        return [
            ("conv1_pool1", pack("Conv1_ReLu_Pool1", CP1_IMGS, 256, conv1_args)),
            ("conv2_pool2", pack("Conv2_ReLu_Pool2", CP2_IMGS, 64 * CP2_IMGS, conv2_args)),
            ("fc", pack("Linear_ReLu_Fused", FC_IMGS, 128, fc_args)),
        ]
