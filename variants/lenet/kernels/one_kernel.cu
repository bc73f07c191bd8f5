// one_kernel, one_kernel_const, uint8_input, graph: the whole of LeNet-5 in one kernel. A block
// owns LENET_IMGS images end to end: it stages their pixels in shared memory, then
//   conv1 + ReLU + 2x2 max-pool  -> pool1 maps (IMGS, 6, 12, 12), shared memory
//   conv2 + ReLU + 2x2 max-pool  -> pool2 maps (IMGS, 256) in fc1's (C, H, W) order, shared
//   fc1 + ReLU, fc2 + ReLU, fc3  -> hidden vectors in shared memory, logits to device memory
// so nothing but the input and the logits touches device memory. The fully-connected layers
// split each dot product over SPLIT threads (partial sums in shared memory, added in a fixed
// order) so that every thread of the block has work and each weight feeds IMGS FMAs.
//
// Built from this one source with:
//   LENET_CONST_WEIGHTS  conv1's and conv2's weights and biases in __constant__ memory, read as
//                        operands of the FMAs; otherwise (default) each block copies them from
//                        device memory into shared memory first. The fully-connected weights
//                        (173 KB) cannot fit the 64 KB constant bank: both read them through L1.
//   LENET_CONV1_CONST    conv1's weights and bias alone in __constant__ memory (FMA operands:
//                        no shared load a weight, where conv1 spends one a FMA group of four),
//                        conv2's in shared memory.
//   LENET_INPUT_U8       the input is uint8 pixels as in an IDX file, converted here to v / 255
//                        (IEEE division, the host's normalisation bit for bit).
//   LENET_INPUT_ROWS     a last argument `rows`: image i is row rows[i] of `in` (a server's
//                        requests read where they lie, in page-locked memory, no gather);
//                        needs LENET_STAGE_ALL. Otherwise image i is row i.
//   LENET_IMGS=<n>       images per block (default 8; 256 threads).
//   LENET_MIN_BLOCKS=<n> blocks an SM the registers must allow (default: ptxas's choice).
//   LENET_FC_VEC4        the fully-connected layers whose inputs split in fours (fc1, fc2) read
//                        an image's inputs four at a time (one 16-byte shared load per 4 FMAs),
//                        LENET_FC_UNROLL (default 2) groups of four weights in flight.
//   LENET_STAGE_ALL      the input and conv2's weights staged with all of a thread's loads
//                        issued before its stores (stage_batched).
// Dynamic shared memory: IMGS * (784 + 864) floats, plus 160 + 2416 for the weights in shared
// memory (see the layout below; the host computes the same sum).
#include "common.cuh"

#ifndef LENET_IMGS
#define LENET_IMGS 8
#endif
#ifdef LENET_MIN_BLOCKS  // (no second argument otherwise: ptxas then allocates registers
#define LENET_BOUNDS __launch_bounds__(256, LENET_MIN_BLOCKS)  // differently, 68-90 not 60-62)
#else
#define LENET_BOUNDS __launch_bounds__(256)
#endif
#ifndef LENET_FC_UNROLL
#define LENET_FC_UNROLL 2
#endif
#if defined(LENET_INPUT_ROWS) && !defined(LENET_STAGE_ALL)
#error "LENET_INPUT_ROWS reads the input through stage_batched: it needs LENET_STAGE_ALL"
#endif
#ifdef LENET_INPUT_ROWS
#define LENET_ROWS_ARG , const int* __restrict__ rows
#else
#define LENET_ROWS_ARG
#endif
constexpr int IMGS = LENET_IMGS;
[[maybe_unused]] constexpr int FC_UNROLL = LENET_FC_UNROLL;  // groups of four inputs a thread has in flight
constexpr int THREADS = 256;

#ifdef LENET_INPUT_U8
typedef unsigned char in_t;
#else
typedef float in_t;
#endif

// Shared memory, in floats. Region A first holds the input; once conv1 has read it, pool2, the
// hidden vectors, the logits and the fully-connected partial sums reuse it.
constexpr int A_FLOATS = IMGS * 784;
constexpr int P1_FLOATS = IMGS * 864;
constexpr int P2_AT = 0, H1_AT = P2_AT + IMGS * 256, H2_AT = H1_AT + IMGS * 120;
constexpr int LOGITS_AT = H2_AT + IMGS * 84, PART_AT = LOGITS_AT + IMGS * 12;  // 16-byte aligned
constexpr int PART_FLOATS = 3 * IMGS * 84;  // the largest SPLIT * IMGS * OUT below (fc2)
static_assert((A_FLOATS + P1_FLOATS + 2576) * 4 <= 227 * 1024, "over a block's shared memory");
static_assert(PART_AT + PART_FLOATS <= A_FLOATS, "region A too small for the fc stage");
static_assert(PART_AT % 4 == 0 && H1_AT % 4 == 0, "16-byte alignment");

