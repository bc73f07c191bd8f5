"""Amdahl by phase on real H100 runs: the committed MobileNetV2 sample (a range per ONNX node,
a GPU trace with `range`, ten stages) and the LeNet and softmax samples. The numbers are set
against the run's CSV files read a second way (the csv module); planted changes in the real
trace are found; a trace cut short changes nothing it still shows.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from profiler import store
from profiler.analyze import phase_amdahl, phases
from profiler.render import html, phase_section

REPORTS = Path(__file__).parents[1] / "reports"
MOBILENET = REPORTS / "sample-mobilenetv2-h100"
LENET = REPORTS / "sample-lenet-h100-cupti"
SOFTMAX = REPORTS / "sample-softmax-h100-cupti"


@pytest.fixture(scope="module")
def run() -> store.Run:
    return store.load_run(MOBILENET)


@pytest.fixture(scope="module")
def result(run: store.Run) -> phase_amdahl.PhaseAmdahl:
    out = phase_section.analysis(run)
    assert out is not None
    return out


def _csv(name: str, folder: Path = MOBILENET) -> list[dict[str, str]]:
    with open(folder / f"{name}.csv", newline="") as f:
        return list(csv.DictReader(f))


def per_repeat() -> dict[tuple[str, str], float]:
    """(stage, phase) -> GPU ns per profiled repeat, from ranges.csv: the phase's summed GPU
    span over the calls of the stage's own range."""
    rows = _csv("ranges")
    repeats = {r["stage"]: int(r["calls"]) for r in rows
               if r["name"] == f"mobilenetv2:{r['stage']}"}
    return {(r["stage"], r["name"]): int(r["gpu_total_ns"]) / repeats[r["stage"]]
            for r in rows if r["gpu_total_ns"] and ":" not in r["name"]}


def stage_times() -> dict[str, dict[str, int]]:
    return {r["stage"]: {k: int(r[k]) for k in ("median_ns", "profiled_median_ns")}
            for r in _csv("stages")}


def test_custom_stages(result: phase_amdahl.PhaseAmdahl) -> None:
    """Frameworks (torch_gpu, torch_graph, ort_cpu) are no steps; graph has one range."""
    assert result.phases.stages == ["cuda_naive", "im2col_gemm", "fused", "specialised",
                                    "tuned", "pinned"]


def test_pinned_changed_the_copies_only(result: phase_amdahl.PhaseAmdahl) -> None:
    """tuned -> pinned launches the same kernels; its copies come from page-locked memory."""
    row = result.steps.iloc[-1]
    assert (row["prev_stage"], row["stage"]) == ("tuned", "pinned")
    assert row["changed_phases"] == "h2d, d2h" and row["prev_kernels"] == 0


def test_changed_kernels_read_from_the_trace(result: phase_amdahl.PhaseAmdahl) -> None:
    """A phase changed when its kernel names or counts differ in gpu_trace.csv (repeat 0)."""
    kernels: dict[tuple[str, str], list[str]] = {}
    for r in _csv("gpu_trace"):
        if r["range"] and r["repeat"] == "0":
            copy = f" {r['src_kind']}->{r['dst_kind']}" if r["kind"] == "memcpy" else ""
            kernels.setdefault((r["stage"], r["range"]), []).append(r["name"] + copy)
    for row in result.steps.itertuples():
        names = {p for (s, p) in kernels if s in (row.prev_stage, row.stage)}
        before = {p: sorted(kernels.get((row.prev_stage, p), [])) for p in names}
        after = {p: sorted(kernels.get((row.stage, p), [])) for p in names}
        want = [p for p in result.phases.times.index if p in names and before[p] != after[p]]
        assert row.changed_phases.split(", ") == want, (row.prev_stage, row.stage)


def test_p_s_predicted_and_measured_from_the_csv(result: phase_amdahl.PhaseAmdahl) -> None:
    times, st = per_repeat(), stage_times()
    for row in result.steps.itertuples():
        changed = row.changed_phases.split(", ")
        before = sum(times.get((row.prev_stage, p), 0.0) for p in changed)
        after = sum(times.get((row.stage, p), 0.0) for p in changed)
        p = before / st[row.prev_stage]["profiled_median_ns"]
        s = before / after
        assert row.share_pct == pytest.approx(100 * p, rel=1e-9)
        assert row.speedup == pytest.approx(s, rel=1e-9)
        assert row.predicted == pytest.approx(1 / ((1 - p) + p / s), rel=1e-9)
        assert row.measured == pytest.approx(
            st[row.prev_stage]["median_ns"] / st[row.stage]["median_ns"], rel=1e-12)
        assert row.rest_pp + row.outside_pp + row.overhead_pp == pytest.approx(row.diff_pp)
        assert (row.explanation == "") == (abs(row.diff_pp) <= phase_amdahl.EXPLAIN_PP)


