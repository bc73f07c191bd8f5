"""The ResNet-50 study's phases and stages on the CPU: the contract's phase names from the
graph's structure (the study's model, a user's export with other node names and BatchNorm
folded), each phase's layers contiguous so a stage enters its range once a forward, the
reordered plan computing the same logits, the per-phase layers table, which layers each custom
stage fuses, and the memory a batch of 2048 needs."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from functools import cache

import numpy as np
import pytest

from profiler import schema
from profiler.errors import DataError
from variants.mobilenetv2 import data
from variants.mobilenetv2 import model as mobilenet
from variants.onnxplan import execute, fold, gemm_stages, gpu, memory, plan
from variants.resnet50 import model, phases
from variants.resnet50.stages.fuse_res3 import RES3_TAILS
from variants.resnet50.study import STUDY, load

BLOCKS = {2: 3, 3: 4, 4: 6, 5: 3}


@cache
def net():
    return load()


def expected_phases() -> list[str]:
    out = ["stem"]
    for stage, count in BLOCKS.items():
        for i in range(1, count + 1):
            parts = ("conv1", "conv2", "downsample", "tail") if i == 1 else \
                ("conv1", "conv2", "tail")
            out += [f"res{stage}.{i}/{p}" for p in parts]
    return [*out, "head"]


def runs(p) -> list[str]:
    return [k for k, _ in itertools.groupby(ly.phase for ly in p.layers)]


def test_the_study_has_the_contracts_stages_in_order():
    assert [(s.key, s.role) for s in STUDY.stages] == [
        ("torch_gpu", "framework"), ("unfused", "baseline"), ("bn_folded", "step"),
        ("fuse_res3", "step"), ("fuse_all", "step"), ("graph", "step")]
    assert STUDY.unit == "images" and STUDY.name == "resnet50"


def test_every_phase_is_one_run_of_layers_in_the_contracts_order():
    p = net().plan
    assert runs(p) == expected_phases()  # 54 phases, each entered once
    parts = {ly.name: ly.phase for ly in p.layers}
    assert parts["/conv1/Conv"] == parts["/maxpool/MaxPool"] == "stem"
    assert parts["/layer2/layer2.1/conv3/Conv"] == "res3.2/tail"
    assert parts["/layer2/layer2.1/Add"] == parts["/layer2/layer2.1/relu_2/Relu"] == "res3.2/tail"
    assert parts["/layer2/layer2.1/bn2/BatchNormalization"] == "res3.2/conv2"
    assert parts["/layer1/layer1.0/downsample/downsample.1/BatchNormalization"] == \
        "res2.1/downsample"
    assert parts["/layer4/layer4.2/relu_1/Relu"] == "res5.3/conv2"
    assert parts["/fc/Gemm"] == parts["/avgpool/GlobalAveragePool"] == "head"


def test_a_users_export_with_other_names_and_folded_batchnorm_gets_the_same_phases():
    raw = plan.load(model.path())
    folded = fold.fold_batchnorm(raw)  # what torch.onnx.export writes in eval mode
    renamed = replace(folded, layers=tuple(replace(ly, name=f"node_{ly.op}_{i}")
                                           for i, ly in enumerate(folded.layers)))
    assert runs(phases.name_phases(renamed)) == expected_phases()
    named = {ly.output: ly.phase for ly in phases.name_phases(renamed).layers}
    ours = {ly.output: ly.phase for ly in net().plan.layers}
    assert all(ours[t] == ph for t, ph in named.items())


def test_the_reordered_plan_computes_the_same_logits():
    x = data.benchmark_images(1)
    want = execute.run(plan.load(model.path()), x)
    np.testing.assert_allclose(execute.run(net().plan, x), want, rtol=1e-12, atol=1e-12)


def test_a_network_that_is_not_a_resnet_is_refused_in_one_line():
    with pytest.raises(DataError, match="not a bottleneck ResNet"):
        phases.name_phases(plan.load(mobilenet.path()))


def test_the_layers_table_has_one_row_per_phase():
    table = STUDY.layers(net())
    schema.validate(table, schema.LAYERS)
    assert list(table["node"]) == expected_phases()
    assert table["flops"].sum() * 256 == pytest.approx(2.1e12, rel=0.01)  # the 2.1 TFLOP
    tail = table.set_index("node").loc["res3.2/tail"]
    assert (tail["kind"], tail["in_shape"], tail["out_shape"]) == ("1x1 conv", "128x28x28",
                                                                   "512x28x28")
    assert tail["bytes"] == 4 * (128 + 512 + 512) * 28 * 28  # conv input, residual, output


def fused_phases(p) -> set[str]:
    return {ly.phase for ly in p.layers if "fused" in ly.attrs}


def test_fuse_res3_changes_the_three_tails_only():
    folded = fold.fold_batchnorm(net().plan)
    res3 = gemm_stages.epilogues_in(folded, RES3_TAILS)
    assert fused_phases(res3) == RES3_TAILS
    def by_phase(p):
        return {k: [(ly.name, ly.op) for ly in g]
                for k, g in itertools.groupby(p.layers, key=lambda ly: ly.phase)}
    before, after = by_phase(folded), by_phase(res3)
    changed = {k for k in before if before[k] != after[k]}
    assert changed == RES3_TAILS
    assert [op for _, op in after["res3.2/tail"]] == ["Conv"]
    every = gemm_stages.epilogues_in(folded, None)
    assert len(fused_phases(every)) == 49  # every conv with a ReLU or a residual after it
    assert all(ly.op != "Add" for ly in every.layers)  # every tail's Add into its conv3


def test_the_engine_enters_each_phase_once_a_forward(monkeypatch):
    entered, called = [], []

    class Recorder:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            entered.append(self.name)

        def __exit__(self, *exc):
            return False

    stage = gpu.PlanStage()
    stage.plan, stage._batch = net().plan, 2
    stage._steps = {2: [(ly.phase, lambda ly=ly: called.append(ly.name))
                        for ly in net().plan.layers]}
    stage.ptr = lambda tensor: 0
    monkeypatch.setattr(gpu, "phase", Recorder)
    monkeypatch.setattr(gpu.memory, "h2d", lambda *a: None)
    monkeypatch.setattr(gpu.memory, "d2h", lambda *a: None)
    stage.infer(np.zeros((2, *net().plan.input_shape), np.float32))
    assert entered == ["h2d", *expected_phases(), "d2h"]
    assert called == [ly.name for ly in net().plan.layers]


@pytest.mark.parametrize("key", ["unfused", "bn_folded", "fuse_res3", "fuse_all"])
def test_a_batch_of_2048_fits_an_80_gb_gpu(key):
    stage = STUDY.get(key).build()
    p = stage.chosen(net()).plan
    _, count = memory.slots(p)
    activations = count * memory.largest(p) * 2048 * 4
    col = 4 * gemm_stages.COL_FLOATS if key in ("unfused", "bn_folded", "fuse_res3") else 0
    weights = 4 * sum(p.size for ly in p.layers for p in ly.params.values()) * 2
    total = activations + col + weights + 4 * 2048 * math.prod(p.input_shape)
    assert total < 40e9, total / 1e9
