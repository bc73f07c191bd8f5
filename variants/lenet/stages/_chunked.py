"""What the overlapped LeNet stages share: the batch cut into chunks whose number follows the
batch, the chunks dealt round-robin over a few streams, and per chunk a copy in, its kernels
and a copy of its logits out.

Chunking pays only when a chunk's copy takes longer than the host takes to issue a chunk (a
copy, the kernels and a copy back: about 30-40 us from Python): below `MIN_CHUNK_IMAGES`
images per chunk the batch is not cut at all, so a small batch costs what one un-chunked call
costs and no batch size is slower here than in the stage before because of a chunk count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from profiler.ranges import range as phase
from variants.cuda import launch, memory
from variants.lenet import gpu
from variants.lenet.stages._cuda import CudaStage

MAX_CHUNKS = 8  # chunks per call at most (the large-batch optimum measured in NOTES.md)
STREAMS = 4
#: fewest images in a chunk: ~1024 images are ~60 us of fp32 copy, more than a chunk's issue
MIN_CHUNK_IMAGES = 1024
ALIGN = 16  # a chunk's images are a multiple of this (the largest images-per-block)
FRESH_MIN_IMAGES = 256  # below this, copying the logits out costs less than a new array
#: (start, count, stream, [(phase, launch)]) of one chunk
Chunk = tuple[int, int, Any, list[tuple[str, launch.PackedLaunch]]]


def chunk_bounds(
    n: int,
    max_chunks: int = MAX_CHUNKS,
    min_images: int = MIN_CHUNK_IMAGES,
    align: int = ALIGN,
    taper: int = 0,
    lead: int = 0,
) -> list[tuple[int, int]]:
    """(start, count) of each chunk for `n` images: as many chunks as there are `min_images`
    in n, at least one and at most `max_chunks`, each a multiple of `align` images except the
    last, together covering 0..n. With more than one chunk: `taper` cuts the last chunk that
    many times more, each piece half of what is left (rounded up to `align`), so that what runs
    after the last copy is the kernel of a small chunk; `lead` cuts the first chunk that many
    times, smallest piece first, so that the first kernel starts after a short copy."""
    chunks = min(max_chunks, max(1, n // max(min_images, 1)))
    size = -(-max(n, 1) // chunks)
    size = -(-size // align) * align
    bounds = [(s, min(size, n - s)) for s in range(0, n, size)]
    if len(bounds) < 2:
        return bounds
    start, count = bounds.pop()
    for _ in range(taper):
        head = _half(count, align)
        if not 0 < head < count:
            break
        bounds.append((start, head))
        start, count = start + head, count - head
    bounds.append((start, count))
    front, back = bounds[0][1], []
    for _ in range(lead):
        half = _half(front, align)  # the larger half goes behind
        if not 0 < half < front:
            break
        back.insert(0, half)
        front -= half
    sizes = [front, *back]
    firsts = [(sum(sizes[:i]), c) for i, c in enumerate(sizes)]
    return firsts + bounds[1:]


def _half(count: int, align: int) -> int:
    """Half of `count`, rounded up to a multiple of `align`."""
    return -(-(count // 2) // align) * align


class ChunkedStage(CudaStage):
    """A stage whose call is chunks of copy in, kernels, copy out, over `streams` streams.

    Subclasses allocate `self._a` (device arrays with "input" and "logits", one row per image)
    in `allocate` and say which kernels a chunk runs in `launches`.
    """

    #: chunks per call at most, fewest images per chunk, and streams the chunks are dealt over
    max_chunks: ClassVar[int] = MAX_CHUNKS
    min_chunk_images: ClassVar[int] = MIN_CHUNK_IMAGES
    streams: ClassVar[int] = STREAMS
    #: times the last chunk is halved again (see chunk_bounds), and the most images of a chunk
    #: whose kernels are built for latency, as a call's only chunk is (0: none but that one)
    taper: ClassVar[int] = 0
    small_chunk_images: ClassVar[int] = 0
    #: times the first chunk is halved (see chunk_bounds; measured slower for uint8_input,
    #: whose host issues the chunks more slowly than the copies run: NOTES.md)
    lead: ClassVar[int] = 0
    #: queue the first chunk's copy and kernels before allocating the output array
    early_copy: ClassVar[bool] = False
    #: the input's element type as it crosses PCIe (float32, or uint8 as in an IDX file)
    input_dtype: ClassVar[Any] = np.float32

    #: where the logits land on the host: "fresh" (a new page-locked array each call of at
    #: least FRESH_MIN_IMAGES images, from CuPy's pinned pool, handed to the caller as it is) or
    #: "copy" (one buffer of the stage's own, copied out on every call: 400 KB, tens of
    #: microseconds, for 10,000 images; cheaper than an allocation for a few images)
    output: ClassVar[str] = "copy"
    fresh_min_images: ClassVar[int] = FRESH_MIN_IMAGES

    def prepare(self, model: Any, batch: int) -> None:
        import cupy

        self._batch = batch
        self._a: dict[str, Any] = {}
        self.allocate(model, batch)
        self._out = memory.pinned_empty((batch, 10))
        self._buffers = {**self._a, "host_logits": self._out}
        self._streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(self.streams)]
        self._plans: dict[tuple[int, int, int, int], list[Chunk]] = {}
        self._serve_plans: dict[int, list[launch.PackedLaunch]] = {}

    def serve_buffers(self) -> tuple[Any, Any]:
        """The serving stream protocol (profiler.collect.serve.engines): the device images (in
        the stage's input_dtype) and logits, `batch` of each."""
        return self._a["input"], self._a["logits"]

    def enqueue(self, n: int, stream: Any) -> None:
        """The kernels over the first `n` images as the call's only chunk, on `stream`: the
        server overlaps batches across its own streams instead of chunks across the stage's."""
        if n not in self._serve_plans:
            self._serve_plans[n] = [packed for _, packed in self.launches(0, n, alone=True)]
        for packed in self._serve_plans[n]:
            packed(stream.ptr)

    def new_output(self, n: int) -> np.ndarray:
        """The page-locked array a "fresh" call copies its logits into (tests fill it with NaN
        to see that every row is written)."""
        return memory.pinned_empty((n, 10))

    def allocate(self, model: Any, batch: int) -> None:
        """Compile the kernels, upload the weights and fill `self._a` (not timed)."""
        raise NotImplementedError

    def launches(
        self, start: int, count: int, alone: bool = False
    ) -> list[tuple[str, launch.PackedLaunch]]:
        """(phase, launch) of the kernels for images start..start+count (`alone`: the call's
        only chunk, a small batch, whose latency is the call's)."""
        raise NotImplementedError

    @property
    def image_bytes(self) -> int:
        return gpu.IMAGE_FLOATS * np.dtype(self.input_dtype).itemsize

    def host_input(self, images: np.ndarray) -> np.ndarray:
        return memory.pinned_copy(images)

    def check(self, images: np.ndarray) -> np.ndarray:
        """The images as the kernels read them (see gpu.check_images)."""
        return gpu.check_images(images, self._batch)

    def infer(self, images: np.ndarray) -> np.ndarray:
        images = self.check(images)
        n = len(images)
        if n == 0:
            return self._empty_logits()
        if self.output == "fresh" and n >= self.fresh_min_images:
            return self.issue(images, n, lambda: self.new_output(n))
        self.issue(images, n, lambda: self._out)
        return self._out[:n].copy()

    def issue(self, images: np.ndarray, n: int, output: Callable[[], np.ndarray]) -> np.ndarray:
        """Queue every chunk's copies and kernels, the logits into `output()`, wait for the
        streams they used, and return that array."""
        out = self.queue_chunks(images, n, output)
        with phase("sync"):
            for stream in self._streams[: len(self.plan(n))]:
                stream.synchronize()
        return out

    def queue_chunks(
        self, images: np.ndarray, n: int, output: Callable[[], np.ndarray]
    ) -> np.ndarray:
        """Queue every chunk's copy in, kernels and copy of its logits into `output()`, the
        array asked for only once the first chunk's copy and kernels are queued (with
        `early_copy`), so the copy that bounds the call starts before the host allocates."""
        in_ptr, logits_ptr = self._a["input"].data.ptr, self._a["logits"].data.ptr
        out = None if self.early_copy else output()
        for start, count, stream, launches in self.plan(n):
            with phase("h2d"):
                offset, nbytes = start * self.image_bytes, count * self.image_bytes
                memory.h2d(in_ptr + offset, images, offset, nbytes, stream)
            for name, packed in launches:
                with phase(name):
                    packed(stream.ptr)
            if out is None:
                out = output()
            with phase("d2h"):
                offset, nbytes = start * gpu.LOGIT_BYTES, count * gpu.LOGIT_BYTES
                memory.d2h(out, offset, logits_ptr + offset, nbytes, stream)
        assert out is not None  # (a plan has at least one chunk)
        return out

    def plan(self, n: int) -> list[Chunk]:
        """(start, count, stream, [(phase, launch)]) of every chunk for `n` images, built once
        per batch size."""
        return self.cut(n, self.max_chunks, self.taper, self.lead)

    def cut(self, n: int, max_chunks: int, taper: int, lead: int) -> list[Chunk]:
        """The chunks of `n` images cut as `chunk_bounds` says, dealt round-robin over the
        streams; built once per batch size and cut."""
        key = (n, max_chunks, taper, lead)
        if key not in self._plans:
            bounds = chunk_bounds(n, max_chunks, self.min_chunk_images, taper=taper, lead=lead)
            self._plans[key] = [
                (
                    start,
                    count,
                    self._streams[i % len(self._streams)],
                    self.launches(start, count, alone=len(bounds) == 1),
                )
                for i, (start, count) in enumerate(bounds)
            ]
        return self._plans[key]

    def row_ptrs(self, start: int) -> dict[str, int]:
        """The device address of image `start`'s row in every array of `self._a`."""
        return {
            name: arr.data.ptr + start * (arr.size // len(arr)) * arr.itemsize
            for name, arr in self._a.items()
        }
