// conv_opt: convolutions specialised for LeNet's two shapes. Sizes are compile-time constants,
// the 5x5 window is unrolled, each block first stages its images in shared memory so the taps of
// every output are read from there, and every thread of a warp reads the same weight at the same
// time: conv1's 150 weights from constant memory (a broadcast), conv2's 2,400 from shared memory.
#include "common.cuh"

__constant__ float c_conv1_w[6 * 25];
__constant__ float c_conv1_b[6];

constexpr int CONV1_IMGS = 4;  // images per block
constexpr int CONV2_IMGS = 4;  // 64 threads per image: 256 per block

// in (n,1,28,28) -> out (n,6,24,24). One thread per output pixel computes its 6 channels.
extern "C" __global__ void __launch_bounds__(256) Conv1_ReLu(const float* __restrict__ in,
                                                             float* __restrict__ out, int n) {
    __shared__ float s[CONV1_IMGS * 784];
    const int img0 = blockIdx.x * CONV1_IMGS;
    const int nimg = min(CONV1_IMGS, n - img0);
    if (nimg <= 0) return;
    for (int i = threadIdx.x; i < nimg * 784; i += blockDim.x) s[i] = in[(long long)img0 * 784 + i];
    __syncthreads();
    for (int p = threadIdx.x; p < nimg * 576; p += blockDim.x) {
        const int im = p / 576, q = p % 576, y = q / 24, x = q % 24;
        const float* src = s + im * 784 + y * 28 + x;
        float v[25];
#pragma unroll
        for (int ky = 0; ky < 5; ++ky)
#pragma unroll
            for (int kx = 0; kx < 5; ++kx) v[ky * 5 + kx] = src[ky * 28 + kx];
        float* dst = out + (long long)(img0 + im) * 6 * 576 + q;
#pragma unroll
        for (int o = 0; o < 6; ++o) {
            float acc = c_conv1_b[o];
#pragma unroll
            for (int k = 0; k < 25; ++k) acc = fmaf(v[k], c_conv1_w[o * 25 + k], acc);
            dst[o * 576] = relu(acc);
        }
    }
}

// in (n,6,12,12) -> out (n,16,8,8). Each thread computes a 2x2 block of output pixels for four
// of the 16 channels (64 threads per image, a warp's threads all on the same four channels);
// conv2's 2,400 weights, more than the constant cache serves well, are staged in shared memory,
// transposed by the host to (c, ky, kx, o).
extern "C" __global__ void __launch_bounds__(256) Conv2_ReLu(const float* __restrict__ in,
                                                             const float* __restrict__ wt,
                                                             const float* __restrict__ b,
                                                             float* __restrict__ out, int n) {
    __shared__ __align__(16) float s[CONV2_IMGS * 864];
    __shared__ __align__(16) float sw[150 * 16];
    __shared__ __align__(16) float sb[16];
    const int img0 = blockIdx.x * CONV2_IMGS;
    const int nimg = min(CONV2_IMGS, n - img0);
    if (nimg <= 0) return;
    stage4(sw, wt, 150 * 16);
    stage4(sb, b, 16);
    stage4(s, in + (long long)img0 * 864, nimg * 864);
    __syncthreads();
    const int g = threadIdx.x / (CONV2_IMGS * 16), r = threadIdx.x % (CONV2_IMGS * 16);
    const int im = r / 16, oy = 2 * (r % 16 / 4), ox = 2 * (r % 4);
    if (im >= nimg) return;
    float acc[4][4];
    conv2_quad(s + im * 864, sw, sb, oy, ox, g, acc);
    float* dst = out + ((long long)(img0 + im) * 16 + 4 * g) * 64 + oy * 8 + ox;
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int d = 0; d < 4; ++d) dst[j * 64 + (d / 2) * 8 + d % 2] = relu(acc[d][j]);
}
