"""Amdahl by phase on the two real ResNet-50 runs of the resnet50 study on an H100 (256 images,
traces trimmed to the first profiled repeat, the API trace dropped; see
tests/data/runs/README.md): `resnet50-h100-phases`, the first (pageable copies, 10 repeats), and
`resnet50-h100-pinned` (page-locked input and output, 30 repeats). Every number is set against
the run's CSV files read a second way (the csv module): which phases launch other kernels, P, S,
the prediction, the measured gain, the sentence, the block table. In the first run fuse_res3 fell
short of its prediction and the explanation says why (its 154 MB pageable input copy took 4.8 ms
longer a repeat); in the second, predicted and measured agree within 1 pp, the issue's target.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from profiler import store
from profiler.analyze import phase_amdahl
from profiler.render import phase_section

RUNS = Path(__file__).parent / "data" / "runs"
FIRST, PINNED = RUNS / "resnet50-h100-phases", RUNS / "resnet50-h100-pinned"
CUSTOM = ["unfused", "bn_folded", "fuse_res3", "fuse_all"]
TAILS = ["res3.2/tail", "res3.3/tail", "res3.4/tail"]
COPIES = ("h2d", "d2h")


@dataclass(frozen=True)
class Csv:
    """A run's CSV files, read with the csv module."""

    path: Path

    def rows(self, name: str) -> list[dict[str, str]]:
        with open(self.path / f"{name}.csv", newline="") as f:
            return list(csv.DictReader(f))

    def phase_ns(self) -> dict[tuple[str, str], float]:
        """(stage, phase) -> GPU ns per profiled repeat (ranges.csv)."""
        rows = self.rows("ranges")
        repeats = {r["stage"]: int(r["calls"]) for r in rows
                   if r["name"] == f"resnet50:{r['stage']}"}
        return {(r["stage"], r["name"]): int(r["gpu_total_ns"]) / repeats[r["stage"]]
                for r in rows if r["gpu_total_ns"] and ":" not in r["name"]}

    def kernels(self) -> dict[tuple[str, str], Counter[str]]:
        """(stage, phase) -> the kernels and copies of the first profiled repeat."""
        out: dict[tuple[str, str], Counter[str]] = {}
        for r in self.rows("gpu_trace"):
            if r["range"] and r["repeat"] == "0":
                out.setdefault((r["stage"], r["range"]), Counter())[r["name"]] += 1
        return out

    def stage(self, key: str, column: str) -> int:
        (row,) = [r for r in self.rows("stages") if r["stage"] == key]
        return int(row[column])


def analysed(path: Path) -> phase_amdahl.PhaseAmdahl:
    out = phase_section.analysis(store.load_run(path))
    assert out is not None
    return out


@pytest.fixture(scope="module", params=[FIRST, PINNED], ids=lambda p: p.name)
def run(request: pytest.FixtureRequest) -> tuple[Csv, phase_amdahl.PhaseAmdahl]:
    return Csv(request.param), analysed(request.param)


def _step(result: phase_amdahl.PhaseAmdahl, stage: str) -> pd.Series:
    return result.steps[result.steps["stage"] == stage].iloc[0]


def test_the_steps_of_the_fusion_question(run: tuple[Csv, phase_amdahl.PhaseAmdahl]) -> None:
    _, result = run
    assert result.phases.stages == CUSTOM  # torch_gpu is the framework, graph has one range


def test_changed_phases_are_those_whose_kernels_differ(
        run: tuple[Csv, phase_amdahl.PhaseAmdahl]) -> None:
    data, result = run
    k = data.kernels()
    for row in result.steps.itertuples():
        phases = sorted({p for (s, p) in k if s in (row.prev_stage, row.stage)})
        want = {p for p in phases if k.get((row.prev_stage, p)) != k.get((row.stage, p))}
        assert set(row.changed_phases.split(", ")) == want
    case = _step(result, "fuse_res3")
    assert case["changed_phases"] == ", ".join(TAILS) and case["blocks"] == "res3.2-3.4"
    assert (case["prev_kernels"], case["kernels"]) == (21, 3)  # 7 launches a tail -> 1
    with_bn = {p for (s, p), c in k.items() if s == "unfused" and c["batchnorm"]}
    assert set(_step(result, "bn_folded")["changed_phases"].split(", ")) == with_bn
    assert len(with_bn) == 53


def test_p_s_and_the_prediction_from_the_csv(run: tuple[Csv, phase_amdahl.PhaseAmdahl]) -> None:
    data, result = run
    times = data.phase_ns()
    for row in result.steps.itertuples():
        changed = row.changed_phases.split(", ")
        before = sum(times[(row.prev_stage, p)] for p in changed)
        after = sum(times[(row.stage, p)] for p in changed)
        p = before / data.stage(row.prev_stage, "profiled_median_ns")
        s = before / after
        assert row.share_pct == pytest.approx(100 * p, rel=1e-9)
        assert row.speedup == pytest.approx(s, rel=1e-9)
        assert row.predicted == pytest.approx(1 / ((1 - p) + p / s), rel=1e-9)
        assert row.measured == pytest.approx(
            data.stage(row.prev_stage, "median_ns") / data.stage(row.stage, "median_ns"),
            rel=1e-12)
        assert row.rest_pp + row.outside_pp + row.overhead_pp == pytest.approx(row.diff_pp)
        assert (row.explanation == "") == (abs(row.diff_pp) <= phase_amdahl.EXPLAIN_PP)


