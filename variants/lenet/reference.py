"""LeNet-5 in float64 NumPy: the ground truth every stage is checked against.

Layers: conv 1->6 5x5 + ReLU, max-pool 2x2, conv 6->16 5x5 + ReLU, max-pool 2x2,
flatten (C, H, W) to 256, 256->120 ReLU, 120->84 ReLU, 84->10.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

CHUNK = 1000  # images per step, to bound the im2col memory (about 120 MB at float64)


def conv2d(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Valid cross-correlation, stride 1: x (n, c, h, w), w (o, c, k, k) -> (n, o, h-k+1, w-k+1)."""
    k = w.shape[-1]
    windows = sliding_window_view(x, (k, k), axis=(2, 3))  # n, c, oh, ow, k, k
    out = np.tensordot(windows, w, axes=([1, 4, 5], [1, 2, 3]))  # n, oh, ow, o
    return out.transpose(0, 3, 1, 2) + b[None, :, None, None]


def maxpool2(x: np.ndarray) -> np.ndarray:
    """2x2 max-pool, stride 2: (n, c, h, w) -> (n, c, h/2, w/2)."""
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def _forward(x: np.ndarray, p: Mapping[str, np.ndarray]) -> np.ndarray:
    x = maxpool2(relu(conv2d(x, p["conv1.weight"], p["conv1.bias"])))
    x = maxpool2(relu(conv2d(x, p["conv2.weight"], p["conv2.bias"])))
    x = x.reshape(len(x), -1)
    x = relu(x @ p["fc1.weight"].T + p["fc1.bias"])
    x = relu(x @ p["fc2.weight"].T + p["fc2.bias"])
    return x @ p["fc3.weight"].T + p["fc3.bias"]


def forward(images: np.ndarray, weights: Mapping[str, np.ndarray]) -> np.ndarray:
    """float64 logits (n, 10) for images (n, 1, 28, 28) of any float dtype."""
    p = {k: np.asarray(v, dtype=np.float64) for k, v in weights.items()}
    images = np.asarray(images, dtype=np.float64).reshape(-1, 1, 28, 28)
    parts = [_forward(images[i : i + CHUNK], p) for i in range(0, len(images), CHUNK)]
    return np.concatenate(parts) if parts else np.zeros((0, 10))
