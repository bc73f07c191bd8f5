"""The whole network in one kernel (kernels/one_kernel.cu), chunked and overlapped with the
copies; conv weights in shared memory (one_kernel) or in constant memory (one_kernel_const)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from profiler.errors import UsageError
from profiler.ranges import range as phase
from variants.cuda import build, launch, memory
from variants.lenet import gpu
from variants.lenet.stages._chunked import ChunkedStage
from variants.lenet.stages._layered import device_weights

IMGS = 8  # images per block (LENET_IMGS in one_kernel.cu)
#: images per block of a call of one chunk (a small batch): four times the blocks, each a quarter
#: of the work, for latency. Not for the last of several chunks: with 2 images a block, 1,250
#: images are 625 blocks, two waves, and measured 25 us slower than one wave of 157 (NOTES.md)
SMALL_IMGS = 2
THREADS = 256
CONV_WEIGHT_FLOATS = 160 + 2416  # conv1 (padded) and conv2 weights and biases in shared memory
#: LeNet_Fused's weight arguments, in order; its input is argument 0, its logits OUT_ARG
WEIGHT_NAMES = ("conv1.weight", "conv1.bias", "conv2.weight_t", "conv2.bias") + tuple(
    f"fc{i}.{kind}" for i in (1, 2, 3) for kind in ("weight", "bias")
)
OUT_ARG = 1 + len(WEIGHT_NAMES)
#: the kernel reads its input 16 bytes at a time, so input read in place must be this aligned
IN_PLACE_ALIGN = 16


def shared_bytes(imgs: int, const_weights: bool) -> int:
    """Dynamic shared memory of one block: the input and pool1 maps of `imgs` images, plus the
    conv weights unless they are in constant memory (the kernel's layout)."""
    return 4 * (imgs * (784 + 864) + (0 if const_weights else CONV_WEIGHT_FLOATS))


def conv_constants(weights: Any) -> dict[str, np.ndarray]:
    """conv1's and conv2's weights by the names of one_kernel.cu's `__constant__` arrays, conv2's
    transposed to (c, ky, kx, o) as its shared-memory copy is."""
    return {
        "c_conv1_w": weights["conv1.weight"],
        "c_conv1_b": weights["conv1.bias"],
        "c_conv2_wt": np.transpose(weights["conv2.weight"], (1, 2, 3, 0)),
        "c_conv2_b": weights["conv2.bias"],
    }


class OneKernel(ChunkedStage):
    """Whole network in one kernel

    One kernel runs all of LeNet: a block of 256 threads owns eight images end to end (conv1,
    pool, conv2, pool, three fully-connected layers), keeps the pooled maps and hidden vectors in
    shared memory and writes only the logits, with the conv weights copied into shared memory
    and each fully-connected dot product split over threads so all 256 work (a small batch, one
    chunk, two images a block for latency), the chunks that follow the batch (at most four, the
    last one halved twice more and run two images a block, so that little compute is left after
    the last copy) overlap its copies, the first copy is queued before anything else, and the
    logits land in a fresh page-locked array handed to the caller instead of being copied out of
    a buffer of the stage's own.
    """

    output = "fresh"
    early_copy = True
    #: at most four chunks (fewer copies and launches to issue; measured in NOTES.md), the last
    #: halved twice (taper), chunks of up to 700 images built two images a block
    max_chunks = 4
    taper = 2
    small_chunk_images = 700

    #: conv weights in __constant__ memory instead of shared memory (LENET_CONST_WEIGHTS)
    const_weights: ClassVar[bool] = False
    #: images per block (LENET_IMGS), and in a call of one chunk (see SMALL_IMGS)
    imgs: ClassVar[int] = IMGS
    small_imgs: ClassVar[int] = SMALL_IMGS
    #: fc1's and fc2's inputs read four at a time (LENET_FC_VEC4)
    fc_vec: ClassVar[bool] = True
    #: groups of four fc weights a thread has in flight with fc_vec (LENET_FC_UNROLL)
    fc_unroll: ClassVar[int] = 2
    #: the input and conv2's weights staged with every load issued first (LENET_STAGE_ALL)
    stage_all: ClassVar[bool] = True
    #: blocks an SM the kernel's registers must allow (LENET_MIN_BLOCKS; 0: ptxas's choice)
    min_blocks: ClassVar[int] = 0
    #: page-locked input read in place by the kernel, across PCIe, and the logits written
    #: straight into a page-locked array: one launch a call, no copies (see infer_in_place)
    in_place: ClassVar[bool] = False
    #: images per block read in place above small_chunk_images (10,000 uint8 images: 4 beat 2
    #: and 8 on two leases, NOTES.md)
    in_place_imgs: ClassVar[int] = 4

    def defines(self, imgs: int) -> list[str]:
        out = [f"LENET_IMGS={imgs}"]
        out += ["LENET_FC_VEC4", f"LENET_FC_UNROLL={self.fc_unroll}"] if self.fc_vec else []
        out += ["LENET_STAGE_ALL"] if self.stage_all else []
        out += [f"LENET_MIN_BLOCKS={self.min_blocks}"] if self.min_blocks else []
        out += ["LENET_CONST_WEIGHTS"] if self.const_weights else []
        out += ["LENET_INPUT_U8"] if np.dtype(self.input_dtype) == np.uint8 else []
        return out

    def allocate(self, model: Any, batch: int) -> None:
        self._model = model
        self._modules: list[Any] = []  # kept: the kernels live in them
        sizes = {self.imgs, self.small_imgs} | ({self.in_place_imgs} if self.in_place else set())
        self._kernels = {imgs: self.kernel(model, imgs) for imgs in sizes}
        self._in_place: dict[int, launch.PackedLaunch] = {}
        self._w = device_weights(model.weights, fc_transposed=True)
        self._a = {
            "input": memory.device_empty((batch, gpu.IMAGE_FLOATS), self.input_dtype),
            "logits": memory.device_empty((batch, gpu.CLASSES)),
        }

    def kernel(self, model: Any, imgs: int, extra: Sequence[str] = ()) -> Any:
        """LeNet_Fused compiled for `imgs` images a block (and `extra` defines), allowed its
        shared memory."""
        module = gpu.compile_module("one_kernel", [*self.defines(imgs), *extra])
        if self.const_weights:
            gpu.set_constants(module, "one_kernel", conv_constants(model.weights))
        self._modules.append(module)
        kernel = build.kernels(module, ["LeNet_Fused"])["LeNet_Fused"]
        launch.allow_shared(kernel, shared_bytes(imgs, self.const_weights))
        return kernel

    def launches(
        self, start: int, count: int, alone: bool = False
    ) -> list[tuple[str, launch.PackedLaunch]]:
        """The one kernel for images start..start+count (built for `small_imgs` images a block
        when the chunk is the call's only one)."""
        ptr = self.row_ptrs(start)
        imgs = self.small_imgs if alone or count <= self.small_chunk_images else self.imgs
        kernel = self._kernels[imgs]
        return [("lenet", self.packed(kernel, imgs, count, ptr["input"], ptr["logits"]))]

    def packed(
        self, kernel: Any, imgs: int, n: int, input_at: int, out_at: int, *more: int
    ) -> launch.PackedLaunch:
        """A launch of LeNet_Fused (`kernel`, built for `imgs` images a block) over `n` images:
        its arguments the input's address, the weights (WEIGHT_NAMES), the logits' address
        (OUT_ARG), n, then `more` (the rows, for a LENET_INPUT_ROWS build)."""
        args = (input_at, *(self._w[k] for k in WEIGHT_NAMES), out_at, launch.i32(n), *more)
        smem = shared_bytes(imgs, self.const_weights)
        return launch.PackedLaunch(kernel, launch.grid_for(n, imgs), THREADS, args, smem)

    def whole_batch_imgs(self, n: int) -> int:
        """Images a block of one launch over a whole batch of `n` read in place: two for a small
        batch, for latency, as a lone chunk is; `in_place_imgs` above `small_chunk_images`."""
        return self.small_imgs if n <= self.small_chunk_images else self.in_place_imgs

    def infer(self, images: np.ndarray) -> np.ndarray:
        if self.in_place:
            images = self.check(images)
            address = memory.mapped_address(images) if len(images) else None
            if address is not None and address % IN_PLACE_ALIGN == 0:
                return self.infer_in_place(images, address)
        return super().infer(images)  # pageable input: copied in chunks

    def infer_in_place(self, images: np.ndarray, address: int) -> np.ndarray:
        """One launch of the kernel on `images`, read where they lie (page-locked, at device
        address `address`), its logits written into a page-locked array, then a wait on it: each
        block computes as soon as its own images have crossed PCIe, not after a chunk's copy."""
        n = len(images)
        fresh = self.output == "fresh" and n >= self.fresh_min_images
        out = self.new_output(n) if fresh else self._out
        out_address = memory.mapped_address(out)
        assert out_address is not None  # (both outputs are page-locked)
        packed = self._in_place.get(n) or self.in_place_launch(n)
        packed.set_address(0, address)
        packed.set_address(OUT_ARG, out_address)
        stream = self._streams[0]
        with phase("lenet"):
            packed(stream.ptr)
        with phase("sync"):
            stream.synchronize()
        return out if fresh else out[:n].copy()

    def in_place_launch(self, n: int) -> launch.PackedLaunch:
        """The launch for `n` images read in place (addresses set per call), kept per batch
        size (`whole_batch_imgs` images a block)."""
        imgs = self.whole_batch_imgs(n)
        self._in_place[n] = self.packed(self._kernels[imgs], imgs, n, 0, 0)
        return self._in_place[n]

    # the server reads its requests in place (profiler.collect.serve.engines.RowsEngine)

    def bind_rows(self, pool: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
        """Serve from `pool` in place: `enqueue_rows(n)` then runs the kernel over images
        pool[rows[:n]] into out[:n], all three page-locked host memory read or written across
        PCIe (no gather, no copies). Raises: UsageError when they cannot be read in place."""
        if pool.dtype != np.dtype(self.input_dtype) or pool.shape[1:] != (1, 28, 28):
            raise UsageError(
                f"the kernel reads {np.dtype(self.input_dtype)} images (n, 1, 28, 28), the "
                f"pool holds {pool.dtype} {pool.shape[1:]}"
            )
        if rows.dtype != np.int32 or out.dtype != np.float32 or out.shape[1:] != (gpu.CLASSES,):
            raise UsageError("rows must be int32 and the outputs float32 (n, 10)")
        addresses = [memory.mapped_address(a) for a in (pool, rows, out)]
        if None in addresses:
            raise UsageError("the pool, rows and outputs must be page-locked to be read in place")
        if addresses[0] % IN_PLACE_ALIGN:  # type: ignore[operator]
            raise UsageError(f"the pool is not aligned to {IN_PLACE_ALIGN} bytes")
        self._rows_at = addresses
        self._rows_launches: dict[int, launch.PackedLaunch] = {}
        self._rows_kernels: dict[int, Any] = {}

    def enqueue_rows(self, n: int, stream: Any) -> None:
        """The kernel over the bound pool's rows rows[:n] into out[:n] on `stream` (see
        bind_rows); its launch built once per batch size."""
        packed = self._rows_launches.get(n) or self.rows_launch(n)
        packed(stream.ptr)

    def rows_launch(self, n: int) -> launch.PackedLaunch:
        """The LENET_INPUT_ROWS launch for `n` images (`whole_batch_imgs` images a block)."""
        imgs = self.whole_batch_imgs(n)
        if imgs not in self._rows_kernels:
            self._rows_kernels[imgs] = self.kernel(self._model, imgs, ["LENET_INPUT_ROWS"])
        pool_at, rows_at, out_at = self._rows_at
        kernel = self._rows_kernels[imgs]
        self._rows_launches[n] = self.packed(kernel, imgs, n, pool_at, out_at, rows_at)
        return self._rows_launches[n]


class OneKernelConst(OneKernel):
    """Weights in constant memory

    The same one kernel with conv1's and conv2's weights and biases in constant memory, read as
    operands of the FMAs through the constant cache, instead of copied into each block's shared
    memory (the fully-connected weights, 173 KB, exceed the 64 KB constant bank in both), the
    choice the known study compared layer by layer, answered here by Nsight Compute's counters.
    """

    const_weights = True