#if defined(LENET_CONST_WEIGHTS) || defined(LENET_CONV1_CONST)
__constant__ float c_conv1_w[6 * 25];
__constant__ float c_conv1_b[6];
#endif
#ifdef LENET_CONST_WEIGHTS
__constant__ float c_conv2_wt[150 * 16];
__constant__ float c_conv2_b[16];
#else
constexpr int W1_FLOATS = 160;  // conv1: 150 weights, 6 biases at 150, padding to 16 bytes
#endif

__device__ __forceinline__ float pool4(float a, float b, float c, float d) {
    return max_nan(max_nan(a, b), max_nan(c, d));
}

// Up to MAX 16-byte vectors load(0..count) into shared memory through `store(i, v)`, every
// load of a thread issued before its first store: one round trip to device memory, not one a
// vector (a block-stride loop of load-then-store leaves a single load in flight per thread).
template <int MAX, typename V, typename Load, typename Store>
__device__ __forceinline__ void stage_batched(Load load, int count, Store store) {
    constexpr int PER = (MAX + THREADS - 1) / THREADS;
    V v[PER];
#pragma unroll
    for (int j = 0; j < PER; ++j) {
        const int i = threadIdx.x + j * THREADS;
        if (i < count) v[j] = load(i);
    }
#pragma unroll
    for (int j = 0; j < PER; ++j) {
        const int i = threadIdx.x + j * THREADS;
        if (i < count) store(i, v[j]);
    }
}

// Vector i of the block's images as 16-byte vectors, PER an image: the block's images follow
// each other from `in`, or (LENET_INPUT_ROWS) image k is row rows[k] of `in`.
template <typename V, int PER>
struct ImageVectors {
    const V* __restrict__ in;
    const int* rows;  // the block's rows, in shared memory (LENET_INPUT_ROWS)
    __device__ __forceinline__ V operator()(int i) const {
#ifdef LENET_INPUT_ROWS
        return in[(long long)rows[i / PER] * PER + i % PER];
#else
        return in[i];
#endif
    }
};

// The block's images into shared memory as floats (rows past nimg are left as they are).
__device__ __forceinline__ void stage_input(float* s, const in_t* __restrict__ in, int nimg,
                                            const int* rows) {
#ifdef LENET_STAGE_ALL
    float4* s4 = reinterpret_cast<float4*>(s);
#ifdef LENET_INPUT_U8
    // sixteen pixels a load (784 = 49 x 16 bytes an image): a warp reads 512 contiguous bytes,
    // the request size that keeps PCIe busy when `in` is page-locked host memory read in place
    const ImageVectors<uint4, 49> vectors{reinterpret_cast<const uint4*>(in), rows};
    stage_batched<IMGS * 49, uint4>(vectors, nimg * 49, [&](int i, uint4 u) {
        const unsigned words[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int k = 0; k < 4; ++k)
            s4[4 * i + k] = make_float4(float(words[k] & 0xff) / 255.f,
                                        float(words[k] >> 8 & 0xff) / 255.f,
                                        float(words[k] >> 16 & 0xff) / 255.f,
                                        float(words[k] >> 24) / 255.f);
    });
#else
    const ImageVectors<float4, 196> vectors{reinterpret_cast<const float4*>(in), rows};
    stage_batched<IMGS * 196, float4>(vectors, nimg * 196, [&](int i, float4 f) { s4[i] = f; });
#endif
    return;
#endif
#ifdef LENET_INPUT_U8
    const uchar4* src = reinterpret_cast<const uchar4*>(in);
    for (int i = threadIdx.x; i < nimg * 196; i += THREADS) {
        const uchar4 u = src[i];
        reinterpret_cast<float4*>(s)[i] = make_float4(
            float(u.x) / 255.f, float(u.y) / 255.f, float(u.z) / 255.f, float(u.w) / 255.f);
    }
#else
    stage4(s, in, nimg * 784);
#endif
}

