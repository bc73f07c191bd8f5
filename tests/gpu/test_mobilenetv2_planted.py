"""A one-element bug planted on the device in one layer's output fails the sweep's comparison
(marked gpu).

Each CUDA stage, fp32 and fp16, is prepared on MobileNetV2 with one extra kernel launched
right after one layer's kernel (inside the CUDA graph for the graph stages): in every image it
copies the element after index i of that layer's output over element i, as a kernel that
stores one output from its neighbour's index would. The stage's own comparison rule (the one
the sweep applies) must pass the honest stage and fail the planted one.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from profiler.collect import runtimes
from variants.cuda.launch import PackedLaunch, i32
from variants.mobilenetv2 import data
from variants.mobilenetv2.study import STUDY, load
from variants.onnxplan import execute

pytestmark = pytest.mark.gpu

CUDA_KEYS = [s.key for s in STUDY.stages if s.runtime == "cupy"]
POKE = r"""
template <typename T> __device__ void poke(T* y, long long i, long long per_item, int n)
{
    if (threadIdx.x < n) y[threadIdx.x * per_item + i] = y[threadIdx.x * per_item + i + 1];
}
extern "C" __global__ void poke_f32(float* y, long long i, long long per_item, int n)
{ poke(y, i, per_item, n); }
extern "C" __global__ void poke_f16(unsigned short* y, long long i, long long per_item, int n)
{ poke(y, i, per_item, n); }
"""
#: (layer, flat index in an image's output), as tests/test_mobilenetv2_model.py plants
PLANTS = [
    ("/features/features.4/conv/conv.1/conv.1.0/Conv", 6 * 28 * 28 + 14 * 28 + 14),
    ("/features/features.14/conv/conv.2/Conv", 100 * 7 * 7 + 24),
]


@cache
def images() -> np.ndarray:
    return data.benchmark_images(5)


@cache
def truth() -> np.ndarray:
    return execute.run(load().plan, images())


class Then(PackedLaunch):
    """Two steps as one: a packed launch (so a graph stage captures both), then another."""

    def __init__(self, first, second) -> None:  # nothing packed: it calls the two
        self.first, self.second = first, second

    def __call__(self, *stream) -> None:
        self.first(*stream)
        self.second(*stream)


def planted(key: str, layer_name: str | None, index: int):
    """The stage `key` prepared for 5 images, with the poke after `layer_name` (None: none)."""
    import cupy

    spec = STUDY.get(key)
    note = runtimes.adapter(spec.runtime).missing() or runtimes.missing_needs(spec.needs)
    if note:
        pytest.skip(f"{key}: {note}")
    stage = spec.build()
    stage.prepare(load(), 5)
    module = cupy.RawModule(code=POKE)
    original = stage.layer_step
    hits = []

    def layer_step(layer, n):
        step = original(layer, n)
        if layer.name != layer_name:
            return step
        hits.append(layer.name)
        kernel = module.get_function("poke_f16" if layer.attrs.get("half") else "poke_f32")
        per_item = int(np.prod(layer.out_shape))
        args = [stage.ptr(layer.output), np.int64(index), np.int64(per_item), i32(n)]
        poke = PackedLaunch(kernel, 1, 32, args)
        return Then(step, poke)

    stage.layer_step = layer_step
    return stage, hits


@pytest.mark.parametrize("key", CUDA_KEYS)
@pytest.mark.parametrize("layer_name, index", PLANTS)
def test_a_one_element_bug_in_one_layer_fails_the_stages_rule(key, layer_name, index):
    rule = STUDY.compare_for(STUDY.get(key))
    for plant in (None, layer_name):
        stage, hits = planted(key, plant, index)
        try:
            out = stage.infer(stage.host_input(images()))
        finally:
            stage.release()
        verdict = rule.check(out, truth())
        label = "planted" if plant else "honest"
        print(f"\n{key} {label} {layer_name.split('/')[2]}: max relative error "
              f"{verdict.max_rel_err:.3g} ({rule.describe()})")
        if plant is None:
            assert verdict.passed, verdict.reason
        else:
            assert hits == [layer_name]  # the bug is really in that layer's step
            assert not verdict.passed, verdict
