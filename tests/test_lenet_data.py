"""The LeNet study's data: the shipped digits, the normalisation, MNIST IDX files, the benchmark
input, and the script that builds the shipped digits."""

from __future__ import annotations

import gzip
import importlib.util
import struct
from pathlib import Path

import numpy as np
import pytest

from profiler.errors import DataError, UsageError
from variants.lenet import data

IDX = Path(__file__).parent / "data" / "idx"
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def idx_bytes(images: np.ndarray, magic: int = 2051) -> bytes:
    """An IDX image file written by hand, independently of data.read_idx."""
    n, rows, cols = images.shape
    return struct.pack(">IIII", magic, n, rows, cols) + images.astype(np.uint8).tobytes()


@pytest.fixture
def pictures() -> np.ndarray:
    return np.random.default_rng(7).integers(0, 256, size=(5, 28, 28), dtype=np.uint8)


# --- the shipped digits ------------------------------------------------------------------


def test_shipped_digits_shapes_and_split():
    digits = data.load_shipped()
    n = len(digits.labels)
    assert n == 1797  # scikit-learn's digits, all of them
    assert digits.images.shape == (n, 28, 28) and digits.images.dtype == np.uint8
    assert digits.labels.dtype == np.int64 and set(digits.labels.tolist()) == set(range(10))
    assert digits.test_mask.dtype == np.bool_
    assert len(digits.train_index) + len(digits.test_index) == n
    assert not set(digits.train_index) & set(digits.test_index)
    for d in range(10):  # stratified: 20% of every class, rounded
        members = digits.labels == d
        assert (digits.test_mask & members).sum() == round(0.2 * members.sum())
    assert not digits.images.flags.writeable


def test_shipped_digits_are_framed_like_mnist():
    images = data.load_shipped().images.astype(np.float64)
    assert images.max() == 255 and images.min() == 0
    ys, xs = np.mgrid[0:28, 0:28]
    mass = images.sum(axis=(1, 2))
    assert (mass > 0).all()
    com_y = (images * ys).sum(axis=(1, 2)) / mass
    com_x = (images * xs).sum(axis=(1, 2)) / mass
    assert np.abs(com_y - 13.5).max() <= 1.0 and np.abs(com_x - 13.5).max() <= 1.0
    rows = (images > 0).any(axis=2)
    cols = (images > 0).any(axis=1)
    height = 28 - rows.argmax(axis=1) - rows[:, ::-1].argmax(axis=1)
    width = 28 - cols.argmax(axis=1) - cols[:, ::-1].argmax(axis=1)
    assert height.max() <= 20 and width.max() <= 20  # fits MNIST's 20x20 box
    assert np.median(height) >= 18  # and fills it: the scans are full height


def test_shipped_file_is_small():
    assert data.DIGITS_PATH.stat().st_size < 1_000_000


def test_load_shipped_missing_file(tmp_path):
    path = tmp_path / "digits.npz"
    with pytest.raises(DataError, match="digits.npz.*not found"):
        data.load_shipped(path)


def test_load_shipped_corrupt_file(tmp_path):
    path = tmp_path / "garbage.npz"
    path.write_bytes(b"this is not a zip archive at all")
    with pytest.raises(DataError, match="garbage.npz"):
        data.load_shipped(path)


def test_load_shipped_missing_array(tmp_path):
    path = tmp_path / "partial.npz"
    np.savez(path, images=np.zeros((2, 28, 28), np.uint8), labels=np.zeros(2, np.int64))
    with pytest.raises(DataError, match="partial.npz.*test_mask"):
        data.load_shipped(path)


def test_load_shipped_wrong_dtype(tmp_path):
    path = tmp_path / "floats.npz"
    np.savez(
        path,
        images=np.zeros((2, 28, 28), np.float32),
        labels=np.zeros(2, np.int64),
        test_mask=np.zeros(2, bool),
    )
    with pytest.raises(DataError, match="floats.npz.*images float32"):
        data.load_shipped(path)


# --- normalisation -----------------------------------------------------------------------


def test_normalize_is_divide_by_255():
    images = np.zeros((2, 28, 28), np.uint8)
    images[0, 0, 0], images[0, 1, 2], images[1, 27, 27] = 255, 51, 1
    out = data.normalize(images)
    assert out.shape == (2, 1, 28, 28) and out.dtype == np.float32
    assert out[0, 0, 0, 0] == 1.0 and out[0, 0, 1, 2] == np.float32(0.2)
    assert out[1, 0, 27, 27] == np.float32(1 / 255) and np.count_nonzero(out) == 3


