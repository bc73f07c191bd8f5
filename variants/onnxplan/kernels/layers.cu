// The layer plan's ops as plain CUDA kernels, NCHW float32, one thread per output element.
// Each kernel's indexing has a NumPy twin in variants/onnxplan/twins.py, tested on the CPU.
// Sizes are int (every tensor of a study fits 2^31 elements per launch); flat indices of
// whole batches are long long.

#include "conv_direct.cuh"

// Direct convolution of any kernel size, stride, padding and group: thread `idx` computes
// y[img][o][oy][ox] = b[o] + sum over its group's channels ci and taps (i, j) inside the
// input of x[img][g*cg+ci][oy*sh-pt+i][ox*sw-pl+j] * w[o][ci][i][j].
extern "C" __global__ void conv_direct(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    float* __restrict__ y, int n, int c, int h, int wd, int oc, int ho, int wo, int kh, int kw,
    int sh, int sw, int pt, int pl, int group)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= (long long)n * oc * ho * wo) return;
    y[idx] = conv_direct_at(x, w, b, idx, c, h, wd, oc, ho, wo, kh, kw, sh, sw, pt, pl, group);
}

// Im2Col: col[img][ch][i][j][oy*wo+ox] = x[img][ch][oy*sh-pt+i][ox*sw-pl+j], 0 outside the
// input. Viewed as (n, group, cg*kh*kw, ho*wo), a group's slice is the right operand of the
// GEMM W_g (og, cg*kh*kw) @ col, whose (og, ho*wo) result is y's NCHW slice.
extern "C" __global__ void im2col(
    const float* __restrict__ x, float* __restrict__ col, int n, int c, int h, int wd,
    int ho, int wo, int kh, int kw, int sh, int sw, int pt, int pl)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= (long long)n * c * kh * kw * ho * wo) return;
    int p = (int)(idx % (ho * wo));
    long long t = idx / (ho * wo);
    int j = (int)(t % kw);
    t /= kw;
    int i = (int)(t % kh);
    long long plane = t / kh;  // img * c + ch
    int iy = (p / wo) * sh - pt + i, ix = (p % wo) * sw - pl + j;
    bool inside = iy >= 0 && iy < h && ix >= 0 && ix < wd;
    col[idx] = inside ? x[plane * h * wd + iy * wd + ix] : 0.0f;
}

// y[idx] += b[channel of idx] for NCHW y of `c` channels of `hw` values.
extern "C" __global__ void bias_channels(float* y, const float* __restrict__ b, long long count,
                                         int c, int hw)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx < count) y[idx] += b[(idx / hw) % c];
}

// y = min(max(x, lo), hi): Clip (ReLU6: lo 0, hi 6) and Relu (lo 0, hi +inf).
extern "C" __global__ void clip(const float* __restrict__ x, float* __restrict__ y,
                                long long count, float lo, float hi)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx < count) y[idx] = fminf(fmaxf(x[idx], lo), hi);
}

// y = a + b, elementwise (the residual Add).
extern "C" __global__ void add(const float* __restrict__ a, const float* __restrict__ b,
                               float* __restrict__ y, long long count)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx < count) y[idx] = a[idx] + b[idx];
}

// BatchNormalization kept as its own op: y = x * scale[ch] + shift[ch] (folded statistics).
extern "C" __global__ void batchnorm(const float* __restrict__ x, float* __restrict__ y,
                                     const float* __restrict__ scale,
                                     const float* __restrict__ shift, long long count, int c,
                                     int hw)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= count) return;
    int ch = (int)((idx / hw) % c);
    y[idx] = x[idx] * scale[ch] + shift[ch];
}

// GlobalAveragePool: one thread per (img, ch) plane of hw values.
extern "C" __global__ void global_avg_pool(const float* __restrict__ x, float* __restrict__ y,
                                           int planes, int hw)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= planes) return;
    const float* p = x + (long long)idx * hw;
    float s = 0.0f;
    for (int k = 0; k < hw; ++k) s += p[k];
    y[idx] = s / hw;
}

// MaxPool (is_max 1) or AveragePool (is_max 0; count_include_pad as given), one thread per
// output element.
extern "C" __global__ void pool(const float* __restrict__ x, float* __restrict__ y, int n,
                                int c, int h, int wd, int ho, int wo, int kh, int kw, int sh,
                                int sw, int pt, int pl, int is_max, int count_pad)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= (long long)n * c * ho * wo) return;
    int ox = (int)(idx % wo);
    long long t = idx / wo;
    int oy = (int)(t % ho);
    long long plane = t / ho;
    const float* xp = x + plane * h * wd;
    float acc = is_max ? -__int_as_float(0x7f800000) : 0.0f;
    int inside = 0;
    for (int i = 0; i < kh; ++i) {
        int iy = oy * sh - pt + i;
        if (iy < 0 || iy >= h) continue;
        for (int j = 0; j < kw; ++j) {
            int ix = ox * sw - pl + j;
            if (ix < 0 || ix >= wd) continue;
            float v = xp[iy * wd + ix];
            acc = is_max ? fmaxf(acc, v) : acc + v;
            ++inside;
        }
    }
    y[idx] = is_max ? acc : acc / (count_pad ? kh * kw : inside);
}

// Gemm: y[img][m] = b[m] + sum_k x[img][k] * w[m][k], one thread per output.
extern "C" __global__ void gemm_naive(const float* __restrict__ x, const float* __restrict__ w,
                                      const float* __restrict__ b, float* __restrict__ y, int n,
                                      int k, int m)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n * m) return;
    int img = idx / m, o = idx % m;
    const float* xr = x + (long long)img * k;
    const float* wr = w + (long long)o * k;
    float acc = b[o];
    for (int q = 0; q < k; ++q) acc += xr[q] * wr[q];
    y[idx] = acc;
}
