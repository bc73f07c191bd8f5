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


def epilogue(acc: np.ndarray, res: np.ndarray | None, lo: float, hi: float) -> np.ndarray:
    """fused.cu's epilogue on flat outputs: + the residual at the same index, then the clip."""
    if res is not None:
        acc = acc + res.ravel()
    return np.minimum(np.maximum(acc, lo), hi)


def pointwise_gemm(x: np.ndarray, w: np.ndarray, b: np.ndarray, res: np.ndarray | None,
                   lo: float, hi: float, hw: int) -> np.ndarray:
    """What `pointwise_gemm` writes, flat: column j is pixel j % hw of image j / hw, read at
    (j / hw) * k * hw + kk * hw + j % hw and written at (j / hw) * m * hw + row * hw + j % hw;
    the k loop runs in TK-deep slices zero-padded past k, as the kernel's tiles are."""
    m, k = w.shape[:2]
    cols = x.size // k
    j = np.arange(cols)
    in_base = (j // hw) * k * hw + j % hw
    out_base = (j // hw) * m * hw + j % hw
    tk = 16
    depth = -(-k // tk) * tk
    xs = np.zeros((depth, cols), x.dtype)
    xs[:k] = x.ravel()[in_base[None, :] + np.arange(k)[:, None] * hw]
    ws = np.zeros((m, depth), w.dtype)
    ws[:, :k] = w.reshape(m, k)
    acc = ws @ xs + b.reshape(m, 1)
    out = np.empty(cols * m, x.dtype)
    idx = out_base[None, :] + np.arange(m)[:, None] * hw
    out[idx.ravel()] = acc.ravel()
    return epilogue(out, res, lo, hi)


def depthwise3x3(x: np.ndarray, w: np.ndarray, b: np.ndarray, res: np.ndarray | None,
                 lo: float, hi: float, stride: int, out_hw: tuple[int, int]) -> np.ndarray:
    """What `depthwise3x3` writes, flat: each output's tile origin (32 x 8 outputs), its
    place in the tile, the shared-memory cell it reads ((ty * stride + i, tx * stride + j))
    and the input pixel that cell was loaded from (tile origin * stride - 1 + cell)."""
    n, c, h, wd = x.shape
    ho, wo = out_hw
    plane, oy, ox = np.meshgrid(np.arange(n * c), np.arange(ho), np.arange(wo), indexing="ij")
    ox0, oy0 = (ox // 32) * 32, (oy // 8) * 8
    tx, ty = ox - ox0, oy - oy0
    rows, cols = 7 * stride + 3, 31 * stride + 3
    ch = plane % c
    acc = b.ravel()[ch].astype(x.dtype)
    xf, wf = x.ravel(), w.ravel()
    for i in range(3):
        for j in range(3):
            r, q = ty * stride + i, tx * stride + j
            assert (r < rows).all() and (q < cols).all()  # inside the staged tile
            iy, ix = oy0 * stride - 1 + r, ox0 * stride - 1 + q
            inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < wd)
            src = np.where(inside, plane * h * wd + iy * wd + ix, 0)
            acc = acc + np.where(inside, xf[src], 0) * wf[ch * 9 + i * 3 + j]
    return epilogue(acc.ravel(), res, lo, hi)


def pointwise_gemm_tuned_columns(col0: int, tid: np.ndarray) -> np.ndarray:
    """The columns thread `tid` of a `pointwise_gemm_tuned` tile owns: tid % 16 + 16 q."""
    return col0 + (tid % 16)[:, None] + 16 * np.arange(4)[None, :]


def depthwise3x3_direct(x: np.ndarray, w: np.ndarray, b: np.ndarray, res: np.ndarray | None,
                        lo: float, hi: float, stride: int, out_hw: tuple[int, int]) -> np.ndarray:
    """What `depthwise3x3_direct` writes, flat: thread idx -> (plane, oy, ox), channel
    plane % c, taps oy * stride - 1 + i, ox * stride - 1 + j inside the input."""
    n, c, h, wd = x.shape
    ho, wo = out_hw
    idx = np.arange(n * c * ho * wo)
    ox = idx % wo
    t = idx // wo
    oy = t % ho
    plane = t // ho
    ch = plane % c
    acc = b.ravel()[ch].astype(x.dtype)
    xf, wf = x.ravel(), w.ravel()
    for i in range(3):
        iy = oy * stride - 1 + i
        for j in range(3):
            ix = ox * stride - 1 + j
            inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < wd)
            src = np.where(inside, plane * h * wd + iy * wd + ix, 0)
            acc = acc + np.where(inside, xf[src] * wf[ch * 9 + i * 3 + j], 0)
    return epilogue(acc, res, lo, hi)


def stem_conv3x3(x: np.ndarray, w: np.ndarray, b: np.ndarray, res: np.ndarray | None,
                 lo: float, hi: float, stride: tuple[int, int], pads: tuple[int, int],
                 out_hw: tuple[int, int]) -> np.ndarray:
    """What `stem_conv3x3` writes, flat: thread idx -> (img, oy, ox) gathers the 27 taps
    v[(ci * 3 + i) * 3 + j], then writes channel o at ((img * oc + o) * ho + oy) * wo + ox
    from the shared weights ws[o * 27 + e]."""
    n, c, h, wd = x.shape
    oc = w.shape[0]
    ho, wo = out_hw
    sh, sw = stride
    pt, pl = pads
    idx = np.arange(n * ho * wo)
    ox = idx % wo
    t = idx // wo
    oy = t % ho
    img = t // ho
    xf = x.ravel()
    v = np.zeros((27, len(idx)), x.dtype)
    for ci in range(3):
        for i in range(3):
            for j in range(3):
                iy, ix = oy * sh - pt + i, ox * sw - pl + j
                inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < wd)
                src = np.where(inside, ((img * c + ci) * h + iy) * wd + ix, 0)
                v[(ci * 3 + i) * 3 + j] = np.where(inside, xf[src], 0)
    ws = w.ravel()
    out = np.empty(n * oc * ho * wo, x.dtype)
    for o in range(oc):
        acc = b.ravel()[o] + ws[o * 27 : (o + 1) * 27] @ v
        out[((img * oc + o) * ho + oy) * wo + ox] = acc
    return epilogue(out, res, lo, hi)
