#!/usr/bin/env python3
"""Where a served request's overhead goes at concurrency 1: the development tool behind the
serving loop's C=1 overhead (issue 13's 10% target).

Runs closed-loop C=1 points of a LeNet stage in-process, twice without and twice with CUDA
graphs, and prints per point the medians (us) of: the host's issue (dispatch to the last
operation queued), dispatch to the first event on the device, the device span, the last event
to the host noticing it, noticing to the reply, and the overhead
(latency - queueing - span, what the report shows). Device times are on the host clock through
one reference event, so the two middle columns carry its offset (a few us, same sign each).

    python3 scripts/serve_breakdown.py [--stage overlap_fusion] [--max-wait-us 50]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from profiler.collect.runtimes import adapter  # noqa: E402
from profiler.collect.serve import loop  # noqa: E402
from profiler.collect.serve.engines import EngineOptions  # noqa: E402
from profiler.collect.serve.worker import build_engine  # noqa: E402
from variants.lenet.study import STUDY  # noqa: E402


def breakdown(arrays: dict) -> dict[str, float]:
    b = {k[6:]: v.astype(np.float64) for k, v in arrays.items() if k.startswith("batch_")}
    r = {k[8:]: v.astype(np.float64) for k, v in arrays.items() if k.startswith("request_")}
    keep = slice(len(b["lane"]) // 10, None)  # the first tenth is warm-up
    span = b["end_ns"] - b["h2d_ns"]
    latency = r["reply_ns"] - r["sched_ns"]
    queue = r["dispatch_ns"] - r["sched_ns"]
    cols = {
        "issue": b["launched_ns"] - b["dispatch_ns"],
        "to ev0": b["h2d_ns"] - b["dispatch_ns"],
        "span": span,
        "notice": b["done_ns"] - b["end_ns"],
        "reply": r["reply_ns"] - b["done_ns"],
        "queue": queue,
        "p50": latency,
        "overhead": latency - queue - span,
    }
    return {k: float(np.median(v[keep])) / 1e3 for k, v in cols.items()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--stage", default="overlap_fusion")
    p.add_argument("--max-wait-us", type=float, default=50)
    p.add_argument("--duration-s", type=float, default=1.0)
    args = p.parse_args()
    spec = STUDY.get(args.stage)
    model = STUDY.load_model()
    pool = STUDY.make_inputs(1024)
    rows = []
    for graphs in (False, True):
        opts = EngineOptions(max_batch=64, streams=1, graphs=graphs)
        engine, _ = build_engine(spec, adapter(spec.runtime), model, pool, opts)
        try:
            for attempt in (1, 2):
                server = loop.Server(
                    engine,
                    loop.Batching(64, int(args.max_wait_us * 1000)),
                    pool,
                    1,
                    time.perf_counter_ns,
                )
                engine.mark_reference(time.perf_counter_ns)
                load = loop.Load("closed", 1, warmup_s=0.2, duration_s=args.duration_s)
                loop.run_point(server, load, lambda *a: None)
                rows.append((f"graphs={graphs} #{attempt}", breakdown(server.records.arrays())))
        finally:
            engine.close()
    names = list(rows[0][1])
    print(f"\n{args.stage}, C=1, max wait {args.max_wait_us} us, medians in us")
    print(f"{'point':<22}" + "".join(f"{n:>10}" for n in names) + f"{'share %':>9}")
    for label, d in rows:
        share = 100 * d["overhead"] / d["p50"]
        print(f"{label:<22}" + "".join(f"{d[n]:>10.1f}" for n in names) + f"{share:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
