#!/usr/bin/env python3
"""Time every LeNet stage on the device: the development tool behind variants/lenet/NOTES.md.

For each stage: prepare, warm-ups, R timed calls of `infer` (host clock, after a device
synchronise, on the stage's own `host_input`), the check against the float64 reference, and for
the CUDA stages each kernel's GPU time measured with events. Also the floor: the input copy
alone from pageable and from page-locked memory.

    python3 scripts/bench_stages.py [--images 10000] [--repeat 10] [--stages a,b] [--out DIR]
        [--set overlap_fusion.chunks=12] [--ab fc_opt,no_sync] [--gap-ms 10]

`--set` changes a stage's integer attribute before `prepare`; `--ab a,b` prepares two stages in
one process and alternates their calls, for steps smaller than the machine's drift. Uses the
shipped model and benchmark images when they exist, else random ones. Prints a compact table
last; writes bench.json (every sample) under --out (default $OUT, else the current folder).
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

from variants.cuda import build, memory  # noqa: E402
from variants.lenet import gpu  # noqa: E402
from variants.lenet.model import MODEL_PATH, LeNet, load, random_weights  # noqa: E402
from variants.lenet.study import LOGITS_RULE, STUDY  # noqa: E402

SLOW = {"cuda_baseline", "torch_cpu"}  # fewer repeats: a second or so each


def load_inputs(n: int, seed: int) -> tuple[LeNet, np.ndarray, str]:
    """The shipped model and its benchmark images when the model file exists, else random ones."""
    if MODEL_PATH.is_file():
        return load(), STUDY.make_inputs(n), "shipped model, benchmark images"
    rng = np.random.default_rng(seed)
    model = LeNet(weights=random_weights(seed))
    return model, rng.random((n, 1, 28, 28), dtype=np.float32), "random weights, random images"


GAP_S = 0.0  # --gap-ms: idle time before each timed call (the sweep checks outputs there)


def time_calls(stage, x: np.ndarray, repeat: int) -> tuple[list[float], np.ndarray]:
    import cupy

    times, out = [], None
    for _ in range(repeat):
        cupy.cuda.Device().synchronize()
        if GAP_S:
            time.sleep(GAP_S)
        t0 = time.perf_counter()
        out = stage.infer(x)
        times.append((time.perf_counter() - t0) * 1e3)
    return times, out


def kernel_times(key: str, stage, n: int) -> dict[str, float]:
    """GPU ms of each kernel of a CUDA stage on the whole batch (best of 5, events around it,
    on the legacy default stream)."""
    import cupy

    from variants.lenet.stages._chunked import ChunkedStage

    if isinstance(stage, ChunkedStage):
        plan = stage.launches(0, n)
    elif hasattr(stage, "plan"):
        plan = stage.plan(n)
    elif key == "cuda_baseline":
        plan = stage._plan  # one image
    else:
        return {}
    out = {}
    for name, launch in plan:
        best = float("inf")
        for _ in range(5):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record(cupy.cuda.Stream.null)
            launch(0)
            end.record(cupy.cuda.Stream.null)
            end.synchronize()
            best = min(best, cupy.cuda.get_elapsed_time(start, end))
        out[name] = best
    return out


def floor(images: np.ndarray) -> dict[str, float]:
    """Best-of-10 ms of the input copy alone, from pageable and from page-locked memory."""
    import cupy

    dev = cupy.empty(images.shape, cupy.float32)
    pinned = memory.pinned_copy(images)
    out = {}
    for label, src in (("h2d_pageable", images), ("h2d_pinned", pinned)):
        best = float("inf")
        for _ in range(10):
            cupy.cuda.Device().synchronize()
            t0 = time.perf_counter()
            memory.h2d(dev.data.ptr, src, 0, src.nbytes, cupy.cuda.Stream.null)
            cupy.cuda.Stream.null.synchronize()
            best = min(best, (time.perf_counter() - t0) * 1e3)
        out[label] = best
    out["h2d_pinned_GBps"] = images.nbytes / out["h2d_pinned"] / 1e6
    return out


def overheads(model: LeNet) -> dict[str, float]:
    """Host microseconds per call of what cuda_baseline repeats 10,000 times a pass."""
    import cupy

    from profiler.ranges import range as phase
    from variants.lenet.stages._layered import GENERIC_KERNELS, activation_buffers, generic_plan

    k = build.kernels(gpu.compile_module("generic"), GENERIC_KERNELS)
    a = activation_buffers(1)
    launch = generic_plan(k, memory.upload(model.weights), a, 1)[2]  # conv2: 10 arguments
    packed = launch.packed()

    def rawkernel() -> None:
        launch.kernel((launch.grid,), (launch.block,), launch.args)

    host_in, host_out = np.zeros((1, 1, 28, 28), np.float32), np.zeros((1, 10), np.float32)
    sync = cupy.cuda.runtime.deviceSynchronize

    def nvtx() -> None:
        with phase("x"):
            pass

    cases = {
        "nvtx range": nvtx,
        "RawKernel call": rawkernel,
        "packed launch": packed,
        "RawKernel + sync": lambda: (rawkernel(), sync()),
        "packed launch + sync": lambda: (packed(), sync()),
        "deviceSynchronize idle": sync,
        "h2d 3136 B blocking": lambda: memory.h2d(a["input"].data.ptr, host_in, 0, 3136),
        "d2h 40 B blocking": lambda: memory.d2h(host_out, 0, a["fc3"].data.ptr, 40),
    }
    out = {}
    for name, fn in cases.items():
        for _ in range(200):
            fn()
        sync()
        t0 = time.perf_counter()
        for _ in range(2000):
            fn()
        sync()
        out[name] = (time.perf_counter() - t0) / 2000 * 1e6
    return out


def bench_stage(key: str, model: LeNet, images: np.ndarray, ref: np.ndarray, args) -> dict:
    from profiler.collect import runtimes

    spec = STUDY.get(key)
    note = runtimes.adapter(spec.runtime).missing() or runtimes.missing_needs(spec.needs)
    if note:
        return {"key": key, "skipped": note}
    stage = spec.build()
    for attr, value in args.set.get(key, {}).items():
        setattr(stage, attr, value)
    stage.prepare(model, len(images))
    x = stage.host_input(images)
    time_calls(stage, x, args.warmup)
    times, out = time_calls(stage, x, 3 if key in SLOW else args.repeat)
    held = stage.reference_input(images) if hasattr(stage, "reference_input") else images
    if not np.array_equal(held, images):  # a uint8 stage on images that are not IDX pixels
        ref = model.reference(held)
    verdict = LOGITS_RULE.check(out, ref)
    row = {
        "key": key,
        "title": spec.title,
        "times_ms": times,
        "median_ms": statistics.median(times),
        "min_ms": min(times),
        "max_ms": max(times),
        "passed": verdict.passed,
        "max_rel_err": verdict.max_rel_err,
        "reason": verdict.reason,
    }
    if spec.runtime == "cupy":
        row["kernels_ms"] = kernel_times(key, stage, len(images))
    stage.release()
    return row


def ab(keys: list[str], model: LeNet, images: np.ndarray, repeat: int) -> dict:
    """Two stages prepared in one process, their calls alternated: medians and the median of
    the paired differences (B - A), so slow drift of the machine cancels."""
    import cupy

    stages = []
    for key in keys:
        stage = STUDY.get(key).build()
        stage.prepare(model, len(images))
        x = stage.host_input(images)
        time_calls(stage, x, 3)
        stages.append((stage, x))
    times: list[list[float]] = [[], []]
    for _ in range(repeat):
        for i, (stage, x) in enumerate(stages):
            cupy.cuda.Device().synchronize()
            t0 = time.perf_counter()
            stage.infer(x)
            times[i].append((time.perf_counter() - t0) * 1e3)
    diffs = [b - a for a, b in zip(times[0], times[1], strict=True)]
    return {
        "keys": keys,
        "median_ms": [statistics.median(t) for t in times],
        "min_ms": [min(t) for t in times],
        "median_diff_ms": statistics.median(diffs),
        "times_ms": times,
    }


def parse_set(items: list[str]) -> dict[str, dict[str, int]]:
    """--set overlap_fusion.chunks=16 -> {"overlap_fusion": {"chunks": 16}}"""
    out: dict[str, dict[str, int]] = {}
    for item in items:
        lhs, value = item.split("=")
        key, attr = lhs.split(".")
        out.setdefault(key, {})[attr] = int(value)
    return out


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--images", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--stages", default=",".join(s.key for s in STUDY.stages), help="comma-separated keys"
    )
    p.add_argument("--set", action="append", default=[], help="stage.attr=int (chunks=12, ...)")
    p.add_argument("--ab", action="append", default=[], help="a,b: alternate two stages' calls")
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    p.add_argument("--gap-ms", type=float, default=0.0, help="idle ms before each timed call")
    args = p.parse_args()
    global GAP_S
    GAP_S = args.gap_ms / 1e3
    args.set = parse_set(args.set)
    return args


def run_all(args: argparse.Namespace) -> dict:
    """Every asked stage, the floor, the per-call overheads and the A/B pairs."""
    import cupy

    model, images, source = load_inputs(args.images, args.seed)
    ref = model.reference(images)
    rows = []
    for key in [k for k in args.stages.split(",") if k]:
        try:
            rows.append(bench_stage(key, model, images, ref, args))
        except Exception as exc:  # keep timing the other stages; the row and exit code say FAIL
            traceback.print_exc()
            rows.append({"key": key, "error": f"{type(exc).__name__}: {exc}", "passed": False})
    return {
        "device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
        "images": args.images,
        "inputs": source,
        "command": " ".join(sys.argv),
        "set": args.set,
        "floor": floor(images),
        "overheads_us": overheads(model),
        "stages": rows,
        "ab": [ab(pair.split(","), model, images, 4 * args.repeat) for pair in args.ab],
    }


def main() -> int:
    args = parse_args()
    result = run_all(args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.json").write_text(json.dumps(result, indent=1))
    print_table(result)
    return 0 if all(r.get("passed", True) for r in result["stages"]) else 1


def print_table(result: dict) -> None:
    fl, oh = result["floor"], result["overheads_us"]
    print(f"\n{result['device']}, {result['images']} images ({result['inputs']})")
    print(f"command: {result['command']}")
    print("host us per call: " + ", ".join(f"{k} {v:.1f}" for k, v in oh.items()))
    print(
        f"floor: h2d pageable {fl['h2d_pageable']:.3f} ms, pinned {fl['h2d_pinned']:.3f} ms "
        f"({fl['h2d_pinned_GBps']:.1f} GB/s)"
    )
    head = f"{'stage':<16}{'median ms':>11}{'min':>10}{'max':>10}{'vs prev':>9}"
    print(f"{head}  verdict      kernels (GPU ms)")
    prev = None
    for r in result["stages"]:
        if "skipped" in r or "error" in r:
            why = f"SKIPPED: {r['skipped']}" if "skipped" in r else f"ERROR: {r['error']}"
            print(f"{r['key']:<16}  {why}")
            continue
        speed = f"{prev / r['median_ms']:.2f}x" if prev else ""
        verdict = "PASS" if r["passed"] else "FAIL"
        kern = " ".join(f"{k}={v:.3f}" for k, v in r.get("kernels_ms", {}).items())
        times = f"{r['median_ms']:>11.3f}{r['min_ms']:>10.3f}{r['max_ms']:>10.3f}{speed:>9}"
        print(f"{r['key']:<16}{times}  {verdict} {r['max_rel_err']:.1e}  {kern}")
        if not r["passed"]:
            print(f"    {r['reason']}")
        prev = r["median_ms"]
    for r in result["ab"]:
        (a, b), med, mins = r["keys"], r["median_ms"], r["min_ms"]
        print(
            f"A/B {a} -> {b}: medians {med[0]:.3f} -> {med[1]:.3f} ms, mins {mins[0]:.3f} -> "
            f"{mins[1]:.3f}, median paired diff {r['median_diff_ms']:+.3f} ms"
        )


if __name__ == "__main__":
    sys.exit(main())
