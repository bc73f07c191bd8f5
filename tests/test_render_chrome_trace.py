"""Chrome trace-event export of a stage's trace (opens in Perfetto)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from runfactory import build_run

from profiler import schema
from profiler.render import chrome_trace


def test_one_complete_event_per_operation_and_range() -> None:
    run = build_run()
    gpu, ranges = run.table("gpu_trace"), run.table("range_trace")
    doc = chrome_trace.chrome_trace(gpu, run.table("api_trace"), ranges, "overlap_fusion")
    events = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    ops = gpu[gpu["stage"] == "overlap_fusion"]
    own = ranges[ranges["stage"] == "overlap_fusion"]
    assert len(events) == len(ops) + 2 * len(own)  # ranges: as pushed (CPU) and projected (GPU)
    gpu_events = sorted(
        (e for e in events if e["cat"] in ("kernel", "memcpy")), key=lambda e: e["ts"]
    )
    assert gpu_events[0]["ts"] == 0.0  # relative to the stage's first event
    first = ops.sort_values("start_ns").iloc[0]
    assert gpu_events[0]["dur"] == first["duration_ns"] / 1e3
    assert gpu_events[0]["tid"] == 13 and gpu_events[0]["args"]["bytes"] == 4_194_000
    threads = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert {"stream 13", "stream 14", "NVTX ranges (GPU projection)"} <= threads
    assert doc["otherData"]["origin_ns"] == int(ops["start_ns"].min())
    json.dumps(doc)  # serialisable as it is


def test_api_calls_go_to_the_cpu_process() -> None:
    api = pd.DataFrame(
        {
            "stage": ["s"],
            "repeat": [0],
            "name": ["cudaLaunchKernel"],
            "start_ns": [1_000],
            "end_ns": [1_500],
            "duration_ns": [500],
            "thread": [446],
            "correlation_id": [7],
        }
    )
    api = schema.conform(api, schema.API_TRACE)
    doc = chrome_trace.chrome_trace(
        schema.empty(schema.GPU_TRACE), api, schema.empty(schema.RANGE_TRACE), "s"
    )
    (call,) = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert (call["pid"], call["tid"], call["ts"], call["dur"]) == (
        chrome_trace.CPU_PID,
        446,
        0.0,
        0.5,
    )
    assert call["args"] == {"correlation_id": 7}


def test_write_traces_writes_one_file_per_traced_stage(tmp_path: Path) -> None:
    paths = chrome_trace.write_traces(build_run(), tmp_path / "raw")
    assert [p.relative_to(tmp_path).as_posix() for p in paths] == [
        "raw/cuda_baseline/trace.json",
        "raw/overlap_fusion/trace.json",
    ]
    assert json.loads(paths[0].read_text())["otherData"]["stage"] == "cuda_baseline"
