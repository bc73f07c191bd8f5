"""nvprof-style summaries from traces (profiler.analyze.activities)."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from profiler import schema
from profiler.analyze import activities
from profiler.parse import nsys_csv

NSYS = Path(__file__).parent / "data" / "nsys" / "2025.3.1"


def trace(rows: list[dict[str, object]]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df["end_ns"] = df["start_ns"] + df["duration_ns"]
    fill = [c for c in schema.GPU_TRACE.names if c not in df]
    df = schema.conform(df.assign(repeat=0), schema.GPU_TRACE, fill=fill)
    return schema.validate(df, schema.GPU_TRACE)


def op(
    stage: str, kind: str, name: str, start: int, dur: int, **extra: object
) -> dict[str, object]:
    return {
        "stage": stage,
        "kind": kind,
        "name": name,
        "start_ns": start,
        "duration_ns": dur,
        **extra,
    }


FOLDERS = sorted(d.name for d in NSYS.iterdir() if any(d.glob("*cuda_gpu_trace.csv")))
LABELS = {
    "[CUDA memcpy Host-to-Device]": "[CUDA memcpy HtoD]",
    "[CUDA memcpy Device-to-Host]": "[CUDA memcpy DtoH]",
    "[CUDA memcpy Device-to-Device]": "[CUDA memcpy DtoD]",
    "[CUDA memset]": "[CUDA memset]",
}


def report(folder: str, name: str) -> list[dict[str, str]]:
    path = next((NSYS / folder).glob(f"*{name}.csv"))
    return list(csv.DictReader(path.read_text().splitlines()))


@pytest.mark.parametrize("folder", FOLDERS)
def test_reproduces_nsys_kernel_and_memory_summaries(folder):
    """Every nsys capture in tests/data (demo, overlap, nested, the LeNet stages)."""
    t = nsys_csv.read_stats_dir(NSYS / folder, folder)["gpu_trace"]
    act = activities.gpu_activities(t).set_index("name")
    expected = [(r["Name"], r, "Instances") for r in report(folder, "cuda_gpu_kern_sum")]
    expected += [
        (LABELS[r["Operation"]], r, "Count") for r in report(folder, "cuda_gpu_mem_time_sum")
    ]
    assert sorted(act.index) == sorted(name for name, _, _ in expected)
    for name, r, calls in expected:
        row = act.loc[name]
        assert row["total_ns"] == int(r["Total Time (ns)"])
        assert row["calls"] == int(r[calls])
        assert row["min_ns"] == int(r["Min (ns)"]) and row["max_ns"] == int(r["Max (ns)"])
        # nsys prints one decimal
        assert row["avg_ns"] == pytest.approx(float(r["Avg (ns)"]), abs=0.051)
    assert act["time_pct"].sum() == pytest.approx(100)
    assert act["total_ns"].is_monotonic_decreasing


def test_copies_are_grouped_by_copy_kind_not_name():
    t = trace(
        [
            op("s", "memcpy", "whatever the tool called it", 0, 10, copy_kind="HtoD", bytes=100),
            op("s", "memcpy", "[CUDA memcpy HtoD]", 20, 30, copy_kind="HtoD", bytes=300),
            op("s", "memcpy", "[CUDA memcpy HtoD]", 60, 5, copy_kind="DtoH", bytes=7),
            op("s", "kernel", "[CUDA memcpy HtoD]", 70, 1, grid_x=1),  # a kernel with a copy's name
            op("s", "memset", "[CUDA memset]", 80, 2, bytes=64),
            op("s", "memset", "cuMemsetD8", 90, 4, bytes=32),
        ]
    )
    act = activities.gpu_activities(t)
    schema.validate(act, schema.GPU_ACTIVITIES)
    got = {
        (r.kind, r.name, None if pd.isna(r.copy_kind) else r.copy_kind): (
            r.total_ns,
            r.calls,
            r.bytes,
        )
        for r in act.itertuples()
    }
    assert got[("memcpy", "[CUDA memcpy HtoD]", "HtoD")] == (40, 2, 400)
    assert got[("memcpy", "[CUDA memcpy DtoH]", "DtoH")] == (5, 1, 7)
    assert got[("memset", "[CUDA memset]", None)] == (6, 2, 96)
    assert got[("kernel", "[CUDA memcpy HtoD]", None)][:2] == (1, 1)
    assert pd.isna(got[("kernel", "[CUDA memcpy HtoD]", None)][2])
    assert len(act) == 4


def test_stage_order_shares_and_sorting():
    t = trace(
        [
            op("second", "kernel", "k1", 0, 30, grid_x=1),
            op("second", "kernel", "k2", 40, 10, grid_x=1),
            op("second", "kernel", "k1", 60, 20, grid_x=1),
            op("first", "kernel", "k1", 100, 5, grid_x=1),
            op("first", "memcpy", "[CUDA memcpy DtoH]", 110, 15, copy_kind="DtoH", bytes=8),
        ]
    )
    act = activities.gpu_activities(t)
    assert list(act["stage"]) == ["second", "second", "first", "first"]  # order of first appearance
    assert list(act["name"]) == ["k1", "k2", "[CUDA memcpy DtoH]", "k1"]
    assert list(act["time_pct"]) == pytest.approx([50 / 60 * 100, 10 / 60 * 100, 75, 25])
    k1 = act.iloc[0]
    assert (k1["total_ns"], k1["calls"], k1["avg_ns"], k1["min_ns"], k1["max_ns"]) == (
        50,
        2,
        25.0,
        20,
        30,
    )


def test_api_calls():
    rows = [
        ("s", "cudaMemcpy", 0, 40),
        ("s", "cudaLaunchKernel", 50, 5),
        ("s", "cudaLaunchKernel", 60, 15),
        ("t", "cudaMalloc", 0, 100),
    ]
    df = pd.DataFrame(rows, columns=["stage", "name", "start_ns", "duration_ns"])
    df = df.assign(repeat=0, end_ns=df["start_ns"] + df["duration_ns"])
    api_trace = schema.conform(df, schema.API_TRACE, fill=("thread", "correlation_id"))
    api = activities.api_calls(api_trace)
    schema.validate(api, schema.API_CALLS)
    assert list(api["name"]) == ["cudaMemcpy", "cudaLaunchKernel", "cudaMalloc"]
    assert list(api["calls"]) == [1, 2, 1] and list(api["total_ns"]) == [40, 20, 100]
    assert list(api["time_pct"]) == pytest.approx([40 / 60 * 100, 20 / 60 * 100, 100])
    assert list(api["min_ns"]) == [40, 5, 100] and list(api["avg_ns"]) == [40.0, 10.0, 100.0]


def test_ranges():
    rows = [
        {
            "stage": "s",
            "name": "conv1",
            "level": 1,
            "start_ns": 0,
            "duration_ns": 100,
            "gpu_start_ns": 10,
            "gpu_end_ns": 60,
            "gpu_ops": 2,
        },
        {
            "stage": "s",
            "name": "conv1",
            "level": 1,
            "start_ns": 200,
            "duration_ns": 50,
            "gpu_start_ns": 210,
            "gpu_end_ns": 230,
            "gpu_ops": 1,
        },
        {
            "stage": "s",
            "name": "host_only",
            "level": 1,
            "start_ns": 300,
            "duration_ns": 500,
            "gpu_start_ns": pd.NA,
            "gpu_end_ns": pd.NA,
            "gpu_ops": pd.NA,
        },
    ]
    df = pd.DataFrame(rows)
    df = df.assign(repeat=0, end_ns=df["start_ns"] + df["duration_ns"])
    rt = schema.conform(df, schema.RANGE_TRACE, fill=("thread",))
    out = activities.ranges(rt)
    schema.validate(out, schema.RANGES)
    assert list(out["name"]) == ["host_only", "conv1"]
    conv = out.iloc[1]
    assert (conv["calls"], conv["total_ns"], conv["min_ns"], conv["max_ns"]) == (2, 150, 50, 100)
    assert (conv["gpu_total_ns"], conv["gpu_ops"]) == (70, 3)
    assert pd.isna(out.iloc[0]["gpu_total_ns"]) and pd.isna(out.iloc[0]["gpu_ops"])


def test_empty_inputs_give_empty_tables():
    assert (
        list(activities.gpu_activities(schema.empty(schema.GPU_TRACE)).columns)
        == schema.GPU_ACTIVITIES.names
    )
    assert activities.api_calls(schema.empty(schema.API_TRACE)).empty
    assert activities.ranges(schema.empty(schema.RANGE_TRACE)).empty


API_FOLDERS = [f for f in FOLDERS if any((NSYS / f).glob("*cuda_api_trace.csv"))]


@pytest.mark.parametrize("folder", API_FOLDERS)
def test_api_calls_and_ranges_reproduce_nsys_summaries(folder):
    tables = nsys_csv.read_stats_dir(NSYS / folder, folder)
    api = activities.api_calls(tables["api_trace"]).set_index("name")
    src = report(folder, "cuda_api_sum")
    assert sorted(api.index) == sorted(r["Name"] for r in src)
    for r in src:
        got = api.loc[r["Name"]]
        assert got["total_ns"] == int(r["Total Time (ns)"]) and got["calls"] == int(r["Num Calls"])
        assert got["min_ns"] == int(r["Min (ns)"]) and got["max_ns"] == int(r["Max (ns)"])
    ranges = activities.ranges(tables["range_trace"]).set_index("name")
    for r in report(folder, "nvtx_gpu_proj_sum"):
        got = ranges.loc[r["Range"].removeprefix("profgen:")]
        assert got["calls"] == int(r["Range Instances"])
        assert got["total_ns"] == int(r["Total Range Time (ns)"])
        assert got["gpu_total_ns"] == int(r["Total Proj Time (ns)"])
        assert got["gpu_ops"] == int(r["Total GPU Ops"])
