// The direct convolution both kernel files share (pasted in by variants.cuda.build): output
// element `idx` of y (n, oc, ho, wo), NCHW float32, is b[o] + the sum over its group's
// channels ci and taps (i, j) inside the input of x[img][g*cg+ci][oy*sh-pt+i][ox*sw-pl+j] *
// w[o][ci][i][j]. Twin: variants/onnxplan/twins.py.
#pragma once

__device__ __forceinline__ float conv_direct_at(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
    long long idx, int c, int h, int wd, int oc, int ho, int wo, int kh, int kw, int sh, int sw,
    int pt, int pl, int group)
{
    int ox = (int)(idx % wo);
    long long t = idx / wo;
    int oy = (int)(t % ho);
    t /= ho;
    int o = (int)(t % oc);
    int img = (int)(t / oc);
    int cg = c / group, g = o / (oc / group);
    float acc = b[o];
    for (int ci = 0; ci < cg; ++ci) {
        const float* xc = x + ((long long)img * c + g * cg + ci) * h * wd;
        const float* wc = w + ((long long)o * cg + ci) * kh * kw;
        for (int i = 0; i < kh; ++i) {
            int iy = oy * sh - pt + i;
            if (iy < 0 || iy >= h) continue;
            for (int j = 0; j < kw; ++j) {
                int ix = ox * sw - pl + j;
                if (ix < 0 || ix >= wd) continue;
                acc += xc[iy * wd + ix] * wc[i * kw + j];
            }
        }
    }
    return acc;
}
