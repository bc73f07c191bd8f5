"""Per-layer facts and tables of the MobileNetV2 plan: FLOPs add up to MobileNetV2's known
count, fused groups line a fused stage's ranges up with a framework's per-node ranges, and the
per-kind and per-layer tables sum what the ranges hold."""

from __future__ import annotations

import pandas as pd
import pytest

from variants.mobilenetv2.study import load
from variants.onnxplan import layers


@pytest.fixture(scope="module")
def plan():
    return load().plan


def test_flops_and_kinds_match_mobilenetv2(plan):
    facts = layers.facts(plan)
    assert 0.58e9 < facts["flops"].sum() < 0.62e9  # 300 M multiply-adds an image
    kinds = facts["kind"].value_counts()
    assert (kinds["first conv"], kinds["1x1 conv"], kinds["depthwise 3x3"]) == (1, 34, 17)
    assert (kinds["add"], kinds["activation"], kinds["gemm"]) == (10, 35, 1)
    top = facts.sort_values("flops").iloc[-1]
    assert top["kind"] == "1x1 conv"


def ranges_of(plan):
    """Per-node ranges for a framework stage (1 us each, 2 calls) and per-fused-layer ranges
    for a custom stage (3 us each, 2 calls)."""
    groups = layers.group_of(plan)
    rows = [{"stage": "torch_gpu", "name": p, "calls": 2, "gpu_total_ns": 2000} for p in groups]
    rows += [{"stage": "fused", "name": p, "calls": 2, "gpu_total_ns": 6000}
             for p in sorted(set(groups.values()))]
    rows += [{"stage": "fused", "name": "h2d", "calls": 2, "gpu_total_ns": 10**9}]
    return pd.DataFrame(rows)


def test_groups_fold_activations_and_adds_into_their_convolution(plan):
    groups = layers.group_of(plan)
    assert len(groups) == 100 and len(set(groups.values())) == 55
    assert groups["features.0.2"] == "features.0.0"
    assert groups["features.3.Add"] == "features.3.conv.2"


def test_by_kind_sums_each_stages_ranges(plan):
    table = layers.by_kind(ranges_of(plan), plan, ["torch_gpu", "fused"])
    assert table["torch_gpu"].sum() == pytest.approx(100 * 1e-3)  # ms a forward
    assert table["fused"].sum() == pytest.approx(55 * 3e-3)
    assert table.loc["add", "torch_gpu"] == pytest.approx(10e-3)
    assert table.loc["add", "fused"] == 0  # folded into the 1x1 convolutions
    assert table.loc["1x1 conv", "fused"] == pytest.approx(34 * 3e-3)


def test_versus_lines_fused_layers_up_with_the_nodes_they_absorbed(plan):
    table = layers.versus(ranges_of(plan), plan, "fused", "torch_gpu", batch=256)
    assert len(table) == 55
    row = table.loc["features.3.conv.2"]  # conv + Add: two torch nodes
    assert row["stage_us"] == pytest.approx(3) and row["reference_us"] == pytest.approx(2)
    assert row["ratio"] == pytest.approx(1.5)
    stem = table.loc["features.0.0"]
    assert stem["kind"] == "first conv" and stem["shape"] == "3x224x224 -> 32x112x112"
    assert stem["flops"] == 2 * 32 * 112 * 112 * 27 * 256 + 32 * 112 * 112 * 256
