#!/usr/bin/env python3
"""Would a GPU that polls for requests itself bring a LeNet server's overhead at concurrency 1
under 10% of its latency? The least host time around one request served by a persistent kernel.

`scripts/serve_floor.py` priced the floor of a host that drives the GPU a batch at a time (event
record, graph launch, record, query): 6.8 us of a 30.5 us request, with no server loop at all.
Here no CUDA call is made per request. One block of `LeNet_Mailbox`, launched once, spins on an
8-byte mailbox in page-locked host memory (mapped, read across PCIe); the host writes
(sequence << 32 | row) there, the block runs uint8_input's own network code (one_kernel.cu's
LeNet_Fused body, unchanged, on image `row` of a page-locked pool read in place), writes the
logits and then the sequence into page-locked memory, and the host spins on that.

Per request: wall = host ns from before the mailbox write to after the logits are copied out;
span = the block's %globaltimer from seeing the mailbox to before its completion write (device
clock, no mapping onto the host's needed); overhead = wall - span: the host's Python, the
mailbox's way to the GPU (a poll across PCIe) and the completion's way back. Every answer is
checked against the stage's own `infer` on the same image. Median and 10th/90th percentile per
images-a-block build (LENET_IMGS), beside serve_floor's graph way in the same process.

    python3 scripts/serve_mailbox_probe.py [--calls 4000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import serve_floor  # noqa: E402  (beside this script: run as a script, its folder is on the path)

from variants.cuda import build, launch, memory  # noqa: E402
from variants.lenet import gpu  # noqa: E402
from variants.lenet.stages import one_kernel as ok  # noqa: E402
from variants.lenet.study import STUDY  # noqa: E402

POOL = 4096
STOP = -1

MAILBOX = r"""
__device__ __forceinline__ unsigned long long globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// box[0]: (seq << 32 | row) written by the host, seq counting from 1; STOP (-1) ends the loop.
// done[0]: the last seq answered; times[0..1]: that request's device start and end (ns).
extern "C" __global__ void __launch_bounds__(256) LeNet_Mailbox(
    volatile long long* box, volatile int* done, volatile unsigned long long* times,
    const in_t* __restrict__ pool, const float* __restrict__ conv1_w,
    const float* __restrict__ conv1_b, const float* __restrict__ conv2_wt,
    const float* __restrict__ conv2_b, const float* __restrict__ w1t,
    const float* __restrict__ b1, const float* __restrict__ w2t, const float* __restrict__ b2,
    const float* __restrict__ w3t, const float* __restrict__ b3, float* __restrict__ out,
    unsigned long long idle_ns) {
    __shared__ long long s_word;
    __shared__ unsigned long long s_t0;
    int expect = 1;
    for (;;) {
        if (threadIdx.x == 0) {
            const unsigned long long since = globaltimer();
            long long w;
            do {
                w = box[0];
            } while (w != -1 && (int)(w >> 32) < expect && globaltimer() - since < idle_ns);
            s_t0 = globaltimer();
            s_word = ((int)(w >> 32) < expect) ? -1 : w;  // idle too long: stop
        }
        __syncthreads();
        const long long w = s_word;
        if (w == -1) return;
        const int seq = (int)(w >> 32), row = (int)(w & 0xffffffff);
        lenet_body(0, pool + (long long)row * 784, conv1_w, conv1_b, conv2_wt, conv2_b, w1t, b1,
                   w2t, b2, w3t, b3, out + (long long)row * 10, 1);
        __syncthreads();
        if (threadIdx.x == 0) {
            __threadfence_system();  // the logits reach host memory before the sequence does
            times[0] = s_t0;
            times[1] = globaltimer();
            __threadfence_system();
            done[0] = seq;
        }
        expect = seq + 1;
    }
}
"""


def mailbox_source() -> str:
    """one_kernel.cu with LeNet_Fused's body as a device function of the block's index (so the
    persistent kernel runs the stage's own code), plus LeNet_Mailbox."""
    src = build.source(gpu.kernel_file("one_kernel"))
    head = 'extern "C" __global__ void LENET_BOUNDS LeNet_Fused(\n    const in_t*'
    assert src.count(head) == 1 and src.count("blockIdx.x * IMGS") == 1
    body = "__device__ __forceinline__ void lenet_body(\n    int block, const in_t*"
    src = src.replace(head, body)
    src = src.replace("blockIdx.x * IMGS", "block * IMGS")
    return src + MAILBOX


def mailbox_kernel(stage, model, imgs: int):
    import cupy

    defines = stage.defines(imgs)
    module = cupy.RawModule(
        code=mailbox_source(), options=build.COMPILE_OPTIONS + tuple(f"-D{d}" for d in defines)
    )
    module.compile()
    if stage.const_weights:  # (the mailbox source declares one_kernel.cu's constants)
        gpu.set_constants(module, "one_kernel", ok.conv_constants(model.weights))
    kernel = module.get_function("LeNet_Mailbox")
    launch.allow_shared(kernel, ok.shared_bytes(imgs, stage.const_weights))
    return module, kernel


def serve_mailbox(stage, model, imgs: int, pool, expected, calls: int):
    """`calls` requests of one image (rows in turn) through a LeNet_Mailbox block built for
    `imgs` images a block: walls, spans (ns) and the largest logit error."""
    import cupy

    module, kernel = mailbox_kernel(stage, model, imgs)
    box = memory.pinned_empty((1,), np.int64)
    done = memory.pinned_empty((1,), np.int32)
    times = memory.pinned_empty((2,), np.uint64)
    out = memory.pinned_empty((POOL, 10), np.float32)
    box[0], done[0], out[:] = 0, 0, np.nan
    addr = [memory.mapped_address(a) for a in (box, done, times, pool, out)]
    weights = [stage._w[k] for k in ok.WEIGHT_NAMES]
    args = (*addr[:4], *weights, addr[4], np.int64(2_000_000_000))  # idle limit, ns
    stream = cupy.cuda.Stream(non_blocking=True)
    packed = launch.PackedLaunch(
        kernel, 1, ok.THREADS, args, ok.shared_bytes(imgs, stage.const_weights)
    )
    packed(stream.ptr)
    walls, spans, worst = [], [], 0.0
    try:
        for seq in range(1, calls + 1):
            row = seq % POOL
            t0 = time.perf_counter_ns()
            box[0] = (seq << 32) | row
            deadline = t0 + 1_000_000_000
            while done[0] != seq:
                if time.perf_counter_ns() > deadline:
                    raise RuntimeError(f"no answer to request {seq} in 1 s")
            logits = out[row].copy()
            walls.append(time.perf_counter_ns() - t0)
            spans.append(int(times[1]) - int(times[0]))
            worst = max(worst, float(np.abs(logits - expected[row]).max()))
    finally:
        box[0] = STOP
        stream.synchronize()
    del module
    return walls, spans, worst


def serve_graph(stage, pool, calls: int):
    """serve_floor's graph way (record, the one-image graph of the stage's rows launch, record,
    spin on the end event) on row 1 of `pool`; walls and spans (ns)."""
    import cupy

    rows = memory.pinned_empty((1,), np.int32)
    rows[:] = 1
    out = memory.pinned_empty((1, 10))
    stage.bind_rows(pool, rows, out)
    stream = cupy.cuda.Stream(non_blocking=True)
    stage.enqueue_rows(1, stream)
    stream.synchronize()
    stream.begin_capture()
    stage.enqueue_rows(1, stream)
    graph = stream.end_capture()
    graph_way = serve_floor.ways(stage, stream, graph)["graph"]
    return serve_floor.timed(graph_way, cupy.cuda.Event(), cupy.cuda.Event(), calls)


def cells(walls, spans) -> str:
    over = [w - s for w, s in zip(walls, spans, strict=True)]
    parts = []
    for v in (walls, spans, over):
        lo, hi = np.percentile(v, [10, 90]) / 1e3
        parts.append(f"{statistics.median(v) / 1e3:6.2f} ({lo:5.2f}-{hi:5.2f})")
    share = 100 * statistics.median(over) / statistics.median(walls)
    return "".join(f"{c:>22}" for c in parts) + f"{share:>9.1f}%"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--stage", default="uint8_input")
    p.add_argument("--calls", type=int, default=4000)
    p.add_argument("--imgs", default="1,2")
    args = p.parse_args()

    spec = STUDY.get(args.stage)
    stage, model = spec.build(), STUDY.load_model(None)
    stage.prepare(model, POOL)
    pool = stage.host_input(STUDY.make_inputs(POOL, None))
    expected = np.asarray(stage.infer(pool)).copy()
    rows: list[tuple[str, str]] = []
    for rnd in range(2):
        for imgs in (int(i) for i in args.imgs.split(",")):
            walls, spans, worst = serve_mailbox(stage, model, imgs, pool, expected, args.calls)
            assert worst < 1e-4, f"mailbox logits differ from infer's by {worst}"
            rows.append((f"mailbox, {imgs} img/block r{rnd}", cells(walls[100:], spans[100:])))
        walls, spans = serve_graph(stage, pool, args.calls)
        rows.append((f"graph (serve_floor) r{rnd}", cells(walls[100:], spans[100:])))
    print(f"\n{args.stage}, one image a request, {args.calls} requests a way (first 100 dropped)")
    print(f"{'way':<28}{'wall us':>22}{'span us':>22}{'overhead us':>22}{'share':>10}")
    for name, line in rows:
        print(f"{name:<28}{line}")
    stage.release()
    return 0


if __name__ == "__main__":
    sys.exit(main())