def _plant(run: store.Run, trace: pd.DataFrame) -> phase_amdahl.PhaseAmdahl:
    out = phase_amdahl.analyse(run.table("ranges"), trace, run.table("stages"), "mobilenetv2")
    assert out is not None
    return out


def test_a_planted_rename_is_found(run: store.Run, result: phase_amdahl.PhaseAmdahl) -> None:
    """One kernel of pinned's features.9.conv.1.0 renamed in the real trace: the step
    tuned -> pinned now changed that phase too."""
    trace = run.table("gpu_trace").copy()
    hit = (trace["stage"] == "pinned") & (trace["range"] == "features.9.conv.1.0")
    assert hit.sum() == 1
    trace.loc[hit, "name"] = trace.loc[hit, "name"] + "_v2"
    row = _plant(run, trace).steps.iloc[-1]
    assert row["changed_phases"] == "h2d, features.9.conv.1.0, d2h"
    assert result.steps.iloc[-1]["changed_phases"] == "h2d, d2h"


def test_a_trace_cut_short_changes_nothing_it_shows(run: store.Run,
                                                    result: phase_amdahl.PhaseAmdahl) -> None:
    """Each phase's operations are scaled to the untrimmed ops per repeat: the trace's second
    half of pinned dropped, the phases it still shows compare the same, the ones it lost are
    counted as unverified (compared by their operation counts only)."""
    trace = run.table("gpu_trace")
    pinned = trace.index[trace["stage"] == "pinned"]
    cut = trace.drop(index=pinned[len(pinned) // 2:])
    out = _plant(run, cut)
    lost = set(trace.loc[pinned[len(pinned) // 2:], "range"]) - set(cut.loc[
        cut["stage"] == "pinned", "range"])
    row = out.steps.iloc[-1]
    assert row["unverified"] == len(lost) > 0
    assert row["changed_phases"] == "h2d" and "d2h" in lost  # d2h is now unverified
    pd.testing.assert_frame_equal(out.steps.iloc[:-1], result.steps.iloc[:-1])


def test_mobilenet_report_has_the_section_without_blocks(run: store.Run) -> None:
    page = html.render_report(run)
    start = page.index('<section id="phase-amdahl">')
    section = page[start:page.index("</section>", start)]
    assert "<h3>Per block</h3>" not in section  # ONNX node names have no blocks
    assert section.count("<tr") == 1 + 2 * 5  # a row a step and a row for why


def test_lenet_steps_skip_stages_whose_phases_overlap() -> None:
    """A stage whose phases run on several streams at once (their GPU time sums past the
    stage's own by more than OVERLAP_PCT) takes no part, since shares would not add up; one
    whose phases do not overlap does, as cuda_baseline, host-bound, does first."""
    lenet = store.load_run(LENET)
    out = phase_section.analysis(lenet)
    assert out is not None
    assert out.phases.stages[0] == "cuda_baseline"
    ranges = lenet.table("ranges")
    overlapped, serial = [], []
    for stage, mine in ranges.groupby("stage"):
        own = mine.loc[mine["name"] == f"lenet:{stage}", "gpu_total_ns"]
        summed = phases.phase_rows(mine)["gpu_total_ns"].sum()
        if len(own) and summed:
            limit = own.iloc[0] * (1 + phases.OVERLAP_PCT / 100)
            (overlapped if summed > limit else serial).append(stage)
    assert overlapped, "the sample should hold a stage whose phases overlap (one_kernel's chunks)"
    assert not set(overlapped) & set(out.phases.stages)
    assert {"cuda_baseline", "conv_opt", "fc_opt"} <= set(serial) & set(out.phases.stages)
    conv = out.steps[out.steps["stage"] == "conv_opt"].iloc[0]
    assert conv["changed_phases"] == "conv1, conv2"
    assert out.sentence is not None and out.sentence.startswith("changing conv1, conv2 made them")


def test_softmax_has_one_phase_and_no_section() -> None:
    softmax = store.load_run(SOFTMAX)
    assert phase_section.analysis(softmax) is None
    assert 'id="phase-amdahl"' not in html.render_report(softmax)
