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
from variants.lenet import data, reference

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
    """The Model of the LeNet study (see variants.base.Model)."""

    weights: Mapping[str, np.ndarray]
    name: str = "lenet"
    input_shape: tuple[int, ...] = (1, 28, 28)
    classes: int = 10
    source: str = field(default="", compare=False)

    def reference(self, images: np.ndarray) -> np.ndarray:
        return reference.forward(images, self.weights)

    def benchmark_images(self, count: int, data_path: Path | None = None) -> np.ndarray:
        return data.benchmark_images(count, data_path)


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


def read_onnx_weights(path: Path) -> dict[str, np.ndarray]:
    """The ten LeNet-5 parameter arrays of an ONNX graph, found by walking its Conv and Gemm
    (or MatMul) nodes in graph order. Raises: DataError."""
    import onnx
    from onnx import numpy_helper

    if not path.is_file():
        raise DataError(f"{path}: model file not found")
    try:
        graph = onnx.load(str(path)).graph
    except Exception as exc:  # onnx raises DecodeError, ValueError, ... on a bad file
        raise DataError(f"{path}: not a readable ONNX model ({exc})") from exc
    init = {t.name: numpy_helper.to_array(t).astype(np.float32) for t in graph.initializer}
    layers = [n for n in graph.node if n.op_type in ("Conv", "Gemm", "MatMul")]
    names = ["conv1", "conv2", "fc1", "fc2", "fc3"]
    if len(layers) != len(names):
        raise DataError(f"{path}: expected 2 Conv and 3 Gemm nodes, found {[n.op_type for n in layers]}")
    weights: dict[str, np.ndarray] = {}
    for name, node in zip(names, layers):
        weights[f"{name}.weight"], weights[f"{name}.bias"] = _node_params(path, graph, node, init)
    for key, shape in SHAPES.items():
        if weights[key].shape != shape:
            raise DataError(f"{path}: {key} has shape {weights[key].shape}, expected {shape}")
    return weights


def _node_params(path, graph, node, init) -> tuple[np.ndarray, np.ndarray]:
    params = [init[i] for i in node.input if i in init]
    if node.op_type == "MatMul":  # MatMul(x, W) followed by Add(., b)
        add = next((n for n in graph.node if n.op_type == "Add" and node.output[0] in n.input), None)
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
