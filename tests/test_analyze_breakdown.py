"""What the report's charts rank and normalise, decided in `profiler.analyze` and testable without
plotly: the kernel-time breakdown (`analyze.breakdown`) and the roofline's numbered points
(`analyze.roofline.roofline_points`). Small hand-made tables, expected values worked out by hand."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from profiler import schema
from profiler.analyze import breakdown, roofline


def activities(rows: list[tuple[str, str, str, int]]) -> pd.DataFrame:
    """GPU activities from (stage, kind, name, total_ns)."""
    df = pd.DataFrame(rows, columns=["stage", "kind", "name", "total_ns"])
    df["copy_kind"] = df["name"].str.extract(r"memcpy (\w+)")[0]
    df["time_pct"] = df["total_ns"] / df.groupby("stage")["total_ns"].transform("sum") * 100
    df["calls"] = 1
    for col in ("avg_ns", "min_ns", "max_ns"):
        df[col] = df["total_ns"]
    df["bytes"] = pd.NA
    return schema.conform(df, schema.GPU_ACTIVITIES)


ACTS = activities(
    [
        ("a", "kernel", "big", 600),
        ("a", "kernel", "small", 100),
        ("a", "memcpy", "[CUDA memcpy HtoD]", 300),
        ("b", "kernel", "tiny_stage_main", 9),  # 90% of a short stage
        ("b", "kernel", "small", 1),
        ("c", "kernel", "big", 50),
        ("c", "memset", "[CUDA memset]", 50),
    ]
)


def test_named_kernels_rank_by_summed_share() -> None:
    # shares: big 0.6 + 0.5 = 1.1; tiny_stage_main 0.9; small 0.1 + 0.1 = 0.2
    assert breakdown.ranked_kernels(ACTS, top=3) == ["big", "tiny_stage_main", "small"]
    assert breakdown.ranked_kernels(ACTS, top=2) == ["big", "tiny_stage_main"]


def test_breakdown_stacks_per_repeat_times_and_shares() -> None:
    df = breakdown.kernel_breakdown(ACTS, ["c", "a", "b", "absent"], {"a": 2}, top=2)
    schema.validate(df, breakdown.BREAKDOWN)
    series = list(dict.fromkeys(df["series"]))
    assert series == ["big", "tiny_stage_main", breakdown.OTHER, "[CUDA memcpy HtoD]",
                      "[CUDA memset]"]  # fmt: skip
    assert list(df["stage"][:3]) == ["c", "a", "b"]  # study order, stages with activities
    assert len(df) == len(series) * 3  # every series in every stage, for stacking
    got = df.set_index(["series", "stage"])
    assert got.loc[("big", "a"), "per_repeat_ns"] == 300  # 600 over 2 profiled repeats
    assert got.loc[("big", "b"), "per_repeat_ns"] == 0
    assert got.loc[(breakdown.OTHER, "a"), "per_repeat_ns"] == 50
    assert got.loc[(breakdown.OTHER, "b"), "share_pct"] == pytest.approx(10.0)
    assert got.loc[("[CUDA memset]", "c"), "share_pct"] == pytest.approx(50.0)
    assert df.groupby("stage")["share_pct"].sum().to_dict() == pytest.approx(
        {"a": 100.0, "b": 100.0, "c": 100.0}
    )
    assert list(df.groupby("series", sort=False)["rank"].first()) == [0, 1, 2, 3, 4]
    assert list(df.groupby("series", sort=False)["kind"].first()) == [
        "kernel", "kernel", "other", "memcpy", "memset",
    ]  # fmt: skip


def roof(rows: list[tuple[str, str, float, float, float]]) -> pd.DataFrame:
    """Roofline rows from (stage, name, intensity, flops_per_s, share_pct)."""
    df = pd.DataFrame(rows, columns=["stage", "name", "intensity", "flops_per_s", "share_pct"])
    for col in ("launches", "duration_ns", "fp32_flops", "dram_bytes"):
        df[col] = 1
    for col in roofline.ROOFLINE.names:
        if col not in df:
            df[col] = np.nan if roofline.ROOFLINE.dtypes[col] == "float64" else "memory"
    return schema.conform(df, roofline.ROOFLINE)


def test_roofline_points_number_what_can_be_placed() -> None:
    points = roofline.roofline_points(
        roof(
            [
                ("s1", "conv", 10.0, 1e12, 60.0),
                ("s1", "copyish", 0.0, 0.0, 30.0),  # no FLOPs: not on log axes
                ("s1", "fc", 1.0, 1e11, 10.0),
                ("s2", "conv", 10.5, 1.05e12, 70.0),  # same kernel, same place: same number
                ("s2", "conv", 100.0, 1e13, 20.0),  # same kernel, elsewhere: a new number
                ("s2", "fc", 1.0, 1e11, 10.0),
            ]
        )
    )
    schema.validate(points, roofline.ROOFLINE_POINTS)
    assert list(points["point"].astype(object).where(points["point"].notna(), None)) == [
        1, None, 2, 1, 3, 2,
    ]  # fmt: skip
    assert list(points["labelled"]) == [True, False, True, False, True, False]


def test_analyze_imports_no_plotting_or_templates() -> None:
    code = (
        "import sys, profiler.analyze.breakdown, profiler.analyze.roofline; "
        "print(sorted(m for m in ('plotly', 'jinja2', 'rich') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
