"""NumPy twins of the indexing of kernels/layers.cu: each computes what the kernel computes
with the same flat thread index arithmetic, vectorised over the threads, so the CPU tests
check the indexing the GPU runs (the kernel's loop bodies, bounds tests and strides).
"""

from __future__ import annotations

import numpy as np


def conv_direct(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: tuple[int, int],
                pads: tuple[int, int], group: int, out_hw: tuple[int, int]) -> np.ndarray:
    """What `conv_direct` writes into y (flat), for flat arrays of x, w and b."""
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    ho, wo = out_hw
    sh, sw = stride
    pt, pl = pads
    xf, wf = x.ravel(), w.ravel()
    idx = np.arange(n * oc * ho * wo)
    ox = idx % wo
    t = idx // wo
    oy = t % ho
    t = t // ho
    o = t % oc
    img = t // oc
    g = o // (oc // group)
    acc = b.ravel()[o].astype(x.dtype)
    for ci in range(cg):
        xc = (img * c + g * cg + ci) * h * wd
        wc = (o * cg + ci) * kh * kw
        for i in range(kh):
            iy = oy * sh - pt + i
            for j in range(kw):
                ix = ox * sw - pl + j
                inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < wd)
                src = np.where(inside, xc + iy * wd + ix, 0)
                acc = acc + np.where(inside, xf[src] * wf[wc + i * kw + j], 0)
    return acc.reshape(n, oc, ho, wo)


def im2col(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
           pads: tuple[int, int], out_hw: tuple[int, int]) -> np.ndarray:
    """What `im2col` writes into col, flat (n*c*kh*kw*ho*wo values)."""
    n, c, h, wd = x.shape
    kh, kw = kernel
    ho, wo = out_hw
    sh, sw = stride
    pt, pl = pads
    idx = np.arange(n * c * kh * kw * ho * wo)
    p = idx % (ho * wo)
    t = idx // (ho * wo)
    j = t % kw
    t = t // kw
    i = t % kh
    plane = t // kh
    iy = (p // wo) * sh - pt + i
    ix = (p % wo) * sw - pl + j
    inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < wd)
    src = np.where(inside, plane * h * wd + iy * wd + ix, 0)
    return np.where(inside, x.ravel()[src], 0).astype(x.dtype)


def im2col_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: tuple[int, int],
                pads: tuple[int, int], group: int, out_hw: tuple[int, int]) -> np.ndarray:
    """The Im2Col stage's convolution: the twin's column buffer seen as (n, group, K, ho*wo),
    the weight as (group, og, K), a batched matrix product, then the bias per channel."""
    n, c = x.shape[:2]
    oc, cg, kh, kw = w.shape
    ho, wo = out_hw
    col = im2col(x, (kh, kw), stride, pads, out_hw).reshape(n, group, cg * kh * kw, ho * wo)
    y = np.matmul(w.reshape(group, oc // group, -1), col).reshape(n, oc, ho * wo)
    return (y + b[None, :, None]).reshape(n, oc, ho, wo)
