"""The ResNet-50 study's GPU stages (marked gpu): every stage against the float64 executor on
three images (then one and two from the same preparation), every buffer NaN-poisoned first;
the Im2Col convolution in chunks of images gives the same logits; one wrong weight element
fails the check; each custom stage enters each phase range once a forward; and the fused
GEMM kernel against NumPy on edge sizes."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import numpy as np
import pytest

from profiler.collect import runtimes
from variants.mobilenetv2 import data
from variants.mobilenetv2.study import LOGITS_RULE, Network
from variants.onnxplan import execute, gemm_stages, gemm_twin, gpu
from variants.resnet50.study import STUDY, load

pytestmark = pytest.mark.gpu

GPU_KEYS = [s.key for s in STUDY.stages if s.uses_gpu]
CUDA_KEYS = [s.key for s in STUDY.stages if s.runtime == "cupy"]


@cache
def images() -> np.ndarray:
    return data.benchmark_images(3)


@cache
def truth() -> np.ndarray:
    return execute.run(load().plan, images())


def prepared(key: str, net: Network, batch: int):
    spec = STUDY.get(key)
    note = runtimes.adapter(spec.runtime).missing() or runtimes.missing_needs(spec.needs)
    if note:
        pytest.skip(f"{key}: {note}")
    stage = spec.build()
    stage.prepare(net, batch)
    return stage


def poison(stage) -> None:
    import cupy

    for buf in getattr(stage, "buffers", dict)().values():
        buf.fill(np.nan)
    cupy.cuda.Device().synchronize()


@pytest.mark.parametrize("key", GPU_KEYS)
def test_every_gpu_stage_matches_the_float64_executor(key):
    stage = prepared(key, load(), batch=3)
    try:
        poison(stage)
        verdict = LOGITS_RULE.check(stage.infer(stage.host_input(images())), truth())
        assert verdict.passed, verdict.reason
        print(f"\n{key}: max relative error {verdict.max_rel_err:.3g}")
        for lo, hi in ((0, 1), (1, 3)):
            poison(stage)
            out = stage.infer(stage.host_input(images()[lo:hi]))
            verdict = LOGITS_RULE.check(out, truth()[lo:hi])
            assert verdict.passed, (lo, hi, verdict.reason)
    finally:
        stage.release()


@pytest.mark.parametrize("key", ["unfused", "bn_folded"])
def test_the_im2col_convolution_in_chunks_of_images_gives_the_same_logits(key, monkeypatch):
    monkeypatch.setattr(gemm_stages, "COL_FLOATS", 1)  # one image a chunk
    stage = prepared(key, load(), batch=3)
    try:
        poison(stage)
        assert len(stage._col) < 3 * 64 * 9 * 56 * 56
        verdict = LOGITS_RULE.check(stage.infer(images()), truth())
        assert verdict.passed, verdict.reason
    finally:
        stage.release()


@pytest.mark.parametrize("key", GPU_KEYS)
def test_one_wrong_weight_element_fails_the_check(key):
    net = load()
    layers = list(net.plan.layers)
    index = next(i for i, ly in enumerate(layers) if ly.name == "/layer2/layer2.2/conv3/Conv")
    weight = layers[index].params["weight"].copy()
    weight[100, 17, 0, 0] += 0.5 * np.abs(weight).max()
    layers[index] = replace(layers[index], params={**layers[index].params, "weight": weight})
    wrong = Network(replace(net.plan, layers=tuple(layers)), net.path)
    stage = prepared(key, wrong, batch=3)
    try:
        verdict = LOGITS_RULE.check(stage.infer(stage.host_input(images())), truth())
    finally:
        stage.release()
    assert not verdict.passed, verdict


@pytest.mark.parametrize("key", [k for k in CUDA_KEYS if k != "graph"])
def test_each_phase_range_is_entered_once_a_forward(key, monkeypatch):
    from contextlib import contextmanager

    entered = []

    @contextmanager
    def record(name):
        entered.append(name)
        yield

    stage = prepared(key, load(), batch=1)
    try:
        monkeypatch.setattr(gpu, "phase", record)
        stage.infer(images()[:1])
    finally:
        stage.release()
    phases = [n for n in entered if n not in ("h2d", "d2h")]
    assert len(phases) == len(set(phases)) == 54
    assert phases[0] == "stem" and phases[-1] == "head" and "res3.2/tail" in phases


@pytest.mark.parametrize("case", [(3, 19, 7, 7, 130, 1, 1, 0), (2, 9, 11, 9, 129, 3, 2, 1),
                                  (1, 3, 15, 13, 7, 7, 2, 3), (2, 16, 6, 6, 20, 1, 2, 0),
                                  (2, 128, 28, 28, 512, 1, 1, 0)])
def test_the_fused_gemm_kernel_matches_its_twin(case):
    import cupy

    from variants.cuda import build
    from variants.cuda.launch import PackedLaunch, grid_for, i32

    n, c, h, w, m, ks, stride, pad = case
    ho, wo = (h + 2 * pad - ks) // stride + 1, (w + 2 * pad - ks) // stride + 1
    g = gemm_twin.Geometry(n, c, h, w, m, ho, wo, ks, ks, stride, stride, pad, pad)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wp = gemm_twin.pack_weight(rng.standard_normal((m, c, ks, ks)).astype(np.float32))
    b = rng.standard_normal(m).astype(np.float32)
    res = rng.standard_normal((n, m, ho, wo)).astype(np.float32)
    want = gemm_twin.gemm_fused(x.astype(np.float64), wp.astype(np.float64),
                                b.astype(np.float64), res.astype(np.float64), g, 0.0, np.inf)
    k = build.kernels(build.compile_module(gemm_stages.GEMM_KERNELS), gemm_stages.GEMM_NAMES)
    dx, dw, db, dr = map(cupy.asarray, (x, wp, b, res))
    y = cupy.full(n * m * ho * wo, np.nan, cupy.float32)
    cols = n * ho * wo
    head = [dx, dw, db, dr, y, i32(m), i32(c * ks * ks), i32(wp.shape[1]), np.int64(cols)]
    lim = [np.float32(0), np.float32(np.inf)]
    if g.pointwise:
        args, kernel = [*head, i32(ho * wo), *lim], k["gemm_fused_1x1"]
    else:
        args = [*head, i32(c), i32(h), i32(w), i32(ho), i32(wo), i32(ks), i32(ks),
                i32(stride), i32(stride), i32(pad), i32(pad), *lim]
        kernel = k["gemm_fused_conv"]
    PackedLaunch(kernel, (grid_for(cols, 128), grid_for(m, 128), 1), (256, 1, 1), args)()
    np.testing.assert_allclose(cupy.asnumpy(y), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
