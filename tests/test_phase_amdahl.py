"""Amdahl by phase (issue 11) on a synthetic ResNet-50 run in the contract's shape
(`tests/resnet_phase_factory.py`: a simulated timeline, attributed by profgen's own assembly):
which phases each step changed, P, S, predicted and measured gain set against what the
simulation knows, computed here a second way from its raw rows; planted changes found; the
block table; the one sentence; the difference's three parts summing to it.

The MobileNetV2 and LeNet samples (real H100 runs) are in tests/test_phase_amdahl_samples.py.
"""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest
import resnet_phase_factory as factory

from profiler import schema, store
from profiler.analyze import phase_amdahl, phases
from profiler.render import html, markdown, phase_section


@pytest.fixture(scope="module")
def built() -> factory.Built:
    return factory.build()


@pytest.fixture(scope="module")
def result(built: factory.Built) -> phase_amdahl.PhaseAmdahl:
    out = phase_section.analysis(built.run)
    assert out is not None
    return out


def _step(result: phase_amdahl.PhaseAmdahl, stage: str) -> pd.Series:
    rows = result.steps[result.steps["stage"] == stage]
    assert len(rows) == 1, list(result.steps["stage"])
    return rows.iloc[0]


def truth_times(built: factory.Built) -> pd.DataFrame:
    """GPU ns per repeat of each phase (rows) and stage (columns), from the simulation's own
    record of each phase instance's first GPU start and last end."""
    t = built.truth.assign(span=built.truth["gpu_end_ns"] - built.truth["gpu_start_ns"])
    return t.pivot_table(index="phase", columns="stage", values="span", aggfunc="sum") / \
        factory.REPEATS


def stage_value(built: factory.Built, stage: str, column: str) -> float:
    st = built.run.table("stages")
    return float(st.loc[st["stage"] == stage, column].iloc[0])


def test_steps_are_the_custom_stages_with_phases(result: phase_amdahl.PhaseAmdahl) -> None:
    """torch_gpu is the framework (not a step of the study's own); graph has one range."""
    assert result.phases.stages == ["unfused", "bn_folded", "fuse_res3", "fuse_all"]
    assert list(zip(result.steps["prev_stage"], result.steps["stage"], strict=True)) == [
        ("unfused", "bn_folded"), ("bn_folded", "fuse_res3"), ("fuse_res3", "fuse_all")]


def test_changed_phases_are_measured(result: phase_amdahl.PhaseAmdahl) -> None:
    every = factory.phases()
    convs = [p for p in every if p not in ("h2d", "head", "d2h")]
    assert _step(result, "bn_folded")["changed_phases"].split(", ") == convs  # BN went
    case = _step(result, "fuse_res3")
    assert case["changed_phases"] == "res3.2/tail, res3.3/tail, res3.4/tail"
    assert case["changed_names"] == "res3.2/tail, res3.3/tail, res3.4/tail"
    assert case["blocks"] == "res3.2-3.4"
    assert case["prev_kernels"] == 12 and case["kernels"] == 3  # 4 kernels a tail -> 1
    rest = [p for p in convs if p not in factory.CASE]
    assert _step(result, "fuse_all")["changed_phases"].split(", ") == rest
    assert _step(result, "fuse_all")["changed_names"].startswith(f"{len(rest)} phases: stem, ")
    assert (result.steps["unverified"] == 0).all()


def test_p_s_and_prediction_from_the_raw_rows(built: factory.Built,
                                              result: phase_amdahl.PhaseAmdahl) -> None:
    times = truth_times(built)
    for prev, stage in [("unfused", "bn_folded"), ("bn_folded", "fuse_res3"),
                        ("fuse_res3", "fuse_all")]:
        row = _step(result, stage)
        changed = row["changed_phases"].split(", ")
        before, after = times.loc[changed, prev].sum(), times.loc[changed, stage].sum()
        p = before / stage_value(built, prev, "profiled_median_ns")
        s = before / after
        assert row["share_pct"] == pytest.approx(100 * p, rel=1e-9)
        assert row["speedup"] == pytest.approx(s, rel=1e-9)
        assert row["predicted"] == pytest.approx(1 / ((1 - p) + p / s), rel=1e-9)
        measured = stage_value(built, prev, "median_ns") / stage_value(built, stage, "median_ns")
        assert row["measured"] == pytest.approx(measured, rel=1e-12)
        assert row["diff_pp"] == pytest.approx(100 * (measured - 1 / ((1 - p) + p / s)))


