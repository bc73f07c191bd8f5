"""Half precision over a layer plan: the kernels of kernels/half.cu on the fused plan.

`split(plan, half_from)` marks the layers from phase `half_from` on (all when None) to run in
half and inserts a ToHalf layer for each float32 tensor they read (the input, or the block
input at the boundary): a stage chooses where half precision is safe. `HalfStage` is the tuned
stage on the split plan: the half layers store their activations as IEEE half, 1x1
convolutions and the classifier are tensor-core GEMMs (mma.sync m16n8k16: half inputs, fp32
accumulation) whose epilogue (bias, residual, clip) runs in fp32 before the one rounding to
half; 3x3 depthwise convolutions, the 3-channel stem and GlobalAveragePool read and write half
and compute in fp32 (their weights stay fp32); a half output layer writes the float32 output
the caller receives. The other layers keep the tuned fp32 kernels. `HalfGraphStage` captures
it all in one CUDA graph, with page-locked copies, as `GraphStage` does.

A half layer none of these kernels runs is refused in `prepare`, before the GPU is used, with a
one-line DataError naming the node. CuPy is imported inside the methods.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from profiler.errors import DataError
from variants.cuda import build
from variants.cuda.launch import PackedLaunch, grid_for, i32
from variants.onnxplan import fuse
from variants.onnxplan.fused_stages import (
    GraphStage,
    TunedStage,
    is_depthwise3x3,
    is_pointwise,
    is_stem3x3,
)
from variants.onnxplan.gpu import BLOCK, Step
from variants.onnxplan.plan import Layer, Plan

HALF_KERNELS = Path(__file__).with_name("kernels") / "half.cu"
HALF_NAMES = ("to_half", "pointwise_gemm_half", "pointwise_gemm_half_f32out",
              "depthwise3x3_half", "stem_conv3x3_half", "global_avg_pool_half")
MMA_TILE = 64  # pointwise_gemm_half's output tile (rows and columns)
MMA_THREADS = 128
RUNS = "1x1, 3x3 depthwise and 3-channel 3x3 convolutions, GlobalAveragePool and Gemm"
TO_HALF = "ToHalf"  # the plan op of a float32 -> half conversion the split inserts
TO_HALF_PHASE = "to_half"


def split(plan: Plan, half_from: str | None) -> Plan:
    """The fused `plan` with its layers from phase `half_from` on (all of them when None)
    marked to run in half (attribute `half`): each tensor computed before them (the input
    included) that they read gets a ToHalf layer just before the first of them, and they read
    its half copy `<tensor>:half` instead.

    Raises: DataError when no layer has the phase `half_from`.
    """
    layers = list(plan.layers)
    first = 0 if half_from is None else next(
        (i for i, ly in enumerate(layers) if ly.phase == half_from), None)
    if first is None:
        raise DataError(f"the fp16 stage starts half precision at layer {half_from!r}, which "
                        "the plan does not have")
    before = {plan.input} | {ly.output for ly in layers[:first]}
    crossing = [t for t in dict.fromkeys(n for ly in layers[first:] for n in ly.inputs)
                if t in before]
    shapes = plan.shapes()
    casts = [Layer(f"{t}:{TO_HALF}", TO_HALF, (t,), f"{t}:half", (shapes[t],), shapes[t], {},
                   {}, phase=TO_HALF_PHASE + (f"#{i + 1}" if i else ""))
             for i, t in enumerate(crossing)]
    rename = {t: f"{t}:half" for t in crossing}
    tail = [replace(ly, inputs=tuple(rename.get(n, n) for n in ly.inputs),
                    attrs={**ly.attrs, "half": True}) for ly in layers[first:]]
    return replace(plan, layers=(*layers[:first], *casts, *tail))


def half_kernel(layer: Layer) -> str | None:
    """The half.cu kernel that runs `layer` of a fused plan ('' for a view), None if none."""
    if layer.op in ("Flatten", "Reshape"):
        return ""
    if layer.op == TO_HALF:
        return "to_half"
    if layer.op == "Gemm" or (layer.op == "Conv" and is_pointwise(layer)):
        return "pointwise_gemm_half"
    if layer.op == "Conv" and is_depthwise3x3(layer):
        return "depthwise3x3_half"
    if layer.op == "Conv" and is_stem3x3(layer):
        return "stem_conv3x3_half"
    if layer.op == "GlobalAveragePool":
        return "global_avg_pool_half"
    return None


def check(plan: Plan) -> None:
    """Raises: DataError naming the first half layer of the split `plan` no half kernel runs,
    or a half output layer that is not a GEMM (the only half kernel with a float32 output)."""
    for layer in plan.layers:
        if layer.attrs.get("half") and half_kernel(layer) is None:
            raise DataError(f"node {layer.name!r} (op {layer.op}): the fp16 stage has no "
                            f"half-precision kernel for it (it runs {RUNS})")
    last = next(ly for ly in reversed(plan.layers) if ly.op not in ("Flatten", "Reshape"))
    gemm_out = half_kernel(last) == "pointwise_gemm_half" and last.output == plan.output
    if last.attrs.get("half") and not gemm_out:
        raise DataError(f"node {last.name!r} (op {last.op}): the fp16 stage needs a network "
                        "run in half to end with a Gemm or a 1x1 convolution")


class HalfStage(TunedStage):
    """The tuned stage's fused plan with the layers from phase `half_from` on (all when None)
    in half precision: half activations, tensor-core 1x1 GEMMs."""

    #: phase of the first layer run in half (None: every layer, the input converted first)
    half_from: str | None = None

    def prepare(self, model: Any, batch: int) -> None:
        plan = split(fuse.epilogues(model.plan), self.half_from)
        check(plan)  # before any upload or compile
        super().prepare(replace(model, plan=plan), batch)  # fusing it again changes nothing
        self._hk = build.kernels(build.compile_module(HALF_KERNELS), HALF_NAMES)

    def upload(self, layer: Layer) -> dict[str, Any]:
        import cupy

        w = super().upload(layer)
        if layer.attrs.get("half") and half_kernel(layer) == "pointwise_gemm_half":
            w["weight_h"] = w["weight"].reshape(layer.out_shape[0], -1).astype(cupy.float16)
        return w

    def buffers(self) -> dict[str, Any]:
        """The activation buffers seen as half: poisoned with half NaN, a float32 tensor in
        them reads NaN too (0x7e007e00)."""
        import cupy

        return {k: b.view(cupy.float16) for k, b in super().buffers().items()}

    def conv_steps(self, layer: Layer, n: int) -> list[Step]:
        if not layer.attrs.get("half"):
            return super().conv_steps(layer, n)
        kernel = half_kernel(layer)
        if kernel == "pointwise_gemm_half":
            hw = layer.in_shape[1] * layer.in_shape[2]
            return [self._mma_gemm(layer, n * hw, hw)]
        if kernel == "depthwise3x3_half":
            return [self._depthwise_direct(layer, n, self._hk["depthwise3x3_half"])]
        # check() let no other half Conv through
        return [self._stem(layer, n, self._hk["stem_conv3x3_half"])]

    def gemm_steps(self, layer: Layer, n: int) -> list[Step]:
        if not layer.attrs.get("half"):
            return super().gemm_steps(layer, n)
        return [self._mma_gemm(layer, n, 1)]

    def elementwise_step(self, layer: Layer, n: int) -> Step:
        count = n * math.prod(layer.out_shape)
        if layer.op == TO_HALF:
            args = [self.ptr(layer.inputs[0]), self.ptr(layer.output), np.int64(count)]
            return PackedLaunch(self._hk["to_half"], grid_for(count, BLOCK), BLOCK, args)
        if not layer.attrs.get("half"):
            return super().elementwise_step(layer, n)
        c, h, wd = layer.in_shape  # GlobalAveragePool, the one other half kernel
        args = [self.ptr(layer.inputs[0]), self.ptr(layer.output), i32(n * c), i32(h * wd)]
        return PackedLaunch(self._hk["global_avg_pool_half"], grid_for(n * c, BLOCK), BLOCK,
                            args)

    def _mma_gemm(self, layer: Layer, cols: int, hw: int) -> Step:
        w = self._w[layer.name]
        m, k = layer.out_shape[0], layer.in_shape[0]
        res, lo, hi = self.epilogue_args(layer)
        last = layer.output == self.plan.output
        kernel = self._hk["pointwise_gemm_half_f32out" if last else "pointwise_gemm_half"]
        grid = (grid_for(cols, MMA_TILE), grid_for(m, MMA_TILE), 1)
        args = [self.ptr(layer.inputs[0]), w["weight_h"], w["bias"], res, self.ptr(layer.output),
                i32(m), i32(k), i32(cols), i32(hw), lo, hi]
        return PackedLaunch(kernel, grid, (MMA_THREADS, 1, 1), args)


class HalfGraphStage(GraphStage, HalfStage):
    """`HalfStage`'s launches (the conversions included) captured once per batch size into
    one CUDA graph, input and output in page-locked memory: the graph stage in half.
    Method order: GraphStage, PinnedStage, HalfStage, TunedStage, ..., so the graph captures
    the half steps."""

    def prepare(self, model: Any, batch: int) -> None:
        check(split(fuse.epilogues(model.plan), self.half_from))  # before GraphStage's CuPy
        super().prepare(model, batch)
