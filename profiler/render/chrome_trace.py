"""A stage's trace in Chrome's trace-event format, so it opens in Perfetto or chrome://tracing.

`chrome_trace` is pure (tables in, a JSON-ready dict out); `write_traces` writes one
`<raw>/<stage>/trace.json` per stage that has a GPU trace. Timestamps are microseconds since the
stage's first event (floats keep nanosecond precision that way; absolute CUPTI timestamps would
not fit a double's mantissa in microseconds).

Processes and threads: "GPU <device>" with one thread per stream, plus a thread for the NVTX
ranges projected onto the GPU; "CPU" with a thread per OS thread for the runtime API calls and
the NVTX ranges as pushed and popped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from profiler import files
from profiler.render.escape import clip
from profiler.store import Run

CPU_PID = 0
GPU_PID_BASE = 1  # GPU device d is process GPU_PID_BASE + d
NVTX_GPU_TID = 1_000_000_000  # the lane of projected ranges inside a GPU process
_GPU_ARGS = ("repeat", "range", "bytes", "correlation_id", "grid", "block")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def _meta(kind: str, pid: int, name: str, tid: int | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"name": kind, "ph": "M", "pid": pid, "args": {"name": name}}
    if tid is not None:
        event["tid"] = tid
    return event


def _int_or(series: pd.Series, default: int) -> np.ndarray:
    return series.astype("Int64").fillna(default).to_numpy(np.int64)


def _complete(
    names: pd.Series,
    cats: Any,
    start: np.ndarray,
    dur: np.ndarray,
    pids: np.ndarray,
    tids: np.ndarray,
    args: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    cat_list = list(cats) if not isinstance(cats, str) else [cats] * len(names)
    return [
        {
            "name": n,
            "cat": c,
            "ph": "X",
            "ts": s / 1e3,
            "dur": d / 1e3,
            "pid": int(p),
            "tid": int(t),
            "args": a,
        }
        for n, c, s, d, p, t, a in zip(
            _clipped(names), cat_list, start, dur, pids, tids, args, strict=True
        )
    ]


def _clipped(names: pd.Series) -> list[str]:
    """Names as strings of at most `escape.NAME_LIMIT` characters (each distinct name once)."""
    text = names.astype(str)
    short = {n: clip(n) for n in text.unique()}
    return [short[n] for n in text]


def _gpu_events(ops: pd.DataFrame, origin: int) -> list[dict[str, Any]]:
    pids = GPU_PID_BASE + _int_or(ops["device"], 0)
    tids = _int_or(ops["stream"], 0)
    args = [
        {k: v for k, v in zip(_GPU_ARGS, row, strict=True) if v is not None}
        for row in zip(  # noqa: B905 - columns of one frame
            ops["repeat"].astype(int).tolist(),
            [
                None if r is None else clip(r)
                for r in ops["range"].astype(object).where(ops["range"].notna(), None).tolist()
            ],
            ops["bytes"].astype(object).where(ops["bytes"].notna(), None).tolist(),
            ops["correlation_id"]
            .astype(object)
            .where(ops["correlation_id"].notna(), None)
            .tolist(),
            _dims(ops, "grid"),
            _dims(ops, "block"),
        )
    ]
    start = ops["start_ns"].to_numpy(np.int64) - origin
    events = _complete(
        ops["name"],
        ops["kind"].astype(str),
        start,
        ops["duration_ns"].to_numpy(np.int64),
        pids,
        tids,
        args,
    )
    meta = [_meta("process_name", int(p), f"GPU {int(p) - GPU_PID_BASE}") for p in np.unique(pids)]
    meta += [
        _meta("thread_name", int(p), f"stream {int(t)}", int(t))
        for p, t in sorted(set(zip(pids.tolist(), tids.tolist(), strict=True)))
    ]
    return meta + events


def _dims(ops: pd.DataFrame, prefix: str) -> list[str | None]:
    cols = [ops[f"{prefix}_{axis}"].astype(object).tolist() for axis in "xyz"]
    triples = zip(*cols, strict=True)
    return [None if x is pd.NA or x is None else f"{x},{y},{z}" for x, y, z in triples]


def _api_events(api: pd.DataFrame, origin: int) -> list[dict[str, Any]]:
    tids = _int_or(api["thread"], 0)
    args = [
        {"correlation_id": c} if c is not None else {}
        for c in api["correlation_id"].astype(object).where(api["correlation_id"].notna(), None)
    ]
    start = api["start_ns"].to_numpy(np.int64) - origin
    events = _complete(
        api["name"],
        "cuda_api",
        start,
        api["duration_ns"].to_numpy(np.int64),
        np.full(len(api), CPU_PID),
        tids,
        args,
    )
    return events + [_meta("thread_name", CPU_PID, f"thread {t}", int(t)) for t in np.unique(tids)]


def _range_events(ranges: pd.DataFrame, origin: int) -> list[dict[str, Any]]:
    cpu_tids = _int_or(ranges["thread"], 0)
    args = [
        {"level": int(lv), "gpu_ops": None if g is pd.NA else int(g)}
        for lv, g in zip(ranges["level"], ranges["gpu_ops"].astype(object), strict=True)
    ]
    start = ranges["start_ns"].to_numpy(np.int64) - origin
    events = _complete(
        ranges["name"],
        "nvtx",
        start,
        ranges["duration_ns"].to_numpy(np.int64),
        np.full(len(ranges), CPU_PID),
        cpu_tids,
        args,
    )
    projected = ranges[ranges["gpu_start_ns"].notna() & ranges["gpu_end_ns"].notna()]
    gstart = projected["gpu_start_ns"].to_numpy(np.int64)
    gdur = projected["gpu_end_ns"].to_numpy(np.int64) - gstart
    events += _complete(
        projected["name"],
        "nvtx_gpu",
        gstart - origin,
        gdur,
        np.full(len(projected), GPU_PID_BASE),
        np.full(len(projected), NVTX_GPU_TID),
        [{"level": int(lv)} for lv in projected["level"]],
    )
    if len(projected):
        events.append(
            _meta("thread_name", GPU_PID_BASE, "NVTX ranges (GPU projection)", NVTX_GPU_TID)
        )
    return events + [
        _meta("thread_name", CPU_PID, f"thread {t}", int(t)) for t in np.unique(cpu_tids)
    ]


def chrome_trace(
    gpu_trace: pd.DataFrame,
    api_trace: pd.DataFrame,
    range_trace: pd.DataFrame,
    stage: str,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One stage's GPU activities, API calls and NVTX ranges as a Chrome trace-event document.

    Args:
        gpu_trace, api_trace, range_trace: tables with `schema.GPU_TRACE`, `schema.API_TRACE`
            and `schema.RANGE_TRACE` columns (other stages' rows are ignored).
        stage: the stage key.
        meta: extra fields for `otherData` (model, GPU...).

    Returns: `{"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}`.
    """
    ops = gpu_trace[gpu_trace["stage"] == stage]
    api = api_trace[api_trace["stage"] == stage]
    ranges = range_trace[range_trace["stage"] == stage]
    starts = [int(t["start_ns"].min()) for t in (ops, api, ranges) if len(t)]
    origin = min(starts) if starts else 0
    events = [_meta("process_name", CPU_PID, "CPU")] if len(api) or len(ranges) else []
    events += _gpu_events(ops, origin) + _api_events(api, origin) + _range_events(ranges, origin)
    other = {"stage": stage, "origin_ns": origin, "clock": "profiler clock, ns", **(meta or {})}
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": other}


def stage_dir(stage: str) -> str:
    """A stage key as one safe path component: characters other than letters, digits, `_`, `-`
    and `.` become `_`, and so does a leading dot (no `..`, no hidden name, no `/`)."""
    name = _UNSAFE.sub("_", clip(stage, 128))
    return "_" + name[1:] if name.startswith(".") or not name else name


def write_traces(run: Run, raw: str | Path) -> list[Path]:
    """Write `<raw>/<stage>/trace.json` for every stage of `run` that has a GPU trace (the
    stage's directory named by `stage_dir`), through `profiler.files`.

    Returns: the paths written, in stage order.
    Raises: UsageError when a target exists as anything but a regular file; OutputError when
        the disk refuses.
    """
    gpu, api, ranges = run.table("gpu_trace"), run.table("api_trace"), run.table("range_trace")
    info = {k: run.meta.get(k) for k in ("model", "created") if run.meta.get(k) is not None}
    written = []
    for stage in gpu["stage"].dropna().unique():
        path = Path(raw) / stage_dir(str(stage)) / "trace.json"
        doc = chrome_trace(gpu, api, ranges, str(stage), info)
        files.write_text(path, json.dumps(doc, separators=(",", ":")), what="Chrome trace")
        written.append(path)
    return written
