"""Each supported ONNX op: its attributes checked and normalised, and its per-item output shape.

`normalise(node, consts, in_shapes)` returns (op, attrs, params) where `op` is the plan's op
name (MatMul becomes Gemm with its weight transposed), `attrs` are plain Python values with
every default filled in, and `params` the node's float32 weights. Shapes are per item: the
batch axis is left out. A node the plan cannot run raises `Unsupported` with the reason; the
loader turns it into a one-line DataError that names the node and the op.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

Shape = tuple[int, ...]

#: the ops a plan holds, in the order the issue lists them (Identity and Constant disappear
#: while loading: an alias and a constant)
SUPPORTED = (
    "Conv",
    "Relu",
    "Clip",
    "BatchNormalization",
    "Add",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "Flatten",
    "Reshape",
    "Gemm",
    "MatMul",
    "Identity",
    "Constant",
)


class Unsupported(Exception):
    """What about a node the plan cannot run (an attribute value, an input, a shape)."""


def attributes(node: Any) -> dict[str, Any]:
    """The node's attributes as Python values (bytes decoded, repeated fields as lists)."""
    from onnx import helper

    out = {}
    for attr in node.attribute:
        value = helper.get_attribute_value(attr)
        if isinstance(value, bytes):
            value = value.decode()
        out[attr.name] = list(value) if isinstance(value, (list, tuple)) else value
    return out


def _expect(attrs: Mapping[str, Any], allowed: Mapping[str, Callable[[Any], bool]]) -> None:
    for key, value in attrs.items():
        ok = allowed.get(key)
        if ok is None or not ok(value):
            raise Unsupported(f"unsupported attribute {key}={value}")


def _ones(value: Any) -> bool:
    return all(v == 1 for v in value)


def _is(*choices: Any) -> Callable[[Any], bool]:
    return lambda value: value in choices


def _any(value: Any) -> bool:
    return True


def _window(attrs: dict[str, Any], kernel: Shape, what: str) -> dict[str, Any]:
    """kernel, stride and pads (top, left, bottom, right) of a 2-D window op."""
    if len(kernel) != 2:
        raise Unsupported(f"{len(kernel)}-D {what}: only 2-D is supported")
    stride = tuple(attrs.get("strides", [1, 1]))
    if attrs.get("auto_pad", "NOTSET") == "VALID":
        pads: tuple[int, ...] = (0, 0, 0, 0)
    else:
        pads = tuple(attrs.get("pads", [0, 0, 0, 0]))
    if len(stride) != 2 or len(pads) != 4 or min(stride) < 1 or min(pads) < 0:
        raise Unsupported(f"strides {list(stride)} and pads {list(pads)} are not a 2-D window")
    return {"kernel": tuple(kernel), "stride": stride, "pads": pads}


def window_out(shape: Shape, win: Mapping[str, Any]) -> tuple[int, int]:
    """Output height and width of a window op on a (C, H, W) input (floor mode)."""
    (kh, kw), (sh, sw), (t, left, b, r) = win["kernel"], win["stride"], win["pads"]
    ho, wo = (shape[1] + t + b - kh) // sh + 1, (shape[2] + left + r - kw) // sw + 1
    if ho < 1 or wo < 1:
        raise Unsupported(f"window {kh}x{kw} does not fit the input {list(shape)}")
    return ho, wo


def _chw(shapes: list[Shape], what: str) -> Shape:
    if len(shapes[0]) != 3:
        raise Unsupported(f"{what} needs a (C, H, W) input per item, got {list(shapes[0])}")
    return shapes[0]


def conv(node: Any, consts: Mapping[str, np.ndarray], shapes: list[Shape]) -> tuple:
    attrs = attributes(node)
    _expect(
        attrs,
        {
            "auto_pad": _is("NOTSET", "VALID"),
            "dilations": _ones,
            "group": _any,
            "kernel_shape": _any,
            "pads": _any,
            "strides": _any,
        },
    )
    c, _, _ = _chw(shapes, "Conv")
    weight = _const(node, consts, 1, "weight")
    if weight.ndim != 4:
        raise Unsupported(f"a {weight.ndim}-D weight: only 2-D convolutions are supported")
    group = int(attrs.get("group", 1))
    if group < 1 or c % group or weight.shape[0] % group or weight.shape[1] * group != c:
        raise Unsupported(f"group={group} does not fit {c} input channels and weight "
                          f"{list(weight.shape)}")
    win = _window(attrs, tuple(attrs.get("kernel_shape", weight.shape[2:])), "Conv")
    if win["kernel"] != weight.shape[2:]:
        raise Unsupported(f"kernel_shape {list(win['kernel'])} differs from the weight's")
    bias = _const(node, consts, 2, "bias") if _has(node, 2) else np.zeros(weight.shape[0])
    params = {"weight": weight, "bias": bias.astype(np.float32)}
    return "Conv", win | {"group": group}, params


