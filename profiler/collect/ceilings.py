"""This machine's measured ceilings, for achieved bandwidth and the roofline.

`measure(raw_dir)` runs `python -m profiler.collect.ceilings` in a child process (like a stage's
worker, so a failure cannot take the sweep down) and returns, as floats:

    h2d_pinned_bytes_per_s    one 256 MiB copy from page-locked host memory to the device
    d2h_pinned_bytes_per_s    the same copy back
    h2d_pageable_bytes_per_s  the same copy from ordinary (pageable) host memory
    d2d_bytes_per_s           a 256 MiB device-to-device copy, bytes read plus bytes written
    fp32_flops_per_s          an 8192^3 float32 matrix product through cuBLAS, TF32 off

Each is the median of 5 timed runs (CUDA events) after a warm-up.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from profiler.collect.tools import run_tool
from profiler.errors import ProfgenError

COPY_BYTES = 256 * 1024 * 1024
MATMUL_N = 8192
REPEATS = 5
TIMEOUT_S = 300.0


def measure(raw_dir: Path, timeout: float = TIMEOUT_S) -> dict[str, float]:
    """Measure the ceilings in a child process; its output stays in `raw_dir`.

    Raises: ProfilerRunError (the child failed or timed out, with its log's tail),
    ProfgenError (it wrote no result).
    """
    raw_dir.mkdir(parents=True, exist_ok=True)
    out = raw_dir / "ceilings.json"
    cmd = [sys.executable, "-m", "profiler.collect.ceilings", str(out)]
    run_tool(cmd, raw_dir / "ceilings.log", timeout, env=dict(os.environ, CUPY_TF32="0"))
    if not out.is_file():
        raise ProfgenError(f"{' '.join(cmd)} wrote no {out}")
    return {k: float(v) for k, v in json.loads(out.read_text()).items()}


def _median_s(fn, stream) -> float:  # noqa: ANN001 - CuPy objects, imported in the child only
    import cupy as cp

    fn()
    times = []
    for _ in range(REPEATS):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record(stream)
        fn()
        stop.record(stream)
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return sorted(times)[len(times) // 2]


def _measure() -> dict[str, float]:
    import cupy as cp
    import numpy as np

    n = COPY_BYTES
    rt = cp.cuda.runtime
    stream = cp.cuda.Stream(non_blocking=True)
    pinned = np.frombuffer(cp.cuda.alloc_pinned_memory(n), np.uint8, n)
    pinned[:] = 1
    pageable = np.ones(n, np.uint8)
    dev, dev2 = cp.ones(n, cp.uint8), cp.empty(n, cp.uint8)

    def copy(dst: int, src: int, kind: int):  # noqa: ANN202
        return lambda: rt.memcpyAsync(dst, src, n, kind, stream.ptr)

    out = {
        "h2d_pinned_bytes_per_s": n / _median_s(copy(dev.data.ptr, pinned.ctypes.data, 1), stream),
        "d2h_pinned_bytes_per_s": n / _median_s(copy(pinned.ctypes.data, dev.data.ptr, 2), stream),
        "h2d_pageable_bytes_per_s": n
        / _median_s(copy(dev.data.ptr, pageable.ctypes.data, 1), stream),
        "d2d_bytes_per_s": 2 * n / _median_s(copy(dev2.data.ptr, dev.data.ptr, 3), stream),
    }
    a = cp.random.default_rng(0).random((MATMUL_N, MATMUL_N), dtype=cp.float32)
    with stream:
        out["fp32_flops_per_s"] = 2 * MATMUL_N**3 / _median_s(lambda: a @ a, stream)
    out["copy_bytes"] = float(n)
    out["matmul_n"] = float(MATMUL_N)
    return out


if __name__ == "__main__":
    os.environ.setdefault("CUPY_TF32", "0")
    result = _measure()
    Path(sys.argv[1]).write_text(json.dumps(result, indent=1))
    print(json.dumps(result))
