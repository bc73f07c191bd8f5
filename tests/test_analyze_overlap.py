"""Busy time as a union of intervals, memcpy share, bandwidth and overlap, on real nsys traces."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from runfactory import NSYS_DEMO, NSYS_OVERLAP, build_run

from profiler import schema
from profiler.analyze import overlap, timeline

CEILINGS = {"h2d_pinned_bytes_per_s": 50e9, "d2h_pinned_bytes_per_s": 40e9}


@pytest.fixture(scope="module")
def trace() -> pd.DataFrame:
    return build_run().table("gpu_trace")


def _brute_union(start: np.ndarray, end: np.ndarray) -> int:
    """A second computation: mark every nanosecond that some interval covers."""
    origin = start.min()
    covered = np.zeros(int(end.max() - origin), dtype=bool)
    for s, e in zip(start - origin, end - origin, strict=True):
        covered[s:e] = True
    return int(covered.sum())


def test_merge_intervals_by_hand() -> None:
    s, e = overlap.merge_intervals(np.array([10, 0, 5, 30, 40]), np.array([20, 5, 8, 40, 45]))
    assert s.tolist() == [0, 10, 30] and e.tolist() == [
        8,
        20,
        45,
    ]  # [0,5)+[5,8) touch; [30,40)+[40,45)
    assert overlap.union_ns(np.array([0, 2]), np.array([10, 4])) == 10  # nested: not 10 + 2
    assert overlap.union_ns(np.array([], dtype=np.int64), np.array([], dtype=np.int64)) == 0


@pytest.mark.parametrize("stage", ["cuda_baseline", "overlap_fusion"])
def test_busy_is_the_union_on_real_traces(trace: pd.DataFrame, stage: str) -> None:
    ops = trace[trace["stage"] == stage]
    row = overlap.stage_overlap(ops.reset_index(drop=True)).iloc[0]
    expected = sum(
        _brute_union(g["start_ns"].to_numpy(np.int64), g["end_ns"].to_numpy(np.int64))
        for _, g in ops.groupby("repeat")
    )
    assert row["busy_ns"] == expected
    assert row["idle_ns"] == row["span_ns"] - row["busy_ns"]


def test_memcpy_share_matches_nsys_summaries(trace: pd.DataFrame) -> None:
    # nsys's own cuda_gpu_mem_time_sum / cuda_gpu_kern_sum of the same capture.
    ov = overlap.stage_overlap(trace).set_index("stage")
    for stage, folder in (("cuda_baseline", NSYS_DEMO), ("overlap_fusion", NSYS_OVERLAP)):
        mem = pd.read_csv(folder / "cuda_gpu_mem_time_sum.csv")["Total Time (ns)"].sum()
        kern = pd.read_csv(folder / "cuda_gpu_kern_sum.csv")["Total Time (ns)"].sum()
        assert ov.loc[stage, "memcpy_ns"] == mem
        assert ov.loc[stage, "memcpy_pct"] == pytest.approx(mem / (mem + kern) * 100)


def test_bandwidth_matches_nsys_throughput(trace: pd.DataFrame) -> None:
    ov = overlap.stage_overlap(trace, CEILINGS).set_index("stage")
    # nsys prints each copy's throughput:
    # 52,479.132 MB/s (pinned HtoD), 3,003.122 MB/s (pageable DtoH).
    assert ov.loc["cuda_baseline", "h2d_bytes_per_s"] == pytest.approx(52_479.132e6, rel=1e-4)
    # For the pageable DtoH nsys prints 0.3% less than its own bytes / duration;
    # ours is exactly that.
    assert ov.loc["cuda_baseline", "d2h_bytes_per_s"] == pytest.approx(3_003.122e6, rel=5e-3)
    assert ov.loc["cuda_baseline", "d2h_bytes_per_s"] == pytest.approx(16_777_000 / 5_568_070e-9)
    assert ov.loc["cuda_baseline", "h2d_pct_of_pinned"] == pytest.approx(
        52_479.132e6 / 50e9 * 100, rel=1e-4
    )
    assert ov.loc["cuda_baseline", "h2d_bytes"] == 16_777_000  # nsys: 16.777 MB
    assert np.isnan(overlap.stage_overlap(trace).loc[0, "h2d_pct_of_pinned"])  # no ceilings: NaN


def test_real_overlap_fixture_never_overlaps(trace: pd.DataFrame) -> None:
    # fixture_prog.py's chunks run one after the other (each .get() waits): 0 ns of overlap.
    row = overlap.stage_overlap(trace).set_index("stage").loc["overlap_fusion"]
    assert row["overlap_ns"] == 0 and row["overlap_pct"] == 0.0
    assert row["repeats"] == 2 and row["ops"] == 32 and row["gaps"] == 30


def test_overlap_counts_time_with_copy_and_kernel_in_flight(trace: pd.DataFrame) -> None:
    ops = trace[(trace["stage"] == "overlap_fusion") & (trace["repeat"] == 1)].copy()
    s14 = (ops["stream"] == 14).to_numpy()
    first13 = int(ops.loc[ops["stream"] == 13, "start_ns"].min())
    shift = (
        int(ops.loc[s14, "start_ns"].min()) - first13 - 80_000
    )  # stream 14's copy over 13's kernels
    ops.loc[s14, ["start_ns", "end_ns"]] -= shift
    row = overlap.stage_overlap(ops.reset_index(drop=True)).iloc[0]
    kernels = ops["kind"] == schema.KERNEL
    copies = ops["kind"] == schema.MEMCPY
    k = _brute_union(ops.loc[kernels, "start_ns"].to_numpy(), ops.loc[kernels, "end_ns"].to_numpy())
    c = _brute_union(ops.loc[copies, "start_ns"].to_numpy(), ops.loc[copies, "end_ns"].to_numpy())
    both = _brute_union(
        ops.loc[kernels | copies, "start_ns"].to_numpy(),
        ops.loc[kernels | copies, "end_ns"].to_numpy(),
    )
    assert row["overlap_ns"] == k + c - both > 0
    assert row["overlap_pct"] == pytest.approx(row["overlap_ns"] / c * 100)


def test_timeline_caps_one_typical_repeat(trace: pd.DataFrame) -> None:
    tl = timeline.timeline(trace, build_run().table("range_trace"), "overlap_fusion", limit=5)
    assert tl.repeat == 1  # spans: repeat 0 2.25 ms, repeat 1 0.82 ms; the shorter middle one
    assert (len(tl.ops), tl.total_ops) == (5, 16)
    assert tl.ops["start_ns"].iloc[0] == 0
    assert set(tl.ops["lane"]) <= {"stream 13", "stream 14"}
    assert tl.phases["start_ns"].max() <= tl.ops["start_ns"].max() + tl.ops["duration_ns"].max()
    assert timeline.default_stage(trace, ["cuda_baseline", "overlap_fusion"]) == "overlap_fusion"
    assert (
        timeline.default_stage(trace[trace["stage"] == "cuda_baseline"], ["cuda_baseline"])
        == "cuda_baseline"
    )
