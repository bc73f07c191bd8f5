"""Build the shipped photographs, variants/mobilenetv2/data/photos.npz, from scikit-learn's two
sample images (china.jpg and flower.jpg, both Creative Commons Attribution 2.0; see
variants/mobilenetv2/data/README.md for the credits).

Each JPEG is decoded with Pillow, scaled with Lanczos filtering so that its short side is 256
pixels (the size ImageNet evaluation resizes to before its 224 crop) and stored as uint8 RGB
(h, w, 3) under its name. The MobileNetV2 study cuts its 224x224 benchmark images out of these
(`variants.mobilenetv2.data`).

The output is byte-for-byte deterministic (fixed zip timestamps). scikit-learn and Pillow are
only needed to run this script; nothing is downloaded.

Usage: python3 scripts/make_photos.py [--out PATH]
"""

from __future__ import annotations

import argparse
import io
import zipfile
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "variants" / "mobilenetv2" / "data" / "photos.npz"
SHORT_SIDE = 256


def photos() -> dict[str, np.ndarray]:
    import sklearn.datasets
    from PIL import Image

    folder = Path(sklearn.datasets.__file__).parent / "images"
    out = {}
    for name in ("china", "flower"):
        image = Image.open(folder / f"{name}.jpg").convert("RGB")
        scale = SHORT_SIDE / min(image.size)
        size = (round(image.width * scale), round(image.height * scale))
        out[name] = np.asarray(image.resize(size, Image.LANCZOS), dtype=np.uint8)
    return out


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, array in arrays.items():
            buf = io.BytesIO()
            np.save(buf, array, allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args()
    arrays = photos()
    write_npz(args.out, arrays)
    print(args.out, {k: v.shape for k, v in arrays.items()}, args.out.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
