"""The layer-by-layer CUDA stages (batch_parallel through fc_coalesced) as one class whose
class attributes say which kernels run, whether every launch is followed by a device
synchronise, and whether host memory is page-locked. Each stage module sets all four, so a
stage reads on its own; the study's order is stated once, in variants/lenet/study.py.

Also the plan of the generic kernels, which cuda_baseline runs one image at a time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

import numpy as np

from profiler.errors import UsageError
from profiler.ranges import range as phase
from variants.cuda import build, launch, memory
from variants.lenet import gpu
from variants.lenet.stages._cuda import CudaStage

BLOCK = 256  # threads per block of the generic kernels
I32 = launch.i32

#: (name, shape per image) of every activation buffer, in layer order
ACTIVATIONS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("input", (1, 28, 28)),
    ("conv1", (6, 24, 24)),
    ("pool1", (6, 12, 12)),
    ("conv2", (16, 8, 8)),
    ("pool2", (16, 4, 4)),
    ("fc1", (120,)),
    ("fc2", (84,)),
    ("fc3", (10,)),
)


class Launch(NamedTuple):
    """One kernel launch of a plan: the phase name it runs under, the kernel and its arguments."""

    phase: str
    kernel: Any
    grid: int
    block: int
    args: tuple[Any, ...]

    def packed(self) -> launch.PackedLaunch:
        """This launch with its arguments packed once (see launch.PackedLaunch)."""
        return launch.PackedLaunch(self.kernel, self.grid, self.block, self.args)


def activation_buffers(batch: int) -> dict[str, Any]:
    """One uninitialised float32 device array per activation, for `batch` images."""
    return {name: memory.device_empty((batch, *shape)) for name, shape in ACTIVATIONS}


def generic_plan(
    k: Mapping[str, Any], w: Mapping[str, Any], a: Mapping[str, Any], n: int
) -> list[Launch]:
    """The seven launches of the generic kernels (generic.cu) for `n` images.

    Raises: UsageError when a layer would have 2^31 or more outputs (the kernels index in 32 bits).
    """
    if n * 6 * 24 * 24 >= 2**31:
        raise UsageError(f"{n} images are too many for the generic kernels' 32-bit indices")

    def conv(name: str, src: str, c: int, hw: int, o: int) -> Launch:
        items = n * o * (hw - 4) ** 2
        ints = map(I32, (n, c, hw, hw, o, 5))
        args = (a[src], w[f"{name}.weight"], w[f"{name}.bias"], a[name], *ints)
        return Launch(name, k["Conv_ReLu"], launch.grid_for(items, BLOCK), BLOCK, args)

    def pool(name: str, src: str, c: int, hw: int) -> Launch:
        items = n * c * (hw // 2) ** 2
        args = (a[src], a[name], I32(n), I32(c), I32(hw), I32(hw))
        return Launch(name, k["MaxPool"], launch.grid_for(items, BLOCK), BLOCK, args)

    def linear(name: str, src: str, i: int, o: int, relu: bool) -> Launch:
        args = (
            a[src],
            w[f"{name}.weight"],
            w[f"{name}.bias"],
            a[name],
            I32(n),
            I32(i),
            I32(o),
            I32(relu),
        )
        return Launch(name, k["Linear_ReLu"], launch.grid_for(n * o, BLOCK), BLOCK, args)

    return [
        conv("conv1", "input", 1, 28, 6),
        pool("pool1", "conv1", 6, 24),
        conv("conv2", "pool1", 6, 12, 16),
        pool("pool2", "conv2", 16, 8),
        linear("fc1", "pool2", 256, 120, True),
        linear("fc2", "fc1", 120, 84, True),
        linear("fc3", "fc2", 84, 10, False),
    ]


device_synchronize = memory.device_synchronize  # as the study's code called after every launch


GENERIC_KERNELS = ("Conv_ReLu", "MaxPool", "Linear_ReLu")
CONV_KERNELS = ("Conv1_ReLu", "Conv2_ReLu")
FC_KERNELS = ("Linear1_ReLu", "Linear2_ReLu", "Linear3")
CONV1_IMGS, CONV2_IMGS = 4, 4  # images per block of Conv1_ReLu and Conv2_ReLu (256 threads)
FC_IMGS = 16  # images per block of the Linear kernels (fc.cu)


def conv_constants(weights: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """conv1's weights by the names of their `__constant__` arrays (conv.cu, fused.cu)."""
    return {"c_conv1_w": weights["conv1.weight"], "c_conv1_b": weights["conv1.bias"]}


def device_weights(weights: Mapping[str, np.ndarray], fc_transposed: bool) -> dict[str, Any]:
    """Every weight on the device as PyTorch lays it out, plus "conv2.weight_t", conv2's weights
    transposed to (c, ky, kx, o) for conv2_quad; fc weights transposed to (in, out) when
    `fc_transposed`."""
    host = dict(weights)
    host["conv2.weight_t"] = np.transpose(weights["conv2.weight"], (1, 2, 3, 0))
    transpose = [f"fc{i}.weight" for i in (1, 2, 3)] if fc_transposed else []
    return memory.upload(host, transpose=transpose)


