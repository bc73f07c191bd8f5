"""The fused stages of a layer plan: epilogue fusion, a kernel per kind of layer, tuned
kernels, pinned copies and a CUDA graph, each a subclass of the one before (see
`variants.onnxplan.gpu` for the plain stages they build on). CUDA in kernels/fused.cu."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from variants.cuda import build
from variants.cuda.launch import PackedLaunch, grid_for, i32
from variants.onnxplan.gpu import BLOCK, PlanStage, Step
from variants.onnxplan.plan import Layer, Plan

FUSED_KERNELS = Path(__file__).with_name("kernels") / "fused.cu"
FUSED_NAMES = ("conv_direct_fused", "pointwise_gemm", "depthwise3x3", "pointwise_gemm_tuned",
               "depthwise3x3_direct", "stem_conv3x3")
STEM_WEIGHTS = 4096  # floats of stem_conv3x3's shared weight array
GEMM_TILE = 64  # pointwise_gemm's output tile (rows and columns)


class FusedStage(PlanStage):
    """The plan with residual Adds and activations fused into the convolution before them
    (`fuse.epilogues`): the direct convolution kernel applies bias, residual and clip before
    its single write."""

    def prepare(self, model: Any, batch: int) -> None:
        from variants.onnxplan import fuse

        super().prepare(_with_plan(model, fuse.epilogues(model.plan)), batch)
        self._fk = build.kernels(build.compile_module(FUSED_KERNELS), FUSED_NAMES)

    def epilogue_args(self, layer: Layer) -> list[Any]:
        """(residual pointer or 0, lo, hi) of a fused layer."""
        lo, hi = layer.attrs.get("act") or (-np.inf, np.inf)
        res = self.ptr(layer.inputs[1]) if len(layer.inputs) > 1 else 0
        return [res, np.float32(lo), np.float32(hi)]

    def conv_steps(self, layer: Layer, n: int) -> list[Step]:
        c, h, wd = layer.in_shape
        oc, ho, wo = layer.out_shape
        a, w = layer.attrs, self._w[layer.name]
        res, lo, hi = self.epilogue_args(layer)
        args = [self.ptr(layer.inputs[0]), w["weight"], w["bias"], res, self.ptr(layer.output),
                i32(n), i32(c), i32(h), i32(wd), i32(oc), i32(ho), i32(wo), *map(i32, a["kernel"]),
                *map(i32, a["stride"]), i32(a["pads"][0]), i32(a["pads"][1]), i32(a["group"]),
                lo, hi]
        grid = grid_for(n * oc * ho * wo, BLOCK)
        return [PackedLaunch(self._fk["conv_direct_fused"], grid, BLOCK, args)]


class SpecialisedStage(FusedStage):
    """Fused epilogues, and a kernel per kind of layer: 1x1 convolutions and the classifier
    as one tiled GEMM over the batch's pixels (NCHW in and out), 3x3 depthwise convolutions
    from shared-memory tiles; the rest keep the direct kernel."""

    gemm_kernel = "pointwise_gemm"

    def conv_steps(self, layer: Layer, n: int) -> list[Step]:
        if is_pointwise(layer):
            c, h, wd = layer.in_shape
            return [self._gemm(layer, n * h * wd, h * wd)]
        if is_depthwise3x3(layer):
            return [self._depthwise(layer, n)]
        return super().conv_steps(layer, n)

    def gemm_steps(self, layer: Layer, n: int) -> list[Step]:
        return [self._gemm(layer, n, 1)]

    def _gemm(self, layer: Layer, cols: int, hw: int) -> Step:
        w = self._w[layer.name]
        m, k = layer.out_shape[0], layer.in_shape[0]
        grid = (grid_for(cols, GEMM_TILE), grid_for(m, GEMM_TILE), 1)
        res, lo, hi = self.epilogue_args(layer)
        args = [self.ptr(layer.inputs[0]), w["weight"], w["bias"], res, self.ptr(layer.output),
                i32(m), i32(k), i32(cols), i32(hw), lo, hi]
        return PackedLaunch(self._fk[self.gemm_kernel], grid, (256, 1, 1), args)

    def _depthwise(self, layer: Layer, n: int) -> Step:
        c, h, wd = layer.in_shape
        _, ho, wo = layer.out_shape
        w = self._w[layer.name]
        res, lo, hi = self.epilogue_args(layer)
        args = [self.ptr(layer.inputs[0]), w["weight"], w["bias"], res, self.ptr(layer.output),
                i32(c), i32(h), i32(wd), i32(ho), i32(wo), i32(layer.attrs["stride"][0]), lo, hi]
        grid = (n * c, grid_for(ho, 8), grid_for(wo, 32))
        return PackedLaunch(self._fk["depthwise3x3"], grid, (32, 8, 1), args)


def is_pointwise(layer: Layer) -> bool:
    """A 1x1 convolution of stride 1, no padding, one group: a GEMM."""
    a = layer.attrs
    return (a["kernel"] == (1, 1) and a["stride"] == (1, 1) and a["group"] == 1
            and not any(a["pads"]))


def is_depthwise3x3(layer: Layer) -> bool:
    """A 3x3 depthwise convolution (one channel a group), padding 1, stride 1 or 2."""
    a = layer.attrs
    c = layer.in_shape[0]
    return (a["kernel"] == (3, 3) and a["group"] == c == layer.out_shape[0]
            and a["pads"] == (1, 1, 1, 1) and a["stride"] in ((1, 1), (2, 2)))


def _with_plan(model: Any, new_plan: Plan) -> Any:
    """`model` with its plan replaced (a dataclass with a `plan` field)."""
    from dataclasses import replace

    return replace(model, plan=new_plan)


class TunedStage(SpecialisedStage):
    """The specialised stage with its three slowest kinds of kernel replaced: 1x1 GEMM
    threads owning pixels 16 apart (coalesced loads and stores), depthwise 3x3 one thread per
    output from global memory (no idle threads on small planes), and the 3-channel stem
    reading each pixel's 27 taps once for all its output channels."""

    gemm_kernel = "pointwise_gemm_tuned"

    def conv_steps(self, layer: Layer, n: int) -> list[Step]:
        if is_depthwise3x3(layer):
            return [self._depthwise_direct(layer, n)]
        if is_stem3x3(layer):
            return [self._stem(layer, n)]
        return super().conv_steps(layer, n)

    def _depthwise_direct(self, layer: Layer, n: int, kernel: Any = None) -> Step:
        """One thread per output of a 3x3 depthwise convolution (`kernel`: another kernel of the
        same arguments, e.g. the half-storage one)."""
        c, h, wd = layer.in_shape
        _, ho, wo = layer.out_shape
        w = self._w[layer.name]
        res, lo, hi = self.epilogue_args(layer)
        count = n * c * ho * wo
        args = [self.ptr(layer.inputs[0]), w["weight"], w["bias"], res, self.ptr(layer.output),
                np.int64(count), i32(c), i32(h), i32(wd), i32(ho), i32(wo),
                i32(layer.attrs["stride"][0]), lo, hi]
        kernel = kernel or self._fk["depthwise3x3_direct"]
        return PackedLaunch(kernel, grid_for(count, BLOCK), BLOCK, args)

    def _stem(self, layer: Layer, n: int, kernel: Any = None) -> Step:
        """One thread per output pixel of the 3-channel 3x3 stem, all its channels (`kernel`:
        another kernel of the same arguments)."""
        _, h, wd = layer.in_shape
        oc, ho, wo = layer.out_shape
        a, w = layer.attrs, self._w[layer.name]
        res, lo, hi = self.epilogue_args(layer)
        args = [self.ptr(layer.inputs[0]), w["weight"], w["bias"], res, self.ptr(layer.output),
                i32(n), i32(h), i32(wd), i32(oc), i32(ho), i32(wo), *map(i32, a["stride"]),
                i32(a["pads"][0]), i32(a["pads"][1]), lo, hi]
        kernel = kernel or self._fk["stem_conv3x3"]
        return PackedLaunch(kernel, grid_for(n * ho * wo, BLOCK), BLOCK, args)


