"""The LeNet study's images: the shipped handwritten digits, MNIST IDX files, and the one input
normalisation the model was trained with.

The shipped images (data/digits.npz, built by scripts/make_digits.py) are scikit-learn's 1,797
real 8x8 digit scans framed like MNIST: scaled into a 20x20 box and centred by mass in 28x28,
uint8 0-255, white digit on black, with a fixed stratified 20% held out for accuracy.

Normalisation (the model's input, and what every stage receives): `normalize(images)` is
`images.astype(float32) / 255`, shape (n, 1, 28, 28), values in [0, 1]. No mean or standard
deviation is subtracted.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from profiler.errors import DataError, UsageError

DIGITS_PATH = Path(__file__).with_name("data") / "digits.npz"
SIDE = 28
IDX_IMAGES_MAGIC = 0x00000803  # 2051: unsigned bytes, 3 dimensions (n, rows, cols)
IDX_LABELS_MAGIC = 0x00000801  # 2049: unsigned bytes, 1 dimension (n)
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True, eq=False)
class Digits:
    """Labelled 28x28 digit images and their held-out split (arrays are read-only)."""

    images: np.ndarray  # uint8 (n, 28, 28), 0 = background
    labels: np.ndarray  # int64 (n,), 0-9
    test_mask: np.ndarray  # bool (n,), True for the held-out images

    @property
    def train_index(self) -> np.ndarray:
        return np.flatnonzero(~self.test_mask)

    @property
    def test_index(self) -> np.ndarray:
        return np.flatnonzero(self.test_mask)


def normalize(images: np.ndarray) -> np.ndarray:
    """The model's input for uint8 images (n, 28, 28): float32 (n, 1, 28, 28) = images / 255."""
    images = np.asarray(images)
    if images.dtype != np.uint8 or images.shape[-2:] != (SIDE, SIDE):
        raise ValueError(f"expected uint8 images (n, 28, 28), got {images.dtype} {images.shape}")
    return (images.astype(np.float32) / np.float32(255.0)).reshape(-1, 1, SIDE, SIDE)


@cache
def load_shipped(path: Path = DIGITS_PATH) -> Digits:
    """The handwritten digits shipped with the package.

    Raises: DataError naming the file when it is missing, unreadable or malformed.
    """
    if not Path(path).is_file():
        raise DataError(f"{path}: shipped digits not found (rebuild with scripts/make_digits.py)")
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in ("images", "labels", "test_mask")}
    except (OSError, ValueError, KeyError, zlib.error, EOFError) as exc:
        raise DataError(f"{path}: not a readable digits archive ({exc})") from exc
    images, labels, mask = arrays["images"], arrays["labels"], arrays["test_mask"]
    n = len(labels)
    checks = [
        (
            images.dtype == np.uint8 and images.shape == (n, SIDE, SIDE),
            f"images {images.dtype} {images.shape}",
        ),
        (
            labels.dtype == np.int64 and labels.ndim == 1 and n > 0,
            f"labels {labels.dtype} {labels.shape}",
        ),
        (mask.dtype == np.bool_ and mask.shape == (n,), f"test_mask {mask.dtype} {mask.shape}"),
    ]
    for ok, what in checks:
        if not ok:
            raise DataError(f"{path}: malformed digits archive: {what} for {n} labels")
    for a in (images, labels, mask):
        a.setflags(write=False)
    return Digits(images=images, labels=labels, test_mask=mask)


def benchmark_images(count: int, data_path: Path | str | None = None) -> np.ndarray:
    """The benchmark input: `count` normalised images, float32 (count, 1, 28, 28).

    Image i is source image i mod n, where the source is every shipped image in stored order,
    or, with `data_path`, every image of that MNIST IDX file in file order.

    Raises: UsageError when count < 1; DataError for a missing or malformed file.
    """
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise UsageError(f"the number of images must be an integer >= 1, got {count!r}")
    source = read_idx(data_path) if data_path is not None else load_shipped().images
    return normalize(source[np.arange(count) % len(source)])


