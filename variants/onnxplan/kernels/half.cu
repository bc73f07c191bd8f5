// Half-precision kernels of the fp16 stage: activations stored as IEEE half (`half_t`, the
// raw 16 bits), all arithmetic in fp32. 1x1 convolutions and the classifier run on the
// tensor cores (mma.sync m16n8k16, half inputs, fp32 accumulation); bias, residual and clip
// are applied in fp32 before the one rounding to half. No header is needed: conversions and
// the MMA are inline PTX, so NVRTC compiles this file as it is. Each kernel's indexing has a
// NumPy twin in variants/onnxplan/half_twins.py.

typedef unsigned short half_t;

__device__ __forceinline__ float h2f(half_t h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

__device__ __forceinline__ half_t f2h(float f)
{
    half_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

// The fused epilogue in fp32: + the residual (half) at the same index, then the clip.
__device__ __forceinline__ float epilogue_h(float acc, const half_t* __restrict__ res,
                                            long long idx, float lo, float hi)
{
    if (res) acc += h2f(res[idx]);
    return fminf(fmaxf(acc, lo), hi);
}

__device__ __forceinline__ void store(half_t* y, long long idx, float v) { y[idx] = f2h(v); }
__device__ __forceinline__ void store(float* y, long long idx, float v) { y[idx] = v; }

// The network's float32 input rounded to half once, on the device.
extern "C" __global__ void to_half(const float* __restrict__ x, half_t* __restrict__ y,
                                   long long count)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx < count) y[idx] = f2h(x[idx]);
}

// --- 1x1 convolution as a tensor-core GEMM --------------------------------------------------
// Y (m rows = output channels, cols = n * hw pixels) = W (m x k) . X (k x cols), NCHW in and
// out as pointwise_gemm in fused.cu: column j is pixel j % hw of image j / hw, X[kk][j] =
// x[(j / hw) * k * hw + kk * hw + j % hw], Y[row][j] at (j / hw) * m * hw + row * hw + j % hw.
// A block of 128 threads (4 warps, 2 x 2) computes a 64 x 64 tile of Y in 32-deep k slices:
// A (64 rows x 32 k) is staged in shared memory as As[row][k], B as Bs[col][k] (k contiguous:
// the layout mma's ".col" B operand wants), zero past m, k and cols. Each warp owns 32 x 32
// outputs: 2 x 4 mma.sync.m16n8k16 tiles, 32 fp32 accumulators a thread.
#define HM 64
#define HN 64
#define HK 32
#define HPAD 8  // row padding (halves): conflict-free fragment loads
#define HTHREADS 128

__device__ __forceinline__ unsigned pair(const half_t* p)  // two halves, the first in bits 0-15
{
    return *reinterpret_cast<const unsigned*>(p);
}

__device__ __forceinline__ void mma16816(float* c, const unsigned* a, const unsigned* b)
{
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <typename Out>
__device__ __forceinline__ void gemm_mma_tile(
    const half_t* __restrict__ x, const half_t* __restrict__ w, const float* __restrict__ b,
    const half_t* __restrict__ res, Out* __restrict__ y, int m, int k, int cols, int hw,
    float lo, float hi)
{
    __shared__ __align__(16) half_t As[HM][HK + HPAD];
    __shared__ __align__(16) half_t Bs[HN][HK + HPAD];
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int g = lane / 4, t = lane % 4;  // mma's groupID and thread-in-group
    int row0 = blockIdx.y * HM, col0 = blockIdx.x * HN;
    int wm = (warp / 2) * 32, wn = (warp % 2) * 32;
    // loads: A element (r = tid / 32 + 4 i, kk = tid % 32), a warp reads 32 consecutive k of
    // one row; B element (col tid % 64, kk = tid / 64 + 2 i), a warp reads 32 consecutive
    // pixels of one channel
    int a_k = tid % HK, a_r = tid / HK;
    int b_c = tid % HN, b_k = tid / HN;
    int bj = col0 + b_c;
    long long b_base = bj < cols ? (long long)(bj / hw) * k * hw + bj % hw : -1;
    float acc[2][4][4] = {};
    for (int k0 = 0; k0 < k; k0 += HK) {
#pragma unroll
        for (int i = 0; i < HM * HK / HTHREADS; ++i) {
            int r = a_r + (HTHREADS / HK) * i, kk = k0 + a_k;
            As[r][a_k] = (row0 + r < m && kk < k) ? w[(long long)(row0 + r) * k + kk] : 0;
        }
#pragma unroll
        for (int i = 0; i < HN * HK / HTHREADS; ++i) {
            int q = b_k + (HTHREADS / HN) * i, kk = k0 + q;
            Bs[b_c][q] = (b_base >= 0 && kk < k) ? x[b_base + (long long)kk * hw] : 0;
        }
        __syncthreads();
#pragma unroll
        for (int ks = 0; ks < HK; ks += 16) {
            unsigned af[2][4], bf[4][2];
#pragma unroll
            for (int mi = 0; mi < 2; ++mi) {
                const half_t* a = &As[wm + mi * 16 + g][ks + t * 2];
                af[mi][0] = pair(a);                         // row g,     k 2t, 2t+1
                af[mi][1] = pair(a + 8 * (HK + HPAD));       // row g + 8, k 2t, 2t+1
                af[mi][2] = pair(a + 8);                     // row g,     k 2t+8, 2t+9
                af[mi][3] = pair(a + 8 * (HK + HPAD) + 8);   // row g + 8, k 2t+8, 2t+9
            }
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) {
                const half_t* p = &Bs[wn + ni * 8 + g][ks + t * 2];
                bf[ni][0] = pair(p);      // col g, k 2t, 2t+1
                bf[ni][1] = pair(p + 8);  // col g, k 2t+8, 2t+9
            }
#pragma unroll
            for (int mi = 0; mi < 2; ++mi)
#pragma unroll
                for (int ni = 0; ni < 4; ++ni) mma16816(acc[mi][ni], af[mi], bf[ni]);
        }
        __syncthreads();
    }
    // accumulator e of tile (mi, ni): row wm + 16 mi + g + 8 (e / 2), col wn + 8 ni + 2t + e % 2
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
        for (int e2 = 0; e2 < 2; ++e2) {
            int j = col0 + wn + ni * 8 + t * 2 + e2;
            if (j >= cols) continue;
            long long out_base = (long long)(j / hw) * m * hw + j % hw;
#pragma unroll
            for (int mi = 0; mi < 2; ++mi)
#pragma unroll
                for (int eh = 0; eh < 2; ++eh) {
                    int row = row0 + wm + mi * 16 + g + 8 * eh;
                    if (row >= m) continue;
                    long long idx = out_base + (long long)row * hw;
                    store(y, idx, epilogue_h(acc[mi][ni][eh * 2 + e2] + b[row], res, idx, lo, hi));
                }
        }
}