def test_the_case_agrees_within_one_point(result: phase_amdahl.PhaseAmdahl) -> None:
    """The simulated fusion changes nothing else: the prediction holds, and says so."""
    case = _step(result, "fuse_res3")
    assert abs(case["diff_pp"]) < phase_amdahl.EXPLAIN_PP and case["explanation"] == ""
    assert 1.13 < case["speedup"] < 1.17


def test_the_difference_splits_exactly_in_three(result: phase_amdahl.PhaseAmdahl) -> None:
    parts = result.steps[["rest_pp", "outside_pp", "overhead_pp"]].sum(axis=1)
    assert parts.to_numpy() == pytest.approx(result.steps["diff_pp"].to_numpy(), abs=1e-9)


def test_the_sentence(built: factory.Built, result: phase_amdahl.PhaseAmdahl) -> None:
    times = truth_times(built)
    tails = list(factory.CASE)
    s = times.loc[tails, "bn_folded"].sum() / times.loc[tails, "fuse_res3"].sum()
    p = times.loc[tails, "bn_folded"].sum() / stage_value(built, "bn_folded", "profiled_median_ns")
    y = 1 / ((1 - p) + p / s)
    z = stage_value(built, "bn_folded", "median_ns") / stage_value(built, "fuse_res3", "median_ns")
    assert result.sentence == (
        f"fusing res3.2-3.4 made them {(s - 1) * 100:.1f}% faster; they were {p * 100:.1f}% of "
        f"the network; Amdahl predicts {(y - 1) * 100:.2f}%; measured {(z - 1) * 100:.2f}%")


def test_block_table(built: factory.Built, result: phase_amdahl.PhaseAmdahl) -> None:
    blocks = result.blocks
    names = [f"res{layer}.{i}" for layer, n in factory.BLOCKS.items() for i in range(1, n + 1)]
    assert list(blocks.index) == names  # res2.1 .. res5.3, network order
    times = truth_times(built)
    block = [p for p in times.index if p.startswith("res4.1/")]
    for stage in result.phases.stages:
        whole = stage_value(built, stage, "profiled_median_ns")
        share = 100 * times.loc[block, stage].sum() / whole
        assert blocks.loc["res4.1", f"share:{stage}"] == pytest.approx(share, rel=1e-9)
    res32 = [p for p in times.index if p.startswith("res3.2/")]
    speedup = times.loc[res32, "bn_folded"].sum() / times.loc[res32, "fuse_res3"].sum()
    assert blocks.loc["res3.2", "speedup:fuse_res3"] == pytest.approx(speedup, rel=1e-9)
    changed = blocks.index[blocks["changed:fuse_res3"]].tolist()
    assert changed == ["res3.2", "res3.3", "res3.4"]
    assert blocks["changed:bn_folded"].all()


def _renamed(ops: list[factory.Op]) -> list[factory.Op]:
    kind, _, dur = ops[0]
    return [(kind, "conv_winograd", dur), *ops[1:]]


def _doubled(ops: list[factory.Op]) -> list[factory.Op]:
    kind, name, dur = ops[0]
    return [(kind, name, dur / 2), (kind, name, dur / 2), *ops[1:]]


def _slowed(ops: list[factory.Op]) -> list[factory.Op]:
    return [(kind, name, dur * 2.5) for kind, name, dur in ops]


@pytest.fixture(scope="module")
def planted() -> phase_amdahl.PhaseAmdahl:
    """fuse_res3 also renames a kernel in res4.2/conv1, splits res2.1/conv2's convolution in
    two launches of the same kernel, and runs res5.3/conv2's same kernels 2.5 times slower."""
    built = factory.build({("fuse_res3", "res4.2/conv1"): _renamed,
                           ("fuse_res3", "res2.1/conv2"): _doubled,
                           ("fuse_res3", "res5.3/conv2"): _slowed})
    out = phase_section.analysis(built.run)
    assert out is not None
    return out


def test_a_planted_change_is_found(planted: phase_amdahl.PhaseAmdahl) -> None:
    row = _step(planted, "fuse_res3")
    assert row["changed_phases"].split(", ") == [
        "res2.1/conv2", "res3.2/tail", "res3.3/tail", "res3.4/tail", "res4.2/conv1"]
    assert row["blocks"] == "res2.1, res3.2-3.4, res4.2"
    # the changes also revert in the next step
    after = _step(planted, "fuse_all")["changed_phases"].split(", ")
    assert "res2.1/conv2" in after and "res4.2/conv1" in after


