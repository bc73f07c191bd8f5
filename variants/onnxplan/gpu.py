"""A layer plan run by CUDA kernels: the stages of a network study are choices made here.

`PlanStage` uploads the plan's weights, allocates the activation buffers `memory.slots`
assigns (each as large as the largest activation at the prepared batch) and, per batch size
seen, builds one list of steps: a (phase, callable) per layer, each callable one or more
packed kernel launches or cuBLAS calls. `infer` copies the input in, runs the steps each in
its layer's NVTX range (consecutive layers of one phase share one range) and copies the
output out. Subclasses choose how a Conv and a Gemm run
(`conv_steps`, `gemm_steps`); every other op has one plain kernel of kernels/layers.cu.
`Im2ColStage` runs convolutions as Im2Col + cuBLAS; the fused stages are in `fused_stages`.

CuPy is imported inside the methods: importing this module needs neither CuPy nor a GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from profiler.errors import DataError, UsageError
from profiler.ranges import range as phase
from profiler.study import Stage
from variants.cuda import build, memory
from variants.cuda.launch import PackedLaunch, grid_for, i32
from variants.onnxplan import fold
from variants.onnxplan import memory as slots_of
from variants.onnxplan.plan import Layer, Plan

KERNELS = Path(__file__).with_name("kernels") / "layers.cu"
NAMES = ("conv_direct", "im2col", "bias_channels", "clip", "add", "batchnorm",
         "global_avg_pool", "pool", "gemm_naive")
BLOCK = 256
Step = Callable[[], None]


class PlanStage(Stage):
    """A network run layer by layer with one plain kernel per ONNX node (direct convolution)."""

    def prepare(self, model: Any, batch: int) -> None:
        import cupy

        self.plan: Plan = model.plan
        self._batch = batch
        self._k = build.kernels(build.compile_module(KERNELS), NAMES)
        self._w = {ly.name: self.upload(ly) for ly in self.plan.layers}
        self._where, count = slots_of.slots(self.plan)
        size = batch * slots_of.largest(self.plan)
        self._bufs = [cupy.empty(size, cupy.float32) for _ in range(count)]
        self._steps: dict[int, list[tuple[str, Step]]] = {}

    def upload(self, layer: Layer) -> dict[str, Any]:
        """The layer's weights on the device (BatchNormalization as scale and shift)."""
        import cupy

        if layer.op == "BatchNormalization":
            scale, shift = fold.fold_scale(layer)
            return {"scale": cupy.asarray(scale, cupy.float32),
                    "shift": cupy.asarray(shift, cupy.float32)}
        if layer.op == "Add" and "bias" in layer.params:
            raise DataError(f"node {layer.name!r} (op Add): an Add of a constant is not run by "
                            "the CUDA stages")
        return {k: cupy.asarray(np.ascontiguousarray(v, np.float32))
                for k, v in layer.params.items()}

    def buffers(self) -> dict[str, Any]:
        """Every device array a call writes (tests poison them)."""
        return {f"slot{i}": b for i, b in enumerate(self._bufs)}

    def ptr(self, tensor: str) -> int:
        return int(self._bufs[self._where[tensor]].data.ptr)

    def view(self, tensor: str, shape: tuple[int, ...]) -> Any:
        """The tensor's buffer seen as a C-contiguous array of `shape`."""
        return self._bufs[self._where[tensor]][: math.prod(shape)].reshape(shape)

    def infer(self, x: np.ndarray) -> np.ndarray:
        n = len(x)
        if n > self._batch or x.shape[1:] != self.plan.input_shape:
            raise UsageError(f"inputs {x.shape}: the stage was prepared for "
                             f"{self._batch} items of {self.plan.input_shape}")
        steps = self._steps.get(n) or self._steps.setdefault(n, self.build_steps(n))
        x = np.ascontiguousarray(x, dtype=np.float32)
        with phase("h2d"):
            memory.h2d(self.ptr(self.plan.input), x, 0, x.nbytes)
        for name, group in groupby(steps, key=itemgetter(0)):
            with phase(name):  # once for consecutive layers of one phase (a ResNet block part)
                for _, step in group:
                    step()
        out = self.output_buffer(n)
        with phase("d2h"):
            memory.d2h(out, 0, self.ptr(self.plan.output), out.nbytes)
        return out.copy() if self.pinned else out

    #: the input given and the output received in page-locked host memory
    pinned = False

    def host_input(self, x: np.ndarray) -> np.ndarray:
        """The input as the application keeps it: page-locked when the stage says so."""
        return memory.pinned_copy(np.ascontiguousarray(x, np.float32)) if self.pinned else x

    def output_buffer(self, n: int) -> np.ndarray:
        """Where the output of `n` items is copied to (page-locked for a pinned stage; the
        caller gets its own copy, a few KB an item)."""
        if not self.pinned:
            return np.empty((n, *self.plan.output_shape), np.float32)
        if getattr(self, "_out", None) is None or len(self._out) < n:
            self._out = memory.pinned_empty((self._batch, *self.plan.output_shape))
        return self._out[:n]

    def build_steps(self, n: int) -> list[tuple[str, Step]]:
        """(phase, step) of every layer that computes something, for batches of `n`."""
        out = []
        for layer in self.plan.layers:
            step = self.layer_step(layer, n)
            if step is not None:
                out.append((layer.phase, step))
        return out

    def layer_step(self, layer: Layer, n: int) -> Step | None:
        op = layer.op
        if op in ("Flatten", "Reshape"):
            return None  # a view: it shares its input's buffer
        if op == "Conv":
            return _chain(self.conv_steps(layer, n))
        if op == "Gemm":
            return _chain(self.gemm_steps(layer, n))
        return self.elementwise_step(layer, n)

    def elementwise_step(self, layer: Layer, n: int) -> Step:
        """Clip, Relu, Add, BatchNormalization, pools: one plain kernel each."""
        x, y, w = self.ptr(layer.inputs[0]), self.ptr(layer.output), self._w[layer.name]
        count = n * math.prod(layer.out_shape)
        grid = grid_for(count, BLOCK)
        if layer.op in ("Clip", "Relu"):
            lo, hi = (0.0, np.inf) if layer.op == "Relu" else (layer.attrs["min"],
                                                                 layer.attrs["max"])
            args = [x, y, np.int64(count), np.float32(lo), np.float32(hi)]
            return PackedLaunch(self._k["clip"], grid, BLOCK, args)
        if layer.op == "Add":
            args = [x, self.ptr(layer.inputs[1]), y, np.int64(count)]
            return PackedLaunch(self._k["add"], grid, BLOCK, args)
        c, h, wd = layer.in_shape
        if layer.op == "BatchNormalization":
            args = [x, y, w["scale"], w["shift"], np.int64(count), i32(c), i32(h * wd)]
            return PackedLaunch(self._k["batchnorm"], grid, BLOCK, args)
        if layer.op == "GlobalAveragePool":
            args = [x, y, i32(n * c), i32(h * wd)]
            return PackedLaunch(self._k["global_avg_pool"], grid_for(n * c, BLOCK), BLOCK, args)
        a = layer.attrs
        window = [*a["kernel"], *a["stride"], a["pads"][0], a["pads"][1]]
        args = [x, y, i32(n), i32(c), i32(h), i32(wd), *map(i32, layer.out_shape[1:]),
                *map(i32, window), i32(layer.op == "MaxPool"),
                i32(a.get("count_include_pad", 0))]
        return PackedLaunch(self._k["pool"], grid, BLOCK, args)

    def conv_steps(self, layer: Layer, n: int) -> list[Step]:
        """One generic direct-convolution kernel, one thread per output element."""
        c, h, wd = layer.in_shape
        oc, ho, wo = layer.out_shape
        a, w = layer.attrs, self._w[layer.name]
        args = [self.ptr(layer.inputs[0]), w["weight"], w["bias"], self.ptr(layer.output),
                i32(n), i32(c), i32(h), i32(wd), i32(oc), i32(ho), i32(wo), *map(i32, a["kernel"]),
                *map(i32, a["stride"]), i32(a["pads"][0]), i32(a["pads"][1]), i32(a["group"])]
        grid = grid_for(n * oc * ho * wo, BLOCK)
        return [PackedLaunch(self._k["conv_direct"], grid, BLOCK, args)]

    def gemm_steps(self, layer: Layer, n: int) -> list[Step]:
        """One thread per output, a dot product of a row of x and a row of the weight."""
        m, k = layer.params["weight"].shape
        w = self._w[layer.name]
        args = [self.ptr(layer.inputs[0]), w["weight"], w["bias"], self.ptr(layer.output),
                i32(n), i32(k), i32(m)]
        return [PackedLaunch(self._k["gemm_naive"], grid_for(n * m, BLOCK), BLOCK, args)]

    def release(self) -> None:
        vars(self).clear()