def conv_shape(attrs: Mapping[str, Any], params: Mapping[str, np.ndarray], s: Shape) -> Shape:
    return (params["weight"].shape[0], *window_out(s, attrs))


def pool(node: Any, consts: Mapping[str, np.ndarray], shapes: list[Shape]) -> tuple:
    attrs = attributes(node)
    allowed = {
        "auto_pad": _is("NOTSET", "VALID"),
        "ceil_mode": _is(0),
        "dilations": _ones,
        "kernel_shape": _any,
        "pads": _any,
        "strides": _any,
    }
    if node.op_type == "MaxPool":
        allowed["storage_order"] = _is(0)
        if len(node.output) > 1 and node.output[1]:
            raise Unsupported("the Indices output is not supported")
    else:
        allowed["count_include_pad"] = _is(0, 1)
    _expect(attrs, allowed)
    _chw(shapes, node.op_type)
    if "kernel_shape" not in attrs:
        raise Unsupported("no kernel_shape")
    win = _window(attrs, tuple(attrs["kernel_shape"]), node.op_type)
    if node.op_type == "AveragePool":
        win["count_include_pad"] = int(attrs.get("count_include_pad", 0))
    return node.op_type, win, {}


def pool_shape(attrs: Mapping[str, Any], params: Mapping[str, np.ndarray], s: Shape) -> Shape:
    return (s[0], *window_out(s, attrs))


def clip(node: Any, consts: Mapping[str, np.ndarray], shapes: list[Shape]) -> tuple:
    attrs = attributes(node)
    _expect(attrs, {"min": _any, "max": _any})
    low, high = float(attrs.get("min", -np.inf)), float(attrs.get("max", np.inf))
    if _has(node, 1):
        low = float(_const(node, consts, 1, "min"))
    if _has(node, 2):
        high = float(_const(node, consts, 2, "max"))
    return "Clip", {"min": low, "max": high}, {}


def relu(node: Any, consts: Mapping[str, np.ndarray], shapes: list[Shape]) -> tuple:
    _expect(attributes(node), {})
    return "Relu", {}, {}


def batchnorm(node: Any, consts: Mapping[str, np.ndarray], shapes: list[Shape]) -> tuple:
    attrs = attributes(node)
    _expect(
        attrs,
        {"epsilon": _any, "momentum": _any, "training_mode": _is(0), "spatial": _is(1)},
    )
    names = ("scale", "bias", "mean", "var")
    params = {n: _const(node, consts, i + 1, n) for i, n in enumerate(names)}
    c = shapes[0][0] if shapes[0] else 0
    if any(p.shape != (c,) for p in params.values()):
        raise Unsupported(f"parameters are not of shape ({c},) for {c} channels")
    return "BatchNormalization", {"epsilon": float(attrs.get("epsilon", 1e-5))}, params


def add(node: Any, consts: Mapping[str, np.ndarray], shapes: list[Shape]) -> tuple:
    _expect(attributes(node), {})
    const = [i for i in (0, 1) if node.input[i] in consts]
    if len(const) == 2:
        raise Unsupported("both inputs are constants")
    if not const:
        if shapes[0] != shapes[1]:
            raise Unsupported(f"inputs of shapes {list(shapes[0])} and {list(shapes[1])}")
        return "Add", {}, {}
    bias = consts[node.input[const[0]]].astype(np.float32)
    try:
        np.broadcast_shapes((2, *shapes[0]), bias.shape)
    except ValueError:
        raise Unsupported(f"a constant of shape {list(bias.shape)} that does not broadcast "
                          f"to the input {list(shapes[0])}") from None
    if bias.ndim > len(shapes[0]) and bias.shape[0] != 1:
        raise Unsupported("a constant that broadcasts over the batch")
    return "Add", {}, {"bias": bias.reshape(bias.shape[-len(shapes[0]):] if bias.ndim else ())}


