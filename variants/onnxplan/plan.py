"""An ONNX graph as an ordered layer plan: what every stage of a network study walks.

A `Layer` is one compute node: its op (see `ops.SUPPORTED`), the activation tensors it reads
and writes, their per-item shapes (no batch axis), its attributes with defaults filled in, its
float32 weights and its phase name. Constants and Identity nodes disappear while loading; a
MatMul by a constant becomes a Gemm with the weight stored (out, in).

Phase names come from the node names torch.onnx.export writes, which carry the module path:
`/features/features.3/conv/conv.0/conv.0.0/Conv` is phase `features.3.conv.0.0`,
`/features/features.3/Add` is `features.3.Add` (its module also holds other nodes) and
`/GlobalAveragePool` is `GlobalAveragePool`. Unnamed nodes are `<op>_<index>`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from profiler.errors import DataError
from variants.onnxplan import ops

Shape = tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Layer:
    """One compute node of the plan (shapes per item)."""

    name: str
    op: str
    inputs: tuple[str, ...]
    output: str
    in_shapes: tuple[Shape, ...]
    out_shape: Shape
    attrs: Mapping[str, Any]
    params: Mapping[str, np.ndarray]
    phase: str = ""

    @property
    def in_shape(self) -> Shape:
        return self.in_shapes[0]


@dataclass(frozen=True, eq=False)
class Plan:
    """A network as layers in execution order, from the input tensor to the output tensor."""

    layers: tuple[Layer, ...]
    input: str
    input_shape: Shape
    output: str
    output_shape: Shape
    source: str = field(default="", compare=False)

    def layer(self, name: str) -> Layer:
        """The layer whose node is called `name`. Raises: KeyError."""
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise KeyError(name)

    def shapes(self) -> dict[str, Shape]:
        """Per-item shape of every activation tensor, the input included."""
        out = {self.input: self.input_shape}
        out.update((ly.output, ly.out_shape) for ly in self.layers)
        return out

    def counts(self) -> Counter[str]:
        """How many layers of each op."""
        return Counter(ly.op for ly in self.layers)

    def parameters(self) -> int:
        """Number of weight values (BatchNormalization's four vectors included)."""
        return sum(int(p.size) for ly in self.layers for p in ly.params.values())


def load(path: Path | str) -> Plan:
    """The plan of the ONNX file at `path`.

    Raises: DataError naming the file when it is missing or not ONNX, and naming the node and
    its op when the plan cannot run it (an unsupported op or attribute, a non-constant weight).
    """
    import onnx

    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: ONNX file not found" if not path.exists() else
                        f"{path}: not a file")
    try:
        model = onnx.load(str(path))
    except Exception as exc:  # onnx raises DecodeError, ValueError, ... on a bad file
        raise DataError(f"{path}: not a readable ONNX model ({exc})") from exc
    return from_model(model, str(path))


def from_model(model: Any, source: str = "<model>") -> Plan:
    """The plan of a loaded `onnx.ModelProto` (`source` names it in errors)."""
    from onnx import numpy_helper

    graph = model.graph
    if not graph.node:
        raise DataError(f"{source}: the ONNX graph holds no nodes")
    consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in consts]
    if len(inputs) != 1 or len(graph.output) != 1:
        raise DataError(f"{source}: the plan needs one graph input and one output, found "
                        f"{len(inputs)} and {len(graph.output)}")
    in_name, in_shape = inputs[0].name, _item_shape(inputs[0], source)
    shapes: dict[str, Shape] = {in_name: in_shape}
    alias: dict[str, str] = {}
    layers: list[Layer] = []
    for index, node in enumerate(graph.node):
        name = node.name or f"{node.op_type}_{index}"
        try:
            layer = _layer(node, name, consts, shapes, alias)
        except ops.Unsupported as exc:
            raise DataError(f"{source}: node {name!r} (op {node.op_type}): {exc}") from None
        if layer is not None:
            layers.append(layer)
            shapes[layer.output] = layer.out_shape
    out = alias.get(graph.output[0].name, graph.output[0].name)
    if out not in shapes or out == in_name:
        raise DataError(f"{source}: the graph output {graph.output[0].name!r} is not computed")
    _check_inferred(model, shapes, alias, source)
    return Plan(tuple(_name_phases(layers)), in_name, in_shape, out, shapes[out], source)


def _item_shape(value_info: Any, source: str) -> Shape:
    dims = value_info.type.tensor_type.shape.dim
    sizes = [d.dim_value if d.HasField("dim_value") else None for d in dims]
    if len(sizes) < 2 or any(s is None or s < 1 for s in sizes[1:]):
        raise DataError(f"{source}: input {value_info.name!r} needs a fixed shape after its "
                        f"batch axis, found {sizes}")
    return tuple(int(s) for s in sizes[1:])  # type: ignore[arg-type]