class LayeredStage(CudaStage):
    """One launch per layer over the whole batch, configured by the class attributes."""

    #: "generic" (Conv_ReLu) or "specialised" (Conv1_ReLu, Conv2_ReLu of conv.cu)
    conv_kernels: ClassVar[str] = "generic"
    #: "generic" (Linear_ReLu), "specialised" (fc.cu, weights (out, in)) or "coalesced"
    #: (fc.cu built with LENET_FC_TRANSPOSED, weights (in, out))
    fc_kernels: ClassVar[str] = "generic"
    #: cudaDeviceSynchronize after every launch (the study's habit) or one at the end
    sync_each: ClassVar[bool] = True
    #: page-locked input and output, asynchronous copies on a stream of the stage's own
    pinned: ClassVar[bool] = False

    def prepare(self, model: Any, batch: int) -> None:
        self._batch = batch
        self._k: dict[str, Any] = {}
        self._modules = self._compile(model.weights)
        for module, kernel_names in self._modules:
            self._k.update(build.kernels(module, kernel_names))
        self._w = device_weights(model.weights, fc_transposed=self.fc_kernels == "coalesced")
        self._a = activation_buffers(batch)
        self._buffers = dict(self._a)
        self._plans: dict[int, list[tuple[str, launch.PackedLaunch]]] = {}
        self._stream: Any = None
        if self.pinned:
            import cupy

            self._stream = cupy.cuda.Stream(non_blocking=True)
            self._out = memory.pinned_empty((batch, 10))
            self._buffers["host_logits"] = self._out

    def _compile(self, weights: Mapping[str, np.ndarray]) -> list[tuple[Any, tuple[str, ...]]]:
        """(module, kernel names) for every .cu file this configuration needs."""
        out: list[tuple[Any, tuple[str, ...]]] = [(gpu.compile_module("generic"), GENERIC_KERNELS)]
        if self.conv_kernels == "specialised":
            conv = gpu.compile_module("conv")
            gpu.set_constants(conv, "conv", conv_constants(weights))
            out.append((conv, CONV_KERNELS))
        if self.fc_kernels != "generic":
            defines = ["LENET_FC_TRANSPOSED"] if self.fc_kernels == "coalesced" else []
            out.append((gpu.compile_module("fc", defines), FC_KERNELS))
        return out

    def host_input(self, images: np.ndarray) -> np.ndarray:
        if not self.pinned:
            return images
        return memory.pinned_copy(images)

    def plan(self, n: int) -> list[tuple[str, launch.PackedLaunch]]:
        """(phase, launch) of every kernel for `n` images, packed once per batch size."""
        if n not in self._plans:
            self._plans[n] = [(ln.phase, ln.packed()) for ln in self.launches(n)]
        return self._plans[n]

    def launches(self, n: int) -> list[Launch]:
        """The launches for `n` images, generic ones replaced as the class attributes say."""
        k, w, a = self._k, self._w, self._a
        layers = {ln.phase: ln for ln in generic_plan(k, w, a, n)}
        if self.conv_kernels == "specialised":
            args1 = (a["input"], a["conv1"], I32(n))
            args2 = (a["pool1"], w["conv2.weight_t"], w["conv2.bias"], a["conv2"], I32(n))
            conv1 = Launch("conv1", k["Conv1_ReLu"], launch.grid_for(n, CONV1_IMGS), 256, args1)
            layers["conv1"] = conv1
            layers["conv2"] = Launch(
                "conv2", k["Conv2_ReLu"], launch.grid_for(n, CONV2_IMGS), 64 * CONV2_IMGS, args2
            )
        if self.fc_kernels != "generic":
            grid = launch.grid_for(n, FC_IMGS)
            for name, kernel, src, block in (
                ("fc1", "Linear1_ReLu", "pool2", 128),
                ("fc2", "Linear2_ReLu", "fc1", 96),
                ("fc3", "Linear3", "fc2", 32),
            ):
                args = (a[src], w[f"{name}.weight"], w[f"{name}.bias"], a[name], I32(n))
                layers[name] = Launch(name, k[kernel], grid, block, args)
        return list(layers.values())

    # the serving stream protocol (profiler.collect.serve.engines): the kernels alone, on a
    # stream the server owns; a stage that synchronises after every launch cannot take part

    @property
    def serves_on_streams(self) -> bool:
        return not self.sync_each

    def serve_buffers(self) -> tuple[Any, Any]:
        """The device input images and logits, `batch` of each."""
        return self._a["input"], self._a["fc3"]

    def enqueue(self, n: int, stream: Any) -> None:
        """The seven (or specialised) launches for the first `n` images, on `stream`."""
        for _, packed in self.plan(n):
            packed(stream.ptr)

    def infer(self, images: np.ndarray) -> np.ndarray:
        images = gpu.check_images(images, self._batch)
        n = len(images)
        if n == 0:
            return self._empty_logits()
        plan = self.plan(n)
        out = self._out if self.pinned else np.empty((n, 10), dtype=np.float32)
        stream = self._stream
        stream_ptr = stream.ptr if stream is not None else 0  # 0: the legacy default stream
        with phase("h2d"):
            memory.h2d(self._a["input"].data.ptr, images, 0, n * gpu.IMAGE_BYTES, stream)
        for name, packed in plan:
            with phase(name):
                packed(stream_ptr)
                if self.sync_each:
                    device_synchronize()
        with phase("d2h"):
            memory.d2h(out, 0, self._a["fc3"].data.ptr, n * gpu.LOGIT_BYTES, stream)
        with phase("sync"):
            (stream.synchronize if stream is not None else device_synchronize)()
        return out[:n].copy() if self.pinned else out
