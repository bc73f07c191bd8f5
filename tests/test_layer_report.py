"""The per-layer report of a network of many layers, on the committed H100 MobileNetV2 sample
(`reports/sample-mobilenetv2-h100`: one NVTX range per ONNX node per stage): the analysis'
numbers against ranges.csv read a second way (the csv module), the section in the page,
collapsed, absent from LeNet's reports, and the page's size bound.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd
import pytest

from profiler import store
from profiler.analyze import layers
from profiler.render import html

REPORTS = Path(__file__).parents[1] / "reports"
SAMPLE = REPORTS / "sample-mobilenetv2-h100"
LENET = REPORTS / "sample-lenet-h100-cupti"
MAX_BYTES = 5 * 1000 * 1000


@pytest.fixture(scope="module")
def run() -> store.Run:
    return store.load_run(SAMPLE)


@pytest.fixture(scope="module")
def times(run: store.Run) -> pd.DataFrame:
    return layers.node_times(run.table("ranges"), run.table("stages"), run.table("range_trace"))


@pytest.fixture(scope="module")
def facts() -> pd.DataFrame:
    from variants.mobilenetv2.study import load
    from variants.onnxplan.layers import node_table

    return node_table(load(None).plan).set_index("node")


def per_forward_from_csv() -> dict[tuple[str, str], float]:
    """(stage, name) -> GPU ns per call, read from ranges.csv with the csv module."""
    with open(SAMPLE / "ranges.csv", newline="") as f:
        return {
            (r["stage"], r["name"]): int(r["gpu_total_ns"]) / int(r["calls"])
            for r in csv.DictReader(f)
            if r["gpu_total_ns"]
        }


def test_times_are_the_ranges_per_forward(times: pd.DataFrame) -> None:
    want = per_forward_from_csv()
    checked = 0
    for stage in times.columns:
        for node, value in times[stage].dropna().items():
            assert value == pytest.approx(want[(stage, node)], rel=1e-12)
            checked += 1
    torch_nodes = [n for (s, n) in want if s == "torch_gpu" and ":" not in n
                   and n not in ("h2d", "d2h")]
    assert sorted(times.index) == sorted(torch_nodes)
    assert len(times) == 99 and checked > 400


def test_stages_with_node_ranges_in_study_order(times: pd.DataFrame) -> None:
    # the CUDA graphs and onnxruntime have one range for the whole forward: no column
    assert list(times.columns) == ["torch_gpu", "torch_fp16", "cuda_naive", "im2col_gemm", "fused",
                                   "specialised", "tuned", "pinned"]
    assert times["fused"].notna().sum() < times["cuda_naive"].notna().sum()  # folded nodes


def test_nodes_in_network_order(times: pd.DataFrame) -> None:
    names = list(times.index)
    assert names[0] == "features.0.0" and names[-1] == "classifier.1"
    assert names.index("features.1.conv.0.0") < names.index("features.2.conv.0.0")
    assert names.index("features.17.conv.2") < names.index("features.18.0")


def test_node_times_fit_inside_the_stage_range(run: store.Run, times: pd.DataFrame) -> None:
    want = per_forward_from_csv()
    for stage in times.columns:
        whole = want[(stage, f"mobilenetv2:{stage}")]
        assert 0.3 * whole < times[stage].sum() <= whole


def test_versus_sets_a_stage_against_the_reference(times: pd.DataFrame) -> None:
    want = per_forward_from_csv()
    table = layers.versus(times, "tuned", "torch_gpu")
    assert len(table) == times["tuned"].notna().sum()
    # the framework's time of each node tuned has, plus the nodes after it tuned folded away
    expected, folded, owner = {}, {}, None
    for node in times.index:
        if ("tuned", node) in want:
            owner = node
            expected[owner], folded[owner] = 0.0, -1
        expected[owner] += want.get(("torch_gpu", node), 0.0)
        folded[owner] += 1
    assert sum(folded.values()) == 45  # 35 ReLU6 and 10 residual Adds in the convolutions
    for node, row in table.iterrows():
        assert row["reference_ns"] == pytest.approx(expected[node])
        assert row["folded"] == folded[node]
        assert row["ratio"] == pytest.approx(want[("tuned", node)] / expected[node])
    assert table["reference_ns"].sum() == pytest.approx(times["torch_gpu"].sum())
    first = table.sort_values("rank").iloc[0]
    assert first["stage_ns"] == table["stage_ns"].max()
    assert table["share_pct"].sum() == pytest.approx(100.0)


def test_rates_against_the_ceilings(run: store.Run, times: pd.DataFrame, facts: pd.DataFrame
                                    ) -> None:
    batch = run.meta["settings"]["items"]
    table = layers.versus(times, "tuned", "torch_gpu", facts, batch, run.meta["ceilings"])
    row = table.loc["features.2.conv.0.0"]  # 1x1 expand, 16 -> 96 channels at 112x112
    flops = 2 * 96 * 112 * 112 * 16 * batch
    assert row["kind"] == "1x1 conv" and row["flops"] == flops
    assert row["flops_per_s"] == pytest.approx(flops / (row["stage_ns"] / 1e9))
    assert row["flops_pct"] == pytest.approx(
        100 * row["flops_per_s"] / run.meta["ceilings"]["fp32_flops_per_s"])
    assert (table["flops_pct"] < 100).all() and (table["bytes_pct"] < 100).all()


def test_by_kind_sums_every_node(times: pd.DataFrame, facts: pd.DataFrame) -> None:
    table = layers.by_kind(times, facts)
    assert list(table.index[:3]) == ["first conv", "1x1 conv", "depthwise 3x3"]
    assert {"add", "activation", "pool", "gemm"} <= set(table.index)
    pd.testing.assert_series_equal(table.sum(), times.sum(), check_names=False)
    assert table.loc["activation", "tuned"] == 0.0  # folded into the convolutions


def test_steps_gained_and_lost(times: pd.DataFrame) -> None:
    counts = layers.step_counts(times)
    assert list(zip(counts["before"], counts["after"], strict=True))[2] == (
        "cuda_naive", "im2col_gemm")
    fused = counts[counts["after"] == "fused"].iloc[0]
    assert fused["folded"] == 99 - 54
    detail = layers.steps(times, top=5)
    for _, r in detail.iterrows():
        assert r["after_ns"] == pytest.approx(times.loc[r["node"], r["after"]])
        assert (r["delta_ns"] < 0) == (r["change"] == "gained")
    pair = detail[detail["after"] == "im2col_gemm"]
    gained = pair[pair["change"] == "gained"]
    delta = (times["im2col_gemm"] - times["cuda_naive"]).dropna()
    assert gained.iloc[0]["node"] == delta.idxmin()


def test_no_node_ranges_in_lenet() -> None:
    lenet = store.load_run(LENET)
    assert layers.node_times(lenet.table("ranges"), lenet.table("stages")).empty


def _section(page: str) -> str:
    start = page.index('<section id="layers">')
    return page[start:page.index("</section>", start)]


def test_section_renders_collapsed_and_small(run: store.Run, tmp_path: Path) -> None:
    page = html.render_report(run)
    assert len(page.encode()) < MAX_BYTES
    assert '<a href="#layers">Per layer</a>' in page
    section = _section(page)
    tables = re.findall(r'<details class="layer-detail" id="layers-(\w+)">', section)
    assert tables == ["torch_fp16", "cuda_naive", "im2col_gemm", "fused", "specialised", "tuned",
                      "pinned"]
    assert "<details open" not in section
    assert section.count('<tr class="top">') == 10 * len(tables)
    assert "no per-node facts" not in section  # the sample carries the study's layers table
    top = re.search(r'<table class="layer-top">(.*?)</table>', section, re.S)
    assert top is not None and top.group(1).count("<tr>") == 11  # header and 10 rows
    assert "features.3.conv.1.0" in top.group(1)


def test_section_with_facts(run: store.Run, facts: pd.DataFrame) -> None:
    with_facts = store.Run(meta=run.meta, tables={**run.tables, "layers": facts.reset_index()})
    page = html.render_report(with_facts)
    assert len(page.encode()) < MAX_BYTES
    section = _section(page)
    assert "Time per op kind" in section and "depthwise 3x3" in section
    assert "GFLOP/s" in section and "no per-node facts" not in section


def test_lenet_report_has_no_layer_section() -> None:
    page = html.render_report(store.load_run(LENET))
    assert 'id="layers"' not in page and "#layers" not in page
