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

from pathlib import Path
from typing import Any

import numpy as np

from profiler import files
from variants.onnxplan.builder import GraphBuilder

BUILDER_VERSION = "3"
SEED = 0
CALIBRATION_IMAGES = 32
OPSET = 17
IR_VERSION = 8
#: torchvision's inverted residual setting: expand ratio t, channels c, repeats n, stride s
SETTING = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
           (6, 160, 3, 2), (6, 320, 1, 1))
CLASSES = 1000
LAST_CHANNELS = 1280
#: BatchNorm gamma and beta ranges: a ReLU6's input spreads by 1-3 around -1..2, so it clips
#: at 0 and at 6; a projection's (no activation, feeding a residual sum) by 0.3-0.8 around 0
RELU6_BN = {"gamma": (1.0, 3.0), "beta": (-1.0, 2.0)}
LINEAR_BN = {"gamma": (0.3, 0.8), "beta": (-0.15, 0.15)}


def cached_path(seed: int = SEED) -> Path:
    return files.cache_dir() / "models" / f"mobilenetv2-seed{seed}-v{BUILDER_VERSION}.onnx"


def path(seed: int = SEED) -> Path:
    """The cached ONNX file of the model for `seed`, built first when missing."""
    target = cached_path(seed)
    if not target.is_file():
        files.write_bytes(target, build(seed).SerializeToString())
    return target


def _block(b: GraphBuilder, index: int, expand: int, cout: int, stride: int) -> None:
    """features.<index>: torchvision's InvertedResidual."""
    scope = f"/features/features.{index}/conv"
    block_in, x_in = b.tensor, b.x
    cin = b.x.shape[1]
    hidden = cin * expand
    part = 0
    if expand != 1:
        b.conv_bn(f"{scope}/conv.0/conv.0.0", "", hidden, 1, **RELU6_BN)
        b.relu6(f"{scope}/conv.0/conv.0.2")
        part = 1
    b.conv_bn(f"{scope}/conv.{part}/conv.{part}.0", "", hidden, 3, stride, hidden, **RELU6_BN)
    b.relu6(f"{scope}/conv.{part}/conv.{part}.2")
    b.conv_bn(f"{scope}/conv.{part + 1}", "", cout, 1, **LINEAR_BN)
    if stride == 1 and cin == cout:
        b.add(f"/features/features.{index}", block_in, x_in)


def build(seed: int = SEED, images: np.ndarray | None = None) -> Any:
    """The MobileNetV2 `onnx.ModelProto` for `seed`, its BatchNorm calibrated on `images`
    (default: the first CALIBRATION_IMAGES benchmark images)."""
    from variants.mobilenetv2 import data

    x = data.benchmark_images(CALIBRATION_IMAGES) if images is None else images
    b = GraphBuilder(np.random.default_rng([seed, 2]), x.astype(np.float64))
    b.conv_bn("/features/features.0/features.0.0", "", 32, 3, 2, **RELU6_BN)
    b.relu6("/features/features.0/features.0.2")
    index = 1
    for expand, cout, repeats, stride in SETTING:
        for r in range(repeats):
            _block(b, index, expand, cout, stride if r == 0 else 1)
            index += 1
    b.conv_bn(f"/features/features.{index}/features.{index}.0", "", LAST_CHANNELS, 1,
              **RELU6_BN)
    b.relu6(f"/features/features.{index}/features.{index}.2")
    b.head("", "/classifier/classifier.1", CLASSES)
    return b.model(CLASSES, OPSET, IR_VERSION)
