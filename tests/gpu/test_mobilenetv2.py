"""The MobileNetV2 study's GPU stages against the float64 executor (marked gpu).

Every CUDA stage and torch_gpu on MobileNetV2 at odd batch sizes (5, then 1 and 3 from the
same preparation), every buffer filled with NaN first so an element no kernel writes fails
the check; the CUDA stages on a small graph of every other op the engine supports (BN kept,
max and average pools, asymmetric pads, groups); and a model with one wrong weight element in
one layer, which must fail.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from profiler.collect import runtimes
from variants.mobilenetv2 import data
from variants.mobilenetv2.study import STUDY, Network, load
from variants.onnxplan import execute, plan

pytestmark = pytest.mark.gpu

GPU_KEYS = [s.key for s in STUDY.stages if s.uses_gpu]
CUDA_KEYS = [s.key for s in STUDY.stages if s.runtime == "cupy"]


@cache
def images() -> np.ndarray:
    return data.benchmark_images(5)


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
    stage = prepared(key, load(), batch=5)
    try:
        poison(stage)
        out = stage.infer(stage.host_input(images()))
        rule = STUDY.compare_for(STUDY.get(key))
        verdict = rule.check(out, truth())
        print(f"\n{key}: max relative error {verdict.max_rel_err:.3g} ({rule.describe()})")
        assert verdict.passed, verdict.reason
        for lo, hi in ((0, 1), (1, 4)):  # smaller batches from the same preparation
            poison(stage)
            x = stage.host_input(images()[lo:hi])
            verdict = rule.check(stage.infer(x), truth()[lo:hi])
            assert verdict.passed, (lo, hi, verdict.reason)
    finally:
        stage.release()


def small_graph_network(tmp_path: Path) -> Network:
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)

    def t(name, *shape, shift=0.0):
        value = (rng.standard_normal(shape) * 0.3 + shift).astype(np.float32)
        return numpy_helper.from_array(np.abs(value) if name == "v" else value, name)

    n = helper.make_node
    nodes = [
        n("Conv", ["x", "c1w", "c1b"], ["c1"], name="/stem/Conv", strides=[2, 2],
          pads=[1, 0, 2, 1]),
        n("BatchNormalization", ["c1", "s", "b", "m", "v"], ["bn"], name="/bn/Bn"),
        n("Relu", ["bn"], ["a1"], name="/relu/Relu"),
        n("Conv", ["a1", "c2w"], ["c2"], name="/dw/Conv", group=4, pads=[1, 1, 1, 1]),
        n("Clip", ["c2", "lo", "hi"], ["a2"], name="/clip/Clip"),
        n("Add", ["a2", "a1"], ["s1"], name="/Add"),
        n("MaxPool", ["s1"], ["p1"], name="/MaxPool", kernel_shape=[3, 3], strides=[2, 2],
          pads=[1, 1, 1, 1]),
        n("AveragePool", ["p1"], ["p2"], name="/AveragePool", kernel_shape=[2, 2],
          pads=[0, 0, 1, 1]),
        n("AveragePool", ["p2"], ["p3"], name="/AveragePool_1", kernel_shape=[3, 3],
          pads=[1, 1, 1, 1], count_include_pad=1),
        n("GlobalAveragePool", ["p3"], ["g"], name="/GlobalAveragePool"),
        n("Flatten", ["g"], ["f"], name="/Flatten"),
        n("Gemm", ["f", "fw", "fb"], ["y"], name="/fc/Gemm", transB=1),
    ]
    inits = [t("c1w", 4, 3, 3, 3), t("c1b", 4), t("s", 4, shift=1), t("b", 4), t("m", 4),
             t("v", 4, shift=1), t("c2w", 4, 1, 3, 3), t("fw", 6, 4), t("fb", 6),
             numpy_helper.from_array(np.float32(0), "lo"),
             numpy_helper.from_array(np.float32(0.4), "hi")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 19, 15])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 6])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "small.onnx"
    path.write_bytes(model.SerializeToString())
    return Network(plan.load(path), path)


@pytest.mark.parametrize("key", [k for k in CUDA_KEYS if k != "fp16"])
def test_the_cuda_stages_run_every_other_supported_op(key, tmp_path):
    net = small_graph_network(tmp_path)
    x = np.random.default_rng(4).standard_normal((7, 3, 19, 15)).astype(np.float32)
    stage = prepared(key, net, batch=7)
    try:
        poison(stage)
        out = stage.infer(x)
    finally:
        stage.release()
    np.testing.assert_allclose(out, execute.run(net.plan, x), rtol=1e-5, atol=1e-5)



@pytest.mark.parametrize("key", GPU_KEYS)
def test_one_wrong_weight_element_fails_the_check(key):
    net = load()
    layers = list(net.plan.layers)
    index = next(i for i, ly in enumerate(layers)
                 if ly.name == "/features/features.9/conv/conv.1/conv.1.0/Conv")
    weight = layers[index].params["weight"].copy()
    weight[17, 0, 1, 1] += 0.05 * np.abs(weight).max()
    layers[index] = replace(layers[index], params={**layers[index].params, "weight": weight})
    wrong = Network(replace(net.plan, layers=tuple(layers)), net.path)
    stage = prepared(key, wrong, batch=5)
    try:
        out = stage.infer(stage.host_input(images()))
        verdict = STUDY.compare_for(STUDY.get(key)).check(out, truth())
    finally:
        stage.release()
    print(f"\n{key}: one wrong weight: max relative error {verdict.max_rel_err:.3g}")
    assert not verdict.passed, verdict
