#!/usr/bin/env python3
"""Time LeNet stages at several batch sizes in one process each (a quick look for tuning; the
report's batch figure comes from `profgen sweep --batch-sizes`, a process per point).

    python3 scripts/bench_batches.py [--stages a,b] [--batch-sizes 1,4,16] [--items 4096]
        [--repeat 5] [--set one_kernel.imgs=16]

For each stage: prepare for the largest batch, then per batch size two warm-up passes and R
timed passes over `items` images, `batch` per `infer` call (host clock, after a device
synchronise), each pass checked against the reference. Prints a table of microseconds per image
last; writes batches.json under $OUT (else the current folder). `--crossings FILE` reads such a
file and prints the batch table and where the custom stages and the frameworks cross
(profiler.analyze.sweep).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from profiler.collect import runtimes  # noqa: E402
from profiler.collect.harness import infer_all  # noqa: E402
from variants.lenet.model import load  # noqa: E402
from variants.lenet.study import LOGITS_RULE, STUDY  # noqa: E402

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def bench(key: str, model, images: np.ndarray, sizes: list[int], args) -> dict:
    spec = STUDY.get(key)
    runtime = runtimes.adapter(spec.runtime)
    note = runtime.missing() or runtimes.missing_needs(spec.needs)
    stage = spec.build()
    note = note or stage.unavailable()
    if note:
        return {"key": key, "skipped": note}
    for attr, value in args.set.get(key, {}).items():
        setattr(stage, attr, value)
    stage.prepare(model, max(sizes))
    x = stage.host_input(images)
    ref = model.reference(stage.reference_input(images))
    row: dict = {"key": key, "us_per_image": {}, "failed": []}
    try:
        for b in sizes:
            times = []
            for i in range(2 + args.repeat):
                runtime.synchronize()
                t0 = time.perf_counter()
                out = infer_all(stage, x, b)
                runtime.synchronize()
                if i >= 2:
                    times.append(time.perf_counter() - t0)
                verdict = LOGITS_RULE.check(out, ref)
                if not verdict.passed:
                    row["failed"].append(f"batch {b}: {verdict.reason}")
            row["us_per_image"][b] = statistics.median(times) / len(images) * 1e6
            row.setdefault("times_ns", {})[b] = [int(t * 1e9) for t in times]
    finally:
        stage.release()
    return row


def batch_sweep_table(result: dict):
    """batches.json as a `schema.BATCH_SWEEP` table."""
    import pandas as pd

    from profiler import schema

    items, rows = result["items"], []
    for r in result["rows"]:
        for b, times in (r.get("times_ns") or {}).items():
            b = int(b)
            median = int(statistics.median(times))
            rows.append(
                {
                    "stage": r["key"],
                    "batch": b,
                    "items": items,
                    "repeats": len(times),
                    "median_ns": median,
                    "min_ns": min(times),
                    "max_ns": max(times),
                    "batch_median_ns": median // -(-items // b),
                }
            )
    return schema.validate(
        schema.conform(pd.DataFrame(rows), schema.BATCH_SWEEP), schema.BATCH_SWEEP
    )


def print_crossings(path: Path) -> None:
    from profiler.analyze import sweep

    curves = sweep.batch_curves(batch_sweep_table(json.loads(path.read_text())))
    roles = {s.key: s.role for s in STUDY.stages}
    wide = curves.pivot(index="stage", columns="batch", values="per_item_ns") / 1e3
    print("\nus per image (batch table)\n" + wide.round(3).to_string())
    lat = curves.pivot(index="stage", columns="batch", values="batch_median_ns") / 1e3
    print("\nlatency of one batch, us\n" + lat.round(1).to_string())
    versus = sweep.batch_versus(curves, roles)
    print("\nfastest custom stage against each framework\n" + versus.round(3).to_string())
    print("\ncrossings\n" + sweep.batch_crossings(versus).round(2).to_string())


def main() -> int:
    if sys.argv[1:2] == ["--crossings"]:
        print_crossings(Path(sys.argv[2]))
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--stages", default="pinned,overlap_fusion,one_kernel,uint8_input,graph")
    p.add_argument("--batch-sizes", default="1,4,16,64,256,1024,4096")
    p.add_argument("--items", type=int, default=4096)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--set", action="append", default=[], help="stage.attr=int")
    args = p.parse_args()
    args.set = {}
    for item in p.parse_args().set:
        lhs, value = item.split("=")
        key, attr = lhs.split(".")
        args.set.setdefault(key, {})[attr] = int(value)
    sizes = [int(s) for s in args.batch_sizes.split(",")]
    model = load()
    images = STUDY.make_inputs(args.items)
    rows: list[dict] = []
    out = Path(os.environ.get("OUT", "."))
    result = {"set": args.set, "items": args.items, "rows": rows}
    for key in args.stages.split(","):
        try:
            rows.append(bench(key, model, images, sizes, args))
        except Exception as exc:
            traceback.print_exc()
            rows.append({"key": key, "error": f"{type(exc).__name__}: {exc}"})
        (out / "batches.json").write_text(json.dumps(result, indent=1))  # after every stage
    print(f"\nus per image, {args.items} images, median of {args.repeat} ({args.set or ''})")
    print(f"{'stage':<16}" + "".join(f"{b:>9}" for b in sizes))
    for r in rows:
        if "us_per_image" not in r:
            print(f"{r['key']:<16}  {r.get('skipped') or r.get('error')}")
            continue
        print(f"{r['key']:<16}" + "".join(f"{r['us_per_image'][b]:>9.3f}" for b in sizes))
        for f in r["failed"][:2]:
            print(f"    FAIL {f}")
    return 0 if all(not r.get("failed") and "error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
