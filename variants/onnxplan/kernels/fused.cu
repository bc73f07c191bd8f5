// Convolutions with their epilogue fused: y = clip(conv(x) + bias [+ res], lo, hi), NCHW
// float32. `res` is the residual input (nullptr: none); lo/hi are -inf/+inf without an
// activation. Each kernel's indexing has a NumPy twin in variants/onnxplan/twins.py.

#include "conv_direct.cuh"

__device__ __forceinline__ float epilogue(float acc, const float* __restrict__ res,
                                          long long idx, float lo, float hi)
{
    if (res) acc += res[idx];
    return fminf(fmaxf(acc, lo), hi);
}

// The generic direct convolution of layers.cu with the epilogue: one thread per output.
extern "C" __global__ void conv_direct_fused(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    const float* __restrict__ res, float* __restrict__ y, int n, int c, int h, int wd, int oc,
    int ho, int wo, int kh, int kw, int sh, int sw, int pt, int pl, int group, float lo,
    float hi)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= (long long)n * oc * ho * wo) return;
    float acc = conv_direct_at(x, w, b, idx, c, h, wd, oc, ho, wo, kh, kw, sh, sw, pt, pl, group);
    y[idx] = epilogue(acc, res, idx, lo, hi);
}

// A 1x1 convolution (stride 1, no padding, one group) as one GEMM over the whole batch:
// Y (m rows = output channels, cols = n * hw pixels) = W (m x k) . X (k x cols), where column
// j is pixel p = j % hw of image j / hw, so X[kk][j] = x[(j / hw) * k * hw + kk * hw + p] and
// Y[mm][j] = y[(j / hw) * m * hw + mm * hw + p]: NCHW in and out, no transposes. A Gemm
// layer is the case hw = 1. Tiles of 64 x 64 outputs, 16-deep slices of k through shared
// memory, 256 threads each computing 4 x 4 outputs.
#define TM 64
#define TN 64
#define TK 16
extern "C" __global__ void __launch_bounds__(256) pointwise_gemm(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    const float* __restrict__ res, float* __restrict__ y, int m, int k, int cols, int hw,
    float lo, float hi)
{
    __shared__ float As[TK][TM];
    __shared__ float Bs[TK][TN];
    int tid = threadIdx.x;
    int row0 = blockIdx.y * TM, col0 = blockIdx.x * TN;
    int tr = (tid / 16) * 4, tc = (tid % 16) * 4;  // this thread's 4 x 4 outputs in the tile
    // loads: A as 64 rows x 16 k (thread: row tid / 4, k 4 * (tid % 4) .. +3);
    // B as 16 k x 64 cols (thread: k tid / 16, cols tid % 16 + 16 q: a warp's loads of one q
    // are 16 consecutive pixels)
    int a_row = row0 + tid / 4, a_k = (tid % 4) * 4;
    int b_k = tid / 16;
    long long b_base[4];
    for (int q = 0; q < 4; ++q) {
        int j = col0 + tid % 16 + 16 * q;
        b_base[q] = j < cols ? (long long)(j / hw) * k * hw + j % hw : -1;
    }
    float acc[4][4] = {};
    for (int k0 = 0; k0 < k; k0 += TK) {
        for (int q = 0; q < 4; ++q) {
            int kk = k0 + a_k + q;
            As[a_k + q][tid / 4] = (a_row < m && kk < k) ? w[(long long)a_row * k + kk] : 0.0f;
            int kb = k0 + b_k;
            Bs[b_k][tid % 16 + 16 * q] =
                (b_base[q] >= 0 && kb < k) ? x[b_base[q] + (long long)kb * hw] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TK; ++kk) {
            float av[4], bv[4];
            for (int q = 0; q < 4; ++q) {
                av[q] = As[kk][tr + q];
                bv[q] = Bs[kk][tc + q];
            }
            for (int r = 0; r < 4; ++r)
                for (int q = 0; q < 4; ++q) acc[r][q] += av[r] * bv[q];
        }
        __syncthreads();
    }
    for (int q = 0; q < 4; ++q) {
        int j = col0 + tc + q;
        if (j >= cols) continue;
        long long out_base = (long long)(j / hw) * m * hw + j % hw;
        for (int r = 0; r < 4; ++r) {
            int row = row0 + tr + r;
            if (row >= m) continue;
            long long idx = out_base + (long long)row * hw;
            y[idx] = epilogue(acc[r][q] + b[row], res, idx, lo, hi);
        }
    }
}

