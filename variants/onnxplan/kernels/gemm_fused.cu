// A convolution (or the classifier) as one tiled SGEMM over the whole batch's pixels, its
// epilogue fused: y = clip(W . X + bias [+ res], lo, hi), NCHW float32 in and out, fp32 FMA
// (no tensor cores, no TF32). Its indexing has a NumPy twin in variants/onnxplan/gemm_twin.py.
//
// The GEMM: Y (m rows = output channels, cols = n * ho * wo pixels) = W (m x k) . X (k x cols).
// Column j is pixel p = j % (ho * wo) of image j / (ho * wo), so Y[row][j] is
// y[(img * m + row) * ho * wo + p]. Row kk of X is input channel ci = kk / (kh * kw), tap
// (ky, kx) = divmod(kk % (kh * kw), kw): X[kk][j] = x[img][ci][oy * sh - pt + ky][ox * sw - pl + kx],
// 0 outside the input (implicit GEMM: no Im2Col buffer). `gemm_fused_1x1` is the case
// kh = kw = sh = sw = 1, no padding (X[kk][j] = x[(img * k + kk) * hw + p]); the classifier is
// its case hw = 1. W is stored (m, kp), each row zero-padded to kp, a multiple of BK.
//
// Tiles: a block of 256 threads computes a 128 x 128 tile of Y in 8-deep slices of k, W's and
// X's slices staged in shared memory twice (double buffering: the next slice is read from
// global memory into registers while the current one is multiplied, one barrier a slice).
// Thread (ty, tx) = (tid / 16, tid % 16) owns the 8 x 8 outputs of rows {0, 64} + 4 ty + 0..3
// and columns {0, 64} + 4 tx + 0..3 of the tile: four 16-byte shared loads feed 64 FMAs.
// Loads: W as one float4 a thread (row tid / 2, k 4 (tid % 2) .. +3), X as four floats a thread
// (k row tid / 32, columns tid % 32 + 32 q: a warp reads 32 consecutive pixels).
// Every edge is guarded: rows >= m and columns >= cols are neither read nor written, k >= the
// true k reads 0 from X (and W's padding is 0).

#define BM 128
#define BN 128
#define BK 8

template <bool POINTWISE>
__device__ __forceinline__ void gemm_fused_tile(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    const float* __restrict__ res, float* __restrict__ y, int m, int k, int kp, long long cols,
    int c, int h, int wd, int ho, int wo, int kh, int kw, int sh, int sw, int pt, int pl,
    float lo, float hi)
{
    __shared__ __align__(16) float As[2][BK][BM];
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int tid = threadIdx.x;
    const int hw = ho * wo, taps = kh * kw;
    const long long plane = (long long)h * wd;
    const int row0 = blockIdx.y * BM;
    const long long col0 = (long long)blockIdx.x * BN;

    // this thread's loads
    const int a_row = row0 + tid / 2, a_k = (tid % 2) * 4;
    const float* a_src = w + (long long)(a_row < m ? a_row : 0) * kp + a_k;
    const int b_k = tid / 32;
    long long b_base[4];  // x offset of the column's image (and pixel, pointwise); -1: none
    int b_yx[4];  // top-left input pixel of the column's window, (iy << 16) + ix (implicit)
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        long long j = col0 + tid % 32 + 32 * q;
        long long img = j / hw;
        int p = (int)(j - img * hw);
        b_base[q] = j < cols ? (POINTWISE ? img * k * hw + p : img * c * plane) : -1;
        b_yx[q] = (((p / wo) * sh - pt) << 16) + (p % wo) * sw - pl;
    }
    float4 a_reg;
    float b_reg[4];
    auto load = [&](int k0) {
        a_reg = a_row < m ? *reinterpret_cast<const float4*>(a_src + k0)
                          : make_float4(0.f, 0.f, 0.f, 0.f);
        int kk = k0 + b_k;
        int ci = kk / taps, t = kk - ci * taps, ky = t / kw, kx = t - ky * kw;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            float v = 0.0f;
            if (b_base[q] >= 0 && kk < k) {
                if (POINTWISE) {
                    v = x[b_base[q] + (long long)kk * hw];
                } else {
                    int ix = (short)(b_yx[q] & 0xffff), iy = (b_yx[q] - ix) >> 16;
                    iy += ky;
                    ix += kx;
                    if (iy >= 0 && iy < h && ix >= 0 && ix < wd)
                        v = x[b_base[q] + ci * plane + (long long)iy * wd + ix];
                }
            }
            b_reg[q] = v;
        }
    };
    auto store = [&](int buf) {
        As[buf][a_k + 0][tid / 2] = a_reg.x;
        As[buf][a_k + 1][tid / 2] = a_reg.y;
        As[buf][a_k + 2][tid / 2] = a_reg.z;
        As[buf][a_k + 3][tid / 2] = a_reg.w;
#pragma unroll
        for (int q = 0; q < 4; ++q) Bs[buf][b_k][tid % 32 + 32 * q] = b_reg[q];
    };

    const int ty = tid / 16, tx = tid % 16;
    float acc[8][8];
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
        for (int q = 0; q < 8; ++q) acc[r][q] = 0.0f;

    const int slices = kp / BK;
    load(0);
    store(0);
    __syncthreads();
    for (int s = 0; s < slices; ++s) {
        const int buf = s & 1;
        if (s + 1 < slices) load((s + 1) * BK);
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float4 a0 = *reinterpret_cast<const float4*>(&As[buf][kk][4 * ty]);
            float4 a1 = *reinterpret_cast<const float4*>(&As[buf][kk][64 + 4 * ty]);
            float4 b0 = *reinterpret_cast<const float4*>(&Bs[buf][kk][4 * tx]);
            float4 b1 = *reinterpret_cast<const float4*>(&Bs[buf][kk][64 + 4 * tx]);
            float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int r = 0; r < 8; ++r)
