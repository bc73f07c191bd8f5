"""Serve ONE stage of a study in this process under a list of load points: `python -m
profiler.collect.serve.worker --study REF --stage KEY --points points.json --out DIR`. Only this
process imports the study. For each engine configuration (max batch, streams, graphs) it
prepares the engine once (not timed), measures the stage's offline throughput at that batch size
(its `infer` on full batches, as `profgen sweep --batch-sizes` does), then runs each load point
of that configuration (`profiler.collect.serve.loop.run_point`): warm-up, then the fixed
duration, then the queue drained, with Python's garbage collector paused (as a latency-tuned
server would run it; the loop allocates little). One answer in `--check-every` is kept under
load and checked against the study's reference afterwards (checking inside the loop would add
its own time to the latencies of the requests behind it). Each point's records go to
`<out>/<label>.npz`; the points' facts to `--result` (JSON, atomically).
"""

from __future__ import annotations

import argparse
import faulthandler
import gc
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from profiler import schema
from profiler.collect.harness import emit
from profiler.collect.serve.engines import EngineOptions, InferEngine, StreamEngine, stream_support
from profiler.collect.serve.loop import Batching, Load, Server, run_point
from profiler.collect.worker import write_json

OFFLINE_S = 0.3  # seconds of full batches for the offline throughput


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m profiler.collect.serve.worker")
    p.add_argument("--study", required=True)
    p.add_argument("--stage", required=True)
    p.add_argument("--points", type=Path, required=True, help="JSON list of points")
    p.add_argument("--pool-items", type=int, default=1024)
    p.add_argument("--check-every", type=int, default=64)
    p.add_argument("--engine", default="stage", choices=("stage", "tensorrt"))
    p.add_argument("--data", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--result", type=Path, required=True)
    p.add_argument("--timeout", type=float, default=0.0)
    return p.parse_args(argv)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from profiler.collect import runtimes
    from profiler.collect.loading import load_study
    from profiler.collect.refcache import cached_reference

    emit("loading")
    study = load_study(args.study)
    spec = study.get(args.stage)
    result: dict[str, Any] = {
        "study": study.name,
        "stage": spec.key,
        "unit": study.unit,
        "title": spec.title,
        "runtime": spec.runtime,
        "points": [],
        "groups": [],
        "notes": [],
    }
    runtime = runtimes.adapter(spec.runtime)
    why = (
        _tensorrt_missing()
        if args.engine == "tensorrt"
        else runtime.missing() or runtimes.missing_needs(spec.needs) or _unavailable(spec.build())
    )
    if why:
        return result | {"status": schema.SKIPPED, "reason": why}
    model = study.load_model()
    points = json.loads(args.points.read_text())
    r_max = max(p["request_items"] for p in points)
    pool = study.make_inputs(max(args.pool_items, r_max), args.data)
    emit("reference")
    ref = cached_reference(study, model, pool, log=lambda line: print(line, flush=True))
    rule = study.compare_for(spec)
    failures: list[str] = []
    for key, group in _groups(points).items():
        opts = EngineOptions(*key)
        engine, notes = build_engine(spec, runtime, model, pool, opts)
        try:
            offline = offline_throughput(spec, model, pool, opts.max_batch, runtime)
            result["groups"].append(
                {
                    "key": list(key),
                    "engine": engine.kind,
                    "notes": notes,
                    "offline_items_per_s": offline,
                }
            )
            for point in group:
                emit(f"point {point['label']}")
                facts = serve_point(engine, point, pool, ref, rule, args)
                facts.update(engine=engine.kind, lanes=engine.lanes, offline_items_per_s=offline)
                result["points"].append(facts)
                failures += [f"{point['label']}: {f}" for f in facts["failures"][:1]]
        finally:
            engine.close()
    status = schema.FAIL if failures else schema.PASS
    return result | {"status": status, "reason": failures[0] if failures else ""}


def _groups(points: list[dict[str, Any]]) -> dict[tuple[int, int, bool, int], list[dict[str, Any]]]:
    out: dict[tuple[int, int, bool, int], list[dict[str, Any]]] = {}
    for p in points:
        key = (p["max_batch"], p["streams"], bool(p["graphs"]), p["request_items"])
        out.setdefault(key, []).append(p)
    return out


def build_engine(
    spec: Any, runtime: Any, model: Any, pool: np.ndarray, opts: EngineOptions
) -> tuple[Any, list[str]]:
    """The engine for `spec` under `opts`, its stages prepared; and notes on what it could not
    honour (a stage without the stream protocol serves on one lane, without graphs)."""
    from profiler.collect.serve.devices import DEVICES

    probe = spec.build()
    why = stream_support(probe, spec.runtime)
    if why is None:
        stages = [probe] + [spec.build() for _ in range(opts.streams - 1)]
        for stage in stages:
            _prepare(stage, model, opts.max_batch)
        return StreamEngine(stages, DEVICES[spec.runtime](), pool, opts), []
    _prepare(probe, model, opts.max_batch)
    notes = []
    if opts.streams > 1 or opts.graphs:
        notes.append(f"{spec.key} serves through its infer on one lane, without CUDA graphs: {why}")
    return InferEngine(probe, runtime, pool, opts.max_batch), notes


def offline_throughput(spec: Any, model: Any, pool: np.ndarray, batch: int, runtime: Any) -> float:
    """Items a second of the stage's `infer` on full batches of `batch` items (a fresh instance,
    host input as the stage keeps it), for about OFFLINE_S seconds after one warm-up call."""
    stage = spec.build()
    _prepare(stage, model, batch)
    try:
        x = np.resize(pool, (batch, *pool.shape[1:])).astype(pool.dtype, copy=False)
        host = stage.host_input(x) if hasattr(stage, "host_input") else x
        stage.infer(host)
        runtime.synchronize()
        calls, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < OFFLINE_S or calls < 3:
            stage.infer(host)
            calls += 1
        runtime.synchronize()
        return calls * batch / (time.perf_counter() - t0)
    finally:
        if hasattr(stage, "release"):
            stage.release()


def serve_point(
    engine: Any,
    point: dict[str, Any],
    pool: np.ndarray,
    ref: np.ndarray,
    rule: Any,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Run one load point and check its sampled answers; returns its facts (JSON-ready)."""
    load = Load(
        mode=point["mode"],
        concurrency=point.get("concurrency", 1),
        rate_rps=point.get("rate_rps", 0.0),
        request_items=point["request_items"],
        warmup_s=point["warmup_s"],
        duration_s=point["duration_s"],
        seed=point.get("seed", 0),
    )
    batching = Batching(point["max_batch"], int(point["max_wait_us"] * 1000))
    server = Server(engine, batching, pool, load.request_items, time.perf_counter_ns)
    engine.mark_reference(time.perf_counter_ns)
    kept: list[tuple[int, np.ndarray]] = []
    answered = 0

    def keep(item: int, outputs: np.ndarray) -> None:
        nonlocal answered
        if answered % args.check_every == 0:
            kept.append((item, np.array(outputs, copy=True)))
        answered += 1

    gc.collect()
    gc.disable()  # a collection pausing the loop is the interpreter's, not the server's design
    try:
        window = run_point(server, load, keep)
    finally:
        gc.enable()
    failures = []
    r = load.request_items
    for item, out in kept:
        verdict = rule.check(out, ref[item : item + r])
        if not verdict.passed:
            failures.append(f"answer for items {item}..{item + r - 1}: {verdict.reason}")
    np.savez_compressed(args.out / f"{point['label']}.npz", **server.records.arrays())  # type: ignore[arg-type]
    return point | {
        "window": {
            "start_ns": window.start,
            "measure_ns": window.measure,
            "end_ns": window.end,
            "stopped_ns": window.stopped,
        },
        "checked": len(kept),
        "failures": failures,
        "file": f"{point['label']}.npz",
    }


def _prepare(stage: Any, model: Any, batch: int) -> None:
    """`prepare` is optional for a class stage (see profiler.study.Stage)."""
    if callable(getattr(stage, "prepare", None)):
        stage.prepare(model, batch)


def _tensorrt_missing() -> str | None:
    try:
        import tensorrt  # noqa: F401
    except ImportError:
        return "the tensorrt Python package does not import here"
    return "a TensorRT engine is not built by this version of profgen serve"


def _unavailable(stage: Any) -> str | None:
    check = getattr(stage, "unavailable", None)
    return check() if callable(check) else None


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.timeout > 0:
        faulthandler.dump_traceback_later(args.timeout, exit=True)
    args.out.mkdir(parents=True, exist_ok=True)
    write_json(args.result, run(args))
    emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