def gap(node: Any, consts: Mapping[str, np.ndarray], shapes: list[Shape]) -> tuple:
    _expect(attributes(node), {})
    _chw(shapes, "GlobalAveragePool")
    return "GlobalAveragePool", {}, {}


def flatten(node: Any, consts: Mapping[str, np.ndarray], shapes: list[Shape]) -> tuple:
    attrs = attributes(node)
    _expect(attrs, {"axis": _is(1)})
    return "Flatten", {"shape": (int(np.prod(shapes[0])),)}, {}


def reshape(node: Any, consts: Mapping[str, np.ndarray], shapes: list[Shape]) -> tuple:
    _expect(attributes(node), {"allowzero": _is(0)})
    target = [int(v) for v in _const(node, consts, 1, "shape", keep=True)]
    batch = 2  # a nominal batch: the target must keep it as its first axis
    full = (batch, *shapes[0])
    dims = [full[i] if v == 0 else v for i, v in enumerate(target)]
    if dims.count(-1) > 1:
        raise Unsupported(f"shape {target} has more than one -1")
    if -1 in dims:
        known = int(np.prod([d for d in dims if d != -1]))
        dims[dims.index(-1)] = int(np.prod(full)) // max(known, 1)
    if int(np.prod(dims)) != int(np.prod(full)) or dims[0] != batch:
        raise Unsupported(f"shape {target} does not keep the batch axis of {list(shapes[0])}")
    return "Reshape", {"shape": tuple(dims[1:])}, {}


def gemm(node: Any, consts: Mapping[str, np.ndarray], shapes: list[Shape]) -> tuple:
    attrs = attributes(node)
    if len(shapes[0]) != 1:
        raise Unsupported(f"input of shape {list(shapes[0])} per item: flatten it first")
    if node.op_type == "MatMul":
        _expect(attrs, {})
        weight = _const(node, consts, 1, "B").T
        bias = np.zeros(weight.shape[0], np.float32)
    else:
        _expect(
            attrs, {"alpha": _any, "beta": _any, "transA": _is(0), "transB": _is(0, 1)}
        )
        b = _const(node, consts, 1, "B")
        weight = b if attrs.get("transB", 0) else b.T
        weight = weight * np.float32(attrs.get("alpha", 1.0))
        bias = _const(node, consts, 2, "C") if _has(node, 2) else np.zeros(weight.shape[0])
        bias = np.broadcast_to(bias * np.float32(attrs.get("beta", 1.0)), weight.shape[:1])
    if weight.ndim != 2 or weight.shape[1] != shapes[0][0]:
        raise Unsupported(f"weight of shape {list(weight.shape)} for inputs {list(shapes[0])}")
    params = {"weight": np.ascontiguousarray(weight, np.float32),
              "bias": np.ascontiguousarray(bias, np.float32)}
    return "Gemm", {}, params


def _has(node: Any, index: int) -> bool:
    return len(node.input) > index and bool(node.input[index])


def _const(node: Any, consts: Mapping[str, np.ndarray], index: int, what: str,
           keep: bool = False) -> np.ndarray:
    if not _has(node, index) or node.input[index] not in consts:
        raise Unsupported(f"its {what} input is not a constant or an initializer")
    value = consts[node.input[index]]
    return value if keep else value.astype(np.float32)


#: op -> (normalise, per-item output shape from (attrs, params, first input shape))
RULES: dict[str, tuple[Callable[..., tuple], Callable[..., Shape]]] = {
    "Conv": (conv, conv_shape),
    "Relu": (relu, lambda a, p, s: s),
    "Clip": (clip, lambda a, p, s: s),
    "BatchNormalization": (batchnorm, lambda a, p, s: s),
    "Add": (add, lambda a, p, s: s),
    "MaxPool": (pool, pool_shape),
    "AveragePool": (pool, pool_shape),
    "GlobalAveragePool": (gap, lambda a, p, s: (s[0], 1, 1)),
    "Flatten": (flatten, lambda a, p, s: a["shape"]),
    "Reshape": (reshape, lambda a, p, s: a["shape"]),
    "Gemm": (gemm, lambda a, p, s: (p["weight"].shape[0],)),
    "MatMul": (gemm, lambda a, p, s: (p["weight"].shape[0],)),
}
