"""A Chrome/Perfetto trace of one second of a serving point: each lane's stream with its
batches' H2D, compute and D2H (CUDA events on the host clock), and the server loop's host side
(each batch from leaving the queue to the host seeing it done). Open it in ui.perfetto.dev.

`serve_trace` is pure (records in, a JSON-ready dict out); `write_best_trace` picks the point
(the best under the objective, else the good point with the most throughput) and writes
`raw/serve/trace-<point>.json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from profiler import files, schema
from profiler.store import Run

WINDOW_NS = 1_000_000_000
HOST_PID, GPU_PID = 0, 1


def serve_trace(
    arrays: Mapping[str, np.ndarray], start_ns: int, span_ns: int = WINDOW_NS
) -> dict[str, Any]:
    """Trace events of the batches dispatched in [start_ns, start_ns + span_ns)."""
    end = start_ns + span_ns
    keep = (arrays["batch_dispatch_ns"] >= start_ns) & (arrays["batch_dispatch_ns"] < end)
    lanes = sorted({int(x) for x in arrays["batch_lane"][keep]})
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": HOST_PID, "args": {"name": "server (host)"}},
        {"name": "process_name", "ph": "M", "pid": GPU_PID, "args": {"name": "GPU"}},
        {"name": "thread_name", "ph": "M", "pid": HOST_PID, "tid": 0, "args": {"name": "batches"}},
    ]
    events += [
        {
            "name": "thread_name",
            "ph": "M",
            "pid": GPU_PID,
            "tid": ln,
            "args": {"name": f"stream {ln}"},
        }
        for ln in lanes
    ]

    def slice_(name: str, pid: int, tid: int, t0: int, t1: int, args: dict[str, Any]) -> None:
        if t0 >= 0 and t1 >= t0:
            events.append(
                {
                    "name": name,
                    "ph": "X",
                    "pid": pid,
                    "tid": tid,
                    "ts": (t0 - start_ns) / 1e3,
                    "dur": (t1 - t0) / 1e3,
                    "args": args,
                }
            )

    for i in np.flatnonzero(keep):
        lane, items = int(arrays["batch_lane"][i]), int(arrays["batch_items"][i])
        args = {"items": items, "lane": lane}
        slice_(
            f"batch of {items}",
            HOST_PID,
            0,
            int(arrays["batch_dispatch_ns"][i]),
            int(arrays["batch_done_ns"][i]),
            args,
        )
        marks = [int(arrays[f"batch_{k}_ns"][i]) for k in ("h2d", "compute", "d2h", "end")]
        for name, t0, t1 in zip(("H2D", "compute", "D2H"), marks, marks[1:], strict=False):
            slice_(name, GPU_PID, lane, t0, t1, args)
    return {"traceEvents": events, "displayTimeUnit": "ns"}


def trace_point(run: Run, slo_ns: float) -> str | None:
    """The point whose trace the report links: the best under the objective, else the good
    point with the most throughput."""
    from profiler.analyze import serving

    points = run.table(schema.SERVE_POINTS.name)
    if points.empty:
        return None
    best = serving.best_under_slo(points, slo_ns)
    if best is not None:
        return best
    ok = points[serving.good(points)]
    return str((ok if not ok.empty else points).sort_values("items_per_s")["point"].iloc[-1])


def trace_name(point: str) -> str:
    return f"trace-{point}.json"


def write_best_trace(run: Run, raw: Path, slo_ns: float) -> Path | None:
    """Write the trace of `trace_point`'s first measured second; returns its path (None: no
    point or no records)."""
    from profiler.parse.serve import read_point

    point = trace_point(run, slo_ns)
    serve = run.meta.get("serve") or {}
    facts = next((p for p in _points(raw) if p.get("label") == point), None)
    if point is None or facts is None or not serve:
        return None
    arrays = read_point(raw, facts)
    trace = serve_trace(arrays, int(facts["window"]["measure_ns"]))
    return files.write_text(raw / trace_name(point), json.dumps(trace))


def _points(raw: Path) -> list[dict[str, Any]]:
    try:
        result = json.loads((raw / "result.json").read_text())
    except (OSError, ValueError):
        return []
    return list(result.get("points", []))