// conv1 + ReLU + pool for pooled pixel q (of 144) of image `img`: 6 channels, each the max of
// the 2x2 window of conv1 outputs under the pixel, computed from the 6x6 input patch.
__device__ __forceinline__ void conv1_pool1(const float* img, float* dst, int q,
                                            const float* w1, const float* b1) {
    const int py = q / 12, px = q % 12;
    const float* src = img + (2 * py) * 28 + 2 * px;
    float v[36];
#pragma unroll
    for (int r = 0; r < 6; ++r)
#pragma unroll
        for (int c = 0; c < 6; ++c) v[r * 6 + c] = src[r * 28 + c];
#pragma unroll
    for (int o = 0; o < 6; ++o) {
        float a[4];
#pragma unroll
        for (int d = 0; d < 4; ++d) a[d] = b1[o];
#pragma unroll
        for (int k = 0; k < 25; ++k) {
            const float w = w1[o * 25 + k];
            const int ky = k / 5, kx = k % 5;
#pragma unroll
            for (int d = 0; d < 4; ++d) a[d] = fmaf(v[(d / 2 + ky) * 6 + d % 2 + kx], w, a[d]);
        }
        dst[o * 144 + q] = relu(pool4(a[0], a[1], a[2], a[3]));  // relu(max) == max(relu)
    }
}

// One fully-connected layer for the block's IMGS images: ys[im][o] = b[o] + xs[im][:] . wt[:][o]
// (ReLU when RELU). Thread t < OUT * SPLIT computes output o = t % OUT over the s = t / OUT-th
// of the IN inputs for all IMGS images, so each weight it loads (coalesced: wt is (IN, OUT))
// feeds IMGS FMAs; the SPLIT partial sums are then added in order s = 0, 1, ...
template <int IN, int OUT, int SPLIT, bool RELU>
__device__ __forceinline__ void dense(const float* xs, const float* __restrict__ wt,
                                      const float* __restrict__ b, float* part, float* ys) {
    static_assert(IN % SPLIT == 0 && OUT * SPLIT <= THREADS, "bad split");
    static_assert(SPLIT * IMGS * OUT <= PART_FLOATS, "partial sums overflow");
    constexpr int K = IN / SPLIT;
    const int t = threadIdx.x;
    if (t < OUT * SPLIT) {
        const int o = t % OUT, s = t / OUT;
        const float* w = wt + s * K * OUT + o;
        const float* x = xs + s * K;
        float acc[IMGS];
#pragma unroll
        for (int im = 0; im < IMGS; ++im) acc[im] = 0.f;
#ifdef LENET_FC_VEC4
        if constexpr (K % 4 == 0 && IN % 4 == 0) {
            // four inputs of an image in one 16-byte (broadcast) load: a load per 4 FMAs, not
            // one per FMA; the sum still runs over k in order, so the result is the same
#pragma unroll FC_UNROLL
            for (int k = 0; k < K; k += 4) {
                float wv[4];
#pragma unroll
                for (int j = 0; j < 4; ++j) wv[j] = __ldg(w + (k + j) * OUT);
#pragma unroll
                for (int im = 0; im < IMGS; ++im) {
                    const float4 xv = *reinterpret_cast<const float4*>(x + im * IN + k);
                    acc[im] = fmaf(xv.x, wv[0], acc[im]);
                    acc[im] = fmaf(xv.y, wv[1], acc[im]);
                    acc[im] = fmaf(xv.z, wv[2], acc[im]);
                    acc[im] = fmaf(xv.w, wv[3], acc[im]);
                }
            }
        } else
#endif
        {
#pragma unroll 4
            for (int k = 0; k < K; ++k) {
                const float wv = __ldg(w + k * OUT);
#pragma unroll
                for (int im = 0; im < IMGS; ++im) acc[im] = fmaf(x[im * IN + k], wv, acc[im]);
            }
        }
#pragma unroll
        for (int im = 0; im < IMGS; ++im) part[(s * IMGS + im) * OUT + o] = acc[im];
    }
    __syncthreads();
    for (int i = t; i < IMGS * OUT; i += THREADS) {
        const int o = i % OUT;
        float v = __ldg(b + o);
#pragma unroll
        for (int s = 0; s < SPLIT; ++s) v += part[s * IMGS * OUT + i];
        ys[i] = RELU ? relu(v) : v;
    }
    __syncthreads();
}

