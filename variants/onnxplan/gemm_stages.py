"""Stages of a residual network on the layer plan: every op its own kernel with convolutions
through cuBLAS, BatchNorm folded, and convolutions as one fused tiled SGEMM (kernels/
gemm_fused.cu) on chosen phases or everywhere, then a CUDA graph of it.

- `SeparateOpsStage`: Conv as Im2Col + cuBLAS (a 1x1 stride-1 convolution skips the Im2Col
  copy: cuBLAS multiplies straight on the NCHW input, batched over the images), a bias kernel
  only where the convolution has a bias, then BatchNormalization, Add and ReLU kernels. The
  Im2Col buffer holds at most `COL_FLOATS` values: a larger batch runs the convolution in
  chunks of images. Input and output are in page-locked host memory (all these stages).
- `FoldedStage`: the same with each BatchNorm folded into its convolution (`fold`).
- `FusedGemmStage`: the folded plan with residual Adds and ReLUs fused into the convolution
  before them (`fuse.epilogues`) in the phases `fused_phases` names (None: all); those layers
  run `gemm_fused_1x1` (1x1 stride 1) or `gemm_fused_conv` (implicit GEMM), which add the
  bias and residual and clip before their single write; the classifier runs
  `gemm_fused_1x1` when every layer is fused. Every other layer launches what `FoldedStage`
  does.
- `FusedGemmGraphStage`: the all-fused stage's launches captured into one CUDA graph per batch
  size, input and output in page-locked host memory.

The GEMM's speed, predicted before measuring (H100 SXM, FP32 FMA peak ~67 TFLOP/s): a
128 x 128 x 8 tile with 8 x 8 outputs a thread issues 4 shared loads per 64 FMAs and keeps two
blocks an SM (128 registers); such a kernel reaches 50-60% of peak on long k. Predicted: 30-35
TFLOP/s for ResNet-50's 3x3 convolutions and long-k 1x1s (k >= 512), 20-28 TFLOP/s for the
k = 64-256 1x1s (16-32 slices: the prologue and the epilogue's 64 residual reads and writes a
thread weigh more); cuBLAS's SGEMM 40-50 TFLOP/s on the same shapes. The res3 tail (m 512,
k 128, 200,704 columns at batch 256: 26 GFLOP, 0.4 GB written, 0.4 GB of residual read) then
takes ~1.0-1.3 ms fused, against ~0.6 ms of cuBLAS + ~0.3 ms bias + ~0.4 ms Add + ~0.3 ms ReLU
(~1.6 ms) unfused, folded.

Measured (H100 80GB HBM3, batch 256, `profgen sweep resnet50 --repeat 30`, CUPTI, kernel
times per phase range): a res3 tail takes 1.049 ms fused (25.1 TFLOP/s, epilogue included)
against 2.000 ms for cuBLAS's SGEMM (0.730 ms, 36.0 TFLOP/s) + bias + Add + ReLU; the tails of
res2/res4/res5 run at 19.9/29.5/28.7 TFLOP/s fused (cuBLAS's GEMM alone 32-36). Over the
fuse_all forward the 1x1 kernel does 0.93 TFLOP in 33.8 ms and the implicit-GEMM kernel 1.17
TFLOP in 42.3 ms (27.5 TFLOP/s each). Slowest: res2's conv2 (3x3, 64 output channels) at
17.1 TFLOP/s, half of each 128-row tile idle (m = 64).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from variants.cuda import build
from variants.cuda.launch import PackedLaunch, grid_for, i32
from variants.onnxplan import fold, fuse, gemm_twin
from variants.onnxplan.fused_stages import _with_plan, is_pointwise
from variants.onnxplan.gpu import BLOCK, Im2ColStage, Step, col_size
from variants.onnxplan.memory import VIEWS
from variants.onnxplan.plan import Layer, Plan

GEMM_KERNELS = Path(__file__).with_name("kernels") / "gemm_fused.cu"
GEMM_NAMES = ("gemm_fused_1x1", "gemm_fused_conv")
#: values of the Im2Col buffer at most (2 GiB): at --batch 2048 ResNet-50's stem would need 15 GB
COL_FLOATS = 1 << 29


class SeparateOpsStage(Im2ColStage):
    """Every op its own kernel (see the module docstring)."""

    #: input and output in page-locked host memory for every stage of the fusion steps, so
    #: the copies (a fixed few ms) do not add the pageable copy's spread to the comparison
    pinned = True

    def prepare(self, model: Any, batch: int) -> None:
        import cupy

        super(Im2ColStage, self).prepare(self.chosen(model), batch)
        convs = [ly for ly in self.plan.layers if self.uses_im2col(ly)]
        per_item = max((col_size(ly) for ly in convs), default=1)
        self._col = cupy.empty(min(batch * per_item, max(COL_FLOATS, per_item)), cupy.float32)

    def chosen(self, model: Any) -> Any:
        """The model with the plan this stage runs."""
        return model

    def uses_im2col(self, layer: Layer) -> bool:
        """Whether `layer` needs the Im2Col buffer."""
        return layer.op == "Conv" and not self.skips_im2col(layer)

    def skips_im2col(self, layer: Layer) -> bool:
        return layer.attrs["group"] == 1 and is_pointwise(layer)

    def conv_steps(self, layer: Layer, n: int) -> list[Step]:
        if layer.attrs["group"] != 1:
            return super().conv_steps(layer, n)
        c, h, wd = layer.in_shape
        oc, ho, wo = layer.out_shape
        a, w = layer.attrs, self._w[layer.name]
        weight = w["weight"][0]  # (oc, c * kh * kw)
        y = self.view(layer.output, (n, oc, ho * wo))
        steps: list[Step] = []
        if self.skips_im2col(layer):
            x = self.view(layer.inputs[0], (n, c, h * wd))
            steps.append(_matmul(weight, x, y))
        else:
            (kh, kw), k = a["kernel"], c * a["kernel"][0] * a["kernel"][1]
            chunk = max(1, len(self._col) // (k * ho * wo))
            for i0 in range(0, n, chunk):
                m = min(chunk, n - i0)
                x = self.ptr(layer.inputs[0]) + 4 * i0 * c * h * wd
                args = [x, self._col, i32(m), i32(c), i32(h), i32(wd), i32(ho), i32(wo),
                        i32(kh), i32(kw), *map(i32, a["stride"]), i32(a["pads"][0]),
                        i32(a["pads"][1])]
                total = m * k * ho * wo
                steps.append(PackedLaunch(self._k["im2col"], grid_for(total, BLOCK), BLOCK, args))
                col = self._col[:total].reshape(m, k, ho * wo)
                steps.append(_matmul(weight, col, y[i0 : i0 + m]))
        if layer.params["bias"].any():
            count = n * oc * ho * wo
            steps.append(PackedLaunch(self._k["bias_channels"], grid_for(count, BLOCK), BLOCK,
                                      [self.ptr(layer.output), w["bias"], np.int64(count),
                                       i32(oc), i32(ho * wo)]))
        return steps


def _matmul(weight: Any, x: Any, out: Any) -> Step:
    """cuBLAS (through CuPy): out[i] = weight @ x[i] for every image i."""
    import cupy

    def gemm() -> None:
        cupy.matmul(weight, x, out=out)

    return gemm


class FoldedStage(SeparateOpsStage):
    """Every op its own kernel, each BatchNorm folded into the convolution before it."""

    def chosen(self, model: Any) -> Any:
        return _with_plan(model, fold.fold_batchnorm(model.plan))


class FusedGemmStage(FoldedStage):
    """The folded plan with epilogues fused into the fused GEMM in `fused_phases` (None: all)."""

    fused_phases: frozenset[str] | None = None

    def chosen(self, model: Any) -> Any:
        folded = fold.fold_batchnorm(model.plan)
        return _with_plan(model, epilogues_in(folded, self.fused_phases))

    def prepare(self, model: Any, batch: int) -> None:
        super().prepare(model, batch)
        self._gk = build.kernels(build.compile_module(GEMM_KERNELS), GEMM_NAMES)

    def runs_gemm(self, layer: Layer) -> bool:
        """Whether the fused GEMM computes `layer`."""
        if self.fused_phases is None:
            return layer.op == "Gemm" or (layer.op == "Conv" and layer.attrs["group"] == 1)
        return layer.op == "Conv" and layer.phase in self.fused_phases

    def uses_im2col(self, layer: Layer) -> bool:
        return super().uses_im2col(layer) and not self.runs_gemm(layer)

    def upload(self, layer: Layer) -> dict[str, Any]:
        import cupy

        w = super().upload(layer)
        if layer.op in ("Conv", "Gemm") and self.runs_gemm(layer):
            w["packed"] = cupy.asarray(gemm_twin.pack_weight(layer.params["weight"]))
        return w

    def conv_steps(self, layer: Layer, n: int) -> list[Step]:
        if not self.runs_gemm(layer):
            return super().conv_steps(layer, n)
        return [self.fused_gemm(layer, n)]

    def gemm_steps(self, layer: Layer, n: int) -> list[Step]:
        if not self.runs_gemm(layer):
            return super().gemm_steps(layer, n)
        return [self.fused_gemm(layer, n)]

    def fused_gemm(self, layer: Layer, n: int) -> Step:
        """One launch of the fused GEMM computing `layer` for `n` items."""
        w = self._w[layer.name]
        m, kp = w["packed"].shape
        lo, hi = layer.attrs.get("act") or (-np.inf, np.inf)
        res = self.ptr(layer.inputs[1]) if len(layer.inputs) > 1 else 0
        head = [self.ptr(layer.inputs[0]), w["packed"], w["bias"], res, self.ptr(layer.output),
                i32(m)]
        tail = [np.float32(lo), np.float32(hi)]
        if layer.op == "Gemm" or is_pointwise(layer):
            hw = 1 if layer.op == "Gemm" else math.prod(layer.out_shape[1:])
            k = layer.in_shape[0] if layer.op == "Conv" else layer.params["weight"].shape[1]
            cols = n * hw
            args = [*head, i32(k), i32(kp), np.int64(cols), i32(hw), *tail]
            kernel = self._gk["gemm_fused_1x1"]
        else:
            c, h, wd = layer.in_shape
            _, ho, wo = layer.out_shape
            a = layer.attrs
            cols = n * ho * wo
            args = [*head, i32(c * a["kernel"][0] * a["kernel"][1]), i32(kp), np.int64(cols),
                    i32(c), i32(h), i32(wd), i32(ho), i32(wo), *map(i32, a["kernel"]),
                    *map(i32, a["stride"]), i32(a["pads"][0]), i32(a["pads"][1]), *tail]
            kernel = self._gk["gemm_fused_conv"]
        grid = (grid_for(cols, gemm_twin.BN), grid_for(m, gemm_twin.BM), 1)
        return PackedLaunch(kernel, grid, (gemm_twin.THREADS, 1, 1), args)


def epilogues_in(plan: Plan, phases: frozenset[str] | None) -> Plan:
    """`plan` with `fuse.epilogues` applied to the layers of `phases` only (None: all); a
    fused layer elsewhere is put back as the layers it absorbed, in their order."""
    from dataclasses import replace

    fused = fuse.epilogues(plan)
    if phases is None:
        return fused
    by_name = {ly.name: ly for ly in plan.layers}
    out: list[Layer] = []
    for layer in fused.layers:
        if "fused" in layer.attrs and layer.phase not in phases:
            out.append(by_name[layer.name])
            out.extend(by_name[name] for name in layer.attrs["fused"])
        else:
            out.append(layer)
    return replace(plan, layers=tuple(out))


class FusedGemmGraphStage(FusedGemmStage):
    """The all-fused stage's launches as one CUDA graph a batch size, pinned host memory."""

    def prepare(self, model: Any, batch: int) -> None:
        import cupy

        super().prepare(model, batch)
        self._stream = cupy.cuda.Stream()  # blocking: ordered with the copies on stream 0

    def build_steps(self, n: int) -> list[tuple[str, Step]]:
        launches: list[Any] = []
        for layer in self.plan.layers:
            if layer.op in VIEWS:
                continue
            if layer.op == "Conv":
                launches += self.conv_steps(layer, n)
            elif layer.op == "Gemm":
                launches += self.gemm_steps(layer, n)
            else:
                launches.append(self.elementwise_step(layer, n))
        if not all(isinstance(step, PackedLaunch) for step in launches):
            raise TypeError("a graph stage captures packed launches only")
        stream = self._stream
        stream.begin_capture()
        try:
            for launch in launches:
                launch(stream.ptr)
        finally:
            graph = stream.end_capture()
        return [("graph", lambda: graph.launch(stream))]
