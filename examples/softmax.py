"""Row-wise softmax three ways, profiled: `profgen sweep examples/softmax.py`."""

import numpy as np

from profiler.ranges import range as phase
from profiler.study import Compare, Study

COLS = 1000
KERNELS = r"""
extern "C" __global__ void naive(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;       // one thread per row: a warp's loads
    if (r >= rows) return;                               // are `cols` floats apart
    const float* in = x + (size_t)r * cols; float* out = y + (size_t)r * cols;
    float m = -__int_as_float(0x7f800000), s = 0.f;  // -inf: NVRTC has no math.h
    for (int j = 0; j < cols; ++j) m = fmaxf(m, in[j]);
    for (int j = 0; j < cols; ++j) s += expf(in[j] - m);
    for (int j = 0; j < cols; ++j) out[j] = expf(in[j] - m) / s;
}
extern "C" __global__ void warp(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;                               // one warp per row: coalesced loads
    const float* in = x + (size_t)r * cols; float* out = y + (size_t)r * cols;
    float m = -__int_as_float(0x7f800000), s = 0.f;  // -inf: NVRTC has no math.h
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
    """A RawKernel stage: compiled in `prepare`, copies and the kernel timed in `infer`."""

    name, rows_per_block, threads = "naive", 128, 128

    def prepare(self, model, batch):
        import cupy as cp

        self.kernel = cp.RawModule(code=KERNELS).get_function(self.name)

    def infer(self, x):
        import cupy as cp

        with phase("h2d"):
            d_x = cp.asarray(x)
        d_y = cp.empty_like(d_x)
        rows = len(x)
        with phase("softmax"):
            grid = (rows + self.rows_per_block - 1) // self.rows_per_block
            self.kernel((grid,), (self.threads,), (d_x, d_y, np.int32(rows), np.int32(COLS)))
        with phase("d2h"):
            return d_y.get()


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

    name, rows_per_block, threads = "warp", 8, 256


@study.stage(role="framework", runtime="torch")
def torch_softmax(x):
    """PyTorch

    torch.softmax on the GPU, the input copied in and the result out on every call."""
    import torch

    with phase("h2d"):
        t = torch.from_numpy(x).cuda()
    with phase("softmax"):
        y = torch.softmax(t, dim=1)
    with phase("d2h"):
        return y.cpu().numpy()
