// fc_opt and fc_coalesced: fully-connected layers specialised for LeNet's three shapes.
// A block takes FC_IMGS images, stages their input vectors in shared memory (every thread of a
// warp then reads the same element: a broadcast), and each thread computes one output neuron for
// all FC_IMGS images, so each weight it loads is used FC_IMGS times from a register.
//
// Built twice from this one source:
//   default (fc_opt)                   w is (out, in) as PyTorch stores it: thread o reads
//                                      w[o*IN + k], so a warp's 32 loads are IN*4 bytes apart,
//                                      32 separate memory transactions for one instruction.
//   -DLENET_FC_TRANSPOSED (fc_coalesced) w is stored transposed, (in, out): thread o reads
//                                      w[k*OUT + o], so a warp reads 128 consecutive bytes.
#include "common.cuh"

constexpr int FC_IMGS = 16;

template <int IN, int OUT>
__device__ __forceinline__ float weight(const float* __restrict__ w, int k, int o) {
#ifdef LENET_FC_TRANSPOSED
    return __ldg(w + k * OUT + o);
#else
    return __ldg(w + o * IN + k);
#endif
}

template <int IN, int OUT, bool RELU>
__device__ __forceinline__ void linear(const float* __restrict__ in, const float* __restrict__ w,
                                       const float* __restrict__ b, float* __restrict__ out,
                                       int n, float* xs) {
    const int img0 = blockIdx.x * FC_IMGS;
    const int nimg = min(FC_IMGS, n - img0);
    if (nimg <= 0) return;
    // images past the end of the batch read zeros (never stored), not uninitialised memory
    for (int i = threadIdx.x; i < FC_IMGS * IN; i += blockDim.x)
        xs[i] = i < nimg * IN ? in[(long long)img0 * IN + i] : 0.f;
    __syncthreads();
    for (int o = threadIdx.x; o < OUT; o += blockDim.x) {
        float acc[FC_IMGS];
        const float bias = b[o];
#pragma unroll
        for (int im = 0; im < FC_IMGS; ++im) acc[im] = bias;
#pragma unroll 4
        for (int k = 0; k < IN; ++k) {
            const float wv = weight<IN, OUT>(w, k, o);
#pragma unroll
            for (int im = 0; im < FC_IMGS; ++im) acc[im] = fmaf(xs[im * IN + k], wv, acc[im]);
        }
        for (int im = 0; im < nimg; ++im)
            out[(long long)(img0 + im) * OUT + o] = RELU ? relu(acc[im]) : acc[im];
    }
}

// 256 -> 120, ReLU
extern "C" __global__ void __launch_bounds__(128) Linear1_ReLu(
    const float* __restrict__ in, const float* __restrict__ w, const float* __restrict__ b,
    float* __restrict__ out, int n) {
    __shared__ float xs[FC_IMGS * 256];
    linear<256, 120, true>(in, w, b, out, n, xs);
}

// 120 -> 84, ReLU
extern "C" __global__ void __launch_bounds__(128) Linear2_ReLu(
    const float* __restrict__ in, const float* __restrict__ w, const float* __restrict__ b,
    float* __restrict__ out, int n) {
    __shared__ float xs[FC_IMGS * 120];
    linear<120, 84, true>(in, w, b, out, n, xs);
}

// 84 -> 10, no ReLU: the logits
extern "C" __global__ void __launch_bounds__(128) Linear3(
    const float* __restrict__ in, const float* __restrict__ w, const float* __restrict__ b,
    float* __restrict__ out, int n) {
    __shared__ float xs[FC_IMGS * 84];
    linear<84, 10, false>(in, w, b, out, n, xs);
}
