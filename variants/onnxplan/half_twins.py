"""NumPy twins of kernels/half.cu: the kernels' indexing with half storage emulated by
np.float16 (every stored activation rounded to half, every sum in float32), so the CPU tests
check what the GPU runs and `forward` measures what fp16 rounding does to the logits.

The tensor-core GEMM's twin follows its tile loads (the same flat formulas), the shared-memory
addresses each lane's mma.sync fragment registers are read from (`A_REGS`, `B_REGS`, `C_ACCS`:
copied from half.cu) and PTX's definition of what each register of an m16n8k16 fragment holds
(`ptx_a`, `ptx_b`, `ptx_c`). Where the kernel's addresses and PTX's layout disagree, the twin
multiplies permuted matrices and its result is wrong, as the kernel's would be.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from variants.onnxplan import execute, half, twins
from variants.onnxplan.fused_stages import is_depthwise3x3, is_pointwise
from variants.onnxplan.plan import Layer, Plan

HM, HN, HK = 64, 64, 32  # pointwise_gemm_half's tile: rows, columns, k slice
#: (row, k) offsets of A fragment registers 0..3 in As, from half.cu (af[mi][r] = pair(a + ...))
A_REGS = ((0, 0), (8, 0), (0, 8), (8, 8))
#: k offsets of B fragment registers 0..1 in Bs[col][k], from half.cu (bf[ni][r])
B_REGS = (0, 8)
#: (row, col) offsets of accumulator e = 0..3, from half.cu's epilogue (eh * 2 + e2)
C_ACCS = ((0, 0), (0, 1), (8, 0), (8, 1))


def ptx_a(g: int, t: int, reg: int, h: int) -> tuple[int, int]:
    """(row, k) that half `h` of register `reg` of an m16n8k16 .row A fragment holds for the
    lane of groupID g and thread-in-group t (PTX ISA, mma.m16n8k16 fragment layout)."""
    return g + 8 * (reg % 2), 2 * t + h + 8 * (reg // 2)


def ptx_b(g: int, t: int, reg: int, h: int) -> tuple[int, int]:
    """(k, col) that half `h` of register `reg` of a .col B fragment holds."""
    return 2 * t + h + 8 * reg, g


def ptx_c(g: int, t: int, e: int) -> tuple[int, int]:
    """(row, col) of fp32 accumulator `e` of the C/D fragment."""
    return g + 8 * (e // 2), 2 * t + e % 2


@cache
def fragment_maps(a_regs: Any = A_REGS, b_regs: Any = B_REGS,
                  c_accs: Any = C_ACCS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For one block tile: which As cell (flat, HM x HK) the mma treats as A[row][k], which Bs
    cell (flat, HN x HK, Bs[col][k]) as B[k][col], and which tile cell (flat, HM x HN) each C
    value is written to, from the kernel's addresses and PTX's layout (identity when they
    agree). A cell no lane loads or stores is -1. Cached: do not modify the arrays."""
    a_map = np.full((HM, HK), -1)
    b_map = np.full((HK, HN), -1)
    c_map = np.full((HM, HN), -1)
    for warp in range(4):
        wm, wn = (warp // 2) * 32, (warp % 2) * 32
        for lane in range(32):
            g, t = lane // 4, lane % 4
            for ks in (0, 16):
                for mi in range(2):
                    for reg, (dr, dk) in enumerate(a_regs):
                        for h in range(2):
                            r, k = ptx_a(g, t, reg, h)
                            a_map[wm + mi * 16 + r, ks + k] = \
                                (wm + mi * 16 + g + dr) * HK + ks + 2 * t + dk + h
                for ni in range(4):
                    for reg, dk in enumerate(b_regs):
                        for h in range(2):
                            k, col = ptx_b(g, t, reg, h)
                            b_map[ks + k, wn + ni * 8 + col] = \
                                (wn + ni * 8 + g) * HK + ks + 2 * t + dk + h
            for mi in range(2):
                for ni in range(4):
                    for e, (dr, dc) in enumerate(c_accs):
                        r, col = ptx_c(g, t, e)
                        c_map[wm + mi * 16 + g + dr, wn + ni * 8 + 2 * t + dc] = \
                            (wm + mi * 16 + r) * HN + wn + ni * 8 + col
    return a_map, b_map, c_map


def _tiles(a: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """(R, C) -> (R / rows, C / cols, rows * cols): each tile flat, row-major."""
    r, c = a.shape
    return a.reshape(r // rows, rows, c // cols, cols).transpose(0, 2, 1, 3).reshape(
        r // rows, c // cols, rows * cols)


def _untile(t: np.ndarray, rows: int, cols: int) -> np.ndarray:
    nr, nc = t.shape[:2]
    return t.reshape(nr, nc, rows, cols).transpose(0, 2, 1, 3).reshape(nr * rows, nc * cols)


def pointwise_gemm_half(x: np.ndarray, w: np.ndarray, b: np.ndarray, res: np.ndarray | None,
                        lo: float, hi: float, hw: int, out_dtype: Any = np.float16,
                        maps: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                        ) -> np.ndarray:
    """What `pointwise_gemm_half` (out_dtype float16) or `_f32out` (float32) writes, flat, for
    half `x` (n * k * hw values), half `w` (m, k), fp32 `b` and half `res`: As[r][kk] =
    w[(row0 + r) * k + k0 + kk] and Bs[c][q] = x[(j / hw) * k * hw + j % hw + (k0 + q) * hw]
    (j = col0 + c), zero past m, k and cols; products of halves summed in fp32; the epilogue
    in fp32 at (j / hw) * m * hw + row * hw + j % hw, then one rounding to `out_dtype`."""
    a_map, b_map, c_map = maps if maps is not None else fragment_maps()
    m, k = w.shape[:2]
    cols = x.size // k
    mp, kp, cp = (-(-m // HM) * HM, -(-k // HK) * HK, -(-cols // HN) * HN)
    j = np.arange(cp)
    b_base = np.where(j < cols, (j // hw) * k * hw + j % hw, -1)
    kk = np.arange(kp)
    ok = (b_base[None, :] >= 0) & (kk[:, None] < k)
    xs = np.where(ok, x.ravel()[np.where(ok, b_base[None, :] + kk[:, None] * hw, 0)], 0)
    ws = np.zeros((mp, kp), np.float16)
    ws[:m, :k] = w.reshape(m, k)
    # the mma's view of each tile: A from As (HM x HK), B from Bs stored [col][k] (HN x HK)
    a_used = _gather(_tiles(ws, HM, HK), a_map).reshape(mp // HM, kp // HK, HM, HK)
    bs = _tiles(np.ascontiguousarray(xs.T.astype(np.float16)), HN, HK)  # (cols, k) tiles
    b_used = _gather(bs, b_map).reshape(cp // HN, kp // HK, HK, HN)
    a_full = a_used.transpose(0, 2, 1, 3).reshape(mp, kp).astype(np.float32)
    b_full = b_used.transpose(1, 2, 0, 3).reshape(kp, cp).astype(np.float32)
    acc = a_full @ b_full  # products of halves are exact in fp32; sums in fp32
    # tile cell (r, c) gets the C value the kernel's lane stores there
    placed = _untile(_gather(_tiles(acc, HM, HN), c_map), HM, HN)
    placed = placed[:m, :cols] + b.reshape(m, 1).astype(np.float32)
    idx = (j[None, :cols] // hw) * m * hw + np.arange(m)[:, None] * hw + j[None, :cols] % hw
    out = np.empty(m * cols, np.float32)
    out[idx.ravel()] = placed.ravel()
    return _epilogue(out, res, lo, hi).astype(out_dtype)


def _gather(tiles: np.ndarray, cell_map: np.ndarray) -> np.ndarray:
    """Each tile's cells taken where `cell_map` says; -1 (a fragment value no lane loads or
    stores: garbage on the GPU) gives NaN."""
    flat = cell_map.ravel()
    out = tiles[..., np.where(flat >= 0, flat, 0)]
    out[..., flat < 0] = np.nan
    return out


def _epilogue(acc: np.ndarray, res: np.ndarray | None, lo: float, hi: float) -> np.ndarray:
    """half.cu's epilogue_h: + the half residual in fp32, then the clip, in fp32."""
    res32 = None if res is None else res.astype(np.float32)
    return twins.epilogue(acc.astype(np.float32), res32, float(lo), float(hi))


def depthwise3x3_half(x: np.ndarray, w: np.ndarray, b: np.ndarray, res: np.ndarray | None,
                      lo: float, hi: float, stride: int, out_hw: tuple[int, int]) -> np.ndarray:
    """What `depthwise3x3_half` writes: depthwise3x3_direct's indexing on half inputs, fp32
    sums and epilogue, one rounding to half."""
    res32 = None if res is None else res.astype(np.float32)
    acc = twins.depthwise3x3_direct(x.astype(np.float32), w.astype(np.float32),
                                    b.astype(np.float32), res32, lo, hi, stride, out_hw)
    return acc.astype(np.float16)


def stem_conv3x3_half(x: np.ndarray, w: np.ndarray, b: np.ndarray, res: np.ndarray | None,
                      lo: float, hi: float, stride: tuple[int, int], pads: tuple[int, int],
                      out_hw: tuple[int, int]) -> np.ndarray:
    """What `stem_conv3x3_half` writes: stem_conv3x3's indexing on half inputs, in fp32."""
    res32 = None if res is None else res.astype(np.float32)
    acc = twins.stem_conv3x3(x.astype(np.float32), w.astype(np.float32), b.astype(np.float32),
                             res32, lo, hi, stride, pads, out_hw)
    return acc.astype(np.float16)


def global_avg_pool_half(x: np.ndarray, planes: int, hw: int) -> np.ndarray:
    """What `global_avg_pool_half` writes: thread p sums x[p * hw + q] in fp32, / hw, half."""
    sums = x.ravel()[: planes * hw].reshape(planes, hw).astype(np.float32).sum(axis=1)
    return (sums / np.float32(hw)).astype(np.float16)


def ops(plan: Plan) -> Mapping[str, execute.OpFunction]:
    """Op functions for `execute.activations` that run the fp16 stage on a split plan
    (`half.split`): layers marked `half` through the twins of half.cu, activations carried as
    float32 arrays holding half values, the output layer's GEMM writing fp32 as the stage's
    does; ToHalf rounds; the other layers run in float32 as the tuned stage's kernels do."""

    def conv(layer: Layer, x: np.ndarray, res: np.ndarray | None = None) -> np.ndarray:
        if not layer.attrs.get("half"):
            fp32 = execute.gemm if layer.op == "Gemm" else execute.conv
            return fp32(layer, x.astype(np.float32), res)
        n = len(x)
        lo, hi = layer.attrs.get("act") or (-np.inf, np.inf)
        p = layer.params
        if layer.op == "Gemm" or is_pointwise(layer):
            hw = 1 if layer.op == "Gemm" else layer.out_shape[1] * layer.out_shape[2]
            out_dtype = np.float32 if layer.output == plan.output else np.float16
            y = pointwise_gemm_half(x.astype(np.float16), p["weight"].astype(np.float16),
                                    p["bias"], _half(res), lo, hi, hw, out_dtype)
        elif is_depthwise3x3(layer):
            _, ho, wo = layer.out_shape
            y = depthwise3x3_half(x.astype(np.float16), p["weight"], p["bias"], _half(res),
                                  lo, hi, layer.attrs["stride"][0], (ho, wo))
        else:
            a = layer.attrs
            _, ho, wo = layer.out_shape
            y = stem_conv3x3_half(x.astype(np.float16), p["weight"], p["bias"], _half(res),
                                  lo, hi, a["stride"], a["pads"][:2], (ho, wo))
        return y.astype(np.float32).reshape(n, *layer.out_shape)

    def gap(layer: Layer, x: np.ndarray) -> np.ndarray:
        if not layer.attrs.get("half"):
            return execute.OPS["GlobalAveragePool"](layer, x)
        c, h, wd = layer.in_shape
        y = global_avg_pool_half(x.astype(np.float16), len(x) * c, h * wd)
        return y.astype(np.float32).reshape(len(x), *layer.out_shape)

    def to_half(layer: Layer, x: np.ndarray) -> np.ndarray:
        return x.astype(np.float16).astype(np.float32)

    return {"Conv": conv, "Gemm": conv, "GlobalAveragePool": gap, half.TO_HALF: to_half}


def _half(res: np.ndarray | None) -> np.ndarray | None:
    return None if res is None else res.astype(np.float16)


def forward(plan: Plan, x: np.ndarray, half_from: str | None = None,
            extra: Mapping[str, execute.OpFunction] | None = None, chunk: int = 4,
            ) -> np.ndarray:
    """The fp16 stage's output for `x` (n, *input_shape), emulated on the CPU: `plan` fused
    and split at `half_from` as the stage does, every layer through the function the stage
    runs (`extra` replaces op functions, e.g. with a planted bug)."""
    from variants.onnxplan import fuse

    split = half.split(fuse.epilogues(plan), half_from)
    table = {**ops(split), **(extra or {})}
    return execute.run(split, np.asarray(x, np.float32), np.float32, table, chunk=chunk)
