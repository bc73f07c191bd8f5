"""Advice rules on real traces: each fires where the trace shows the problem, and only there."""

from __future__ import annotations

import csv

import pytest
from runfactory import NCU, build_run, tile_trace

from profiler.analyze import advice, overlap, roofline

CEILINGS = {
    "h2d_pinned_bytes_per_s": 53.9e9,
    "d2h_pinned_bytes_per_s": 54.3e9,
    "dram_bytes_per_s": 3.35e12,
    "fp32_flops_per_s": 66.9e12,
}
# One-off calls of a process's setup, outside any stage's timed `infer` (the pipeline records
# only the calls issued inside the stage's range; the fixtures' summaries cover the whole process).
SETUP_CALLS = (
    "cudaHostAlloc",
    "cudaMalloc",
    "cuModuleLoadData",
    "cuModuleUnload",
    "cudaMemGetInfo",
    "cudaStreamCreateWithPriority",
    "cuInit",
    "cuModuleGetLoadingMode",
)


def _ncu_durations(kernel: str) -> int:
    """Summed gpu__time_duration.sum of `kernel`, read with the csv module (a second reader)."""
    lines = NCU.read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(lines[header:]))
    col, name = rows[0].index("gpu__time_duration.sum"), rows[0].index("Kernel Name")
    return sum(int(r[col].replace(",", "")) for r in rows[2:] if r[name] == kernel)


@pytest.fixture(scope="module")
def run():  # type: ignore[no-untyped-def]
    return build_run()


def test_pageable_copies_found_only_where_the_trace_has_them(run) -> None:  # type: ignore[no-untyped-def]
    found = advice.pageable_copies(run.table("gpu_trace"), CEILINGS)
    assert list(found["stage"]) == ["cuda_baseline"]  # the demo's DtoH goes to pageable memory
    row = found.iloc[0]
    assert "1 of 2 copies" in row["evidence"] and "DtoH at 3.0 GB/s" in row["evidence"]
    assert "pin" in row["technique"]
    assert row["weight_pct"] == pytest.approx(5_568_070 / (5_568_070 + 319_688 + 33_153) * 100)


def test_sync_dominated(run) -> None:  # type: ignore[no-untyped-def]
    api = run.table("api_calls")
    assert advice.sync_dominated(api).empty  # whole-process summaries: allocation dominates
    inside = api[~api["name"].isin(SETUP_CALLS)].reset_index(drop=True)
    found = advice.sync_dominated(inside)
    # overlap program: cudaStreamSynchronize 815,644 ns of 815,644 + 183,383 + 146,952 + 16,193 ns
    assert list(found["stage"]) == ["overlap_fusion"]
    assert found.iloc[0]["weight_pct"] == pytest.approx(
        815_644 / (815_644 + 183_383 + 146_952 + 16_193) * 100
    )
    assert "12 synchronisation calls (cudaStreamSynchronize)" in found.iloc[0]["evidence"]


def test_short_kernels_with_gaps(run) -> None:  # type: ignore[no-untyped-def]
    trace = run.table("gpu_trace")
    assert advice.short_kernels_with_gaps(
        overlap.stage_overlap(trace)
    ).empty  # 3 and 8 kernels a repeat
    # The demo's five real operations repeated as a per-image loop would issue them: 11 us kernels.
    many = tile_trace(trace[trace["stage"] == "cuda_baseline"], 200)
    found = advice.short_kernels_with_gaps(overlap.stage_overlap(many))
    assert list(found["stage"]) == ["cuda_baseline"]
    assert "600 kernels per repeat" in found.iloc[0]["evidence"]


def test_serial_copies(run) -> None:  # type: ignore[no-untyped-def]
    trace = run.table("gpu_trace")
    found = advice.serial_copies(overlap.stage_overlap(trace))
    assert set(found["stage"]) == {"cuda_baseline", "overlap_fusion"}  # neither overlaps (0 ns)
    ops = trace[(trace["stage"] == "overlap_fusion") & (trace["repeat"] == 1)].copy()
    s14 = ops["stream"] == 14  # move stream 14's chunk so its copy runs under stream 13's kernels
    ops.loc[s14, ["start_ns", "end_ns"]] -= (
        int(ops.loc[s14, "start_ns"].min() - ops["start_ns"].min()) - 80_000
    )
    ov = overlap.stage_overlap(ops.reset_index(drop=True))
    assert ov.loc[0, "overlap_pct"] < 10 < 50 < ov.loc[0, "hidden_pct"]  # copies dwarf kernels
    assert advice.serial_copies(ov).empty


def test_low_efficiency_uses_the_ceilings(run) -> None:  # type: ignore[no-untyped-def]
    roof = roofline.roofline(run.table("metrics"), CEILINGS)
    found = advice.low_efficiency(roof)
    assert sorted(found["finding"]) == [
        "relu: low achieved bandwidth",
        "scale: low achieved bandwidth",
    ]
    assert "coalesce" in found.iloc[0]["technique"]
    slower_memory = dict(CEILINGS, dram_bytes_per_s=1.0e12)  # then 737 GB/s is 74% of the ceiling
    assert advice.low_efficiency(roofline.roofline(run.table("metrics"), slower_memory)).empty
    assert advice.low_efficiency(roofline.roofline(run.table("metrics"), {})).empty  # no ceilings


def test_findings_in_study_order(run) -> None:  # type: ignore[no-untyped-def]
    trace = run.table("gpu_trace")
    ov = overlap.stage_overlap(trace, CEILINGS)
    roof = roofline.roofline(run.table("metrics"), CEILINGS)
    found = advice.findings(
        trace, run.table("api_calls"), ov, roof, CEILINGS, ["overlap_fusion", "cuda_baseline"]
    )
    assert list(dict.fromkeys(found["stage"])) == ["overlap_fusion", "cuda_baseline"]
    weights = found[found["stage"] == "cuda_baseline"]["weight_pct"].tolist()
    assert weights == sorted(weights, reverse=True)
    empty = advice.findings(
        trace.iloc[:0], run.table("api_calls").iloc[:0], ov.iloc[:0], roof.iloc[:0]
    )
    assert empty.empty and list(empty.columns) == advice.FINDINGS.names


def test_roofline_by_hand(run) -> None:  # type: ignore[no-untyped-def]
    roof = roofline.roofline(run.table("metrics"), CEILINGS).set_index("name")
    # ncu raw-metrics.csv: 8 `scale` launches, each 4,197,120 DRAM bytes read, 0 written,
    # 1,048,576 FMUL thread instructions.
    scale = roof.loc["scale"]
    assert scale["duration_ns"] == _ncu_durations("scale")
    assert scale["launches"] == 8 and scale["fp32_flops"] == 8 * 1_048_576
    assert scale["dram_bytes"] == 8 * 4_197_120
    assert scale["intensity"] == pytest.approx(1_048_576 / 4_197_120)
    assert scale["bytes_per_s"] == pytest.approx(8 * 4_197_120 / (scale["duration_ns"] * 1e-9))
    assert scale["bound"] == "memory"  # ridge at 66.9e12 / 3.35e12 = 20 FLOP/byte
    assert roof.loc["relu", "fp32_flops"] == 0
