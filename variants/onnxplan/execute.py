"""A NumPy executor of a layer plan: the float64 reference on a few items, and a test bench.

`run(plan, x)` computes the plan's output for the batch `x` (n, *input_shape) in float64 (or
the `dtype` given). `OPS` maps each plan op to a function `f(layer, *inputs) -> output` of
whole-batch arrays; `run(..., ops={"Conv": twin})` swaps one in, e.g. the NumPy twin of a
CUDA kernel's indexing, or one with a planted bug. `activations(plan, x)` returns every
tensor (calibration, per-layer checks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from variants.onnxplan.plan import Layer, Plan

OpFunction = Callable[..., np.ndarray]


def pad_input(x: np.ndarray, pads: tuple[int, ...], value: float = 0.0) -> np.ndarray:
    t, left, b, r = pads
    return np.pad(x, ((0, 0), (0, 0), (t, b), (left, r)), constant_values=value)


def taps(x: np.ndarray, layer: Layer) -> tuple[np.ndarray, int, int]:
    """(padded input, output height, output width) of a window layer."""
    ho, wo = layer.out_shape[1], layer.out_shape[2]
    return pad_input(x, layer.attrs["pads"]), ho, wo


def _tap(xp: np.ndarray, i: int, j: int, layer: Layer, ho: int, wo: int) -> np.ndarray:
    sh, sw = layer.attrs["stride"]
    return xp[:, :, i : i + sh * (ho - 1) + 1 : sh, j : j + sw * (wo - 1) + 1 : sw]


def epilogue(layer: Layer, y: np.ndarray, residual: np.ndarray | None) -> np.ndarray:
    """What a fused layer adds after its sum: the residual, then the activation's clip."""
    if residual is not None:
        y = y + residual
    if layer.attrs.get("act"):
        y = np.clip(y, *layer.attrs["act"])
    return y


def conv(layer: Layer, x: np.ndarray, residual: np.ndarray | None = None) -> np.ndarray:
    """Convolution as a sum over kernel taps of per-group matrix products (then a fused
    layer's epilogue)."""
    w = layer.params["weight"].astype(x.dtype)
    g = layer.attrs["group"]
    n, c = x.shape[:2]
    oc, cg, kh, kw = w.shape
    xp, ho, wo = taps(x, layer)
    wg = w.reshape(g, oc // g, cg, kh, kw)
    out = np.zeros((n, g, oc // g, ho, wo), x.dtype)
    for i in range(kh):
        for j in range(kw):
            part = _tap(xp, i, j, layer, ho, wo).reshape(n, g, cg, ho, wo)
            if cg == 1 and oc == g:  # depthwise: a per-channel scale
                out[:, :, 0] += part[:, :, 0] * wg[:, 0, 0, i, j][None, :, None, None]
            else:
                out += np.einsum("goc,ngcyx->ngoyx", wg[..., i, j], part, optimize=True)
    out = out.reshape(n, oc, ho, wo)
    return epilogue(layer, out + layer.params["bias"].astype(x.dtype)[None, :, None, None],
                    residual)


def maxpool(layer: Layer, x: np.ndarray) -> np.ndarray:
    xp = pad_input(x, layer.attrs["pads"], -np.inf)
    ho, wo = layer.out_shape[1:]
    kh, kw = layer.attrs["kernel"]
    parts = [_tap(xp, i, j, layer, ho, wo) for i in range(kh) for j in range(kw)]
    return np.max(parts, axis=0)


def avgpool(layer: Layer, x: np.ndarray) -> np.ndarray:
    xp, ho, wo = taps(x, layer)
    kh, kw = layer.attrs["kernel"]
    total = sum(_tap(xp, i, j, layer, ho, wo) for i in range(kh) for j in range(kw))
    if layer.attrs["count_include_pad"]:
        return total / (kh * kw)
    ones = pad_input(np.ones((1, 1, *x.shape[2:]), x.dtype), layer.attrs["pads"])
    count = sum(_tap(ones, i, j, layer, ho, wo) for i in range(kh) for j in range(kw))
    return total / count


def batchnorm(layer: Layer, x: np.ndarray) -> np.ndarray:
    p = {k: v.astype(x.dtype)[None, :, None, None] for k, v in layer.params.items()}
    inv = p["scale"] / np.sqrt(p["var"] + layer.attrs["epsilon"])
    return (x - p["mean"]) * inv + p["bias"]


def add(layer: Layer, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    return x + (y if y is not None else layer.params["bias"].astype(x.dtype))


def gemm(layer: Layer, x: np.ndarray, residual: np.ndarray | None = None) -> np.ndarray:
    w = layer.params["weight"].astype(x.dtype)
    return epilogue(layer, x @ w.T + layer.params["bias"].astype(x.dtype), residual)


OPS: dict[str, OpFunction] = {
    "Conv": conv,
    "Relu": lambda ly, x: np.maximum(x, 0),
    "Clip": lambda ly, x: np.clip(x, ly.attrs["min"], ly.attrs["max"]),
    "BatchNormalization": batchnorm,
    "Add": add,
    "MaxPool": maxpool,
    "AveragePool": avgpool,
    "GlobalAveragePool": lambda ly, x: x.mean(axis=(2, 3), keepdims=True),
    "Flatten": lambda ly, x: x.reshape(len(x), *ly.out_shape),
    "Reshape": lambda ly, x: x.reshape(len(x), *ly.out_shape),
    "Gemm": gemm,
}


def activations(
    plan: Plan,
    x: np.ndarray,
    dtype: Any = np.float64,
    ops: Mapping[str, OpFunction] | None = None,
    keep: bool = True,
) -> dict[str, np.ndarray]:
    """Every tensor of the plan for the batch `x` (the input included), computed in `dtype`
    with `ops` replacing the default op functions. `keep` False: only the output is kept."""
    table = {**OPS, **(ops or {})}
    x = np.asarray(x, dtype=dtype)
    if x.shape[1:] != plan.input_shape:
        raise ValueError(f"inputs of shape {x.shape}, expected (n, {plan.input_shape})")
    values = {plan.input: x}
    last = _last_uses(plan)
    for index, layer in enumerate(plan.layers):
        out = table[layer.op](layer, *(values[name] for name in layer.inputs))
        values[layer.output] = np.asarray(out, dtype=dtype)
        if not keep:
            for name in layer.inputs:
                if last[name] == index and name != plan.output:
                    del values[name]
    return values


def run(plan: Plan, x: np.ndarray, dtype: Any = np.float64,
        ops: Mapping[str, OpFunction] | None = None, chunk: int = 16) -> np.ndarray:
    """The plan's output for `x`, `chunk` items at a time (bounded memory)."""
    parts = [
        activations(plan, x[i : i + chunk], dtype, ops, keep=False)[plan.output]
        for i in range(0, len(x), chunk)
    ]
    return np.concatenate(parts) if parts else np.empty((0, *plan.output_shape), dtype)


def _last_uses(plan: Plan) -> dict[str, int]:
    last = {}
    for index, layer in enumerate(plan.layers):
        for name in layer.inputs:
            last[name] = index
    return last
