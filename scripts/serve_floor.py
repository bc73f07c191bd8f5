#!/usr/bin/env python3
"""How small can a polling server's own overhead be at concurrency 1? The least host time that
one LeNet request served in place costs around its device span, with no server loop at all.

`profgen serve` charges a request's overhead as its latency minus its queueing minus its
batch's device span (first event to last). At C=1, single images, uint8_input in place, that is
9-13 us of a 37-45 us p50 (reports/sample-serve-lenet-h100). This script times the batch's own
CUDA calls in a bare loop, the way the in-place engine issues them, through the same CuPy
bindings, with nothing else in between:

- `events`: record the start event, record the end event, spin on the end event's query;
- `graph`: record, launch the captured one-image graph, record, spin (the engine's batch);
- `graph, blocking wait`: the same, waiting in cudaEventSynchronize instead of spinning;
- `kernel`: record, the stage's own launch (no graph), record, spin.

Per call: wall = host ns from before the first record to the query that saw the end event;
span = the two events' elapsed time; overhead = wall - span, the part no server loop can avoid
when it drives the GPU from the host a batch at a time (the submission's way to the GPU and the
completion's way back). Median and 10th/90th percentile of --calls calls per way, in rounds.

    python3 scripts/serve_floor.py [--calls 2000] [--rounds 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from variants.cuda import memory  # noqa: E402
from variants.lenet.study import STUDY  # noqa: E402


def one_image_lane(stage):
    """The stage bound to a 1,024-image page-locked pool, one row (row 0) and its output."""
    pool = stage.host_input(STUDY.make_inputs(1024, None))
    rows = memory.pinned_empty((1,), np.int32)
    rows[:] = 0
    out = memory.pinned_empty((1, 10))
    stage.bind_rows(pool, rows, out)
    return out


def ways(stage, stream, graph):
    from cupy.cuda import runtime

    record, query, wait = runtime.eventRecord, runtime.eventQuery, runtime.eventSynchronize

    def spin(ev_end):
        while query(ev_end) != 0:
            pass

    return {
        "events": lambda a, b: (record(a, stream.ptr), record(b, stream.ptr), spin(b)),
        "graph": lambda a, b: (
            record(a, stream.ptr),
            graph.launch(stream),
            record(b, stream.ptr),
            spin(b),
        ),
        "graph, blocking wait": lambda a, b: (
            record(a, stream.ptr),
            graph.launch(stream),
            record(b, stream.ptr),
            wait(b),
        ),
        "kernel": lambda a, b: (
            record(a, stream.ptr),
            stage.enqueue_rows(1, stream),
            record(b, stream.ptr),
            spin(b),
        ),
    }


def timed(fn, start, end, calls: int) -> tuple[list[int], list[int]]:
    from cupy.cuda import runtime

    walls, spans = [], []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        fn(start.ptr, end.ptr)
        walls.append(time.perf_counter_ns() - t0)
        spans.append(int(runtime.eventElapsedTime(start.ptr, end.ptr) * 1e6))
    return walls, spans


def pct(values: list[int], q: float) -> float:
    return float(np.percentile(values, q)) / 1e3


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--stage", default="uint8_input")
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=4)
    args = p.parse_args()
    import cupy

    spec = STUDY.get(args.stage)
    stage, model = spec.build(), STUDY.load_model(None)
    stage.prepare(model, 1024)
    out = one_image_lane(stage)
    stream = cupy.cuda.Stream(non_blocking=True)
    stage.enqueue_rows(1, stream)  # warm-up, then one image captured
    stream.synchronize()
    stream.begin_capture()
    stage.enqueue_rows(1, stream)
    graph = stream.end_capture()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    calls = ways(stage, stream, graph)
    samples: dict[str, tuple[list[int], list[int]]] = {name: ([], []) for name in calls}
    for _ in range(args.rounds):
        for name, fn in calls.items():
            walls, spans = timed(fn, start, end, args.calls // args.rounds)
            samples[name][0].extend(walls)
            samples[name][1].extend(spans)
    assert np.isfinite(out).all()
    print(
        f"\n{args.stage}, one image read in place, {args.calls} calls a way, us: "
        "median (10th-90th percentile)"
    )
    print(f"{'way':<22}{'wall':>22}{'span':>22}{'overhead':>22}")
    for name, (walls, spans) in samples.items():
        over = [w - s for w, s in zip(walls, spans, strict=True)]
        cells = [
            f"{statistics.median(v) / 1e3:6.1f} ({pct(v, 10):5.1f}-{pct(v, 90):5.1f})"
            for v in (walls, spans, over)
        ]
        print(f"{name:<22}" + "".join(f"{c:>22}" for c in cells))
    stage.release()
    return 0


if __name__ == "__main__":
    sys.exit(main())
