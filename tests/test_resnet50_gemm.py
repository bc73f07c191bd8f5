"""The fused GEMM of kernels/gemm_fused.cu on the CPU: its NumPy twin (same tiles, thread maps,
bounds tests, packed window origins, epilogue addresses, float4 or scalar) computes what the
float64 executor computes on sizes that are not multiples of a tile (m, columns and k), for
1x1, strided, padded 3x3 and 7x7 convolutions and the classifier, with and without residual
and ReLU; each
planted indexing bug is caught; the kernel compiles for sm_90 without spills."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from variants.onnxplan import execute, gemm_twin, plan
from variants.onnxplan.gemm_twin import Geometry

KERNEL = Path(__file__).resolve().parents[1] / "variants" / "onnxplan" / "kernels" / \
    "gemm_fused.cu"
RNG = np.random.default_rng(11)

# (n, c, h, w, m, kernel, stride, pad): edges of every kind
CASES = [
    (3, 19, 7, 7, 130, 1, 1, 0),     # 1x1 on 7x7: columns cross images inside a tile, m > BM
    (1, 5, 4, 4, 3, 1, 1, 0),        # k < BK, one partial tile
    (2, 9, 11, 9, 129, 3, 2, 1),     # strided, padded 3x3, k = 81 not a multiple of 8
    (1, 3, 15, 13, 7, 7, 2, 3),      # the stem's 7x7 stride 2 pad 3
    (2, 16, 6, 6, 20, 1, 2, 0),      # a downsample: 1x1 stride 2 (implicit GEMM)
    (1, 8, 19, 17, 256, 3, 1, 1),    # 323 columns: three column tiles, two row tiles
    (3, 10, 6, 6, 70, 1, 1, 0),      # hw % 4 == 0: the float4 epilogue, 108 of 128 columns
]


def conv_layer(n, c, h, w, m, ks, stride, pad, residual, act):
    ho, wo = (h + 2 * pad - ks) // stride + 1, (w + 2 * pad - ks) // stride + 1
    attrs = {"kernel": (ks, ks), "stride": (stride, stride), "pads": (pad,) * 4, "group": 1}
    if act:
        attrs["act"] = (0.0, np.inf)
    params = {"weight": RNG.standard_normal((m, c, ks, ks)), "bias": RNG.standard_normal(m)}
    inputs = ("x", "r") if residual else ("x",)
    shapes = ((c, h, w), (m, ho, wo)) if residual else ((c, h, w),)
    return plan.Layer("c", "Conv", inputs, "y", shapes, (m, ho, wo), attrs, params)


def geometry(layer, n):
    c, h, w = layer.in_shape
    m, ho, wo = layer.out_shape
    a = layer.attrs
    return Geometry(n, c, h, w, m, ho, wo, *a["kernel"], *a["stride"], *a["pads"][:2])


def run_twin(layer, x, res, bug=""):
    lo, hi = layer.attrs.get("act") or (-np.inf, np.inf)
    wp = gemm_twin.pack_weight(layer.params["weight"])
    y = gemm_twin.gemm_fused(x, wp, layer.params["bias"], res, geometry(layer, len(x)), lo, hi,
                             bug=bug)
    return y.reshape(len(x), *layer.out_shape)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
@pytest.mark.parametrize("fused", [False, True], ids=["plain", "residual+relu"])
def test_the_twin_computes_the_convolution(case, fused):
    layer = conv_layer(*case, residual=fused, act=fused)
    x = RNG.standard_normal((case[0], *layer.in_shape))
    res = RNG.standard_normal((case[0], *layer.out_shape)) if fused else None
    want = execute.conv(layer, x, res)
    got = run_twin(layer, x, res)
    assert not np.isnan(got).any()  # every output written
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_the_classifier_is_the_pointwise_case_of_one_pixel():
    x = RNG.standard_normal((5, 37))
    weight, bias = RNG.standard_normal((130, 37)), RNG.standard_normal(130)
    g = Geometry(5, 37, 1, 1, 130, 1, 1)
    assert g.pointwise
    got = gemm_twin.gemm_fused(x, gemm_twin.pack_weight(weight), bias, None, g)
    np.testing.assert_allclose(got.reshape(5, 130), x @ weight.T + bias, rtol=1e-12)


def test_weights_are_padded_to_whole_slices_with_zeros():
    wp = gemm_twin.pack_weight(np.ones((3, 5, 3, 3)))
    assert wp.shape == (3, 48) and wp[:, :45].all() and not wp[:, 45:].any()
    assert gemm_twin.padded_k(8) == 8 and gemm_twin.padded_k(147) == 152


@pytest.mark.parametrize("bug", gemm_twin.BUGS)
def test_each_planted_bug_is_caught(bug):
    """The comparison can fail: each mistake planted in the twin changes its output on one of
    the cases (a read past k meets NaN poison, an epilogue column map that loses its 64
    offset, a window origin unpacked without its sign)."""
    caught = []
    for case in CASES:
        layer = conv_layer(*case, residual=True, act=True)
        x = RNG.standard_normal((case[0], *layer.in_shape))
        res = RNG.standard_normal((case[0], *layer.out_shape))
        got = run_twin(layer, x, res, bug=bug)
        caught.append(not np.allclose(got, execute.conv(layer, x, res), rtol=1e-9, atol=1e-9))
    assert any(caught), bug


def test_the_twin_mirrors_the_kernels_constants():
    text = KERNEL.read_text()
    for name, value in (("BM", gemm_twin.BM), ("BN", gemm_twin.BN), ("BK", gemm_twin.BK)):
        assert re.search(rf"#define {name} {value}\b", text), name
    assert "__launch_bounds__(256, 2)" in text and gemm_twin.THREADS == 256


def test_the_kernel_compiles_for_sm90_without_spills(tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    cmd = [nvcc, "-arch=sm_90", "--cubin", "-std=c++17", "-Xptxas", "-v", "-o",
           str(tmp_path / "gemm.cubin"), str(KERNEL)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    entries = set(re.findall(r"Compiling entry function '([^']+)'", proc.stderr))
    assert entries == {"gemm_fused_1x1", "gemm_fused_conv"}
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", proc.stderr)
    assert spills and all(s == ("0", "0") for s in spills), proc.stderr


def test_the_fused_layers_of_a_plan_are_what_the_twin_runs():
    """A layer of `fuse.epilogues` (its residual second, its ReLU as `act`) gives the twin's
    arguments: the epilogue's reading of the plan."""
    layer = conv_layer(2, 6, 5, 5, 9, 1, 1, 0, residual=True, act=True)
    x, res = RNG.standard_normal((2, 6, 5, 5)), RNG.standard_normal((2, 9, 5, 5))
    no_act = replace(layer, attrs={k: v for k, v in layer.attrs.items() if k != "act"})
    assert not np.allclose(run_twin(no_act, x, res), run_twin(layer, x, res))
