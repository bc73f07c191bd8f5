"""The fused GEMM against cuBLAS on ResNet-50's convolution shapes (needs a GPU and CuPy).

`python -m variants.resnet50.gemm_speed [--batch 256]` times gemm_fused_1x1 (and
gemm_fused_conv for the 3x3s) against `cupy.matmul` (cuBLAS SGEMM, TF32 off) on the same
product, and checks the fused kernel's output against cuBLAS's plus the epilogue, then prints
one table: shape, milliseconds and TFLOP/s of each. Not a test: timing targets belong to the
sweep's report.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

#: (name, m, c, h, w, kernel, stride, pad): the tails of res2-res5, res3's conv1 and conv2, and
#: res4's 3x3
SHAPES = (
    ("res2 tail 1x1", 256, 64, 56, 56, 1, 1, 0),
    ("res3 tail 1x1", 512, 128, 28, 28, 1, 1, 0),
    ("res4 tail 1x1", 1024, 256, 14, 14, 1, 1, 0),
    ("res5 tail 1x1", 2048, 512, 7, 7, 1, 1, 0),
    ("res3 conv1 1x1", 128, 512, 28, 28, 1, 1, 0),
    ("res3 conv2 3x3", 128, 128, 28, 28, 3, 1, 1),
    ("res4 conv2 3x3", 256, 256, 14, 14, 3, 1, 1),
)


def _time(fn, repeats: int = 20) -> float:
    """Median milliseconds of `fn` between CUDA events, after two warm-up calls."""
    import cupy

    fn()
    fn()
    times = []
    for _ in range(repeats):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    return float(np.median(times))


def measure(batch: int) -> list[dict[str, object]]:
    import cupy

    from variants.cuda import build
    from variants.cuda.launch import PackedLaunch, grid_for, i32
    from variants.onnxplan import gemm_stages, gemm_twin

    kernels = build.kernels(build.compile_module(gemm_stages.GEMM_KERNELS),
                            gemm_stages.GEMM_NAMES)
    rng = np.random.default_rng(0)
    rows = []
    for name, m, c, h, w, ks, stride, pad in SHAPES:
        ho, wo = (h + 2 * pad - ks) // stride + 1, (w + 2 * pad - ks) // stride + 1
        k, hw = c * ks * ks, ho * wo
        cols = batch * hw
        x = cupy.asarray(rng.standard_normal((batch, c, h, w), np.float32))
        # float32: a float32 array over np.sqrt's float64 scalar would be float64 (NEP 50),
        # read as float32 by the kernel and multiplied by cuBLAS in float64
        weight = (rng.standard_normal((m, k)) / np.sqrt(k)).astype(np.float32)
        wp = cupy.asarray(gemm_twin.pack_weight(weight))
        bias = cupy.asarray(rng.standard_normal(m, np.float32))
        res = cupy.asarray(rng.standard_normal((batch, m, ho, wo), np.float32))
        y = cupy.empty((batch, m, ho, wo), cupy.float32)
        head = [x, wp, bias, res, y, i32(m), i32(k), i32(wp.shape[1]), np.int64(cols)]
        lim = [np.float32(0.0), np.float32(np.inf)]
        if ks == 1 and stride == 1:
            args = [*head, i32(hw), *lim]
            kernel = kernels["gemm_fused_1x1"]
        else:
            args = [*head, i32(c), i32(h), i32(w), i32(ho), i32(wo), i32(ks), i32(ks),
                    i32(stride), i32(stride), i32(pad), i32(pad), *lim]
            kernel = kernels["gemm_fused_conv"]
        grid = (grid_for(cols, gemm_twin.BN), grid_for(m, gemm_twin.BM), 1)
        fused = PackedLaunch(kernel, grid, (256, 1, 1), args)
        ms_fused = _time(fused)
        wc = cupy.asarray(weight)
        if ks == 1 and stride == 1:
            xv, out = x.reshape(batch, c, hw), cupy.empty((batch, m, hw), cupy.float32)

            def cublas() -> None:
                cupy.matmul(wc, xv, out=out)  # noqa: B023 - called in this iteration only

            ms_cublas = _time(cublas)
            cublas()
            want = cupy.maximum(out.reshape(y.shape) + bias[None, :, None, None] + res, 0)
        else:
            ms_cublas = math.nan
            want = None
        fused()
        cupy.cuda.Device().synchronize()
        err = float(cupy.abs(y - want).max()) / float(cupy.abs(want).max()) \
            if want is not None else math.nan
        flop = 2.0 * m * k * cols
        rows.append({"shape": name, "m": m, "k": k, "cols": cols,
                     "fused_ms": ms_fused, "fused_tflops": flop / ms_fused / 1e9,
                     "cublas_ms": ms_cublas, "cublas_tflops": flop / ms_cublas / 1e9,
                     "max_rel_err": err})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args(argv)
    rows = measure(args.batch)
    print(f"fused GEMM (gemm_fused.cu) vs cupy.matmul (cuBLAS, TF32 off), batch {args.batch}:")
    print(f"{'shape':16} {'m':>5} {'k':>5} {'cols':>8} {'fused ms':>9} {'TFLOP/s':>8} "
          f"{'cuBLAS ms':>9} {'TFLOP/s':>8} {'rel err':>8}")
    for r in rows:
        print(f"{r['shape']:16} {r['m']:5d} {r['k']:5d} {r['cols']:8d} {r['fused_ms']:9.3f} "
              f"{r['fused_tflops']:8.1f} {r['cublas_ms']:9.3f} {r['cublas_tflops']:8.1f} "
              f"{r['max_rel_err']:8.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
