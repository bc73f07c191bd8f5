"""Amdahl's law over the GPU-activities tables of real traces."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from runfactory import NSYS_OVERLAP, build_run

from profiler.analyze import amdahl, stages


def test_gain_formula_by_hand() -> None:
    # The example: a kernel that is 10% of the time and gets 14.6% faster buys ~1.3%.
    assert amdahl.gain(0.10, 1.146) == pytest.approx(1 / (0.9 + 0.1 / 1.146))
    assert round((amdahl.gain(0.10, 1.146) - 1) * 100, 1) == 1.3
    assert amdahl.gain(0.5, math.inf) == pytest.approx(2.0)
    assert amdahl.gain(0.0, 2.0) == 1.0
    assert amdahl.gain(1.0, math.inf) == math.inf
    assert amdahl.gain(1.0, 2.0) == pytest.approx(2.0)


def test_kernel_gains_on_the_overlap_trace() -> None:
    gains = amdahl.kernel_gains(build_run().table("gpu_activities"))
    g = gains[gains["stage"] == "overlap_fusion"].set_index("name")
    # shares from nsys's own summaries of the capture
    kern = pd.read_csv(NSYS_OVERLAP / "cuda_gpu_kern_sum.csv").set_index("Name")["Total Time (ns)"]
    mem = pd.read_csv(NSYS_OVERLAP / "cuda_gpu_mem_time_sum.csv")["Total Time (ns)"]
    total = kern.sum() + mem.sum()
    p = kern["scale"] / total
    assert g.loc["scale", "share_pct"] == pytest.approx(p * 100)
    assert g.loc["scale", "gain_s1_15"] == pytest.approx(1 / ((1 - p) + p / 1.15))
    assert g.loc["scale", "gain_s2"] == pytest.approx(1 / ((1 - p) + p / 2))
    assert g.loc["scale", "gain_sinf"] == pytest.approx(1 / (1 - p))
    assert list(g["share_pct"]) == sorted(g["share_pct"], reverse=True)
    assert gains.groupby("stage")["share_pct"].sum().tolist() == pytest.approx([100.0, 100.0])


def test_transition_predicted_against_measured() -> None:
    run = build_run()
    staged = stages.staged_table(run.table("stages"))
    moves = amdahl.transitions(
        run.table("gpu_activities"), staged, {"cuda_baseline": 1, "overlap_fusion": 2}
    )
    assert len(moves) == 1  # only two PASS stages have GPU activities
    m = moves.iloc[0]
    assert (m["prev_stage"], m["stage"]) == ("cuda_baseline", "overlap_fusion")
    # demo: DtoH 5,568,070 + HtoD 319,688 + addone 33,153 ns in one repeat;
    # overlap: 1,325,888 ns over two repeats.
    assert m["prev_gpu_ns"] == 5_568_070 + 319_688 + 33_153
    assert m["gpu_ns"] == pytest.approx(1_325_888 / 2)
    assert m["top_name"] == "[CUDA memcpy DtoH]"
    assert m["top_speedup"] == pytest.approx(5_568_070 / (633_102 / 2))
    p = 5_568_070 / (5_568_070 + 319_688 + 33_153)
    assert m["predicted_top"] == pytest.approx(1 / ((1 - p) + p / m["top_speedup"]))
    assert m["predicted_gpu"] == pytest.approx((5_568_070 + 319_688 + 33_153) / (1_325_888 / 2))
    assert m["measured"] == pytest.approx(43_120_000 / 881_200)


def test_vanished_activity_has_infinite_local_speedup() -> None:
    acts = build_run().table("gpu_activities")
    staged = stages.staged_table(build_run().table("stages"))
    later = acts[acts["stage"] == "cuda_baseline"].assign(stage="overlap_fusion")
    later = later[later["name"] != "[CUDA memcpy DtoH]"]
    both = pd.concat([acts[acts["stage"] == "cuda_baseline"], later], ignore_index=True)
    m = amdahl.transitions(both, staged).iloc[0]
    p = 5_568_070 / (5_568_070 + 319_688 + 33_153)
    assert m["top_speedup"] == math.inf
    assert m["predicted_top"] == pytest.approx(1 / (1 - p))


def test_gain_of_a_part_that_took_no_time_and_now_takes_some() -> None:
    """Speedup 0 (the part took no time before, some now): a gain of 0 where the part had a
    share, and none can be said where it had none (0 / 0: NaN, not ZeroDivisionError)."""
    assert amdahl.gain(0.5, 0.0) == 0.0
    assert math.isnan(amdahl.gain(0.0, 0.0))
