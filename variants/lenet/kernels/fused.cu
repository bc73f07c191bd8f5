// overlap_fusion: three fused kernels per chunk of images.
//   Conv1_ReLu_Pool1  conv1 + ReLU + 2x2 max-pool: each thread computes the 2x2 window of conv1
//                     outputs under one pooled pixel (6 channels) from a 6x6 input patch and
//                     writes only the pooled value; the 24x24 maps never reach device memory.
//   Conv2_ReLu_Pool2  the same for conv2 (16 channels, 6 input channels), writing the pooled
//                     (n,16,4,4) maps in fc1's (C,H,W) input order.
//   Linear_ReLu_Fused fc1+ReLU, fc2+ReLU and fc3 in one block, the hidden vectors kept in shared
//                     memory; weights transposed (in, out) so warps read consecutive addresses.
// conv1's weights live in constant memory and conv2's in shared memory, as in conv_opt.
#include "common.cuh"

__constant__ float c_conv1_w[6 * 25];
__constant__ float c_conv1_b[6];

constexpr int CP1_IMGS = 8;  // images per block
constexpr int CP2_IMGS = 4;  // 64 threads per image: 256 per block
constexpr int FC_IMGS = 16;

__device__ __forceinline__ float pool4(float a, float b, float c, float d) {
    return max_nan(max_nan(a, b), max_nan(c, d));
}

// in (n,1,28,28) -> out (n,6,12,12)
extern "C" __global__ void __launch_bounds__(256) Conv1_ReLu_Pool1(const float* __restrict__ in,
                                                                   float* __restrict__ out, int n) {
    __shared__ __align__(16) float s[CP1_IMGS * 784];
    const int img0 = blockIdx.x * CP1_IMGS;
    const int nimg = min(CP1_IMGS, n - img0);
    if (nimg <= 0) return;
    stage4(s, in + (long long)img0 * 784, nimg * 784);
    __syncthreads();
    for (int p = threadIdx.x; p < nimg * 144; p += blockDim.x) {
        const int im = p / 144, q = p % 144, py = q / 12, px = q % 12;
        const float* src = s + im * 784 + (2 * py) * 28 + 2 * px;
        float v[36];
#pragma unroll
        for (int r = 0; r < 6; ++r)
#pragma unroll
            for (int c = 0; c < 6; ++c) v[r * 6 + c] = src[r * 28 + c];
        float* dst = out + (long long)(img0 + im) * 864 + q;
#pragma unroll
        for (int o = 0; o < 6; ++o) {
            float a[4];
#pragma unroll
            for (int d = 0; d < 4; ++d) {
                const int dy = d / 2, dx = d % 2;
                float acc = c_conv1_b[o];
#pragma unroll
                for (int ky = 0; ky < 5; ++ky)
#pragma unroll
                    for (int kx = 0; kx < 5; ++kx)
                        acc = fmaf(v[(dy + ky) * 6 + dx + kx], c_conv1_w[o * 25 + ky * 5 + kx], acc);
                a[d] = acc;
            }
            dst[o * 144] = relu(pool4(a[0], a[1], a[2], a[3]));  // relu(max) == max(relu)
        }
    }
}

// in (n,6,12,12) -> out (n,256) = (n,16,4,4) flattened. A thread takes one pooled pixel and four
// of the 16 channels (64 threads per image): it computes the 2x2 block of conv2 outputs under
// the pixel (conv2_quad, weights in shared memory as in conv_opt) and writes their maximum.
extern "C" __global__ void __launch_bounds__(256) Conv2_ReLu_Pool2(const float* __restrict__ in,
                                                                   const float* __restrict__ wt,
                                                                   const float* __restrict__ b,
                                                                   float* __restrict__ out, int n) {
    __shared__ __align__(16) float s[CP2_IMGS * 864];
    __shared__ __align__(16) float sw[150 * 16];
    __shared__ __align__(16) float sb[16];
    const int img0 = blockIdx.x * CP2_IMGS;
    const int nimg = min(CP2_IMGS, n - img0);
    if (nimg <= 0) return;
    stage4(sw, wt, 150 * 16);
    stage4(sb, b, 16);
    stage4(s, in + (long long)img0 * 864, nimg * 864);
    __syncthreads();
    const int g = threadIdx.x / (CP2_IMGS * 16), r = threadIdx.x % (CP2_IMGS * 16);
    const int im = r / 16, q = r % 16, py = q / 4, px = q % 4;
    if (im >= nimg) return;
    float acc[4][4];
    conv2_quad(s + im * 864, sw, sb, 2 * py, 2 * px, g, acc);
    float* dst = out + (long long)(img0 + im) * 256 + 4 * g * 16 + q;
#pragma unroll
    for (int j = 0; j < 4; ++j)
        dst[j * 16] = relu(pool4(acc[0][j], acc[1][j], acc[2][j], acc[3][j]));
}

// One layer for FC_IMGS images: ys[im][o] = b[o] + xs[im][:] . wt[:][o], wt transposed (IN, OUT).
template <int IN, int OUT, bool RELU>
__device__ __forceinline__ void dense(const float* __restrict__ xs, const float* __restrict__ wt,
                                      const float* __restrict__ b, float* ys) {
    for (int o = threadIdx.x; o < OUT; o += blockDim.x) {
        float acc[FC_IMGS];
        const float bias = __ldg(b + o);
#pragma unroll
        for (int im = 0; im < FC_IMGS; ++im) acc[im] = bias;
#pragma unroll 4
        for (int k = 0; k < IN; ++k) {
            const float wv = __ldg(wt + k * OUT + o);
#pragma unroll
            for (int im = 0; im < FC_IMGS; ++im) acc[im] = fmaf(xs[im * IN + k], wv, acc[im]);
        }
#pragma unroll
        for (int im = 0; im < FC_IMGS; ++im) ys[im * OUT + o] = RELU ? relu(acc[im]) : acc[im];
    }
}

// in (n,256) -> logits (n,10)
extern "C" __global__ void __launch_bounds__(128) Linear_ReLu_Fused(
    const float* __restrict__ in, const float* __restrict__ w1t, const float* __restrict__ b1,
    const float* __restrict__ w2t, const float* __restrict__ b2, const float* __restrict__ w3t,
    const float* __restrict__ b3, float* __restrict__ out, int n) {
    __shared__ __align__(16) float x[FC_IMGS * 256];
    __shared__ __align__(16) float h1[FC_IMGS * 120];
    __shared__ __align__(16) float h2[FC_IMGS * 84];
    __shared__ float logits[FC_IMGS * 10];
    const int img0 = blockIdx.x * FC_IMGS;
    const int nimg = min(FC_IMGS, n - img0);
    if (nimg <= 0) return;
    const float4* src4 = reinterpret_cast<const float4*>(in + (long long)img0 * 256);
    for (int i = threadIdx.x; i < FC_IMGS * 64; i += blockDim.x)
        reinterpret_cast<float4*>(x)[i] = i < nimg * 64 ? src4[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    __syncthreads();
    dense<256, 120, true>(x, w1t, b1, h1);
    __syncthreads();
    dense<120, 84, true>(h1, w2t, b2, h2);
    __syncthreads();
    dense<84, 10, false>(h2, w3t, b3, logits);
    __syncthreads();
    for (int i = threadIdx.x; i < nimg * 10; i += blockDim.x) out[(long long)img0 * 10 + i] = logits[i];
}