def test_normalize_rejects_floats():
    with pytest.raises(ValueError, match="uint8"):
        data.normalize(np.zeros((1, 28, 28), np.float32))


# --- IDX files ---------------------------------------------------------------------------


def test_read_idx_committed_files():
    shipped = data.load_shipped().images[:3]
    np.testing.assert_array_equal(data.read_idx(IDX / "three.idx3-ubyte"), shipped)
    np.testing.assert_array_equal(data.read_idx(IDX / "three.idx3-ubyte.gz"), shipped)
    assert data.read_idx_labels(IDX / "three-labels.idx1-ubyte").tolist() == [0, 1, 2]


@pytest.mark.parametrize("name", ["images.idx3-ubyte", "images.bin"])
@pytest.mark.parametrize("compress", [False, True])
def test_read_idx_good(tmp_path, pictures, name, compress):
    """Compression is found from the gzip magic bytes, whatever the name says."""
    raw = idx_bytes(pictures)
    path = tmp_path / name
    path.write_bytes(gzip.compress(raw) if compress else raw)
    out = data.read_idx(path)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, pictures)


def test_read_idx_plain_file_named_gz_is_read(tmp_path, pictures):
    path = tmp_path / "t10k-images-idx3-ubyte.gz"
    path.write_bytes(idx_bytes(pictures))
    np.testing.assert_array_equal(data.read_idx(path), pictures)


def test_read_idx_missing(tmp_path):
    path = tmp_path / "t10k-images-idx3-ubyte"
    with pytest.raises(DataError, match=f"{path}: file not found"):
        data.read_idx(path)


def test_read_idx_directory(tmp_path):
    with pytest.raises(DataError, match="not a regular file"):
        data.read_idx(tmp_path)


def test_read_idx_not_gzip_though_named_gz():
    path = IDX / "html.idx3-ubyte.gz"
    with pytest.raises(DataError) as err:
        data.read_idx(path)
    msg = str(err.value)
    assert str(path) in msg
    assert "name ends in .gz but the file is not gzip-compressed" in msg
    assert "<!DOCTYPE html>" in msg and "wrong magic number 0x3c21444f" in msg