extern "C" __global__ void __launch_bounds__(HTHREADS) pointwise_gemm_half(
    const half_t* __restrict__ x, const half_t* __restrict__ w, const float* __restrict__ b,
    const half_t* __restrict__ res, half_t* __restrict__ y, int m, int k, int cols, int hw,
    float lo, float hi)
{
    gemm_mma_tile(x, w, b, res, y, m, k, cols, hw, lo, hi);
}

// The same GEMM writing fp32: the network's last layer (the logits the caller receives).
extern "C" __global__ void __launch_bounds__(HTHREADS) pointwise_gemm_half_f32out(
    const half_t* __restrict__ x, const half_t* __restrict__ w, const float* __restrict__ b,
    const half_t* __restrict__ res, float* __restrict__ y, int m, int k, int cols, int hw,
    float lo, float hi)
{
    gemm_mma_tile(x, w, b, res, y, m, k, cols, hw, lo, hi);
}

// --- half storage, fp32 math ----------------------------------------------------------------

// depthwise3x3_direct of fused.cu on half activations (weights and bias fp32).
extern "C" __global__ void depthwise3x3_half(
    const half_t* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    const half_t* __restrict__ res, half_t* __restrict__ y, long long count, int c, int h,
    int wd, int ho, int wo, int stride, float lo, float hi)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= count) return;
    int ox = (int)(idx % wo);
    long long t = idx / wo;
    int oy = (int)(t % ho);
    long long plane = t / ho;
    int ch = (int)(plane % c);
    const half_t* xp = x + plane * h * wd;
    const float* wc = w + ch * 9;
    float acc = __ldg(b + ch);
    for (int i = 0; i < 3; ++i) {
        int iy = oy * stride - 1 + i;
        if (iy < 0 || iy >= h) continue;
        for (int j = 0; j < 3; ++j) {
            int ix = ox * stride - 1 + j;
            if (ix < 0 || ix >= wd) continue;
            acc += h2f(__ldg(xp + iy * wd + ix)) * __ldg(wc + i * 3 + j);
        }
    }
    y[idx] = f2h(epilogue_h(acc, res, idx, lo, hi));
}

// stem_conv3x3 of fused.cu on half activations: one thread per output pixel, its 27 taps in
// registers, every output channel written; weights (fp32) in shared memory.
#define STEM_TAPS 27
#define STEM_WEIGHTS 4096
extern "C" __global__ void __launch_bounds__(256) stem_conv3x3_half(
    const half_t* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    const half_t* __restrict__ res, half_t* __restrict__ y, int n, int h, int wd, int oc,
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
                    inside ? h2f(x[(((long long)img * 3 + ci) * h + iy) * wd + ix]) : 0.0f;
            }
    for (int o = 0; o < oc; ++o) {
        float acc = b[o];
        const float* wo_ = ws + o * STEM_TAPS;
#pragma unroll
        for (int e = 0; e < STEM_TAPS; ++e) acc += v[e] * wo_[e];
        long long out = (((long long)img * oc + o) * ho + oy) * wo + ox;
        y[out] = f2h(epilogue_h(acc, res, out, lo, hi));
    }
}

// GlobalAveragePool on half activations: one thread per (img, ch) plane, fp32 sum.
extern "C" __global__ void global_avg_pool_half(const half_t* __restrict__ x,
                                                half_t* __restrict__ y, int planes, int hw)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= planes) return;
    const half_t* p = x + (long long)idx * hw;
    float s = 0.0f;
    for (int q = 0; q < hw; ++q) s += h2f(p[q]);
    y[idx] = f2h(s / hw);
}
