"""The NumPy twin of kernels/gemm_fused.cu: the same tiles, thread-to-data maps, bounds tests,
packed window origins and epilogue addresses, vectorised over a block's 256 threads, so the
CPU tests check the indexing the GPU runs on sizes that are not multiples of a tile.

`gemm_fused(x, wp, b, res, geometry, k, lo, hi)` writes what the kernel writes, into a flat
output first filled with NaN (an element no thread writes stays NaN). `BUGS` names mistakes a
test plants to show the comparison catches them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BM, BN, BK, THREADS = 128, 128, 8, 256

#: mistakes a test can plant in the twin: each must make its output wrong
BUGS = ("no_k_guard", "epilogue_second_half_columns", "window_unpacked_unsigned")


@dataclass(frozen=True)
class Geometry:
    """A convolution's sizes as the kernel takes them (a pointwise one: kh = kw = 1, ...)."""

    n: int
    c: int
    h: int
    wd: int
    m: int
    ho: int
    wo: int
    kh: int = 1
    kw: int = 1
    sh: int = 1
    sw: int = 1
    pt: int = 0
    pl: int = 0

    @property
    def pointwise(self) -> bool:
        return (self.kh, self.kw, self.sh, self.sw, self.pt, self.pl) == (1, 1, 1, 1, 0, 0) \
            and (self.h, self.wd) == (self.ho, self.wo)


def padded_k(k: int) -> int:
    """The row length of the stored weight: k rounded up to a multiple of BK."""
    return -(-k // BK) * BK


def pack_weight(weight: np.ndarray) -> np.ndarray:
    """(m, ...) weights as the kernel reads them: (m, padded_k(k)), rows zero-padded."""
    m = len(weight)
    flat = weight.reshape(m, -1)
    out = np.zeros((m, padded_k(flat.shape[1])), flat.dtype)
    out[:, : flat.shape[1]] = flat
    return out


def gemm_fused(x: np.ndarray, wp: np.ndarray, b: np.ndarray, res: np.ndarray | None,
               g: Geometry, lo: float = -np.inf, hi: float = np.inf, bug: str = "") -> np.ndarray:
    """What gemm_fused_1x1 (g.pointwise) or gemm_fused_conv writes, flat (n * m * ho * wo),
    for flat x (n * c * h * wd) and wp from `pack_weight`."""
    xf, wf = x.ravel(), wp.ravel()
    m, kp = wp.shape
    k = g.c * g.kh * g.kw
    hw, taps, plane = g.ho * g.wo, g.kh * g.kw, g.h * g.wd
    cols = g.n * hw
    y = np.full(g.n * m * hw, np.nan, dtype=np.result_type(x, wp))
    tid = np.arange(THREADS)
    ty, tx = tid // 16, tid % 16
    quad = np.arange(4)
    rows_local = np.concatenate([4 * ty[:, None] + quad, 64 + 4 * ty[:, None] + quad], axis=1)
    cols_local = np.concatenate([4 * tx[:, None] + quad, 64 + 4 * tx[:, None] + quad], axis=1)
    epilogue_cols = cols_local
    if bug == "epilogue_second_half_columns":  # 4 tx + q - 4 for q >= 4: the 64 offset lost
        epilogue_cols = np.concatenate([4 * tx[:, None] + quad] * 2, axis=1)
    for by in range(-(-m // BM)):
        row0 = by * BM
        a_row = row0 + tid // 2
        a_k = (tid % 2) * 4
        a_src = np.where(a_row < m, a_row, 0) * kp + a_k
        b_k = tid // 32
        for bx in range(-(-cols // BN)):
            col0 = bx * BN
            j = col0 + tid[:, None] % 32 + 32 * quad  # (256, 4)
            img = j // hw
            p = j - img * hw
            base = np.where(j < cols, img * k * hw + p if g.pointwise else img * g.c * plane, -1)
            yx = ((p // g.wo) * g.sh - g.pt) * 65536 + (p % g.wo) * g.sw - g.pl
            low = yx & 0xFFFF
            ix0 = low if bug == "window_unpacked_unsigned" else (low ^ 0x8000) - 0x8000
            iy0 = (yx - ix0) >> 16
            acc = np.zeros((THREADS, 8, 8), y.dtype)
            for s in range(kp // BK):
                k0 = s * BK
                a_sh = np.zeros((BK, BM), y.dtype)
                b_sh = np.zeros((BK, BN), y.dtype)
                a_reg = np.where((a_row < m)[:, None], wf[a_src[:, None] + k0 + quad], 0)
                for e in range(4):
                    a_sh[a_k + e, tid // 2] = a_reg[:, e]
                kk = k0 + b_k
                ci = kk // taps
                t = kk - ci * taps
                ky = t // g.kw
                kx = t - ky * g.kw
                past_k = np.broadcast_to((kk >= k)[:, None], base.shape)
                ok = (base >= 0) & (~past_k if bug != "no_k_guard" else True)
                if g.pointwise:
                    src = base + kk[:, None] * hw
                else:
                    iy, ix = iy0 + ky[:, None], ix0 + kx[:, None]
                    ok &= (iy >= 0) & (iy < g.h) & (ix >= 0) & (ix < g.wd)
                    src = base + ci[:, None] * plane + iy * g.wd + ix
                inside = ok & (src >= 0) & (src < len(xf))
                v = np.where(inside, xf[np.where(inside, src, 0)], 0)
                if bug == "no_k_guard":  # a read past k: another tensor's values, or NaN poison
                    v = np.where(ok & past_k, np.nan, v)
                b_sh[b_k[:, None], tid[:, None] % 32 + 32 * quad] = v
                acc += np.einsum("ktr,ktq->trq", a_sh[:, rows_local], b_sh[:, cols_local])
            jj = col0 + epilogue_cols  # (256, 8)
            rr = row0 + rows_local
            img = jj // hw
            out0 = img * m * hw + (jj - img * hw)
            # the float4 path: 4 columns from the first one's image and pixel, + e
            j0 = jj[:, [0, 0, 0, 0, 4, 4, 4, 4]]
            vec = (hw % 4 == 0) & (j0 + 3 < cols)
            img0 = j0 // hw
            out0 = np.where(vec, img0 * m * hw + (j0 - img0 * hw) + np.tile(quad, 2), out0)
            idx = out0[:, None, :] + rr[:, :, None] * hw  # (256, r, q)
            ok = (jj < cols)[:, None, :] & (rr < m)[:, :, None]
            v = acc + b[np.where(rr < m, rr, 0)][:, :, None]
            if res is not None:
                v = v + res.ravel()[np.where(ok, idx, 0)]
            y[idx[ok]] = np.minimum(np.maximum(v, lo), hi)[ok]
    return y