def test_an_unchanged_phase_that_moved_is_explained(planted: phase_amdahl.PhaseAmdahl) -> None:
    """res5.3/conv2 launches the same kernels, slower: not a changed phase, but the measured
    gain falls short of the prediction by its time, and the explanation says so."""
    row = _step(planted, "fuse_res3")
    assert "res5.3/conv2" not in row["changed_phases"]
    assert row["diff_pp"] < -phase_amdahl.EXPLAIN_PP
    assert row["rest_pp"] < row["diff_pp"] / 2  # the unchanged phases made most of it
    assert "from the phases it did not change" in row["explanation"]
    assert re.search(r"most: res5\.3/conv2 \+\d+\.\d\d%", row["explanation"])


def test_the_section_renders(built: factory.Built, result: phase_amdahl.PhaseAmdahl) -> None:
    page = html.render_report(built.run)
    start = page.index('<section id="phase-amdahl">')
    section = page[start:page.index("</section>", start)]
    assert '<a href="#phase-amdahl">Amdahl by phase</a>' in page
    assert result.sentence is not None and f"{result.sentence}." in section
    assert section.count("<tr") == 1 + 2 * 3 + 1 + 16  # steps (and why) and blocks, headers
    assert '<tr class="case">' in section and "agrees within 1 pp" in section
    case = _step(result, "fuse_res3")  # one forward a repeat: the tails' time a forward
    tails = f"{html.duration(case['prev_changed_ns'])} → {html.duration(case['changed_ns'])}"
    assert case["forwards"] == 1 and tails in section
    text = phase_section.plain_text(result)
    assert text.splitlines()[-1] == result.sentence
    assert re.search(r"bn_folded +fuse_res3 +res3\.2/tail, res3\.3/tail, res3\.4/tail", text)
    summary = markdown.summary_markdown(built.run, schema.empty(schema.REGRESSIONS))
    assert "### Amdahl by phase" in summary and result.sentence in summary
    assert "| `bn_folded` | `fuse_res3` | res3.2/tail, res3.3/tail, res3.4/tail |" in summary


def test_compact_blocks() -> None:
    assert phase_amdahl.compact_blocks(["res3.2/tail", "res3.3/tail", "res3.4/tail"]) == \
        "res3.2-3.4"
    assert phase_amdahl.compact_blocks(
        ["stem", "res2.1/conv1", "res2.1/tail", "res2.2/tail", "res3.1/tail", "res3.3/tail",
         "head"]) == "stem, res2.1-2.2, res3.1, res3.3, head"
    many = [f"n{i}" for i in range(12)]
    assert phase_amdahl.compact_blocks(many).startswith("12 blocks (n0, n1, ")


def test_no_analysis_without_two_custom_stages(built: factory.Built) -> None:
    st = built.run.table("stages")
    failed = st.assign(status=st["status"].where(~st["stage"].isin(["bn_folded", "fuse_all"]),
                                                 schema.FAIL))
    ph = phases.collect(built.run.table("ranges"), built.run.table("gpu_trace"), failed,
                        factory.MODEL)
    assert ph.stages == ["unfused", "fuse_res3"]  # a failed stage is never a step's end
    only = st.assign(status=st["status"].where(st["stage"] != "unfused", schema.FAIL))
    only = only.assign(status=only["status"].where(~only["stage"].isin(
        ["bn_folded", "fuse_res3"]), schema.SKIPPED))
    assert phase_amdahl.analyse(built.run.table("ranges"), built.run.table("gpu_trace"),
                                only, factory.MODEL) is None
    assert phase_amdahl.analyse(built.run.table("ranges"), built.run.table("gpu_trace"), st,
                                None) is None
    assert not math.isnan(float(built.run.table("stages")["median_ns"].iloc[0]))


def test_the_sweep_prints_it_after_the_staged_table(built: factory.Built) -> None:
    """`profgen sweep` prints the steps and the sentence after the staged table (the run's path
    stays the last line: `cmd_sweep` prints it after), nothing for a run without phases."""
    import io

    from profiler.cli.display import print_phase_amdahl

    out = io.StringIO()
    print_phase_amdahl(built.run, out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "" and lines[1].startswith("Amdahl by phase: P is")
    assert lines[-1].startswith("fusing res3.2-3.4 made them ")
    empty = io.StringIO()
    no_phases = store.Run(meta=built.run.meta, tables={"stages": built.run.table("stages")})
    print_phase_amdahl(no_phases, empty)
    assert empty.getvalue() == ""
