"""The MobileNetV2 study's images: 224x224 crops of real photographs, normalised as ImageNet
models expect.

The shipped photographs (data/photos.npz, two Creative Commons photographs, see
data/README.md) are 256 pixels on the short side. Image i is a square crop whose side
(60-100% of the short side), position and horizontal flip come from a generator seeded with
i, resized to 224x224 bilinearly, so any count of images is deterministic and the first k
images are the same for every count. `normalize` is torchvision's: RGB scaled to [0, 1], less
the ImageNet mean, divided by its standard deviation, laid out (n, 3, 224, 224) float32.

`--data PATH.npy` reads a user's images: float32 (n, 3, 224, 224), already normalised, or
uint8 (n, 224, 224, 3) RGB, normalised here; the first N are used.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

from profiler.errors import DataError

PHOTOS_PATH = Path(__file__).with_name("data") / "photos.npz"
SIDE = 224
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)


@cache
def photos(path: Path = PHOTOS_PATH) -> tuple[np.ndarray, ...]:
    """The shipped photographs, uint8 (h, w, 3) each. Raises: DataError naming the file."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            return tuple(npz[k] for k in sorted(npz.files))
    except (OSError, ValueError, KeyError) as exc:
        raise DataError(f"{path}: shipped photographs unreadable ({exc})") from exc


def resize(image: np.ndarray, side: int) -> np.ndarray:
    """`image` (h, w, c) resized to (side, side, c) by bilinear interpolation (pixel centres
    aligned, as PIL and torchvision do), float32."""
    out = image.astype(np.float32)
    for axis in (0, 1):
        n = out.shape[axis]
        pos = np.clip((np.arange(side) + 0.5) * n / side - 0.5, 0, n - 1)
        lo = np.floor(pos).astype(int)
        hi = np.minimum(lo + 1, n - 1)
        frac = (pos - lo).astype(np.float32)
        shape = [1, 1, 1]
        shape[axis] = side
        frac = frac.reshape(shape)
        out = np.take(out, lo, axis=axis) * (1 - frac) + np.take(out, hi, axis=axis) * frac
    return out


def crop(index: int) -> np.ndarray:
    """Benchmark image `index` as uint8 RGB (224, 224, 3)."""
    rng = np.random.default_rng([20_260_523, index])
    sources = photos()
    image = sources[index % len(sources)]
    short = min(image.shape[:2])
    size = int(rng.uniform(0.6, 1.0) * short)
    top = int(rng.integers(0, image.shape[0] - size + 1))
    left = int(rng.integers(0, image.shape[1] - size + 1))
    patch = image[top : top + size, left : left + size]
    if rng.random() < 0.5:
        patch = patch[:, ::-1]
    return np.clip(np.rint(resize(patch, SIDE)), 0, 255).astype(np.uint8)


def normalize(images: np.ndarray) -> np.ndarray:
    """uint8 RGB (n, 224, 224, 3) -> the model's input, float32 (n, 3, 224, 224)."""
    x = images.astype(np.float32) / np.float32(255.0)
    x = (x - MEAN) / STD
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def benchmark_images(count: int, path: Path | None = None) -> np.ndarray:
    """`count` normalised images: the shipped crops, or the first `count` of the file at
    `path`. Raises: DataError naming the file when it is unreadable, of the wrong shape or
    type, or holds fewer images."""
    if path is None:
        return normalize(np.stack([crop(i) for i in range(count)]))
    return _read(Path(path), count)


def _read(path: Path, count: int) -> np.ndarray:
    try:
        x = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: not a readable .npy file ({exc})") from exc
    if x.dtype == np.uint8 and x.ndim == 4 and x.shape[1:] == (SIDE, SIDE, 3):
        convert = normalize
    elif x.dtype == np.float32 and x.ndim == 4 and x.shape[1:] == (3, SIDE, SIDE):
        convert = np.ascontiguousarray
    else:
        raise DataError(f"{path}: expected float32 (n, 3, 224, 224) normalised images or uint8 "
                        f"(n, 224, 224, 3) RGB, got {x.dtype} {x.shape}")
    if len(x) < count:
        raise DataError(f"{path}: holds {len(x)} images, {count} asked for")
    out = convert(np.asarray(x[:count]))
    if not np.isfinite(out).all():
        raise DataError(f"{path}: holds NaN or infinite values")
    return out