def _layer(node: Any, name: str, consts: dict[str, np.ndarray], shapes: dict[str, Shape],
           alias: dict[str, str]) -> Layer | None:
    op = node.op_type
    if node.domain not in ("", "ai.onnx") or op not in ops.SUPPORTED:
        raise ops.Unsupported(f"unsupported op; the layer plan runs {', '.join(ops.SUPPORTED)}")
    if op == "Constant":
        consts[node.output[0]] = _constant_value(node)
        return None
    inputs = [alias.get(i, i) for i in node.input]
    if op == "Identity":
        if inputs[0] in consts:
            consts[node.output[0]] = consts[inputs[0]]
        else:
            alias[node.output[0]] = inputs[0]
        return None
    acts = [i for i in inputs if i and i not in consts]
    if not acts or any(a not in shapes for a in acts):
        raise ops.Unsupported("its input is not computed by an earlier node")
    in_shapes = [shapes[a] for a in acts]
    node_view = _Node(node, inputs)
    normalise, shape_of = ops.RULES[op]
    plan_op, attrs, params = normalise(node_view, consts, in_shapes)
    out_shape = shape_of(attrs, params, in_shapes[0])
    return Layer(name, plan_op, tuple(acts), node.output[0], tuple(in_shapes), tuple(out_shape),
                 attrs, params)


class _Node:
    """A node whose inputs are seen through the Identity aliases."""

    def __init__(self, node: Any, inputs: list[str]) -> None:
        self.op_type, self.attribute, self.output = node.op_type, node.attribute, node.output
        self.input = inputs


def _constant_value(node: Any) -> np.ndarray:
    from onnx import numpy_helper

    attrs = {a.name: a for a in node.attribute}
    if "value" in attrs:
        return numpy_helper.to_array(attrs["value"].t)
    for key, kind in (("value_float", np.float32), ("value_int", np.int64)):
        if key in attrs:
            return np.asarray(ops.attributes(node)[key], kind)
    for key, kind in (("value_floats", np.float32), ("value_ints", np.int64)):
        if key in attrs:
            return np.asarray(ops.attributes(node)[key], kind)
    raise ops.Unsupported(f"a Constant of kind {', '.join(attrs)}")


def _check_inferred(model: Any, shapes: Mapping[str, Shape], alias: Mapping[str, str],
                    source: str) -> None:
    """Compare every shape with ONNX's own shape inference where it gives a fixed one."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model).graph.value_info
    except Exception:  # noqa: BLE001 - inference is a cross-check, not a requirement
        return
    for info in inferred:
        name = alias.get(info.name, info.name)
        dims = info.type.tensor_type.shape.dim
        sizes = [d.dim_value if d.HasField("dim_value") else None for d in dims]
        if name in shapes and sizes and None not in sizes[1:]:
            if tuple(sizes[1:]) != shapes[name]:
                raise DataError(f"{source}: tensor {info.name!r}: ONNX infers shape "
                                f"{sizes[1:]} per item, the plan computed {list(shapes[name])}")


def module_path(name: str) -> tuple[str, str]:
    """(qualified module, op part) of a torch.onnx.export node name, whose scopes repeat their
    parent's prefix: `/features/features.3/conv/conv.0/conv.0.0/Conv` gives
    (`features.3.conv.0.0`, `Conv`). A name without scopes gives ('', name)."""
    parts = [p for p in name.split("/") if p]
    if len(parts) < 2:
        return "", name.strip("/") or name
    qualified, last = "", ""
    for scope in parts[:-1]:
        if last and scope.startswith(last + "."):
            qualified += scope[len(last) :]
        else:
            qualified += ("." if qualified else "") + scope
        last = scope
    return qualified, parts[-1]


def _name_phases(layers: list[Layer]) -> list[Layer]:
    """Each layer with its phase: its module path where the module is a leaf holding only
    this node, else module.op (a container's Add, a node without a module: its op part);
    a repeat gets `#2`, `#3`, ... so every phase is unique."""
    split = [module_path(ly.name) for ly in layers]
    per_module = Counter(m for m, _ in split if m)
    containers = {m[:i] for m, _ in split for i, ch in enumerate(m) if ch == "."}
    seen: Counter[str] = Counter()
    out = []
    for layer, (module, op_part) in zip(layers, split, strict=True):
        leaf = module and per_module[module] == 1 and module not in containers
        phase = module if leaf else (f"{module}.{op_part}" if module else op_part)
        seen[phase] += 1
        if seen[phase] > 1:
            phase = f"{phase}#{seen[phase]}"
        out.append(replace(layer, phase=phase))
    return out