#pragma unroll
                for (int q = 0; q < 8; ++q) acc[r][q] = fmaf(av[r], bv[q], acc[r][q]);
        }
        if (s + 1 < slices) store(buf ^ 1);
        __syncthreads();
    }

    // epilogue: bias, residual, clip, one write. A thread's 4 adjacent columns 4 tx + 0..3 (and
    // 64 + ...) lie in one image and start 16 bytes aligned when hw % 4 == 0: one float4 read
    // of the residual and one float4 write a row; otherwise (7x7 planes, the classifier) one
    // float at a time.
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const long long j0 = col0 + 64 * half + 4 * tx;
        if (hw % 4 == 0 && j0 + 3 < cols) {
            long long img = j0 / hw;
            long long out0 = img * m * hw + (j0 - img * hw);
#pragma unroll
            for (int r = 0; r < 8; ++r) {
                int row = row0 + (r < 4 ? 4 * ty + r : 64 + 4 * ty + r - 4);
                if (row >= m) continue;
                long long idx = out0 + (long long)row * hw;
                float bias = b[row];
                float4 v = make_float4(acc[r][4 * half] + bias, acc[r][4 * half + 1] + bias,
                                       acc[r][4 * half + 2] + bias, acc[r][4 * half + 3] + bias);
                if (res) {
                    float4 rv = *reinterpret_cast<const float4*>(res + idx);
                    v.x += rv.x;
                    v.y += rv.y;
                    v.z += rv.z;
                    v.w += rv.w;
                }
                v.x = fminf(fmaxf(v.x, lo), hi);
                v.y = fminf(fmaxf(v.y, lo), hi);
                v.z = fminf(fmaxf(v.z, lo), hi);
                v.w = fminf(fmaxf(v.w, lo), hi);
                *reinterpret_cast<float4*>(y + idx) = v;
            }
            continue;
        }
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            long long j = j0 + e;
            if (j >= cols) continue;
            long long img = j / hw;
            long long out0 = img * m * hw + (j - img * hw);
#pragma unroll
            for (int r = 0; r < 8; ++r) {
                int row = row0 + (r < 4 ? 4 * ty + r : 64 + 4 * ty + r - 4);
                if (row >= m) continue;
                long long idx = out0 + (long long)row * hw;
                float v = acc[r][4 * half + e] + b[row];
                if (res) v += res[idx];
                y[idx] = fminf(fmaxf(v, lo), hi);
            }
        }
    }
}

// A 1x1 convolution of stride 1 without padding (and the classifier, hw = 1).
extern "C" __global__ void __launch_bounds__(256, 2) gemm_fused_1x1(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    const float* __restrict__ res, float* __restrict__ y, int m, int k, int kp, long long cols,
    int hw, float lo, float hi)
{
    gemm_fused_tile<true>(x, w, b, res, y, m, k, kp, cols, k, 1, hw, 1, hw, 1, 1, 1, 1, 0, 0,
                          lo, hi);
}

// Any other convolution of one group (3x3, 7x7, a strided 1x1) as an implicit GEMM.
extern "C" __global__ void __launch_bounds__(256, 2) gemm_fused_conv(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    const float* __restrict__ res, float* __restrict__ y, int m, int k, int kp, long long cols,
    int c, int h, int wd, int ho, int wo, int kh, int kw, int sh, int sw, int pt, int pl,
    float lo, float hi)
{
    gemm_fused_tile<false>(x, w, b, res, y, m, k, kp, cols, c, h, wd, ho, wo, kh, kw, sh, sw,
                           pt, pl, lo, hi);
}
