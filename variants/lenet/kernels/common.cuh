// Shared device helpers for the LeNet kernels, pasted in by gpu.source (nvcc finds it through -I).
// Self-contained: NVRTC has no system headers.
#pragma once

// ReLU that lets NaN through (v < 0 is false for NaN), so a poisoned, unwritten input stays
// visible in the logits instead of being flushed to 0 as fmaxf(v, 0) would.
__device__ __forceinline__ float relu(float v) { return v < 0.f ? 0.f : v; }

// max that propagates NaN from either side, as PyTorch's max-pool does.
__device__ __forceinline__ float max_nan(float a, float b) { return (a > b || a != a) ? a : b; }

// conv2 (6 -> 16 channels, 5x5) for a 2x2 block of output pixels whose top-left is (oy, ox), output
// channels 4g..4g+3: acc[d][j] is channel 4g+j at pixel d = dy * 2 + dx. `img` is one image's
// (6,12,12) pool1 maps, `wt` conv2's weights transposed to (c, ky, kx, o) and `b` its bias, all in
// shared memory. Callers give every thread of a warp the same g, so a warp reads the same four
// weights at a time (one 16-byte broadcast load), and each of them feeds four FMAs, one per pixel.
__device__ __forceinline__ void conv2_quad(const float* img, const float* wt, const float* b,
                                           int oy, int ox, int g, float (&acc)[4][4]) {
    const float4 bias = reinterpret_cast<const float4*>(b)[g];
#pragma unroll
    for (int d = 0; d < 4; ++d) {
        acc[d][0] = bias.x;
        acc[d][1] = bias.y;
        acc[d][2] = bias.z;
        acc[d][3] = bias.w;
    }
#pragma unroll 1
    for (int c = 0; c < 6; ++c) {
        const float* src = img + c * 144 + oy * 12 + ox;
        float v[36];
#pragma unroll
        for (int r = 0; r < 6; ++r)
#pragma unroll
            for (int cc = 0; cc < 6; ++cc) v[r * 6 + cc] = src[r * 12 + cc];
        const float4* w4 = reinterpret_cast<const float4*>(wt + c * 25 * 16) + g;
#pragma unroll
        for (int t = 0; t < 25; ++t) {
            const int ky = t / 5, kx = t % 5;
            const float4 w = w4[t * 4];
#pragma unroll
            for (int d = 0; d < 4; ++d) {
                const float x = v[(d / 2 + ky) * 6 + d % 2 + kx];
                acc[d][0] = fmaf(x, w.x, acc[d][0]);
                acc[d][1] = fmaf(x, w.y, acc[d][1]);
                acc[d][2] = fmaf(x, w.z, acc[d][2]);
                acc[d][3] = fmaf(x, w.w, acc[d][3]);
            }
        }
    }
}

// Copy `count` floats (a multiple of 4, both pointers 16-byte aligned) into shared memory.
__device__ __forceinline__ void stage4(float* dst, const float* __restrict__ src, int count) {
    for (int i = threadIdx.x; i < count / 4; i += blockDim.x)
        reinterpret_cast<float4*>(dst)[i] = reinterpret_cast<const float4*>(src)[i];
}
