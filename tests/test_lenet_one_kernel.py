"""A NumPy twin of kernels/one_kernel.cu's indexing (LeNet_Fused), run on the CPU against the
float64 reference: the block's image grouping and its tail, the 6x6 patch of conv1+pool, conv2's
work items (channel group, image, pooled pixel) and its transposed (c, ky, kx, o) weights, the
pool2 layout fc1 reads, the shared-memory regions reused after conv1, and the fully-connected
layers' split dot products. Each function mirrors one part of the kernel, index for index, so a
wrong offset here is a wrong offset there; a planted wrong offset must fail the comparison.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from variants.lenet import reference
from variants.lenet.model import random_weights

SOURCE = Path(__file__).resolve().parents[1] / "variants" / "lenet" / "kernels" / "one_kernel.cu"
THREADS = 256


def layout(imgs: int) -> dict[str, int]:
    """Region A's offsets, as the kernel's constexprs compute them."""
    h1 = imgs * 256
    h2 = h1 + imgs * 120
    logits = h2 + imgs * 84
    return {
        "A": imgs * 784,
        "P1": imgs * 864,
        "P2": 0,
        "H1": h1,
        "H2": h2,
        "LOGITS": logits,
        "PART": logits + imgs * 12,
        "PART_FLOATS": 3 * imgs * 84,
    }


def conv1_pool1(a: np.ndarray, p1: np.ndarray, nimg: int, w1: np.ndarray, b1: np.ndarray) -> None:
    for p in range(nimg * 144):  # the block-stride loop over all items, thread by thread
        im, q = p // 144, p % 144
        py, px = q // 12, q % 12
        base = im * 784 + (2 * py) * 28 + 2 * px
        v = [a[base + r * 28 + c] for r in range(6) for c in range(6)]
        for o in range(6):
            acc = [b1[o]] * 4
            for k in range(25):
                ky, kx = k // 5, k % 5
                for d in range(4):
                    acc[d] = acc[d] + v[(d // 2 + ky) * 6 + d % 2 + kx] * w1[o * 25 + k]
            p1[im * 864 + o * 144 + q] = max(0.0, max(acc))


def conv2_quad(img: np.ndarray, wt: np.ndarray, b: np.ndarray, oy: int, ox: int, g: int):
    acc = np.array([[b[4 * g + j] for j in range(4)] for _ in range(4)])
    for c in range(6):
        src = c * 144 + oy * 12 + ox
        v = [img[src + r * 12 + cc] for r in range(6) for cc in range(6)]
        for t in range(25):
            ky, kx = t // 5, t % 5
            w = wt[(c * 25 * 16) + (t * 4 + g) * 4 : (c * 25 * 16) + (t * 4 + g) * 4 + 4]
            for d in range(4):
                acc[d] += v[(d // 2 + ky) * 6 + d % 2 + kx] * w
    return acc


def conv2_pool2(p1, a, nimg, imgs, wt, b2) -> None:
    for item in range(4 * imgs * 16):
        g, im, q = item // (imgs * 16), item // 16 % imgs, item % 16
        if im >= nimg:
            continue
        acc = conv2_quad(p1[im * 864 :], wt, b2, 2 * (q // 4), 2 * (q % 4), g)
        for j in range(4):
            a[im * 256 + (4 * g + j) * 16 + q] = max(0.0, acc[:, j].max())
    a[nimg * 256 : imgs * 256] = 0.0


def dense(a, xs_at, wt, b, part_at, ys_at, n_in, n_out, split, relu, imgs, part_floats):
    assert n_in % split == 0 and n_out * split <= THREADS
    assert split * imgs * n_out <= part_floats
    k_len = n_in // split
    for t in range(n_out * split):
        o, s = t % n_out, t // n_out
        acc = np.zeros(imgs)
        for k in range(k_len):
            wv = wt[(s * k_len + k) * n_out + o]
            acc += a[xs_at + np.arange(imgs) * n_in + s * k_len + k] * wv
        a[part_at + (s * imgs + np.arange(imgs)) * n_out + o] = acc
    for i in range(imgs * n_out):
        v = b[i % n_out] + sum(a[part_at + s * imgs * n_out + i] for s in range(split))
        a[ys_at + i] = max(0.0, v) if relu else v


def block(x: np.ndarray, weights: dict, imgs: int, n: int, blk: int) -> np.ndarray:
    """What block `blk` writes into `out` (nimg x 10), the kernel's steps in its order."""
    L = layout(imgs)
    nimg = min(imgs, n - blk * imgs)
    smem = np.full(L["A"] + L["P1"], np.nan)  # uninitialised shared memory
    a, p1 = smem[: L["A"]], smem[L["A"] :]
    a[: nimg * 784] = x[blk * imgs * 784 : (blk * imgs + nimg) * 784]
    w1, b1 = weights["conv1.weight"].ravel(), weights["conv1.bias"]
    conv1_pool1(a, p1, nimg, w1, b1)
    wt = np.transpose(weights["conv2.weight"], (1, 2, 3, 0)).ravel()  # device_weights' layout
    conv2_pool2(p1, a, nimg, imgs, wt, weights["conv2.bias"])
    fc = [
        (256, 120, 2, True, "H1", "P2"),
        (120, 84, 3, True, "H2", "H1"),
        (84, 10, 12, False, "LOGITS", "H2"),
    ]
    for i, (n_in, n_out, split, relu, ys, xs) in enumerate(fc, 1):
        wt_fc = weights[f"fc{i}.weight"].T.ravel()  # uploaded transposed, (in, out)
        dense(
            a,
            L[xs],
            wt_fc,
            weights[f"fc{i}.bias"],
            L["PART"],
            L[ys],
            n_in,
            n_out,
            split,
            relu,
            imgs,
            L["PART_FLOATS"],
        )
    return a[L["LOGITS"] : L["LOGITS"] + nimg * 10].reshape(nimg, 10)


