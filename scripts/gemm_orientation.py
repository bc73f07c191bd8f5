"""The im2col_gemm stage's GEMM orientation, measured per layer shape on the GPU.

For each distinct convolution of the MobileNetV2 plan, the GEMM Y (og x P) = W (og x K) .
col (K x P) of every (item, group) is run through cuBLAS (sgemmStridedBatched, fp32, TF32 off)
with the operands stored each way. cuBLAS is column-major, so a row-major matrix is its
transpose to cuBLAS:

  NN   col stored K x P (the stage's im2col), W stored og x K: no operand transposed (what
       CuPy's matmul calls for the stage)
  TN   col stored P x K (one row per output pixel), transposed by cuBLAS (op T)
  NT   W stored K x og, transposed by cuBLAS
  TT   both transposed
  NHWC the output transposed instead: Y^T (P x og, pixel-major) = col^T . W^T

Every variant's result is checked against NN's (first two items). Times are medians of 10
calls (CUDA events) after 3 warm-ups, for the whole batch; a grouped (depthwise) layer is one
strided batch over its groups per item, so n calls a layer in every variant.

    python3 scripts/gemm_orientation.py [--batch 256]
"""

from __future__ import annotations

import argparse
import statistics
from collections import OrderedDict

import numpy as np

VARIANTS = ("NN", "TN", "NT", "TT", "NHWC")


def shapes(plan) -> OrderedDict:
    """{(group, og, K, P): [phases]} of the plan's convolutions."""
    out: OrderedDict = OrderedDict()
    for ly in plan.layers:
        if ly.op != "Conv":
            continue
        g = ly.attrs["group"]
        kh, kw = ly.attrs["kernel"]
        oc, ho, wo = ly.out_shape
        key = (g, oc // g, ly.in_shape[0] // g * kh * kw, ho * wo)
        out.setdefault(key, []).append(ly.phase)
    return out


def run_variant(name, cublas, handle, d, n, g, og, k, p):
    """One call of the whole batch in orientation `name`."""
    one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
    a1, b0 = one.ctypes.data, zero.ctypes.data
    opn, opt = cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_T
    # per item: g GEMMs strided by og*K (W), K*P (col), og*P (Y)
    per_item = [(i * g * k * p, i * g * og * p) for i in range(n)] if g > 1 else [(0, 0)]
    batch = g if g > 1 else n
    w_stride = og * k if g > 1 else 0
    for col_off, y_off in per_item:
        col = d["col"] + 4 * col_off
        colt = d["colT"] + 4 * col_off
        y = d["y"] + 4 * y_off
        if name == "NHWC":
            cublas.sgemmStridedBatched(handle, opt, opt, og, p, k, a1, d["w"], k, w_stride,
                                       col, p, k * p, b0, y, og, og * p, batch)
            continue
        ta, a, lda = (opt, colt, k) if name[0] == "T" else (opn, col, p)
        tb, b, ldb = (opt, d["wT"], og) if name[1] == "T" else (opn, d["w"], k)
        cublas.sgemmStridedBatched(handle, ta, tb, p, og, k, a1, a, lda, k * p, b, ldb,
                                   w_stride, b0, y, p, og * p, batch)


def measure(key, n, cupy, cublas, handle):
    g, og, k, p = key
    rng = cupy.random.default_rng(0)
    col = rng.standard_normal((n, g, k, p), dtype=cupy.float32)
    colt = cupy.ascontiguousarray(col.transpose(0, 1, 3, 2))
    w = rng.standard_normal((g, og, k), dtype=cupy.float32)
    wt = cupy.ascontiguousarray(w.transpose(0, 2, 1))
    y = cupy.empty((n, g, og, p), cupy.float32)
    d = {"col": col.data.ptr, "colT": colt.data.ptr, "w": w.data.ptr, "wT": wt.data.ptr,
         "y": y.data.ptr}
    times, ref = {}, None
    for name in VARIANTS:
        for _ in range(3):
            run_variant(name, cublas, handle, d, n, g, og, k, p)
        samples = []
        for _ in range(10):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            run_variant(name, cublas, handle, d, n, g, og, k, p)
            end.record()
            end.synchronize()
            samples.append(cupy.cuda.get_elapsed_time(start, end))
        times[name] = statistics.median(samples)
        got = y.reshape(n, g, p, og).transpose(0, 1, 3, 2) if name == "NHWC" else y
        got = cupy.asnumpy(got[:2])  # the first two items
        if ref is None:
            ref = got
        else:
            assert np.allclose(got, ref, rtol=1e-4, atol=1e-3), (key, name)
    del col, colt, w, wt, y
    cupy.get_default_memory_pool().free_all_blocks()
    return times


def main() -> None:
    import cupy
    from cupy_backends.cuda.libs import cublas

    from variants.mobilenetv2.study import load

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    n = parser.parse_args().batch
    handle = cupy.cuda.device.get_cublas_handle()
    cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
    cublas.setMathMode(handle, cublas.CUBLAS_DEFAULT_MATH)  # no TF32
    table = shapes(load().plan)
    total = dict.fromkeys(VARIANTS, 0.0)
    print(f"GEMM orientation, batch {n}, ms per layer (median of 10), "
          f"{cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print("| layers | group x (og x K) . (K x P) | " + " | ".join(VARIANTS) + " | best |")
    print("|---|---|" + "---|" * (len(VARIANTS) + 1))
    for key, phases in table.items():
        times = measure(key, n, cupy, cublas, handle)
        for name in VARIANTS:
            total[name] += times[name] * len(phases)
        best = min(times, key=times.get)
        label = phases[0] + (f" (+{len(phases) - 1})" if len(phases) > 1 else "")
        g, og, k, p = key
        cells = " | ".join(f"{times[v]:.3f}" for v in VARIANTS)
        print(f"| {label} | {g} x ({og} x {k}) . ({k} x {p}) | {cells} | {best} |")
    cells = " | ".join(f"{total[v]:.2f}" for v in VARIANTS)
    print(f"| all {sum(len(v) for v in table.values())} convolutions | | {cells} | "
          f"{min(total, key=total.get)} |")


if __name__ == "__main__":
    main()
