"""analyze.attribution on hand-built traces (nesting, repeats, threads, boundaries) and on the
captured LeNet traces, whose projection must match what Nsight Systems reported."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from profiler import schema
from profiler.analyze.attribution import attribute
from profiler.parse import cupti as P

DATA = Path(__file__).parent / "data"


def ranges(rows):
    """rows: (name, level, start, end, thread)"""
    df = pd.DataFrame(rows, columns=["name", "level", "start_ns", "end_ns", "thread"])
    df["stage"], df["repeat"] = "s", -1
    df["duration_ns"] = df["end_ns"] - df["start_ns"]
    return schema.conform(df, schema.RANGE_TRACE, fill=("gpu_start_ns", "gpu_end_ns", "gpu_ops"))


def api(rows):
    """rows: (correlation_id, start, thread)"""
    df = pd.DataFrame(rows, columns=["correlation_id", "start_ns", "thread"])
    df["stage"], df["repeat"], df["name"] = "s", -1, "cuLaunchKernel"
    df["end_ns"] = df["start_ns"] + 5
    df["duration_ns"] = 5
    return schema.conform(df, schema.API_TRACE)


def gpu(rows):
    """rows: (correlation_id, start, end)"""
    df = pd.DataFrame(rows, columns=["correlation_id", "start_ns", "end_ns"])
    df["stage"], df["repeat"], df["kind"], df["name"] = "s", -1, "kernel", "k"
    df["duration_ns"] = df["end_ns"] - df["start_ns"]
    return schema.conform(df, schema.GPU_TRACE, fill=[c.name for c in schema.GPU_TRACE.columns])


# two repeats of m:s on thread 1; phase a holds inner b; a call at every interesting instant
RANGES = ranges(
    [
        ("m:s", 0, 100, 200, 1),
        ("a", 1, 110, 150, 1),
        ("b", 2, 120, 130, 1),
        ("c", 1, 150, 190, 1),
        ("m:s", 0, 300, 400, 1),
        ("a", 1, 310, 390, 1),
        ("other", 0, 100, 400, 2),  # a range of another thread, covering everything
    ]
)


def test_innermost_range_and_repeat_by_call_time():
    calls = api(
        [
            (1, 115, 1),
            (2, 125, 1),
            (3, 130, 1),
            (4, 150, 1),
            (5, 199, 1),
            (6, 200, 1),
            (7, 50, 1),
            (8, 320, 1),
            (9, 125, 2),
            (10, 185, 1),
        ]
    )
    ops = gpu([(c, 1000 + 10 * c, 1005 + 10 * c) for c in range(1, 11)])
    g, r = attribute(ops, calls, RANGES, stage_range="m:s")
    got = dict(
        zip(
            g["correlation_id"],
            zip(g["range"].fillna("-"), g["repeat"], strict=False),
            strict=False,
        )
    )
    assert got == {
        1: ("a", 0),  # inside a, outside b
        2: ("b", 0),  # inside b, nested in a
        3: ("a", 0),  # at b's end: b is closed (end excluded)
        4: ("c", 0),  # a ends and c starts at 150: c
        5: ("m:s", 0),  # after c closed at 190: only the stage range is open
        6: ("-", -1),  # at the stage range's end: outside everything on thread 1
        7: ("-", -1),  # before any range
        8: ("a", 1),  # second repeat
        9: ("other", 0),  # thread 2's own range, repeat by time
        10: ("c", 0),
    }


def test_gpu_time_does_not_matter_only_the_call():
    calls = api([(1, 115, 1)])
    ops = gpu([(1, 10_000, 10_500)])  # the op runs long after every range closed
    g, r = attribute(ops, calls, RANGES, stage_range="m:s")
    assert g["range"][0] == "a" and g["repeat"][0] == 0


def test_projection_includes_nested_ranges():
    calls = api([(1, 115, 1), (2, 125, 1), (3, 160, 1), (4, 320, 1)])
    ops = gpu([(1, 1000, 1100), (2, 1200, 1250), (3, 1300, 1400), (4, 2000, 2100)])
    _, r = attribute(ops, calls, RANGES, stage_range="m:s")
    by = {(n, s): row for n, s, row in zip(r["name"], r["start_ns"], r.itertuples(), strict=False)}
    top = by[("m:s", 100)]
    assert (top.gpu_start_ns, top.gpu_end_ns, top.gpu_ops) == (1000, 1400, 3)
    a = by[("a", 110)]
    assert (a.gpu_start_ns, a.gpu_end_ns, a.gpu_ops) == (1000, 1250, 2)  # its own op and b's
    b = by[("b", 120)]
    assert (b.gpu_start_ns, b.gpu_end_ns, b.gpu_ops) == (1200, 1250, 1)
    assert by[("m:s", 300)].gpu_ops == 1 and by[("a", 310)].gpu_ops == 1
    other = by[("other", 100)]
    assert other.gpu_ops == 0 and pd.isna(other.gpu_start_ns)
    assert list(r["repeat"]) == [0, 0, 0, 0, 1, 1, 0]  # ranges by their start; "other" starts in 0


def test_ops_without_an_api_call_are_not_attributed():
    calls = api([(1, 115, 1)])
    ops = gpu([(1, 1000, 1100), (2, 1200, 1300)])
    ops.loc[1, "correlation_id"] = pd.NA
    ops2 = gpu([(1, 1000, 1100), (99, 1200, 1300)])
    for frame in (ops, ops2):
        g, r = attribute(frame, calls, RANGES, stage_range="m:s")
        assert list(g["range"].fillna("-")) == ["a", "-"] and list(g["repeat"]) == [0, -1]
        assert r.loc[r["name"] == "m:s", "gpu_ops"].tolist() == [1, 0]


def test_duplicate_correlation_ids_take_the_earliest_call():
    calls = api([(1, 160, 1), (1, 115, 1)])  # e.g. a runtime call and the driver call inside it
    g, _ = attribute(gpu([(1, 1000, 1100)]), calls, RANGES)
    assert g["range"][0] == "a"


def test_without_stage_range_every_level0_range_is_a_repeat():
    calls = api([(1, 320, 1)])
    g, r = attribute(gpu([(1, 1000, 1100)]), calls, RANGES)
    # level-0 ranges in start order: m:s@100, other@100, m:s@300 -> the call falls in "m:s"@300 = 2
    assert g["repeat"][0] == 2


def test_ranges_without_threads_match_by_time_only():
    rng = RANGES[RANGES["thread"] == 1].copy()
    rng["thread"] = pd.array([pd.NA] * len(rng), dtype="Int64")
    calls = api([(1, 125, 77)])  # any thread
    g, _ = attribute(gpu([(1, 1000, 1100)]), calls, rng, stage_range="m:s")
    assert g["range"][0] == "b" and g["repeat"][0] == 0


def test_same_instant_push_order():
    rng = ranges(
        [
            ("m:s", 0, 100, 200, 1),
            ("p", 1, 100, 150, 1),
            ("q", 2, 100, 120, 1),
            ("r", 1, 150, 200, 1),
        ]
    )
    calls = api([(1, 100, 1), (2, 120, 1), (3, 150, 1)])
    g, _ = attribute(gpu([(1, 1, 2), (2, 3, 4), (3, 5, 6)]), calls, rng)
    assert list(g["range"]) == ["q", "p", "r"]  # innermost at a shared start; closed at the end


def test_empty_inputs():
    g, r = attribute(gpu([]), api([]), ranges([]))
    assert g.empty and r.empty
    g, r = attribute(gpu([(1, 1, 2)]), api([(1, 0, 1)]), ranges([]))
    assert g["range"].isna().all() and list(g["repeat"]) == [-1]


@pytest.mark.parametrize("stage", ["no_sync", "overlap_fusion"])
def test_real_trace_matches_nsys_projection(stage):
    """Op counts per range (and per range instance) equal nsys's nvtx_gpu_proj_trace for the same
    stage, profiled in another process."""
    g, api_t, rng = P.read_traces(DATA / "cupti" / "13.0.1" / f"lenet-{stage}.npz", stage)
    g, rng = attribute(g, api_t, rng, stage_range=f"lenet:{stage}")
    nsys = pd.read_csv(
        DATA / "nsys" / "2025.3.1" / f"lenet-{stage}" / "nsys_nvtx_gpu_proj_trace.csv"
    )
    nsys["name"] = nsys["Name"].str.removeprefix("profgen:")
    ours = rng[rng["gpu_ops"] > 0].groupby(["name", "level"])["gpu_ops"].apply(list).to_dict()
    theirs = nsys.groupby(["name", "Lvl"])["NumGPUOps"].apply(list).to_dict()
    assert ours == theirs
    assert sorted(g["repeat"].unique()) == [0, 1, 2] and g["range"].notna().all()
    assert (rng["gpu_end_ns"] >= rng["gpu_start_ns"]).fillna(True).all()
