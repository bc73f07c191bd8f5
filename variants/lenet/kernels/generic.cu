// Generic LeNet layers: one thread per output element, every size a run-time argument.
// Used one image at a time by cuda_baseline and over the whole batch by batch_parallel.
// Layout is NCHW float32; a Linear weight is (out, in) row-major as PyTorch stores it.
// Indices are 32-bit: the host refuses a launch of 2^31 or more output elements. The inner loops
// are unrolled a little (the sizes stay run-time arguments) so a thread has several loads in
// flight.
#include "common.cuh"

// out[n][O][H-K+1][W-K+1] = relu(b[o] + sum_{c,ky,kx} in[n][c][y+ky][x+kx] * w[o][c][ky][kx])
extern "C" __global__ void Conv_ReLu(const float* __restrict__ in, const float* __restrict__ w,
                                     const float* __restrict__ b, float* __restrict__ out,
                                     int n, int C, int H, int W, int O, int K) {
    const int OH = H - K + 1, OW = W - K + 1;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n * O * OH * OW) return;
    const int x = i % OW, y = i / OW % OH, o = i / (OW * OH) % O, img = i / (OW * OH * O);
    float acc = b[o];
    for (int c = 0; c < C; ++c)
        for (int ky = 0; ky < K; ++ky)
#pragma unroll 5
            for (int kx = 0; kx < K; ++kx)
                acc += in[((img * C + c) * H + y + ky) * W + x + kx] *
                       w[((o * C + c) * K + ky) * K + kx];
    out[i] = relu(acc);
}

// 2x2 max-pool, stride 2: out[n][C][H/2][W/2].
extern "C" __global__ void MaxPool(const float* __restrict__ in, float* __restrict__ out,
                                   int n, int C, int H, int W) {
    const int OH = H / 2, OW = W / 2;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n * C * OH * OW) return;
    const int x = i % OW, y = i / OW % OH, plane = i / (OW * OH);  // plane = img * C + c
    const float* p = in + (plane * H + 2 * y) * W + 2 * x;
    out[i] = max_nan(max_nan(p[0], p[1]), max_nan(p[W], p[W + 1]));
}

// out[n][O] = b + in[n][:] . w[o][:], with ReLU when apply_relu != 0 (fc3 has none).
extern "C" __global__ void Linear_ReLu(const float* __restrict__ in, const float* __restrict__ w,
                                       const float* __restrict__ b, float* __restrict__ out,
                                       int n, int I, int O, int apply_relu) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n * O) return;
    const int o = i % O, img = i / O;
    float acc = b[o];
#pragma unroll 8
    for (int k = 0; k < I; ++k) acc += in[img * I + k] * w[o * I + k];
    out[i] = apply_relu ? relu(acc) : acc;
}
