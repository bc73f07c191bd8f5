#!/usr/bin/env python3
"""Can the one kernel read its input straight from page-locked host memory (zero-copy, through
the unified address space) as fast as the copy engine copies it? The development probe behind
NOTES.md's "zero-copy" section.

For 10,000 images, fp32 and uint8, median milliseconds of --repeat host-timed calls (each after a
device synchronise): the stage's own call, the page-locked copy alone (the floor), and per
kernel build (images a block, where the conv weights live) the one kernel over the whole batch
from device memory (its GPU time, host-timed) and reading the mapped host input and writing its
logits into mapped host memory, with the largest difference from the stage's logits.

    python3 scripts/zero_copy_probe.py [--images 10000] [--repeat 30] [--imgs 2,4,8]
        [--stages one_kernel,uint8_input] [--weights shared,conv1,const]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_stages import load_inputs  # noqa: E402

from variants.cuda import launch, memory  # noqa: E402
from variants.lenet.stages.one_kernel import (  # noqa: E402
    THREADS,
    WEIGHT_NAMES,
    conv_constants,
    shared_bytes,
)
from variants.lenet.study import STUDY  # noqa: E402


def timed(fn, repeat: int) -> float:
    """Median ms of `fn()` followed by a device synchronise, after three warm-ups."""
    import cupy

    sync = cupy.cuda.Device().synchronize
    times = []
    for i in range(repeat + 3):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        if i >= 3:
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


#: where the conv weights live: the define, the constants to set, whether shared memory holds them
WEIGHTS = {
    "shared": ([], (), True),
    "conv1": (["LENET_CONV1_CONST"], ("c_conv1_w", "c_conv1_b"), True),
    "const": (
        ["LENET_CONST_WEIGHTS"],
        ("c_conv1_w", "c_conv1_b", "c_conv2_wt", "c_conv2_b"),
        False,
    ),
}


def build_variant(stage, model, imgs: int, weights: str):
    """LeNet_Fused for `imgs` images a block with its conv weights where `weights` says (see
    WEIGHTS), and its shared bytes."""
    from variants.cuda import build
    from variants.lenet import gpu

    extra, constants, in_shared = WEIGHTS[weights]
    module = gpu.compile_module("one_kernel", stage.defines(imgs) + extra)
    values = conv_constants(model.weights)
    gpu.set_constants(module, "one_kernel", {k: values[k] for k in constants})
    stage._modules.append(module)
    kernel = build.kernels(module, ["LeNet_Fused"])["LeNet_Fused"]
    smem = shared_bytes(imgs, not in_shared)
    launch.allow_shared(kernel, smem)
    return kernel, smem


def probe(
    key: str, model, images, repeat: int, imgs_list: list[int], weights: list[str]
) -> list[tuple[str, float]]:
    import cupy

    stage = STUDY.get(key).build()
    stage.prepare(model, len(images))
    x = stage.host_input(images)
    n = len(x)
    nbytes = x.nbytes
    rows = [("stage infer (chunked)", timed(lambda: stage.infer(x), repeat))]
    dev_in = stage._a["input"]
    rows.append(
        ("h2d copy alone", timed(lambda: memory.h2d(dev_in.data.ptr, x, 0, nbytes), repeat))
    )
    weight_ptrs = tuple(stage._w[k] for k in WEIGHT_NAMES)
    logits = stage._a["logits"]
    host_out = memory.pinned_empty((n, 10))
    x_dev, out_dev = memory.mapped_address(x), memory.mapped_address(host_out)
    want = stage.infer(x).copy()
    stream = cupy.cuda.Stream(non_blocking=True)
    memory.h2d(dev_in.data.ptr, x, 0, nbytes)

    def measure(label, kernel, smem, grid):
        def make(inp, out):
            return launch.PackedLaunch(
                kernel, grid, THREADS, (inp, *weight_ptrs, out, launch.i32(n)), smem
            )

        from_device, mapped_both = make(dev_in.data.ptr, logits.data.ptr), make(x_dev, out_dev)
        rows.append(
            (f"{label}: from device memory", timed(lambda: from_device(stream.ptr), repeat))
        )
        host_out[...] = float("nan")
        rows.append((f"{label}: mapped in and out", timed(lambda: mapped_both(stream.ptr), repeat)))
        rows.append((f"{label}:   max abs diff", float(abs(host_out - want).max())))

    for where in weights:
        for imgs in imgs_list:
            kernel, smem = build_variant(stage, model, imgs, where)
            measure(f"{where} weights, {imgs}/block", kernel, smem, launch.grid_for(n, imgs))
    stage.release()
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--images", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--imgs", default="2,4,8")
    p.add_argument("--stages", default="one_kernel,uint8_input")
    p.add_argument("--weights", default="shared", help="comma-separated: shared, conv1, const")
    args = p.parse_args()
    model, images, _ = load_inputs(args.images, 0)
    imgs_list = [int(v) for v in args.imgs.split(",")]
    for key in args.stages.split(","):
        print(f"\n{key}, {len(images)} images (median ms of {args.repeat})")
        for label, value in probe(
            key, model, images, args.repeat, imgs_list, args.weights.split(",")
        ):
            print(f"  {label:<70}{value:10.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
