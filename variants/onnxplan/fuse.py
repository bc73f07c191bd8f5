"""Epilogue fusion over a plan: what the fused stages choose.

`epilogues(plan)` folds into each Conv (and Gemm):
- a residual Add that reads the Conv's output (read by nothing else) and a tensor computed
  before the Conv: the Conv then reads that tensor too (its second input) and writes the sum;
- then a Clip or Relu that reads the result (read by nothing else): attribute `act` (lo, hi).

A fused layer keeps its Conv's name and phase; attribute `fused` lists the nodes it absorbed.
Other layers stay as they are. The NumPy executor runs fused layers (execute.conv).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from variants.onnxplan.plan import Layer, Plan

FUSABLE = ("Conv", "Gemm")
Absorb = Callable[[Layer, Layer, set[str]], "Layer | None"]


def epilogues(plan: Plan) -> Plan:
    """`plan` with residual Adds and activations fused into the convolution before them."""
    layers = list(plan.layers)
    layers = _fuse(layers, plan, _absorb_add)
    layers = _fuse(layers, plan, _absorb_activation)
    return replace(plan, layers=tuple(layers))


def _fuse(layers: list[Layer], plan: Plan, absorb: Absorb) -> list[Layer]:
    out: list[Layer] = []
    for layer in layers:
        prev = out[-1] if out else None
        fused = None
        if prev is not None and prev.op in FUSABLE and _readers(layers, prev.output) == 1:
            available = {plan.input} | {ly.output for ly in out[:-1]}
            fused = absorb(prev, layer, available)
        if fused is not None:
            out[-1] = fused
        else:
            out.append(layer)
    return out


def _readers(layers: list[Layer], tensor: str) -> int:
    return sum(name == tensor for ly in layers for name in ly.inputs)


def _absorb_add(conv: Layer, add: Layer, available: set[str]) -> Layer | None:
    """The Conv, reading the Add's other input as its residual, when that is computed before
    the Conv runs."""
    if add.op != "Add" or "bias" in add.params or len(add.inputs) != 2:
        return None
    if conv.attrs.get("act") or len(conv.inputs) > 1 or conv.output not in add.inputs:
        return None
    other = add.inputs[1] if add.inputs[0] == conv.output else add.inputs[0]
    if other not in available or other == conv.output:
        return None
    return _merged(conv, add, inputs=(conv.inputs[0], other))


def _absorb_activation(conv: Layer, act: Layer, available: set[str]) -> Layer | None:
    if act.op not in ("Clip", "Relu") or conv.attrs.get("act") or act.inputs[0] != conv.output:
        return None
    bounds = (0.0, math.inf) if act.op == "Relu" else (act.attrs["min"], act.attrs["max"])
    merged = _merged(conv, act, inputs=conv.inputs)
    return replace(merged, attrs={**merged.attrs, "act": bounds})


def _merged(conv: Layer, node: Layer, inputs: tuple[str, ...]) -> Layer:
    attrs = {**conv.attrs, "fused": (*conv.attrs.get("fused", ()), node.name)}
    in_shapes = tuple((*conv.in_shapes[:1], *(node.out_shape for _ in inputs[1:])))
    return replace(conv, inputs=inputs, in_shapes=in_shapes, output=node.output, attrs=attrs)