def _chain(steps: list[Step]) -> Step:
    if len(steps) == 1:
        return steps[0]

    def run() -> None:
        for step in steps:
            step()

    return run


class Im2ColStage(PlanStage):
    """Every Conv as Im2Col into a column buffer then one cuBLAS GEMM per group (through
    CuPy's matmul, batched over the items), then a bias kernel; Gemm through cuBLAS too."""

    def prepare(self, model: Any, batch: int) -> None:
        import cupy

        super().prepare(model, batch)
        convs = [ly for ly in self.plan.layers if ly.op == "Conv"]
        cols = max((col_size(ly) for ly in convs), default=1)
        self._col = cupy.empty(batch * cols, cupy.float32)

    def upload(self, layer: Layer) -> dict[str, Any]:
        w = super().upload(layer)
        if layer.op == "Conv":
            g = layer.attrs["group"]
            oc = layer.out_shape[0]
            w["weight"] = w["weight"].reshape(g, oc // g, -1)  # (group, og, cg*kh*kw)
        if layer.op == "Gemm":
            w["weight_t"] = w["weight"].T  # (k, m): x (n, k) @ w.T, a transposed cuBLAS op
        return w

    def buffers(self) -> dict[str, Any]:
        return super().buffers() | {"col": self._col}

    def conv_steps(self, layer: Layer, n: int) -> list[Step]:
        import cupy

        c, h, wd = layer.in_shape
        oc, ho, wo = layer.out_shape
        a, w = layer.attrs, self._w[layer.name]
        g, (kh, kw) = a["group"], a["kernel"]
        args = [self.ptr(layer.inputs[0]), self._col, i32(n), i32(c), i32(h), i32(wd), i32(ho),
                i32(wo), i32(kh), i32(kw), *map(i32, a["stride"]), i32(a["pads"][0]),
                i32(a["pads"][1])]
        total = n * c * kh * kw * ho * wo
        im2col = PackedLaunch(self._k["im2col"], grid_for(total, BLOCK), BLOCK, args)
        col = self._col[:total].reshape(n, g, c // g * kh * kw, ho * wo)
        y = self.view(layer.output, (n, g, oc // g, ho * wo))
        weight = w["weight"]

        def gemm() -> None:
            cupy.matmul(weight, col, out=y)

        count = n * oc * ho * wo
        bias = PackedLaunch(self._k["bias_channels"], grid_for(count, BLOCK), BLOCK,
                            [self.ptr(layer.output), w["bias"], np.int64(count), i32(oc),
                             i32(ho * wo)])
        return [im2col, gemm, bias]

    def gemm_steps(self, layer: Layer, n: int) -> list[Step]:
        import cupy

        m, k = layer.params["weight"].shape
        w = self._w[layer.name]
        x, y = self.view(layer.inputs[0], (n, k)), self.view(layer.output, (n, m))

        def gemm() -> None:
            cupy.matmul(x, w["weight_t"], out=y)
            cupy.add(y, w["bias"], out=y)

        return [gemm]


def col_size(layer: Layer) -> int:
    """Values per item of a Conv's Im2Col buffer."""
    kh, kw = layer.attrs["kernel"]
    return layer.in_shape[0] * kh * kw * layer.out_shape[1] * layer.out_shape[2]
