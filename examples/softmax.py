"""Row-wise softmax, step by step, profiled: `profgen sweep examples/softmax.py`."""

import numpy as np

from profiler.ranges import range as phase
from profiler.study import Compare, Study

COLS = 1000
KERNELS = r"""
#define NEG_INF (-__int_as_float(0x7f800000))  // NVRTC has no math.h
extern "C" __global__ void naive(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;       // one thread per row: a warp's loads
    if (r >= rows) return;                               // are `cols` floats apart
    const float* in = x + (size_t)r * cols; float* out = y + (size_t)r * cols;
    float m = NEG_INF, s = 0.f;
    for (int j = 0; j < cols; ++j) m = fmaxf(m, in[j]);
    for (int j = 0; j < cols; ++j) s += expf(in[j] - m);
    for (int j = 0; j < cols; ++j) out[j] = expf(in[j] - m) / s;
}
extern "C" __global__ void warp(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;                               // one warp per row: coalesced loads
    const float* in = x + (size_t)r * cols; float* out = y + (size_t)r * cols;
    float m = NEG_INF, s = 0.f;
    for (int j = lane; j < cols; j += 32) m = fmaxf(m, in[j]);
    for (int o = 16; o; o /= 2) m = fmaxf(m, __shfl_xor_sync(~0u, m, o));
    for (int j = lane; j < cols; j += 32) s += expf(in[j] - m);
    for (int o = 16; o; o /= 2) s += __shfl_xor_sync(~0u, s, o);
    for (int j = lane; j < cols; j += 32) out[j] = expf(in[j] - m) / s;
}
"""


def reference(x):
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


study = Study(
    "softmax",
    title="Row-wise softmax",
    unit="rows",
    default_items=16384,
    inputs=lambda n: np.random.default_rng(0).standard_normal((n, COLS), dtype=np.float32),
    reference=reference,
    compare=Compare(rtol=1e-5, atol=1e-9, scale="row", topk=1),
)


class CupyKernel:
    """A RawKernel stage: compile and allocate in `prepare` (not timed); `infer` copies the
    rows in, runs the kernel and copies the result out (all timed)."""

    kernel, rows_per_block, threads, pinned = "naive", 128, 128, False

    def prepare(self, model, batch):
        import cupy as cp
        import cupyx

        self.fn = cp.RawModule(code=KERNELS).get_function(self.kernel)
        self.d_x = cp.empty((batch, COLS), cp.float32)
        self.d_y = cp.empty((batch, COLS), cp.float32)
        self.out = cupyx.empty_pinned((batch, COLS), np.float32) if self.pinned else None

    def host_input(self, x):  # where the application keeps its rows (not timed)
        return _pinned(x) if self.pinned else x

    def infer(self, x):
        n = len(x)
        with phase("h2d"):
            self.d_x[:n].set(x)
        with phase("softmax"):
            grid = (n + self.rows_per_block - 1) // self.rows_per_block
            self.fn((grid,), (self.threads,), (self.d_x, self.d_y, np.int32(n), np.int32(COLS)))
        with phase("d2h"):  # into page-locked memory, or a fresh pageable array
            return self.d_y[:n].get(out=self.out[:n]) if self.pinned else self.d_y[:n].get()


def _pinned(x):
    import cupyx

    out = cupyx.empty_pinned(x.shape, x.dtype)
    out[...] = x
    return out


@study.stage(role="baseline", runtime="cupy")
class Naive(CupyKernel):
    """Naive kernel

    One thread per row: each thread walks its row three times, and a warp's 32 loads fall on
    32 different rows, so no load is coalesced."""


@study.stage(runtime="cupy")
class Warp(CupyKernel):
    """One warp per row

    The 32 lanes of a warp stride over one row (coalesced loads) and combine their maximum and
    sum with shuffles."""

    kernel, rows_per_block, threads = "warp", 8, 256


@study.stage(runtime="cupy")
class WarpPinned(Warp):
    """Pinned host memory

    The same kernel; the rows come from, and the result goes to, page-locked buffers, so both
    copies run at full PCIe speed (a fresh pageable result is written page fault by page
    fault)."""

    pinned = True


@study.stage(role="framework", runtime="torch")
def torch_softmax(x):
    """PyTorch

    torch.softmax on the GPU, the rows copied in and the result out on every call."""
    import torch

    with phase("h2d"):
        t = torch.from_numpy(x).cuda()
    with phase("softmax"):
        y = torch.softmax(t, dim=1)
    with phase("d2h"):
        return y.cpu().numpy()
