"""Build a network's ONNX graph from a seed, layer by layer, calibrating each BatchNorm on real
images: what the MobileNetV2 and ResNet-50 studies' model builders share.

`GraphBuilder` emits nodes named as torch.onnx.export names them (the caller gives the scope,
e.g. `/layer1/layer1.0/conv1`) and keeps the calibration images' activation of the current
tensor in float64, so each convolution's BatchNorm gets the measured per-channel mean and
variance of the convolution's output as its running statistics, and gamma and beta drawn from
the ranges the caller asks for: activations stay in a realistic range at any depth. A
BatchNorm is folded into its convolution (`fold=True`, as torch.onnx.export does in eval mode)
or kept as its own node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from variants.onnxplan import execute
from variants.onnxplan.plan import Layer

EPSILON = 1e-5


@dataclass
class GraphBuilder:
    """Nodes and initializers of the graph under construction (see the module docstring)."""

    rng: np.random.Generator
    x: np.ndarray
    tensor: str = "input"
    nodes: list[Any] = field(default_factory=list)
    inits: list[Any] = field(default_factory=list)
    counter: int = 0

    def initializer(self, kind: str, value: Any, dtype: Any = np.float32) -> str:
        from onnx import numpy_helper

        self.counter += 1
        name = f"onnx::{kind}_{self.counter}"
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype), name))
        return name

    def node(self, op: str, scope: str, inputs: list[str], **attrs: Any) -> str:
        """Emit `op` named `<scope>/<op>` reading `inputs`; its output becomes the current
        tensor. The caller updates `x` to match."""
        from onnx import helper

        name = f"{scope}/{op}"
        out = f"{name}_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        self.tensor = out
        return out

    def conv_bn(self, scope: str, bn_scope: str, cout: int, kernel: int, stride: int = 1,
                group: int = 1, gamma: tuple[float, float] = (1.0, 1.0),
                beta: tuple[float, float] = (0.0, 0.0), fold: bool = True) -> None:
        """Conv (He-normal, padding kernel // 2) then BatchNorm calibrated on the images:
        gamma uniform in `gamma`, beta uniform in `beta`."""
        cin = self.x.shape[1]
        fan_in = cin // group * kernel * kernel
        w = self.rng.standard_normal((cout, cin // group, kernel, kernel)) * np.sqrt(2 / fan_in)
        pad = kernel // 2
        raw = execute.conv(_conv_layer(w, stride, pad, group, self.x.shape[1:]), self.x)
        mean, var = raw.mean(axis=(0, 2, 3)), raw.var(axis=(0, 2, 3))
        g, b = self.rng.uniform(*gamma, cout), self.rng.uniform(*beta, cout)
        scale = g / np.sqrt(var + EPSILON)
        self.x = raw * scale[None, :, None, None] + (b - mean * scale)[None, :, None, None]
        attrs = dict(dilations=[1, 1], group=group, kernel_shape=[kernel, kernel],
                     pads=[pad] * 4, strides=[stride, stride])
        if fold:
            w_f, b_f = w * scale[:, None, None, None], b - mean * scale
            inputs = [self.tensor, self.initializer("Conv", w_f), self.initializer("Conv", b_f)]
            self.node("Conv", scope, inputs, **attrs)
            return
        self.node("Conv", scope, [self.tensor, self.initializer("Conv", w)], **attrs)
        stats = [self.initializer("BatchNormalization", v) for v in (g, b, mean, var)]
        self.node("BatchNormalization", bn_scope, [self.tensor, *stats], epsilon=EPSILON,
                  momentum=0.9)

    def relu(self, scope: str) -> None:
        self.node("Relu", scope, [self.tensor])
        self.x = np.maximum(self.x, 0)

    def relu6(self, scope: str) -> None:
        if not any(t.name == "relu6.min" for t in self.inits):
            from onnx import numpy_helper

            self.inits += [numpy_helper.from_array(np.array(v, np.float32), n)
                           for n, v in (("relu6.min", 0.0), ("relu6.max", 6.0))]
        self.node("Clip", scope, [self.tensor, "relu6.min", "relu6.max"])
        self.x = np.clip(self.x, 0, 6)

    def add(self, scope: str, other: str, other_x: np.ndarray) -> None:
        self.node("Add", scope, [other, self.tensor])
        self.x = self.x + other_x

    def maxpool(self, scope: str, kernel: int, stride: int, pad: int) -> None:
        layer = Layer("pool", "MaxPool", ("x",), "y", (self.x.shape[1:],),
                      (self.x.shape[1], *((np.array(self.x.shape[2:]) + 2 * pad - kernel)
                                          // stride + 1)),
                      {"kernel": (kernel,) * 2, "stride": (stride,) * 2, "pads": (pad,) * 4}, {})
        self.node("MaxPool", scope, [self.tensor], kernel_shape=[kernel] * 2,
                  strides=[stride] * 2, pads=[pad] * 4)
        self.x = execute.maxpool(layer, self.x)

    def head(self, gap_scope: str, fc_scope: str, classes: int, spread: float = 3.0) -> None:
        """GlobalAveragePool, Flatten and the classifier Gemm (output `output`), its weights
        scaled so the logits spread by `spread` and centred per class over the images (the
        top class then depends on the image)."""
        self.node("GlobalAveragePool", gap_scope, [self.tensor])
        self.node("Flatten", "", [self.tensor], axis=1)
        pooled = self.x.mean(axis=(2, 3))
        centred = pooled - pooled.mean(axis=0)
        w = self.rng.standard_normal((classes, pooled.shape[1]))
        w *= spread / max(float((centred @ w.T).std()), 1e-6)
        bias = self.rng.normal(0, 0.1, classes) - pooled.mean(axis=0) @ w.T
        inputs = [self.tensor, self.initializer("Gemm", w), self.initializer("Gemm", bias)]
        self.node("Gemm", fc_scope, inputs, alpha=1.0, beta=1.0, transB=1)
        self.nodes[-1].output[0] = "output"
        self.x = pooled @ w.T + bias

    def model(self, classes: int, opset: int = 17, ir_version: int = 8) -> Any:
        """The checked `onnx.ModelProto` (input `input` (batch, C, H, W), output `output`)."""
        import onnx
        from onnx import helper

        shape = ["batch", *self.x_shape_in]
        graph = helper.make_graph(
            self.nodes, "main_graph",
            [helper.make_tensor_value_info("input", onnx.TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("output", onnx.TensorProto.FLOAT, ["batch", classes])],
            self.inits,
        )
        model = helper.make_model(graph, producer_name="profgen",
                                  opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = ir_version
        onnx.checker.check_model(model)
        return model

    def __post_init__(self) -> None:
        self.x_shape_in = tuple(int(d) for d in self.x.shape[1:])


def _conv_layer(w: np.ndarray, stride: int, pad: int, group: int, in_shape: tuple) -> Layer:
    kernel = w.shape[2]
    out = (w.shape[0], *((np.array(in_shape[1:]) + 2 * pad - kernel) // stride + 1))
    attrs = {"kernel": (kernel, kernel), "stride": (stride, stride), "pads": (pad,) * 4,
             "group": group}
    return Layer("conv", "Conv", ("x",), "y", (tuple(in_shape),), tuple(int(d) for d in out),
                 attrs, {"weight": w, "bias": np.zeros(w.shape[0])})
