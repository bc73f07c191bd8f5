#!/usr/bin/env python3
"""What the host spends issuing a chunked LeNet call: the development tool behind NOTES.md's
"host issue time" section.

Per operation (median microseconds of 2,000 calls, the GPU left idle): an NVTX phase pushed and
popped, a 784-byte page-locked copy queued, a one-kernel launch of 16 images queued, a fresh
page-locked logits array of 10,000 rows, an idle stream's synchronise. Per stage: the host time
to queue a whole call (`queue_chunks`) and the call's end to end time, with the stage's phases and
with phases replaced by a no-op, median of --repeat calls.

    python3 scripts/issue_costs.py [--images 10000] [--repeat 30] [--stages one_kernel,uint8_input]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_stages import load_inputs  # noqa: E402

from profiler.ranges import range as phase  # noqa: E402
from variants.cuda import memory  # noqa: E402
from variants.lenet.stages import _chunked  # noqa: E402
from variants.lenet.study import STUDY  # noqa: E402


def per_op(fn, count: int = 2000) -> float:
    """Median microseconds of one `fn()` over `count` calls, timed in groups of 20."""
    groups = []
    for _ in range(count // 20):
        t0 = time.perf_counter()
        for _ in range(20):
            fn()
        groups.append((time.perf_counter() - t0) / 20 * 1e6)
    return statistics.median(groups)


def op_costs(stage, x) -> dict[str, float]:
    import cupy

    stream = stage._streams[0]
    ptr = stage._a["input"].data.ptr
    ((_, packed),) = stage.launches(0, 16)
    sync = cupy.cuda.Device().synchronize

    def nvtx() -> None:
        with phase("h2d"):
            pass

    def copy() -> None:
        memory.h2d(ptr, x, 0, 784, stream)

    def launch() -> None:
        packed(stream.ptr)

    out = {"nvtx phase": per_op(nvtx)}
    out["h2d 784 B queued"] = per_op(copy, 400)
    sync()
    out["launch 16 images queued"] = per_op(launch, 400)
    sync()
    out["fresh logits (10,000 rows)"] = per_op(lambda: stage.new_output(10_000), 400)
    out["idle stream synchronise"] = per_op(stream.synchronize)
    return out


def call_costs(stage, x, repeat: int) -> dict[str, float]:
    """Median us: the host's queueing of a whole call, and the call end to end."""
    import cupy

    sync = cupy.cuda.Device().synchronize
    n = len(x)
    issue, total = [], []
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        stage.queue_chunks(x, n, lambda: stage.new_output(n))
        t1 = time.perf_counter()
        for s in stage._streams:
            s.synchronize()
        t2 = time.perf_counter()
        issue.append((t1 - t0) * 1e6)
        total.append((t2 - t0) * 1e6)
    return {"issue": statistics.median(issue), "call": statistics.median(total)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--images", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--stages", default="one_kernel,uint8_input")
    args = p.parse_args()
    model, images, _ = load_inputs(args.images, 0)
    rows = []
    for key in args.stages.split(","):
        stage = STUDY.get(key).build()
        stage.prepare(model, len(images))
        x = stage.host_input(images)
        for _ in range(5):
            stage.infer(x)
        if not rows:
            ops = op_costs(stage, x)
        for label in ("phases", "no phases"):
            if label == "no phases":
                _chunked.phase = lambda name: contextlib.nullcontext()
            rows.append((key, label, call_costs(stage, x, args.repeat), len(stage.plan(len(x)))))
            _chunked.phase = phase
        stage.release()
    print("\nhost cost of one operation (median us)")
    for name, us in ops.items():
        print(f"  {name:<30}{us:8.2f}")
    print(f"\n{'stage':<16}{'phases':<11}{'chunks':>7}{'issue us':>10}{'call us':>10}")
    for key, label, c, chunks in rows:
        print(f"{key:<16}{label:<11}{chunks:>7}{c['issue']:>10.1f}{c['call']:>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