// A 3x3 depthwise convolution (group = channels, padding 1, stride 1 or 2): a block computes
// a 32 x 8 tile of one (image, channel) plane from the input tile it needs, staged in shared
// memory ((8 - 1) * stride + 3 rows of (32 - 1) * stride + 3), the 9 weights in registers.
// Grid: (planes, row tiles, column tiles); block (32, 8).
#define DW_TX 32
#define DW_TY 8
extern "C" __global__ void __launch_bounds__(256) depthwise3x3(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    const float* __restrict__ res, float* __restrict__ y, int c, int h, int wd, int ho,
    int wo, int stride, float lo, float hi)
{
    __shared__ float tile[(DW_TY - 1) * 2 + 3][(DW_TX - 1) * 2 + 3];
    int plane = blockIdx.x;  // img * c + ch (x: the only grid axis that can exceed 65,535)
    int ch = plane % c;
    int ox0 = blockIdx.z * DW_TX, oy0 = blockIdx.y * DW_TY;
    int rows = (DW_TY - 1) * stride + 3, cols = (DW_TX - 1) * stride + 3;
    int iy0 = oy0 * stride - 1, ix0 = ox0 * stride - 1;
    const float* xp = x + (long long)plane * h * wd;
    int tid = threadIdx.y * DW_TX + threadIdx.x;
    for (int e = tid; e < rows * cols; e += DW_TX * DW_TY) {
        int r = e / cols, q = e % cols;
        int iy = iy0 + r, ix = ix0 + q;
        tile[r][q] = (iy >= 0 && iy < h && ix >= 0 && ix < wd) ? xp[iy * wd + ix] : 0.0f;
    }
    float wv[9];
    for (int e = 0; e < 9; ++e) wv[e] = w[ch * 9 + e];
    __syncthreads();
    int ox = ox0 + threadIdx.x, oy = oy0 + threadIdx.y;
    if (ox >= wo || oy >= ho) return;
    int r0 = threadIdx.y * stride, q0 = threadIdx.x * stride;
    float acc = b[ch];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) acc += tile[r0 + i][q0 + j] * wv[i * 3 + j];
    long long idx = (long long)plane * ho * wo + oy * wo + ox;
    y[idx] = epilogue(acc, res, idx, lo, hi);
}

// --- tuned kernels (the `tuned` stage) -------------------------------------------------------

// pointwise_gemm with a warp's loads and stores on consecutive pixels: thread (tr, tc) of the
// tile computes rows tr .. tr + 3 and columns tc + 16 q (q = 0 .. 3), so each store
// instruction of 16 threads writes 16 consecutive floats of one output row (pointwise_gemm's
// threads own 4 adjacent columns, so its stores are 16 bytes apart across threads).
extern "C" __global__ void __launch_bounds__(256) pointwise_gemm_tuned(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    const float* __restrict__ res, float* __restrict__ y, int m, int k, int cols, int hw,
    float lo, float hi)
{
    __shared__ float As[TK][TM];
    __shared__ float Bs[TK][TN];
    int tid = threadIdx.x;
    int row0 = blockIdx.y * TM, col0 = blockIdx.x * TN;
    int tr = (tid / 16) * 4, tc = tid % 16;
    int a_row = row0 + tid / 4, a_k = (tid % 4) * 4;
    int b_k = tid / 16;
    long long b_base[4];
    for (int q = 0; q < 4; ++q) {
        int j = col0 + tc + 16 * q;
        b_base[q] = j < cols ? (long long)(j / hw) * k * hw + j % hw : -1;
    }
    float acc[4][4] = {};
    for (int k0 = 0; k0 < k; k0 += TK) {
        for (int q = 0; q < 4; ++q) {
            int kk = k0 + a_k + q;
            As[a_k + q][tid / 4] = (a_row < m && kk < k) ? w[(long long)a_row * k + kk] : 0.0f;
            int kb = k0 + b_k;
            Bs[b_k][tc + 16 * q] =
                (b_base[q] >= 0 && kb < k) ? x[b_base[q] + (long long)kb * hw] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TK; ++kk) {
            float av[4], bv[4];
            for (int q = 0; q < 4; ++q) {
                av[q] = As[kk][tr + q];
                bv[q] = Bs[kk][tc + 16 * q];
            }
            for (int r = 0; r < 4; ++r)
                for (int q = 0; q < 4; ++q) acc[r][q] += av[r] * bv[q];
        }
        __syncthreads();
    }
    for (int q = 0; q < 4; ++q) {
        int j = col0 + tc + 16 * q;
        if (j >= cols) continue;
        long long out_base = (long long)(j / hw) * m * hw + j % hw;
        for (int r = 0; r < 4; ++r) {
            int row = row0 + tr + r;
            if (row >= m) continue;
            long long idx = out_base + (long long)row * hw;
            y[idx] = epilogue(acc[r][q] + b[row], res, idx, lo, hi);
        }
    }
}

