"""LeNet-5 with its trained weights, read from the ONNX file shipped beside this module.

The weights are a dict of float32 arrays named as PyTorch names them:
conv1.weight (6,1,5,5), conv1.bias (6), conv2.weight (16,6,5,5), conv2.bias (16),
fc1.weight (120,256), fc1.bias (120), fc2.weight (84,120), fc2.bias (84),
fc3.weight (10,84), fc3.bias (10). fc1's inputs are pool2's output flattened as (C, H, W).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from profiler.errors import DataError
from variants.lenet import reference

MODEL_PATH = Path(__file__).with_name("model.onnx")

SHAPES: dict[str, tuple[int, ...]] = {
    "conv1.weight": (6, 1, 5, 5),
    "conv1.bias": (6,),
    "conv2.weight": (16, 6, 5, 5),
    "conv2.bias": (16,),
    "fc1.weight": (120, 256),
    "fc1.bias": (120,),
    "fc2.weight": (84, 120),
    "fc2.bias": (84,),
    "fc3.weight": (10, 84),
    "fc3.bias": (10,),
}


@dataclass
class LeNet:
    """The LeNet study's model: its weights, and the file they were read from."""

    weights: Mapping[str, np.ndarray]
    name: str = "lenet"
    input_shape: tuple[int, ...] = (1, 28, 28)
    classes: int = 10
    source: str = field(default="", compare=False)

    def reference(self, images: np.ndarray) -> np.ndarray:
        """float64 logits (n, 10) of `images`: the ground truth of every stage."""
        return reference.forward(images, self.weights)


def random_weights(seed: int = 0) -> dict[str, np.ndarray]:
    """He-initialised weights of the right shapes, for tests on fresh inputs."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in SHAPES.items():
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        scale = np.sqrt(2.0 / fan_in) if len(shape) > 1 else 0.1
        out[name] = (rng.standard_normal(shape) * scale).astype(np.float32)
    return out


def load(path: Path | None = None) -> LeNet:
    """LeNet with the weights of the ONNX file at `path` (default: the shipped one).

    Raises: DataError naming the file when it is missing, not ONNX, or not a LeNet-5.
    """
    path = Path(path) if path else MODEL_PATH
    return LeNet(weights=read_onnx_weights(path), source=str(path))


def read_onnx_weights(path: Path | str) -> dict[str, np.ndarray]:
    """The ten LeNet-5 parameter arrays of an ONNX graph, found by walking its Conv and Gemm
    (or MatMul + Add) nodes in graph order.

    The graph must be LeNet-5 as `reference.forward` computes it: its compute nodes, in order,
    Conv Relu MaxPool Conv Relu MaxPool Gemm Relu Gemm Relu Gemm (shape plumbing such as
    Flatten or Reshape between them), convolutions of stride 1 without padding, 2x2 pools of
    stride 2, and parameters of the shapes in SHAPES.

    Raises: DataError naming the file when it is missing, not ONNX, or not a LeNet-5.
    """
    import onnx
    from onnx import numpy_helper

    path = Path(path)
    if not path.is_file():
        raise DataError(
            f"{path}: model file not found" if not path.exists() else f"{path}: not a file"
        )
    try:
        graph = onnx.load(str(path)).graph
    except Exception as exc:  # onnx raises DecodeError, ValueError, ... on a bad file
        raise DataError(f"{path}: not a readable ONNX model ({exc})") from exc
    if not graph.node:
        raise DataError(f"{path}: not an ONNX model of a network (the file holds no graph nodes)")
    _check_layers(path, graph)
    init = {t.name: numpy_helper.to_array(t).astype(np.float32) for t in graph.initializer}
    layers = [n for n in graph.node if n.op_type in ("Conv", "Gemm", "MatMul")]
    names = ["conv1", "conv2", "fc1", "fc2", "fc3"]
    weights: dict[str, np.ndarray] = {}
    for name, node in zip(names, layers, strict=True):
        weights[f"{name}.weight"], weights[f"{name}.bias"] = _node_params(path, graph, node, init)
    for key, shape in SHAPES.items():
        if weights[key].shape != shape:
            raise DataError(
                f"{path}: not a LeNet-5: {key} has shape {weights[key].shape}, expected {shape}"
            )
    return weights


LAYERS = tuple("Conv Relu MaxPool Conv Relu MaxPool Gemm Relu Gemm Relu Gemm".split())
#: nodes that only move or reshape data, allowed anywhere in the graph
PLUMBING = {"Flatten", "Reshape", "Constant", "Shape", "Gather", "Unsqueeze", "Concat", "Identity"}


#: attribute values `reference.forward` assumes, with the ONNX defaults where one exists
EXPECTED_ATTRS: dict[str, dict[str, tuple[object, object]]] = {
    "Conv": {
        "strides": ([1, 1], [1, 1]),
        "pads": ([0] * 4, [0] * 4),
        "dilations": ([1, 1], [1, 1]),
        "group": (1, 1),
        "auto_pad": ("NOTSET", "NOTSET"),
    },
    "MaxPool": {
        "kernel_shape": ([2, 2], None),
        "strides": ([2, 2], [1, 1]),
        "pads": ([0] * 4, [0] * 4),
        "auto_pad": ("NOTSET", "NOTSET"),
    },
    "Gemm": {"transA": (0, 0), "alpha": (1.0, 1.0), "beta": (1.0, 1.0)},
}


def _check_layers(path: Path, graph) -> None:
    """Raise DataError unless the graph computes what `reference.forward` computes."""
    from onnx import helper

    ops = [n.op_type for n in graph.node if n.op_type not in PLUMBING]
    found = " ".join(ops).replace("MatMul Add", "Gemm").split()
    if tuple(found) != LAYERS:
        raise DataError(
            f"{path}: not a LeNet-5: expected the layers {' '.join(LAYERS)}, "
            f"found {' '.join(found) or 'none'}"
        )
    for node in graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        for key, (want, default) in EXPECTED_ATTRS.get(node.op_type, {}).items():
            value = attrs.get(key, default)
            value = value.decode() if isinstance(value, bytes) else value
            if (list(value) if isinstance(value, (list, tuple)) else value) != want:
                raise DataError(
                    f"{path}: not a LeNet-5: {node.op_type} node {node.name!r} has {key}={value}, "
                    f"expected {want}"
                )


def _node_params(path, graph, node, init) -> tuple[np.ndarray, np.ndarray]:
    params = [init[i] for i in node.input if i in init]
    if node.op_type == "MatMul":  # MatMul(x, W) followed by Add(., b)
        add = next(
            (n for n in graph.node if n.op_type == "Add" and node.output[0] in n.input), None
        )
        bias = [init[i] for i in (add.input if add else []) if i in init]
        if len(params) != 1 or len(bias) != 1:
            raise DataError(f"{path}: MatMul node {node.name!r} without a weight and bias")
        return params[0].T, bias[0]
    if len(params) != 2:
        raise DataError(f"{path}: {node.op_type} node {node.name!r} lacks a weight or a bias")
    w, b = params
    if node.op_type == "Gemm":
        trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
        w = w if trans_b else w.T
    return w, b
