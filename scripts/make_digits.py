"""Build the shipped digit images, variants/lenet/data/digits.npz, from scikit-learn's digits.

scikit-learn bundles 1,797 real handwritten digits (the UCI "optdigits" test set: 43 writers,
32x32 bitmaps reduced to 8x8 counts of 0-16). This script frames them the way MNIST frames its
digits: each digit is scaled, preserving its aspect ratio, so that it fits a 20x20 box (the
scans fill all 8 rows, so every digit is scaled by 2.5 to 20 rows), with a cubic spline that
treats pixels as areas, then placed in a 28x28 field so that its centre of mass sits at the
field's centre (integer shift, as MNIST did), and stored as uint8 0-255.

A fixed, seeded, stratified 20% of every class is held out (`test_mask`) for the accuracy the
training script (scripts/train_lenet.py) reports; training uses only the rest.

The output is byte-for-byte deterministic: the arrays are written into the .npz with fixed zip
timestamps, so running the script twice gives identical files. scikit-learn is only a
development dependency (`pip install scikit-learn`); nothing is downloaded.

Usage: python3 scripts/make_digits.py [--out PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import zipfile
from pathlib import Path

import numpy as np
from scipy import ndimage

OUT = Path(__file__).resolve().parents[1] / "variants" / "lenet" / "data" / "digits.npz"
SEED = 20240
TEST_FRACTION = 0.2
BOX = 20  # MNIST fits each digit into a 20x20 box ...
SIDE = 28  # ... centred by mass in a 28x28 field
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed timestamps make the .npz byte-for-byte reproducible


def frame_digit(scan: np.ndarray) -> np.ndarray:
    """One 8x8 scan (values 0-16) as a 28x28 uint8 image framed like MNIST."""
    rows, cols = np.nonzero(scan > 0)
    crop = scan[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1] / 16.0
    scale = BOX / max(crop.shape)
    big = ndimage.zoom(crop, scale, order=3, mode="grid-constant", cval=0.0, grid_mode=True)
    big = np.clip(big, 0.0, 1.0)
    com = np.array(ndimage.center_of_mass(big))
    top, left = np.clip(np.rint((SIDE - 1) / 2 - com).astype(int), 0, SIDE - np.array(big.shape))
    field = np.zeros((SIDE, SIDE))
    field[top : top + big.shape[0], left : left + big.shape[1]] = big
    return np.rint(field * 255.0).astype(np.uint8)


def stratified_test_mask(labels: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """True for a seeded `fraction` of each class (rounded), chosen without replacement."""
    rng = np.random.default_rng(seed)
    mask = np.zeros(len(labels), dtype=bool)
    for digit in np.unique(labels):
        members = np.flatnonzero(labels == digit)
        take = int(round(fraction * len(members)))
        mask[rng.permutation(members)[:take]] = True
    return mask


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Like np.savez_compressed, with every zip field that could vary (timestamps, permissions,
    compression level) set explicitly, so the bytes are reproducible."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, array in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue(), compresslevel=9)


def build() -> dict[str, np.ndarray]:
    """The arrays of digits.npz: images uint8 (N,28,28), labels int64 (N,), test_mask bool (N,)."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = np.stack([frame_digit(scan) for scan in digits.images])
    labels = digits.target.astype(np.int64)
    return {
        "images": images,
        "labels": labels,
        "test_mask": stratified_test_mask(labels, TEST_FRACTION, SEED),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write (default {OUT})")
    args = parser.parse_args()
    arrays = build()
    write_npz(args.out, arrays)
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()
    test = int(arrays["test_mask"].sum())
    print(
        f"{args.out}: {len(arrays['labels'])} images ({len(arrays['labels']) - test} train, "
        f"{test} held out), {args.out.stat().st_size} bytes, sha256 {digest}"
    )


if __name__ == "__main__":
    main()