def is_stem3x3(layer: Layer) -> bool:
    """A 3x3 convolution of 3 input channels, one group, whose weights fit stem_conv3x3."""
    a = layer.attrs
    return (layer.in_shape[0] == 3 and a["kernel"] == (3, 3) and a["group"] == 1
            and layer.out_shape[0] * 27 <= STEM_WEIGHTS)


class PinnedStage(TunedStage):
    """The tuned stage with its input and output in page-locked host memory."""

    pinned = True


class GraphStage(PinnedStage):
    """The pinned stage's launches captured once per batch size into a CUDA graph on a
    stream of its own, then the whole forward replayed as one graph launch."""

    def prepare(self, model: Any, batch: int) -> None:
        import cupy

        super().prepare(model, batch)
        self._stream = cupy.cuda.Stream()  # blocking: ordered with the copies on stream 0
        self._graphs: dict[int, Any] = {}

    def build_steps(self, n: int) -> list[tuple[str, Step]]:
        steps = super().build_steps(n)
        stream = self._stream
        for _, step in steps:
            if not isinstance(step, PackedLaunch):
                raise TypeError("a graph stage captures packed launches only")
        stream.begin_capture()
        try:
            for _, step in steps:
                step(stream.ptr)  # type: ignore[call-arg]
        finally:
            graph = stream.end_capture()
        return [("graph", lambda: graph.launch(stream))]