// A 3x3 depthwise convolution (padding 1, stride 1 or 2), one thread per output straight from
// global memory (neighbouring threads share their inputs through L1), the 9 weights read
// through the read-only cache: no tile, so no idle threads on 14x14 and 7x7 planes.
extern "C" __global__ void depthwise3x3_direct(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    const float* __restrict__ res, float* __restrict__ y, long long count, int c, int h,
    int wd, int ho, int wo, int stride, float lo, float hi)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= count) return;
    int ox = (int)(idx % wo);
    long long t = idx / wo;
    int oy = (int)(t % ho);
    long long plane = t / ho;
    int ch = (int)(plane % c);
    const float* xp = x + plane * h * wd;
    const float* wc = w + ch * 9;
    float acc = __ldg(b + ch);
    for (int i = 0; i < 3; ++i) {
        int iy = oy * stride - 1 + i;
        if (iy < 0 || iy >= h) continue;
        for (int j = 0; j < 3; ++j) {
            int ix = ox * stride - 1 + j;
            if (ix < 0 || ix >= wd) continue;
            acc += __ldg(xp + iy * wd + ix) * __ldg(wc + i * 3 + j);
        }
    }
    y[idx] = epilogue(acc, res, idx, lo, hi);
}

// The 3-channel 3x3 stem (3 -> oc channels, any stride and padding): one thread per output
// pixel reads its 27 taps once into registers and writes every output channel (each store
// instruction of a warp: 32 consecutive pixels of one channel); the weights of all output
// channels sit in shared memory (oc * 27 <= STEM_WEIGHTS).
#define STEM_TAPS 27
#define STEM_WEIGHTS 4096
extern "C" __global__ void __launch_bounds__(256) stem_conv3x3(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    const float* __restrict__ res, float* __restrict__ y, int n, int h, int wd, int oc,
    int ho, int wo, int sh, int sw, int pt, int pl, float lo, float hi)
{
    __shared__ float ws[STEM_WEIGHTS];
    for (int e = threadIdx.x; e < oc * STEM_TAPS; e += blockDim.x) ws[e] = w[e];
    __syncthreads();
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= (long long)n * ho * wo) return;
    int ox = (int)(idx % wo);
    long long t = idx / wo;
    int oy = (int)(t % ho);
    int img = (int)(t / ho);
    float v[STEM_TAPS];
#pragma unroll
    for (int ci = 0; ci < 3; ++ci)
#pragma unroll
        for (int i = 0; i < 3; ++i)
#pragma unroll
            for (int j = 0; j < 3; ++j) {
                int iy = oy * sh - pt + i, ix = ox * sw - pl + j;
                bool inside = iy >= 0 && iy < h && ix >= 0 && ix < wd;
                v[(ci * 3 + i) * 3 + j] =
                    inside ? x[(((long long)img * 3 + ci) * h + iy) * wd + ix] : 0.0f;
            }
    for (int o = 0; o < oc; ++o) {
        float acc = b[o];
        const float* wo_ = ws + o * STEM_TAPS;
#pragma unroll
        for (int e = 0; e < STEM_TAPS; ++e) acc += v[e] * wo_[e];
        long long out = (((long long)img * oc + o) * ho + oy) * wo + ox;
        y[out] = epilogue(acc, res, out, lo, hi);
    }
}
