"""The parent side of `profgen serve`: the load points of a sweep, and the worker process that
serves them (`profiler.collect.serve.worker`), run like a stage's worker: its own process group,
its progress forwarded, a time limit, and how it ended judged in one line."""

from __future__ import annotations

import itertools
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profiler import schema
from profiler.collect.process import EventSink, run_child


@dataclass(frozen=True)
class ServeJob:
    """What to serve and under which loads (see `points`)."""

    study_ref: str
    stage: str
    concurrency: tuple[int, ...]
    rates: tuple[float, ...]
    request_items: int
    max_batch: tuple[int, ...]
    max_wait_us: tuple[float, ...]
    streams: tuple[int, ...]
    graphs: tuple[bool, ...]
    warmup_s: float
    duration_s: float
    engine: str = "stage"
    pool_items: int = 1024
    check_every: int = 64
    data: Path | None = None
    timeout_s: float = 600.0


def point_label(p: dict[str, Any]) -> str:
    load = f"c{p['concurrency']}" if p["mode"] == "closed" else f"r{p['rate_rps']:g}"
    graphs = "-graphs" if p["graphs"] else ""
    return f"{load}-b{p['max_batch']}-w{p['max_wait_us']:g}us-s{p['streams']}{graphs}"


def points(job: ServeJob) -> list[dict[str, Any]]:
    """Every load point: each engine configuration (B x T x S x graphs) under each closed-loop
    concurrency, then each open-loop rate."""
    out = []
    for b, t, s, g in itertools.product(job.max_batch, job.max_wait_us, job.streams, job.graphs):
        base = {
            "request_items": job.request_items,
            "max_batch": b,
            "max_wait_us": t,
            "streams": s,
            "graphs": g,
            "warmup_s": job.warmup_s,
            "duration_s": job.duration_s,
        }
        loads = [{"mode": "closed", "concurrency": c} for c in job.concurrency]
        loads += [{"mode": "open", "rate_rps": r, "concurrency": None} for r in job.rates]
        for seed, load in enumerate(loads):
            p = base | load | {"seed": seed}
            out.append(p | {"label": point_label(p)})
    return out


def serve_cmd(job: ServeJob, raw: Path) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "profiler.collect.serve.worker",
        f"--study={job.study_ref}",
        f"--stage={job.stage}",
        f"--points={raw / 'points.json'}",
        f"--pool-items={job.pool_items}",
        f"--check-every={job.check_every}",
        f"--engine={job.engine}",
        f"--out={raw}",
        f"--result={raw / 'result.json'}",
        f"--timeout={job.timeout_s:g}",
    ]
    return cmd + ([f"--data={job.data}"] if job.data else [])


def collect_serving(job: ServeJob, raw: Path, emit: EventSink) -> dict[str, Any]:
    """Run the worker over every point; returns its result (status and reason always set; a
    crash or timeout becomes ERROR or TIMEOUT with the worker's own last words)."""
    raw.mkdir(parents=True, exist_ok=True)
    (raw / "points.json").write_text(json.dumps(points(job), indent=1))
    run = run_child(
        serve_cmd(job, raw),
        raw / "worker.log",
        raw / "result.json",
        job.timeout_s,
        job.timeout_s,
        emit,
    )
    result = run.result or {"points": [], "groups": [], "notes": []}
    if run.state == "timeout":
        result.update(status=schema.TIMEOUT, reason=run.reason)
    elif run.state == "crash":
        result.update(status=schema.ERROR, reason="serve worker " + run.reason)
    return result
