"""MobileNetV2 as ONNX, built from a seed with onnx.helper and NumPy (no torch), and cached.

The graph is what `torch.onnx.export` writes for torchvision's `mobilenet_v2()` in eval mode:
52 Conv (BatchNorm folded in), 35 Clip (ReLU6), 10 Add, 1 GlobalAveragePool, 1 Flatten and 1
Gemm, with torchvision's node names (`/features/features.2/conv/conv.1/conv.1.0/Conv`, ...),
so the plan's phases read `features.N...`.

Weights: He-normal convolutions from the seed. Each convolution's BatchNorm is calibrated on
the first `CALIBRATION_IMAGES` benchmark images, layer by layer in order: the running mean
and variance are the measured per-channel statistics of the convolution's output, and gamma
and beta are drawn so that a ReLU6 input has a per-channel spread of 1-3 around -1..2 (it
clips at 0 and at 6 a real fraction) and a projection (no activation, feeding a residual sum)
a spread of 0.3-0.8 around 0. The classifier is scaled so the logits spread by about 3
and centred per class over the calibration images (so the top class varies by image). The
BatchNorm is then folded into each Conv, as torch.onnx.export does in eval mode.

`path()` builds the file at first use into profgen's cache
(`~/.cache/profgen/models/mobilenetv2-seed<S>-v<V>.onnx`) and returns it; `BUILDER_VERSION`
changes whenever the same seed would give other weights.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from profiler import files

BUILDER_VERSION = "2"
SEED = 0
CALIBRATION_IMAGES = 32
OPSET = 17
IR_VERSION = 8
#: torchvision's inverted residual setting: expand ratio t, channels c, repeats n, stride s
SETTING = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
           (6, 160, 3, 2), (6, 320, 1, 1))
CLASSES = 1000
LAST_CHANNELS = 1280


def cached_path(seed: int = SEED) -> Path:
    return files.cache_dir() / "models" / f"mobilenetv2-seed{seed}-v{BUILDER_VERSION}.onnx"


def path(seed: int = SEED) -> Path:
    """The cached ONNX file of the model for `seed`, built first when missing."""
    target = cached_path(seed)
    if not target.is_file():
        files.write_bytes(target, build(seed).SerializeToString())
    return target


@dataclass
class _Builder:
    """Nodes and initializers of the graph under construction, with the calibration images'
    activation of the last tensor (float64)."""

    rng: np.random.Generator
    x: np.ndarray
    nodes: list[Any] = field(default_factory=list)
    inits: list[Any] = field(default_factory=list)
    tensor: str = "input"
    counter: int = 0

    def initializer(self, kind: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.counter += 1
        name = f"onnx::{kind}_{self.counter}"
        self.inits.append(numpy_helper.from_array(value.astype(np.float32), name))
        return name

    def node(self, op: str, scope: str, inputs: list[str], **attrs: Any) -> str:
        from onnx import helper

        name = f"{scope}/{op}"
        out = f"{name}_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        self.tensor = out
        return out

    def conv(self, scope: str, cout: int, kernel: int, stride: int, group: int,
             relu6: bool, act_scope: str = "") -> None:
        """Conv (BatchNorm calibrated and folded), then ReLU6 when `relu6`."""
        from variants.onnxplan import execute
        from variants.onnxplan.plan import Layer

        cin = self.x.shape[1]
        fan_in = cin // group * kernel * kernel
        w = self.rng.standard_normal((cout, cin // group, kernel, kernel)) * np.sqrt(2 / fan_in)
        pad = kernel // 2
        attrs = {"kernel": (kernel, kernel), "stride": (stride, stride),
                 "pads": (pad,) * 4, "group": group}
        ho = (self.x.shape[2] + 2 * pad - kernel) // stride + 1
        layer = Layer(scope, "Conv", ("x",), "y", (self.x.shape[1:],), (cout, ho, ho), attrs,
                      {"weight": w, "bias": np.zeros(cout)})
        raw = execute.conv(layer, self.x)
        mean, std = raw.mean(axis=(0, 2, 3)), raw.std(axis=(0, 2, 3)) + 1e-5
        if relu6:
            gamma, beta = self.rng.uniform(1.0, 3.0, cout), self.rng.uniform(-1.0, 2.0, cout)
        else:
            gamma, beta = self.rng.uniform(0.3, 0.8, cout), self.rng.normal(0, 0.1, cout)
        scale = gamma / std
        w, b = w * scale[:, None, None, None], beta - mean * scale
        wq, bq = w.astype(np.float32), b.astype(np.float32)
        self.x = raw * scale[None, :, None, None] + (beta - mean * scale)[None, :, None, None]
        inputs = [self.tensor, self.initializer("Conv", wq), self.initializer("Conv", bq)]
        self.node("Conv", scope, inputs, dilations=[1, 1], group=group,
                  kernel_shape=[kernel, kernel], pads=[pad] * 4, strides=[stride, stride])
        if relu6:
            self.node("Clip", act_scope, [self.tensor, "relu6.min", "relu6.max"])
            self.x = np.clip(self.x, 0, 6)


def _block(b: _Builder, index: int, expand: int, cout: int, stride: int) -> None:
    """features.<index>: torchvision's InvertedResidual."""
    scope = f"/features/features.{index}/conv"
    block_in, x_in = b.tensor, b.x
    cin = b.x.shape[1]
    hidden = cin * expand
    part = 0
    if expand != 1:
        b.conv(f"{scope}/conv.0/conv.0.0", hidden, 1, 1, 1, True, f"{scope}/conv.0/conv.0.2")
        part = 1
    b.conv(f"{scope}/conv.{part}/conv.{part}.0", hidden, 3, stride, hidden, True,
           f"{scope}/conv.{part}/conv.{part}.2")
    b.conv(f"{scope}/conv.{part + 1}", cout, 1, 1, 1, False)
    if stride == 1 and cin == cout:
        b.node("Add", f"/features/features.{index}", [block_in, b.tensor])
        b.x = b.x + x_in