@pytest.mark.parametrize("damage", ["truncated", "bit flip"])
def test_read_idx_corrupt_gzip(tmp_path, pictures, damage):
    packed = bytearray(gzip.compress(idx_bytes(pictures)))
    if damage == "truncated":
        packed = packed[: len(packed) // 2]
    else:
        packed[-8] ^= 0xFF  # the CRC-32 of the gzip trailer
    path = tmp_path / "images.gz"
    path.write_bytes(bytes(packed))
    with pytest.raises(DataError, match=f"{path}: corrupt gzip data"):
        data.read_idx(path)


def test_read_idx_labels_file_given_as_images():
    path = IDX / "three-labels.idx1-ubyte"
    with pytest.raises(DataError) as err:
        data.read_idx(path)
    msg = str(err.value)
    assert str(path) in msg
    assert "wrong magic number 0x00000801 (2049)" in msg and "expected 0x00000803 (2051)" in msg
    assert "an IDX label file has magic 2049" in msg and "looks like an IDX label file" in msg


def test_read_idx_unknown_magic(tmp_path, pictures):
    path = tmp_path / "floats.idx3"
    path.write_bytes(idx_bytes(pictures, magic=0x00000D03))  # IDX of float32, not bytes
    with pytest.raises(DataError, match=r"floats.idx3: wrong magic number 0x00000d03 \(3331\)"):
        data.read_idx(path)


def test_read_idx_wrong_dimensions(tmp_path):
    path = tmp_path / "big.idx3-ubyte"
    path.write_bytes(idx_bytes(np.zeros((2, 32, 30), np.uint8)))
    with pytest.raises(DataError, match="big.idx3-ubyte: images are 32x30, they must be 28x28"):
        data.read_idx(path)


def test_read_idx_truncated(tmp_path, pictures):
    path = tmp_path / "cut.idx3-ubyte"
    path.write_bytes(idx_bytes(pictures)[:-100])
    expected, found = 16 + 5 * 784, 16 + 5 * 784 - 100
    with pytest.raises(DataError, match=f"cut.idx3-ubyte: truncated: expected {expected} bytes"):
        data.read_idx(path)
    with pytest.raises(DataError, match=f"found {found}"):
        data.read_idx(path)


@pytest.mark.parametrize("size", [0, 3, 10])
def test_read_idx_truncated_header(tmp_path, pictures, size):
    path = tmp_path / "stub"
    path.write_bytes(idx_bytes(pictures)[:size])
    with pytest.raises(
        DataError, match=f"stub: truncated: expected at least 16 bytes .*found {size}"
    ):
        data.read_idx(path)


def test_read_idx_too_long(tmp_path, pictures):
    path = tmp_path / "long.idx3-ubyte"
    path.write_bytes(idx_bytes(pictures) + b"\0" * 784)
    with pytest.raises(DataError, match=f"long.idx3-ubyte: too long: expected {16 + 5 * 784}"):
        data.read_idx(path)


def test_read_idx_no_images(tmp_path):
    path = tmp_path / "empty.idx3-ubyte"
    path.write_bytes(idx_bytes(np.zeros((0, 28, 28), np.uint8)))
    with pytest.raises(DataError, match="empty.idx3-ubyte: holds no items"):
        data.read_idx(path)


def test_read_idx_labels_rejects_images():
    path = IDX / "three.idx3-ubyte"
    with pytest.raises(DataError, match="three.idx3-ubyte: wrong magic number 0x00000803"):
        data.read_idx_labels(path)


# --- the benchmark input -----------------------------------------------------------------


@pytest.mark.parametrize("count", [0, -1, 2.5, True, "10"])
def test_benchmark_images_bad_count(count):
    with pytest.raises(UsageError, match=">= 1"):
        data.benchmark_images(count)


def test_benchmark_images_cycle_the_shipped_images():
    shipped = data.load_shipped().images
    n = len(shipped)
    out = data.benchmark_images(2 * n + 5)
    assert out.shape == (2 * n + 5, 1, 28, 28) and out.dtype == np.float32
    assert out.min() == 0.0 and out.max() == 1.0
    expected = shipped.astype(np.float64)[:, None] / 255
    np.testing.assert_allclose(out[:n], expected, rtol=1e-7, atol=0)
    np.testing.assert_array_equal(out[n : 2 * n], out[:n])
    np.testing.assert_array_equal(out[2 * n :], out[:5])


def test_benchmark_images_deterministic():
    a, b = data.benchmark_images(10_000), data.benchmark_images(10_000)
    assert a.shape == (10_000, 1, 28, 28)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(data.benchmark_images(1), a[:1])


def test_benchmark_images_from_idx(tmp_path, pictures):
    path = tmp_path / "mnist.gz"
    path.write_bytes(gzip.compress(idx_bytes(pictures)))
    out = data.benchmark_images(12, path)
    assert out.shape == (12, 1, 28, 28) and out.dtype == np.float32
    order = [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]
    np.testing.assert_array_equal(out[:, 0] * 255, pictures[order].astype(np.float32))
    assert not np.array_equal(out[:5], data.benchmark_images(5))


def test_benchmark_images_bad_data_path(tmp_path):
    with pytest.raises(DataError, match="nowhere.idx: file not found"):
        data.benchmark_images(10, tmp_path / "nowhere.idx")


# --- scripts/make_digits.py (scikit-learn itself is not needed for these) ------------------


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_make_digits_writes_reproducible_bytes(tmp_path):
    make = load_script("make_digits")
    arrays = {
        "images": np.arange(2 * 28 * 28).astype(np.uint8).reshape(2, 28, 28),
        "labels": np.array([3, 4]),
        "test_mask": np.array([True, False]),
    }
    make.write_npz(tmp_path / "a.npz", arrays)
    make.write_npz(tmp_path / "b.npz", arrays)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    loaded = data.load_shipped(tmp_path / "a.npz")
    np.testing.assert_array_equal(loaded.images, arrays["images"])
    assert loaded.test_index.tolist() == [0]


def test_make_digits_frames_a_scan():
    make = load_script("make_digits")
    scan = np.zeros((8, 8))
    scan[:, 5:7] = 16  # a full-height bar, 2 wide, right of centre
    framed = make.frame_digit(scan).astype(np.float64)
    rows, cols = np.nonzero(framed)
    assert rows.max() - rows.min() + 1 <= 20 and rows.max() - rows.min() + 1 >= 18
    assert cols.max() - cols.min() + 1 <= 6  # 2 of 8 columns: 5 of 20, plus spline spill
    ys, xs = np.mgrid[0:28, 0:28]
    assert abs((framed * ys).sum() / framed.sum() - 13.5) <= 0.5
    assert abs((framed * xs).sum() / framed.sum() - 13.5) <= 0.5


def test_stratified_test_mask():
    make = load_script("make_digits")
    labels = np.repeat(np.arange(3), [10, 20, 7])
    mask = make.stratified_test_mask(labels, 0.2, seed=1)
    assert [int(mask[labels == d].sum()) for d in range(3)] == [2, 4, 1]
    np.testing.assert_array_equal(mask, make.stratified_test_mask(labels, 0.2, seed=1))
