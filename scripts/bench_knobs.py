#!/usr/bin/env python3
"""Tuning knobs of the chunked LeNet stages against each other, in one process, calls
interleaved: the development tool behind NOTES.md's "issue 12, after the idle gap" section.

Every (stage, variant) pair is prepared once; then R rounds each call every pair once in turn
(host clock around `infer` after a device synchronise, back to back, as the harness does), so
the machine's drift falls on all variants alike. Also: the pinned copy rate (fp32 and uint8
input), and one launch of the one kernel for m images at b images a block (GPU time, events),
the latency that the last chunk of a call leaves exposed.

    python3 scripts/bench_knobs.py [--images 10000] [--repeat 20] [--stages a,b]
        [--try NAME=attr:value,attr:value ...] [--latency NAME ...]

A variant sets integer attributes of the stage before `prepare`; `base` (no change) is always
first. Prints a table last; writes knobs.json under --out (default $OUT, else ".").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_stages import load_inputs  # noqa: E402

from variants.cuda import memory  # noqa: E402
from variants.lenet.study import LOGITS_RULE, STUDY  # noqa: E402

IMGS = (2, 4, 8)  # images a block in the latency table


def parse_try(items: list[str]) -> dict[str, dict[str, int]]:
    """['tail=taper:2,small_chunk_images:700'] -> {'base': {}, 'tail': {...}}"""
    out: dict[str, dict[str, int]] = {"base": {}}
    for item in items:
        name, _, sets = item.partition("=")
        out[name] = {k: int(v) for k, v in (kv.split(":") for kv in sets.split(",") if kv)}
    return out


def prepared(key: str, attrs: dict[str, int], model, images: np.ndarray):
    stage = STUDY.get(key).build()
    for attr, value in attrs.items():
        if not hasattr(stage, attr):
            raise SystemExit(f"{key} has no attribute {attr}")
        setattr(stage, attr, value)
    stage.prepare(model, len(images))
    return stage, stage.host_input(images)


def interleaved(pairs: dict, repeat: int, warmup: int) -> dict[tuple, list[float]]:
    """ms per call of every (stage, variant), R rounds of one call each, back to back."""
    import cupy

    sync = cupy.cuda.Device().synchronize
    times: dict[tuple, list[float]] = {p: [] for p in pairs}
    for rnd in range(warmup + repeat):
        for pair, (stage, x) in pairs.items():
            sync()
            t0 = time.perf_counter()
            stage.infer(x)
            sync()
            if rnd >= warmup:
                times[pair].append((time.perf_counter() - t0) * 1e3)
    return times


def copy_rates(images: np.ndarray) -> dict[str, float]:
    """Best-of-10 ms of the pinned copy of the fp32 images and of their uint8 bytes."""
    import cupy

    out = {}
    for label, host in (("fp32", images), ("uint8", images.astype(np.uint8))):
        src = memory.pinned_copy(host)
        dev = cupy.empty(host.shape, host.dtype)
        best = float("inf")
        for _ in range(10):
            cupy.cuda.Device().synchronize()
            t0 = time.perf_counter()
            memory.h2d(dev.data.ptr, src, 0, src.nbytes, cupy.cuda.Stream.null)
            cupy.cuda.Stream.null.synchronize()
            best = min(best, (time.perf_counter() - t0) * 1e3)
        out[f"h2d_{label}_ms"] = best
        out[f"h2d_{label}_GBps"] = src.nbytes / best / 1e6
    return out


def latency(model, images: np.ndarray, key: str, name: str, attrs: dict[str, int]) -> list[dict]:
    """GPU ms of one launch of the one kernel over m images at b images a block (best of 10,
    events on the legacy stream), and of the whole batch in one launch, for the variant `name`
    (its `attrs`)."""
    import cupy

    rows = []
    for imgs in IMGS:
        stage, x = prepared(key, {**attrs, "imgs": imgs, "small_imgs": imgs}, model, images)
        stage.infer(x)  # fills the input buffer
        for m in (64, 256, 640, 1264, len(images)):
            ((_, packed),) = stage.launches(0, m)
            best = float("inf")
            for _ in range(10):
                start, end = cupy.cuda.Event(), cupy.cuda.Event()
                start.record(cupy.cuda.Stream.null)
                packed(0)
                end.record(cupy.cuda.Stream.null)
                end.synchronize()
                best = min(best, cupy.cuda.get_elapsed_time(start, end))
            rows.append({"stage": key, "variant": name, "imgs": imgs, "images": m, "gpu_ms": best})
        stage.release()
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--images", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--stages", default="one_kernel,uint8_input")
    p.add_argument("--try", dest="tries", action="append", default=[])
    p.add_argument("--latency", action="append", default=[], help="a variant's name")
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    args = p.parse_args()
    import cupy

    model, images, source = load_inputs(args.images, 0)
    variants = parse_try(args.tries)
    pairs, refs, by_input = {}, {}, {}
    for key in args.stages.split(","):
        for name, attrs in variants.items():
            if all(hasattr(STUDY.get(key).build(), a) for a in attrs):
                pairs[(key, name)] = prepared(key, attrs, model, images)
                held = pairs[(key, name)][0].reference_input(images)
                digest = hash(held.tobytes())  # one float64 reference per input format
                if digest not in by_input:
                    by_input[digest] = model.reference(held)
                refs[(key, name)] = by_input[digest]
    bad = []
    for pair, (stage, x) in pairs.items():  # every variant checked before it is timed
        verdict = LOGITS_RULE.check(stage.infer(x), refs[pair])
        if not verdict.passed:
            bad.append(f"{pair}: {verdict.reason}")
    times = interleaved(pairs, args.repeat, args.warmup)
    result = {
        "device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
        "images": args.images,
        "inputs": source,
        "command": " ".join(sys.argv),
        "variants": variants,
        "copy": copy_rates(images),
        "times_ms": {f"{k}/{v}": t for (k, v), t in times.items()},
        "failed": bad,
        "latency": [
            row
            for name in args.latency
            for row in latency(model, images, "one_kernel", name, variants[name])
        ],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "knobs.json").write_text(json.dumps(result, indent=1))
    print_table(result, times)
    return 1 if bad else 0


def print_table(result: dict, times: dict) -> None:
    c = result["copy"]
    print(f"\n{result['device']}, {result['images']} images ({result['inputs']})")
    print(f"command: {result['command']}")
    print(
        f"pinned copy: fp32 {c['h2d_fp32_ms']:.3f} ms ({c['h2d_fp32_GBps']:.1f} GB/s), "
        f"uint8 {c['h2d_uint8_ms']:.3f} ms ({c['h2d_uint8_GBps']:.1f} GB/s)"
    )
    for name, attrs in result["variants"].items():
        print(f"  variant {name}: {attrs}")
    print(f"{'stage/variant':<34}{'median ms':>10}{'min':>9}{'p90':>9}")
    for (key, name), t in times.items():
        p90 = sorted(t)[int(0.9 * (len(t) - 1))]
        print(f"{key + '/' + name:<34}{statistics.median(t):>10.3f}{min(t):>9.3f}{p90:>9.3f}")
    for line in result["failed"]:
        print(f"FAILED check: {line}")
    for name in dict.fromkeys(r["variant"] for r in result["latency"]):
        rows = [r for r in result["latency"] if r["variant"] == name]
        sizes = sorted({r["images"] for r in rows})
        print(f"one launch of one_kernel/{name}, GPU ms (rows: images a block; columns: images)")
        print(f"{'imgs':>6}" + "".join(f"{m:>9}" for m in sizes))
        for imgs in IMGS:
            row = {r["images"]: r["gpu_ms"] for r in rows if r["imgs"] == imgs}
            print(f"{imgs:>6}" + "".join(f"{row[m]:>9.4f}" for m in sizes))


if __name__ == "__main__":
    sys.exit(main())