def twin(images: np.ndarray, weights: dict, imgs: int) -> np.ndarray:
    n = len(images)
    x = images.reshape(-1).astype(np.float64)
    weights = {k: np.asarray(v, dtype=np.float64) for k, v in weights.items()}
    blocks = -(-n // imgs)
    return np.concatenate([block(x, weights, imgs, n, b) for b in range(blocks)])


def kernel_constant(name: str) -> int:
    text = SOURCE.read_text()
    return int(re.search(rf"#define {name} (\d+)", text).group(1))


@pytest.mark.parametrize(("n", "imgs"), [(11, 8), (3, 4), (5, 2)])
def test_the_twin_matches_the_reference(n: int, imgs: int) -> None:
    weights = random_weights(seed=n)
    images = np.random.default_rng(n).random((n, 1, 28, 28), dtype=np.float32)
    out = twin(images, weights, imgs)
    assert np.isfinite(out).all()  # no read of uninitialised (NaN) shared memory
    np.testing.assert_allclose(out, reference.forward(images, weights), rtol=1e-9, atol=1e-9)


def test_a_planted_offset_fails(monkeypatch) -> None:
    """The comparison can fail: fc3 reading fc2's outputs one float off must not pass."""
    weights = random_weights(seed=5)
    images = np.random.default_rng(5).random((9, 1, 28, 28), dtype=np.float32)
    good = dense

    def off_by_one(a, xs_at, *args):
        return good(a, xs_at + (1 if args[5] == 10 else 0), *args)

    monkeypatch.setitem(globals(), "dense", off_by_one)
    out = twin(images, weights, 8)
    assert not np.allclose(out, reference.forward(images, weights), rtol=1e-4)


def test_the_twin_uses_the_kernels_sizes() -> None:
    """The layout above is the kernel's: same default images per block and region offsets."""
    text = SOURCE.read_text()
    assert kernel_constant("LENET_IMGS") == 8
    for fragment in (
        "H1_AT = P2_AT + IMGS * 256",
        "H2_AT = H1_AT + IMGS * 120",
        "LOGITS_AT = H2_AT + IMGS * 84, PART_AT = LOGITS_AT + IMGS * 12",
        "PART_FLOATS = 3 * IMGS * 84",
        "dense<256, 120, 2, true>",
        "dense<120, 84, 3, true>",
        "dense<84, 10, 12, false>",
        "p2[im * 256 + (4 * g + j) * 16 + q]",
        "const int g = item / (IMGS * 16), im = item / 16 % IMGS, q = item % 16;",
    ):
        assert fragment in text, fragment


def test_uint8_input_is_exact_on_idx_pixels() -> None:
    """Images made from uint8 pixels (every benchmark image is) survive the uint8 format
    exactly, so uint8 stages are checked against the very reference the fp32 stages are."""
    from variants.lenet import data
    from variants.lenet.stages.uint8_input import Uint8Input, quantize

    images = data.benchmark_images(300)
    assert np.array_equal(Uint8Input().reference_input(images), images)
    assert np.array_equal(quantize(images).reshape(300, 28, 28), data.load_shipped().images[:300])


def test_uint8_input_checks_other_images_on_their_dequantised_values() -> None:
    from variants.lenet.stages.uint8_input import Uint8Input

    images = np.random.default_rng(0).random((5, 1, 28, 28), dtype=np.float32)
    held = Uint8Input().reference_input(images)
    assert held.dtype == np.float32 and not np.array_equal(held, images)
    assert np.abs(held - images).max() <= 0.5 / 255 + 1e-7
    assert np.array_equal(np.rint(held * 255) / np.float32(255), held)


def test_the_compiled_torch_forward_has_no_phase_ranges_inside() -> None:
    """TorchDynamo breaks the graph at every NVTX call: a phase inside the compiled function
    would leave torch.compile running eager kernels (seen in the first device sweeps)."""
    import ast
    import inspect

    from variants.lenet.stages import torch_compile

    tree = ast.parse(inspect.getsource(torch_compile.plain_forward))
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.With)]
    assert "phase" not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
