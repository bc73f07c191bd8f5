"""The fp16 stage on the CPU: half.cu compiles, the NumPy twins of its kernels (half storage
emulated with np.float16, sums in fp32) compute the layers, the tensor-core GEMM's fragment
addresses agree with PTX's mma.m16n8k16 layout (and a swapped register is caught), the plan
is split at the measured boundary, and the study's HALF_RULE passes the stage's emulated
rounding while it fails a one-element bug planted in one layer."""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from profiler.errors import DataError
from variants.mobilenetv2 import data
from variants.mobilenetv2.stages.fp16 import HALF_FROM, Fp16
from variants.mobilenetv2.study import HALF_RULE, STUDY, load
from variants.onnxplan import execute, fuse, half, half_twins
from variants.onnxplan.fused_stages import is_depthwise3x3, is_pointwise

KERNELS = Path(half.HALF_KERNELS)


def test_half_cu_compiles_for_sm90_without_spills(tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    cmd = [nvcc, "-arch=sm_90", "--cubin", "-std=c++17", "-Xptxas", "-v", "-o",
           str(tmp_path / "half.cubin"), str(KERNELS)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    entries = set(re.findall(r"Compiling entry function '([^']+)'", proc.stderr))
    assert entries == set(half.HALF_NAMES)
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", proc.stderr)
    assert spills and all(s == ("0", "0") for s in spills), proc.stderr


def test_the_fragment_addresses_agree_with_ptx_layout():
    a_map, b_map, c_map = half_twins.fragment_maps()
    np.testing.assert_array_equal(a_map.ravel(), np.arange(a_map.size))  # A[r][k] = As[r][k]
    expected_b = np.arange(64)[None, :] * 32 + np.arange(32)[:, None]  # B[k][c] = Bs[c][k]
    np.testing.assert_array_equal(b_map, expected_b)
    np.testing.assert_array_equal(c_map.ravel(), np.arange(c_map.size))


def gemm_case(m=40, k=72, n=3, hw=49, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n * k * hw).astype(np.float16)
    w = (rng.standard_normal((m, k)) / np.sqrt(k)).astype(np.float16)
    b = rng.standard_normal(m).astype(np.float32)
    res = rng.standard_normal(n * m * hw).astype(np.float16)
    exact = np.einsum("mk,nkp->nmp", w.astype(np.float64),
                      x.reshape(n, k, hw).astype(np.float64))
    exact = np.clip(exact + b[None, :, None] + res.reshape(n, m, hw), 0, 6)
    return x, w, b, res, exact


@pytest.mark.parametrize("m, k, n, hw", [(40, 72, 3, 49), (64, 32, 2, 64), (1000, 48, 5, 1),
                                         (16, 24, 2, 7)])
def test_the_gemm_twin_computes_the_nchw_product_across_tiles_and_images(m, k, n, hw):
    x, w, b, res, exact = gemm_case(m, k, n, hw)
    y32 = half_twins.pointwise_gemm_half(x, w, b, res, 0.0, 6.0, hw, np.float32)
    np.testing.assert_allclose(y32.reshape(exact.shape), exact, rtol=0, atol=1e-4)
    y16 = half_twins.pointwise_gemm_half(x, w, b, res, 0.0, 6.0, hw)
    assert y16.dtype == np.float16  # one rounding: within half an ulp of the fp32 result
    np.testing.assert_array_equal(y16, y32.astype(np.float16))


@pytest.mark.parametrize("regs", [
    {"a_regs": ((0, 0), (0, 8), (8, 0), (8, 8))},  # A registers 1 and 2 swapped
    {"b_regs": (8, 0)},  # B registers swapped
    {"c_accs": ((0, 0), (8, 0), (0, 1), (8, 1))},  # accumulators stored in the wrong order
])
def test_a_fragment_address_bug_makes_the_twin_wrong(regs):
    x, w, b, res, exact = gemm_case()
    maps = half_twins.fragment_maps(**{k: tuple(v) for k, v in regs.items()})
    y = half_twins.pointwise_gemm_half(x, w, b, res, 0.0, 6.0, 49, np.float32, maps=maps)
    assert np.abs(y.reshape(exact.shape) - exact).max() > 0.1


@cache
def net():
    return load()


@cache
def layer_input(phase):
    """(fused layer, its float64 input and residual) for two images."""
    plan = fuse.epilogues(net().plan)
    acts = execute.activations(plan, data.benchmark_images(34)[32:34])
    layer = next(ly for ly in plan.layers if ly.phase == phase)
    res = acts[layer.inputs[1]] if len(layer.inputs) > 1 else None
    return layer, acts[layer.inputs[0]], res, acts[layer.output]


@pytest.mark.parametrize("phase", ["features.0.0", "features.2.conv.1.0", "features.3.conv.1.0",
                                   "features.3.conv.2", "features.17.conv.0.0"])
def test_each_half_twin_is_its_layer_within_half_rounding(phase):
    layer, x, res, want = layer_input(phase)
    got = half_twins.ops(half.split(fuse.epilogues(net().plan), None))["Conv"](
        _as_half(layer), x.astype(np.float16).astype(np.float32),
        None if res is None else res.astype(np.float16).astype(np.float32))
    assert got.shape == want.shape
    # inputs and weights rounded to half (2^-11 relative each), one rounding of the output
    scale = np.abs(want).max()
    assert np.abs(got - want).max() < 4e-3 * scale, phase
    assert np.abs(got - want).max() > 0  # half really rounds
    assert np.array_equal(got, got.astype(np.float16).astype(np.float32))  # stored as half
    if is_pointwise(layer) or is_depthwise3x3(layer):
        assert layer.attrs.get("act") or res is not None or phase.endswith("conv.2")


def _as_half(layer):
    from dataclasses import replace

    return replace(layer, attrs={**layer.attrs, "half": True})


def test_global_average_pool_twin_sums_each_plane_in_fp32():
    x = np.random.default_rng(1).standard_normal((2, 5, 7, 7)).astype(np.float16)
    got = half_twins.global_avg_pool_half(x, 10, 49)
    np.testing.assert_array_equal(
        got, x.astype(np.float32).reshape(10, 49).mean(axis=1).astype(np.float16))


def test_split_converts_what_crosses_the_boundary_and_marks_the_rest_half():
    plan = fuse.epilogues(net().plan)
    whole = half.split(plan, None)
    assert whole.layers[0].op == half.TO_HALF and whole.layers[0].inputs == (plan.input,)
    assert all(ly.attrs.get("half") for ly in whole.layers[1:])
    assert whole.layers[1].inputs == (plan.input + ":half",)
    part = half.split(plan, HALF_FROM)
    index = next(i for i, ly in enumerate(part.layers) if ly.op == half.TO_HALF)
    assert part.layers[index + 1].phase == HALF_FROM
    assert not any(ly.attrs.get("half") for ly in part.layers[:index])
    assert all(ly.attrs.get("half") for ly in part.layers[index + 1:])
    crossing = part.layers[index].inputs[0]
    assert crossing == part.layers[index - 1].output  # a block without a residual
    assert [ly.op for ly in part.layers].count(half.TO_HALF) == 1
    half.check(whole)
    half.check(part)
    with pytest.raises(DataError, match="starts half precision at layer 'nope'"):
        half.split(plan, "nope")


def test_a_half_network_must_end_with_the_gemm_that_writes_float32():
    from dataclasses import replace

    from variants.onnxplan.plan import Layer

    plan = fuse.epilogues(net().plan)
    gemm = plan.layers[-1]
    view = Layer("/Reshape", "Reshape", (gemm.output,), "logits", (gemm.out_shape,),
                 gemm.out_shape, {}, {}, phase="Reshape")
    viewed = replace(plan, layers=(*plan.layers, view), output="logits")
    half.check(half.split(plan, HALF_FROM))
    with pytest.raises(DataError, match=r"node '/classifier/classifier.1/Gemm' \(op Gemm\): "
                                        r"the fp16 stage needs a network run in half to end"):
        half.check(half.split(viewed, HALF_FROM))


def test_the_fp16_stage_refuses_a_plan_it_has_no_half_kernel_for_before_using_the_gpu():
    plan = net().plan
    layers = list(plan.layers)
    index = next(i for i, ly in enumerate(layers) if ly.op == "GlobalAveragePool")
    from dataclasses import replace

    pool = replace(layers[index], op="AveragePool",
                   attrs={"kernel": (7, 7), "stride": (1, 1), "pads": (0, 0, 0, 0),
                          "count_include_pad": 0})
    layers[index] = pool
    wrong = replace(net(), plan=replace(plan, layers=tuple(layers)))
    with pytest.raises(DataError, match=r"node '/GlobalAveragePool' \(op AveragePool\): the "
                                        r"fp16 stage has no half-precision kernel"):
        Fp16().prepare(wrong, 2)


@cache
def few():
    x = data.benchmark_images(37)[32:37]  # not the calibration images
    return x, execute.run(net().plan, x)


def test_half_rule_passes_the_stages_rounding_and_stricter_rules_would_not():
    x, truth = few()
    out = half_twins.forward(net().plan, x, HALF_FROM)
    verdict = HALF_RULE.check(out, truth)
    assert verdict.passed, verdict.reason
    assert verdict.max_rel_err > 1e-3  # half rounding is visible: the fp32 rule would fail
    full = half_twins.forward(net().plan, x[:1], None)  # every layer in half
    assert not HALF_RULE.check(full, truth[:1]).passed  # why the stage starts at HALF_FROM


def _planted(layer_name, flat_index, split):
    conv = half_twins.ops(split)["Conv"]

    def wrong(layer, x, res=None):
        y = conv(layer, x, res)
        if layer.name == layer_name:
            flat = y.reshape(len(y), -1)
            flat[:, flat_index] = flat[:, flat_index + 1]
        return y

    return {"Conv": wrong}


@pytest.mark.parametrize("layer, index", [
    ("/features/features.4/conv/conv.1/conv.1.0/Conv", 6 * 28 * 28 + 14 * 28 + 14),
    ("/features/features.14/conv/conv.2/Conv", 100 * 7 * 7 + 24),
])
def test_half_rule_fails_one_wrong_element_in_one_layer(layer, index):
    x, truth = few()
    split = half.split(fuse.epilogues(net().plan), HALF_FROM)
    out = execute.run(split, x, np.float32, {**half_twins.ops(split),
                                              **_planted(layer, index, split)}, chunk=4)
    verdict = HALF_RULE.check(out, truth)
    assert not verdict.passed, verdict


def test_the_fp16_stages_use_the_half_rule_and_come_in_study_order():
    keys = [s.key for s in STUDY.stages]
    assert keys.index("torch_fp16") < keys.index("ort_cpu")
    assert keys[-1] == "fp16" and keys[-2] == "graph"
    for key in ("fp16", "torch_fp16"):
        assert STUDY.compare_for(STUDY.get(key)) is HALF_RULE
    assert STUDY.get("torch_fp16").role == "framework"