def read_idx(path: Path | str) -> np.ndarray:
    """The images of an MNIST IDX image file (magic 2051), gzip-compressed or not.

    Compression is detected from the gzip magic bytes, not from the name.

    Returns: uint8 array (n, 28, 28).
    Raises: DataError naming the file and saying what is wrong with it.
    """
    src = _IdxBytes.read(path)
    n, rows, cols = src.header(IDX_IMAGES_MAGIC, dims=3)
    if (rows, cols) != (SIDE, SIDE):
        raise src.error(f"images are {rows}x{cols}, they must be 28x28 (MNIST)")
    body = src.body(header=16, count=n, item=rows * cols)
    return np.frombuffer(body, np.uint8).reshape(n, rows, cols).copy()


def read_idx_labels(path: Path | str) -> np.ndarray:
    """The labels of an MNIST IDX label file (magic 2049), gzip-compressed or not.

    Returns: int64 array (n,).
    Raises: DataError naming the file and saying what is wrong with it.
    """
    src = _IdxBytes.read(path)
    (n,) = src.header(IDX_LABELS_MAGIC, dims=1)
    return np.frombuffer(src.body(header=8, count=n, item=1), np.uint8).astype(np.int64)


_IDX_KINDS = {IDX_IMAGES_MAGIC: "an IDX image file", IDX_LABELS_MAGIC: "an IDX label file"}


@dataclass(frozen=True)
class _IdxBytes:
    """The (decompressed) bytes of an IDX file, and how to complain about them."""

    path: Path
    raw: bytes
    note: str  # appended to every error: a .gz name on a file that is not gzip-compressed

    @classmethod
    def read(cls, path: Path | str) -> _IdxBytes:
        path = Path(path)
        if not path.exists():
            raise DataError(f"{path}: file not found")
        if not path.is_file():
            raise DataError(f"{path}: not a regular file")
        raw = path.read_bytes()
        if raw[:2] == GZIP_MAGIC:
            try:
                return cls(path, gzip.decompress(raw), "")
            except (OSError, EOFError, zlib.error) as exc:
                raise DataError(f"{path}: corrupt gzip data ({exc})") from exc
        note = ""
        if path.suffix == ".gz":
            note = (
                " (the name ends in .gz but the file is not gzip-compressed: "
                f"it starts with {raw[:16]!r})"
            )
        return cls(path, raw, note)

    def error(self, message: str) -> DataError:
        return DataError(f"{self.path}: {message}{self.note}")

    def header(self, magic: int, dims: int) -> tuple[int, ...]:
        """The dimensions in the header, after checking the magic number."""
        need = 4 + 4 * dims
        if len(self.raw) < 4:
            raise self.error(
                f"truncated: expected at least {need} bytes of header, found {len(self.raw)}"
            )
        found = int.from_bytes(self.raw[:4], "big")
        if found != magic:
            looks = (
                f"this looks like {_IDX_KINDS[found]}" if found in _IDX_KINDS else "not an IDX file"
            )
            raise self.error(
                f"wrong magic number 0x{found:08x} ({found}), expected 0x{magic:08x} ({magic}) for "
                f"{_IDX_KINDS[magic]}; an IDX image file has magic 2051 and an IDX label file has "
                f"magic 2049: {looks}"
            )
        if len(self.raw) < need:
            raise self.error(
                f"truncated: expected at least {need} bytes of header, found {len(self.raw)}"
            )
        return tuple(int(v) for v in np.frombuffer(self.raw, ">u4", count=dims, offset=4))

    def body(self, header: int, count: int, item: int) -> bytes:
        """The data after the header, after checking its size against the header's count."""
        expected = header + count * item
        if len(self.raw) != expected:
            state = "truncated" if len(self.raw) < expected else "too long"
            raise self.error(
                f"{state}: expected {expected} bytes (a {header}-byte header and {count} items "
                f"of {item} bytes), found {len(self.raw)}"
            )
        if count == 0:
            raise self.error("holds no items (count 0 in the header)")
        return self.raw[header:]
