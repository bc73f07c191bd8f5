"""Serve ONE stage of a study in this process under a list of load points: `python -m
profiler.collect.serve.worker --study REF --stage KEY --points points.json --out DIR`. Only this
process imports the study. For each engine configuration (max batch, streams, graphs) it
prepares the engine once (not timed), measures the stage's offline throughput at that batch size
(its `infer` on full batches, as `profgen sweep --batch-sizes` does), then runs each load point
of that configuration (`profiler.collect.serve.loop.run_point`): warm-up, then the fixed
duration, then the queue drained, with Python's garbage collector paused (as a latency-tuned
server would run it; the loop allocates little). One answer in `--check-every` is kept under
load (the loop hands over each batch's answers; the requests whose id is a multiple of
`--check-every` are copied, a fixed cost a batch) and checked against the study's reference
afterwards (checking inside the loop would add its own time to the latencies of the requests
behind it). Each point's records go to
`<out>/<label>.npz`; the points' facts to `--result` (JSON, atomically).
"""

from __future__ import annotations

import argparse
import faulthandler
import gc
import json
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from profiler import schema
from profiler.collect.harness import emit
from profiler.collect.serve.engines import (
    EngineOptions,
    InferEngine,
    RowsEngine,
    StreamEngine,
    rows_support,
    stream_support,
)
from profiler.collect.serve.loop import Batching, Load, Server, run_point
from profiler.collect.worker import reference_input, write_json
from profiler.errors import UsageError

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
    raw = study.make_inputs(max(args.pool_items, r_max), args.data)
    pool, ref_x = stage_inputs(spec.build(), raw)
    if ref_x is not raw:
        result["notes"].append(
            "answers checked against the reference computed on the input as the stage's own "
            "input format holds it (reference_input)"
        )
    emit("reference")
    ref = cached_reference(study, model, ref_x, log=lambda line: print(line, flush=True))
    rule = study.compare_for(spec)
    failures: list[str] = []
    for key, group in _groups(points).items():
        opts = EngineOptions(*key)
        engine, notes = build_engine(spec, runtime, model, pool, opts)
        try:
            offline = offline_throughput(spec, model, raw, opts.max_batch, runtime)
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


def stage_inputs(stage: Any, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pool the clients send, as the stage keeps its input (`host_input`: the uint8 bytes
    of an IDX file for uint8_input, page-locked memory for the pinned stages), and the input
    its answers are checked against (`reference_input`: the dequantised images for uint8)."""
    host_input = getattr(stage, "host_input", None)
    pool = np.asarray(host_input(x)) if callable(host_input) else x
    return pool, reference_input(stage, x)


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
    honour. A stage that reads the requests in place where they lie in the pool (the rows
    protocol) serves so; else a stage with the stream protocol serves through staging and
    copies; else the stage serves on one lane, without graphs."""
    from profiler.collect.serve.devices import DEVICES

    probe = spec.build()
    why = stream_support(probe, spec.runtime)
    if why is None:
        stages = [probe] + [spec.build() for _ in range(opts.streams - 1)]
        for stage in stages:
            _prepare(stage, model, opts.max_batch)
        device = DEVICES[spec.runtime]()
        if rows_support(probe) is None:
            try:
                return RowsEngine(stages, device, pool, opts), []
            except UsageError as exc:
                note = f"{spec.key} serves through staging and copies, not in place: {exc}"
                return StreamEngine(stages, device, pool, opts), [note]
        return StreamEngine(stages, device, pool, opts), []
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
    sample = AnswerSample(args.check_every)
    gc.collect()
    gc.disable()  # a collection pausing the loop is the interpreter's, not the server's design
    try:
        window = run_point(server, load, sample)
    finally:
        gc.enable()
    r = load.request_items
    failures = [
        f"answer for items {item}..{item + r - 1}: {verdict.reason}"
        for item, out in sample.kept()
        if not (verdict := rule.check(out, ref[item : item + r])).passed
    ]
    np.savez_compressed(args.out / f"{point['label']}.npz", **server.records.arrays())  # type: ignore[arg-type]
    return point | {
        "window": {
            "start_ns": window.start,
            "measure_ns": window.measure,
            "end_ns": window.end,
            "stopped_ns": window.stopped,
        },
        "checked": sample.count,
        "failures": failures,
        "file": f"{point['label']}.npz",
    }


class AnswerSample:
    """The loop's check (`profiler.collect.serve.loop.Check`): keeps a copy of the answers of
    the requests whose id is a multiple of `every`, one in that many whatever the batch sizes,
    for checking after the point. Per batch: one arange and two fancy-indexed copies."""

    def __init__(self, every: int):
        self.every = max(int(every), 1)
        self.items: list[np.ndarray] = []
        self.answers: list[np.ndarray] = []
        self.count = 0

    def __call__(self, first: int, items: np.ndarray, answers: np.ndarray) -> None:
        start = -first % self.every
        if start < len(items):
            ks = np.arange(start, len(items), self.every)
            self.items.append(items[ks])
            self.answers.append(answers[ks])  # fancy indexing: copies, the lane's buffer is reused
            self.count += len(ks)

    def kept(self) -> Iterator[tuple[int, np.ndarray]]:
        """(first item, answer) of every kept request."""
        for items, answers in zip(self.items, self.answers, strict=True):
            yield from zip(items.tolist(), answers, strict=True)


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