def build(seed: int = SEED, images: np.ndarray | None = None) -> Any:
    """The MobileNetV2 `onnx.ModelProto` for `seed`, its BatchNorm calibrated on `images`
    (default: the first CALIBRATION_IMAGES benchmark images)."""
    import onnx
    from onnx import helper, numpy_helper

    from variants.mobilenetv2 import data

    x = data.benchmark_images(CALIBRATION_IMAGES) if images is None else images
    b = _Builder(np.random.default_rng([seed, 2]), x.astype(np.float64))
    b.inits += [numpy_helper.from_array(np.array(v, np.float32), n)
                for n, v in (("relu6.min", 0.0), ("relu6.max", 6.0))]
    b.conv("/features/features.0/features.0.0", 32, 3, 2, 1, True,
           "/features/features.0/features.0.2")
    index = 1
    for expand, cout, repeats, stride in SETTING:
        for r in range(repeats):
            _block(b, index, expand, cout, stride if r == 0 else 1)
            index += 1
    b.conv(f"/features/features.{index}/features.{index}.0", LAST_CHANNELS, 1, 1, 1, True,
           f"/features/features.{index}/features.{index}.2")
    b.node("GlobalAveragePool", "", [b.tensor])
    b.node("Flatten", "", [b.tensor], axis=1)
    pooled = b.x.mean(axis=(2, 3))
    centred = pooled - pooled.mean(axis=0)  # logits centred per class: the top class
    w = b.rng.standard_normal((CLASSES, LAST_CHANNELS))  # depends on the image
    w *= 3.0 / max(float((centred @ w.T).std()), 1e-6)
    bias = b.rng.normal(0, 0.1, CLASSES) - pooled.mean(axis=0) @ w.T
    gemm_in = [b.tensor, b.initializer("Gemm", w), b.initializer("Gemm", bias)]
    b.node("Gemm", "/classifier/classifier.1", gemm_in, alpha=1.0, beta=1.0, transB=1)
    b.nodes[-1].output[0] = "output"
    graph = helper.make_graph(
        b.nodes,
        "main_graph",
        [helper.make_tensor_value_info("input", onnx.TensorProto.FLOAT, ["batch", 3, 224, 224])],
        [helper.make_tensor_value_info("output", onnx.TensorProto.FLOAT, ["batch", CLASSES])],
        b.inits,
    )
    model = helper.make_model(graph, producer_name="profgen",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model