// in (n, 784) of in_t -> out (n, 10) float logits. Grid: ceil(n / IMGS) blocks of THREADS.
extern "C" __global__ void LENET_BOUNDS LeNet_Fused(
    const in_t* __restrict__ in, const float* __restrict__ conv1_w,
    const float* __restrict__ conv1_b, const float* __restrict__ conv2_wt,
    const float* __restrict__ conv2_b, const float* __restrict__ w1t,
    const float* __restrict__ b1, const float* __restrict__ w2t, const float* __restrict__ b2,
    const float* __restrict__ w3t, const float* __restrict__ b3, float* __restrict__ out,
    int n LENET_ROWS_ARG) {
    extern __shared__ __align__(16) float smem[];
    float* a = smem;
    float* p1 = smem + A_FLOATS;
    const int img0 = blockIdx.x * IMGS;
    const int nimg = min(IMGS, n - img0);
    if (nimg <= 0) return;
#ifdef LENET_CONST_WEIGHTS
    const float* w1 = c_conv1_w;
    const float* bias1 = c_conv1_b;
    const float* w2 = c_conv2_wt;
    const float* bias2 = c_conv2_b;
#else
    float* w1s = smem + A_FLOATS + P1_FLOATS;
    float* w2 = w1s + W1_FLOATS;
    const float* bias2 = w2 + 2400;
#ifdef LENET_CONV1_CONST
    const float* w1 = c_conv1_w;
    const float* bias1 = c_conv1_b;
#else
    const float* w1 = w1s;
    const float* bias1 = w1s + 150;
    for (int i = threadIdx.x; i < 150; i += THREADS) w1s[i] = conv1_w[i];
    if (threadIdx.x < 6) w1s[150 + threadIdx.x] = conv1_b[threadIdx.x];
#endif
#ifdef LENET_STAGE_ALL
    float4* w2v = reinterpret_cast<float4*>(w2);
    const float4* w2src = reinterpret_cast<const float4*>(conv2_wt);
    stage_batched<600, float4>([&](int i) { return w2src[i]; }, 600,
                               [&](int i, float4 f) { w2v[i] = f; });
    stage4(w2 + 2400, conv2_b, 16);
#else
    stage4(w2, conv2_wt, 2400);
    stage4(w2 + 2400, conv2_b, 16);
#endif
#endif
#ifdef LENET_INPUT_ROWS
    __shared__ int block_rows[IMGS];  // read once (one round trip when rows is host memory)
    if (threadIdx.x < nimg) block_rows[threadIdx.x] = rows[img0 + threadIdx.x];
    __syncthreads();
    stage_input(a, in, nimg, block_rows);
#else
    stage_input(a, in + (long long)img0 * 784, nimg, nullptr);
#endif
    __syncthreads();

    for (int p = threadIdx.x; p < nimg * 144; p += THREADS)
        conv1_pool1(a + (p / 144) * 784, p1 + (p / 144) * 864, p % 144, w1, bias1);
    __syncthreads();  // region A is free from here on

    // conv2: item = g * IMGS * 16 + im * 16 + q: channel group g (4 channels, warp-uniform),
    // image im, pooled pixel q; each item computes the 2x2 conv2 outputs under q (conv2_quad)
    float* p2 = a + P2_AT;
    for (int item = threadIdx.x; item < 4 * IMGS * 16; item += THREADS) {
        const int g = item / (IMGS * 16), im = item / 16 % IMGS, q = item % 16;
        if (im >= nimg) continue;
        float acc[4][4];
        conv2_quad(p1 + im * 864, w2, bias2, 2 * (q / 4), 2 * (q % 4), g, acc);
#pragma unroll
        for (int j = 0; j < 4; ++j)
            p2[im * 256 + (4 * g + j) * 16 + q] =
                relu(pool4(acc[0][j], acc[1][j], acc[2][j], acc[3][j]));
    }
    // images past nimg: zeros, so the fc layers never read uninitialised shared memory
    for (int i = nimg * 256 + threadIdx.x; i < IMGS * 256; i += THREADS) p2[i] = 0.f;
    __syncthreads();

    float* part = a + PART_AT;
    dense<256, 120, 2, true>(p2, w1t, b1, part, a + H1_AT);
    dense<120, 84, 3, true>(a + H1_AT, w2t, b2, part, a + H2_AT);
    dense<84, 10, 12, false>(a + H2_AT, w3t, b3, part, a + LOGITS_AT);
    for (int i = threadIdx.x; i < nimg * 10; i += THREADS)
        out[(long long)img0 * 10 + i] = a[LOGITS_AT + i];
}
