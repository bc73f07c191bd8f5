"""ResNet-50 as ONNX, built from a seed with onnx.helper and NumPy (no torch), and cached.

The graph is what `torch.onnx.export` writes for torchvision's `resnet50()` (v1.5: the stride
of a downsampling bottleneck is on its 3x3 convolution) when BatchNorm is kept: 53 Conv
(no bias), 53 BatchNormalization, 49 Relu, 16 Add, a MaxPool, GlobalAveragePool, Flatten and
the fc Gemm, with torchvision's node names (`/layer1/layer1.0/conv1/Conv`,
`/layer1/layer1.0/bn1/BatchNormalization`, `/layer1/layer1.0/relu_1/Relu`, ...). 25.5 M
parameters (25.6 M counting BatchNorm's running statistics).

Weights: He-normal convolutions from the seed; each BatchNorm calibrated on the first
`CALIBRATION_IMAGES` benchmark images (the MobileNetV2 study's photographs) layer by layer:
its running mean and variance are the measured statistics of its convolution's output, gamma
and beta are drawn so that a ReLU's input spreads by 0.7-1.5 around -0.3..0.5, and the last
BatchNorm of a block (before the residual sum) by 0.2-0.5 around 0, keeping the residual
stream in range over 16 blocks.

`path()` builds the file at first use into profgen's cache
(`~/.cache/profgen/models/resnet50-seed<S>-v<V>.onnx`, about 100 MB).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from profiler import files
from variants.onnxplan.builder import GraphBuilder

BUILDER_VERSION = "1"
SEED = 0
CALIBRATION_IMAGES = 8
OPSET = 17
IR_VERSION = 8
#: torchvision's layers: (bottlenecks, width); the output has 4 x width channels
LAYERS = ((3, 64), (4, 128), (6, 256), (3, 512))
CLASSES = 1000
RELU_BN = {"gamma": (0.7, 1.5), "beta": (-0.3, 0.5), "fold": False}
LAST_BN = {"gamma": (0.2, 0.5), "beta": (-0.1, 0.1), "fold": False}


def cached_path(seed: int = SEED) -> Path:
    return files.cache_dir() / "models" / f"resnet50-seed{seed}-v{BUILDER_VERSION}.onnx"


def path(seed: int = SEED) -> Path:
    """The cached ONNX file of the model for `seed`, built first when missing."""
    target = cached_path(seed)
    if not target.is_file():
        files.write_bytes(target, build(seed).SerializeToString())
    return target


def _bottleneck(b: GraphBuilder, layer: int, index: int, width: int, stride: int) -> None:
    """layer<layer>.<index>: torchvision's Bottleneck."""
    scope = f"/layer{layer}/layer{layer}.{index}"
    block_in, x_in = b.tensor, b.x
    cin = b.x.shape[1]
    b.conv_bn(f"{scope}/conv1", f"{scope}/bn1", width, 1, **RELU_BN)
    b.relu(f"{scope}/relu")
    b.conv_bn(f"{scope}/conv2", f"{scope}/bn2", width, 3, stride, **RELU_BN)
    b.relu(f"{scope}/relu_1")
    b.conv_bn(f"{scope}/conv3", f"{scope}/bn3", 4 * width, 1, **LAST_BN)
    main_tensor, main_x = b.tensor, b.x
    if stride != 1 or cin != 4 * width:
        b.tensor, b.x = block_in, x_in
        b.conv_bn(f"{scope}/downsample/downsample.0", f"{scope}/downsample/downsample.1",
                  4 * width, 1, stride, gamma=(0.5, 1.0), beta=(-0.1, 0.1), fold=False)
        block_in, x_in = b.tensor, b.x
        b.tensor, b.x = main_tensor, main_x
    b.add(scope, block_in, x_in)
    b.relu(f"{scope}/relu_2")


def build(seed: int = SEED, images: np.ndarray | None = None) -> Any:
    """The ResNet-50 `onnx.ModelProto` for `seed`, its BatchNorm calibrated on `images`
    (default: the first CALIBRATION_IMAGES benchmark images of the MobileNetV2 study)."""
    from variants.mobilenetv2 import data

    x = data.benchmark_images(CALIBRATION_IMAGES) if images is None else images
    b = GraphBuilder(np.random.default_rng([seed, 50]), x.astype(np.float64))
    b.conv_bn("/conv1", "/bn1", 64, 7, 2, **RELU_BN)
    b.relu("/relu")
    b.maxpool("/maxpool", 3, 2, 1)
    for layer, (blocks, width) in enumerate(LAYERS, start=1):
        for index in range(blocks):
            _bottleneck(b, layer, index, width, 2 if index == 0 and layer > 1 else 1)
    b.head("/avgpool", "/fc", CLASSES)
    return b.model(CLASSES, OPSET, IR_VERSION)