def test_the_sentence(run: tuple[Csv, phase_amdahl.PhaseAmdahl]) -> None:
    data, result = run
    times = data.phase_ns()
    before = sum(times[("bn_folded", t)] for t in TAILS)
    after = sum(times[("fuse_res3", t)] for t in TAILS)
    p = before / data.stage("bn_folded", "profiled_median_ns")
    y = 1 / ((1 - p) + p / (before / after))
    z = data.stage("bn_folded", "median_ns") / data.stage("fuse_res3", "median_ns")
    assert result.sentence == (
        f"fusing res3.2-3.4 made them {(before / after - 1) * 100:.1f}% faster; they were "
        f"{p * 100:.1f}% of the network; Amdahl predicts {(y - 1) * 100:.2f}%; measured "
        f"{(z - 1) * 100:.2f}%")


def test_over_gpu_time_alone_the_prediction_holds(
        run: tuple[Csv, phase_amdahl.PhaseAmdahl]) -> None:
    """Over the network's GPU time (its phases, the copies aside) the fused tails' gain is what
    Amdahl predicts, within 0.1 pp, in both runs."""
    data, result = run
    case = _step(result, "fuse_res3")
    times = data.phase_ns()
    before = sum(v for (s, p), v in times.items() if s == "bn_folded" and p not in COPIES)
    after = sum(v for (s, p), v in times.items() if s == "fuse_res3" and p not in COPIES)
    tails_before = sum(times[("bn_folded", t)] for t in TAILS)
    tails_after = sum(times[("fuse_res3", t)] for t in TAILS)
    p, s = tails_before / before, tails_before / tails_after
    assert case["gpu_share_pct"] == pytest.approx(100 * p, rel=1e-9)
    assert case["gpu_predicted"] == pytest.approx(1 / ((1 - p) + p / s), rel=1e-9)
    assert case["gpu_measured"] == pytest.approx(before / after, rel=1e-9)
    assert abs(case["gpu_measured"] - case["gpu_predicted"]) * 100 < 0.1


def test_block_table(run: tuple[Csv, phase_amdahl.PhaseAmdahl]) -> None:
    data, result = run
    blocks = result.blocks
    assert list(blocks.index) == [f"res{n}.{i}" for n, c in ((2, 3), (3, 4), (4, 6), (5, 3))
                                  for i in range(1, c + 1)]
    assert blocks.index[blocks["changed:fuse_res3"]].tolist() == ["res3.2", "res3.3", "res3.4"]
    times = data.phase_ns()
    res32 = [p for (s, p) in times if s == "fuse_res3" and p.startswith("res3.2/")]
    share = sum(times[("fuse_res3", p)] for p in res32) / data.stage("fuse_res3",
                                                                    "profiled_median_ns")
    assert blocks.loc["res3.2", "share:fuse_res3"] == pytest.approx(100 * share, rel=1e-9)
    speedup = sum(times[("bn_folded", p)] for p in res32) / sum(times[("fuse_res3", p)]
                                                                for p in res32)
    assert blocks.loc["res3.2", "speedup:fuse_res3"] == pytest.approx(speedup, rel=1e-9)


def test_why_the_first_run_missed_the_prediction() -> None:
    """The tails got faster, yet fuse_res3 measured slower than bn_folded: the prediction is
    off by more than 1 pp, and the explanation names the pageable input copy, which took
    longer."""
    data, case = Csv(FIRST), _step(analysed(FIRST), "fuse_res3")
    times = data.phase_ns()
    h2d = times[("fuse_res3", "h2d")] - times[("bn_folded", "h2d")]
    assert h2d > 4e6  # 4.8 ms a repeat more, in a stage of ~128 ms
    assert case["measured"] < 1 < case["predicted"]
    assert case["diff_pp"] < -1 and case["rest_pp"] < case["diff_pp"] / 2
    share = 100 * h2d / data.stage("bn_folded", "profiled_median_ns")
    assert f"most: h2d {share:+.2f}%" in case["explanation"]
    assert "Over the network's GPU time alone (its phases, the copies aside)" in \
        case["explanation"]
    assert "noise can explain it" in case["explanation"]  # the min-max spread covers it


def test_with_pinned_copies_the_case_agrees_within_one_point() -> None:
    """The issue's target: with page-locked copies and 30 repeats, fuse_res3's measured gain is
    within 1 pp of Amdahl's prediction (and the panel says so); fuse_all's miss is the
    profiler's overhead (334 launches profiled against 53), which the explanation puts first."""
    result = analysed(PINNED)
    case = _step(result, "fuse_res3")
    assert abs(case["diff_pp"]) < 1 and case["explanation"] == ""
    assert case["measured_low"] > 1  # every repeat of the spread gained
    everything = _step(result, "fuse_all")
    assert everything["explanation"].split("predicted: ")[1].split(" pp from ")[1].startswith(
        "the profiler's overhead")
