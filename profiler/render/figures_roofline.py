"""The roofline figure: kernels by arithmetic intensity and achieved FLOP rate, under the DRAM and
FP32 ceilings, each marked with its number from `analyze.roofline.roofline_points`.

Names at the markers piled up where LeNet's kernels cluster (a decade apart at most) and could not
be read. A number is a few pixels wide, and `place_labels` puts each beside its marker where it
overlaps no other marker or number (nearest free side first, largest kernels first); the table
under the chart says which kernel each number is, and hover gives the full name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from profiler.render.escape import plotly_text
from profiler.render.figures import KERNEL_PALETTE, hover_name, layout, log_ticks

HEIGHT = 540
MARKER = 10  # marker diameter, px
# where labels are placed is computed for a plot area of about this size (px: the report's
# chart width less margins and legend); a wider page only spreads them further apart
PLOT_WIDTH, PLOT_HEIGHT = 950, HEIGHT - 110
CHAR_WIDTH, TEXT_HEIGHT = 7.0, 13.0  # a digit at font size 11, px
# plotly's text positions, nearest first: (name, dx, dy) of the label box's centre from the
# marker's centre, in units of (half box width + gap, half box height + gap)
POSITIONS = (
    ("top center", 0, -1),
    ("middle right", 1, 0),
    ("bottom center", 0, 1),
    ("middle left", -1, 0),
    ("top right", 1, -1),
    ("bottom right", 1, 1),
    ("top left", -1, -1),
    ("bottom left", -1, 1),
)


@dataclass(frozen=True)
class Box:
    left: float
    top: float
    right: float
    bottom: float

    def overlap(self, other: Box) -> float:
        w = min(self.right, other.right) - max(self.left, other.left)
        h = min(self.bottom, other.bottom) - max(self.top, other.top)
        return w * h if w > 0 and h > 0 else 0.0


def place_labels(
    xs: Sequence[float], ys: Sequence[float], texts: Sequence[str], order: Sequence[int]
) -> list[str]:
    """A plotly `textposition` for each label, chosen so that labels overlap no marker and no
    other label where a free side exists (else the side that overlaps least).

    Args:
        xs, ys: marker centres in pixels (y grows downwards).
        texts: the labels ("" for none).
        order: indices in the order labels are placed (the most important first).
    """
    r = MARKER / 2
    markers = [Box(x - r, y - r, x + r, y + r) for x, y in zip(xs, ys, strict=True)]
    placed: list[Box] = []
    positions = ["top center"] * len(texts)
    for i in order:
        if not texts[i]:
            continue
        w, h = CHAR_WIDTH * len(texts[i]) + 2, TEXT_HEIGHT
        options = []
        for rank, (name, dx, dy) in enumerate(POSITIONS):
            cx, cy = xs[i] + dx * (w / 2 + r + 1), ys[i] + dy * (h / 2 + r)
            box = Box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
            outside = _outside(box)
            hit = sum(box.overlap(m) for j, m in enumerate(markers) if j != i)
            options.append((hit + sum(box.overlap(p) for p in placed) + outside, rank, name, box))
        _, _, positions[i], box = min(options, key=lambda o: (o[0], o[1]))
        placed.append(box)
    return positions


def _outside(box: Box) -> float:
    """How much of `box` lies outside the plot area (it would be cut off)."""
    inside = Box(0, 0, PLOT_WIDTH, PLOT_HEIGHT).overlap(box)
    return (box.right - box.left) * (box.bottom - box.top) - inside


def roofline(
    points: pd.DataFrame,
    dram_bytes_per_s: float,
    fp32_flops_per_s: float,
    labels: Mapping[str, str] | None = None,
) -> go.Figure:
    """Kernels by arithmetic intensity and achieved FLOP/s, under the DRAM and FP32 ceilings.

    Args:
        points: DataFrame with `profiler.analyze.roofline.ROOFLINE_POINTS` columns; rows without
            a point (no FLOPs or no DRAM bytes: not on log axes) are left out.
        dram_bytes_per_s: peak DRAM bandwidth (NaN: no ceiling drawn).
        fp32_flops_per_s: peak FP32 rate (NaN: no ceiling drawn).
        labels: the legend's name per stage key (default: the key).
    """
    placed = points[points["point"].notna()].reset_index(drop=True)
    xr, yr = _ranges(placed, dram_bytes_per_s, fp32_flops_per_s)
    fig = go.Figure()
    if not (math.isnan(dram_bytes_per_s) or math.isnan(fp32_flops_per_s)):
        ridge = fp32_flops_per_s / dram_bytes_per_s
        xs = np.array([10 ** xr[0], ridge, 10 ** xr[1]])
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=np.minimum(fp32_flops_per_s, xs * dram_bytes_per_s) / 1e9,
                mode="lines",
                name="ceiling (DRAM, FP32)",
                line={"color": "#333333"},
                hovertemplate="%{y:.4g} GFLOP/s at %{x:.3g} FLOP/byte<extra></extra>",
            )
        )
    texts = [str(p) if lab else "" for p, lab in zip(placed["point"], placed["labelled"])]  # noqa: B905
    px, py = _pixels(placed, xr, yr)
    order = list(placed["share_pct"].fillna(0).sort_values(ascending=False, kind="stable").index)
    where = place_labels(px, py, texts, order)
    for i, (stage, g) in enumerate(placed.groupby("stage", sort=False)):
        title = (labels or {}).get(str(stage), str(stage))
        fig.add_trace(_stage_trace(g, texts, where, title, i))
    fig.update_xaxes(
        type="log",
        title="arithmetic intensity (FP32 FLOP / DRAM byte)",
        range=list(xr),
        **log_ticks([10 ** xr[0], 10 ** xr[1]]),
    )
    fig.update_yaxes(
        type="log", title="achieved GFLOP/s", range=list(yr), dtick=1, exponentformat="power"
    )
    return layout(fig, "Roofline (Nsight Compute, replayed launches): kernels by number", HEIGHT)


def _stage_trace(
    g: pd.DataFrame, texts: list[str], where: list[str], title: str, i: int
) -> go.Scatter:
    name = plotly_text(title)
    hover = [
        f"#{p} {name}<br>{hover_name(n)}" for p, n in zip(g["point"], g["name"], strict=True)
    ]
    return go.Scatter(
        x=g["intensity"],
        y=g["flops_per_s"] / 1e9,
        mode="markers+text",
        name=name,
        text=[texts[k] for k in g.index],
        textposition=[where[k] for k in g.index],
        textfont={"size": 11, "color": "#1f2328"},
        marker={"size": MARKER, "color": KERNEL_PALETTE[i % len(KERNEL_PALETTE)]},
        hovertext=hover,
        hovertemplate="%{hovertext}<br>%{x:.3g} FLOP/byte, %{y:.4g} GFLOP/s<extra></extra>",
    )


def _ranges(
    placed: pd.DataFrame, dram: float, fp32: float
) -> tuple[tuple[float, float], tuple[float, float]]:
    """The log10 ranges of both axes: the points with room around them, and the ridge point."""
    if placed.empty:
        lo, hi, ylo, yhi = 0.01, 100.0, 1.0, 1e5
    else:
        lo, hi = float(placed["intensity"].min()) / 10, float(placed["intensity"].max()) * 10
        gflops = placed["flops_per_s"] / 1e9
        ylo, yhi = float(gflops.min()) / 4, float(gflops.max()) * 4
    if not (math.isnan(dram) or math.isnan(fp32)):
        ridge = fp32 / dram
        lo, hi = min(lo, ridge / 100), max(hi, ridge * 10)
        ylo, yhi = min(ylo, lo * dram / 1e9), max(yhi, fp32 / 1e9 * 2)
    return (math.log10(lo), math.log10(hi)), (math.log10(ylo), math.log10(yhi))


def _pixels(
    placed: pd.DataFrame, xr: tuple[float, float], yr: tuple[float, float]
) -> tuple[list[float], list[float]]:
    """Marker centres in pixels of a `PLOT_WIDTH` x `PLOT_HEIGHT` plot area (y downwards)."""
    lx = np.log10(placed["intensity"].astype("float64").to_numpy())
    ly = np.log10(placed["flops_per_s"].astype("float64").to_numpy() / 1e9)
    px = (lx - xr[0]) / (xr[1] - xr[0]) * PLOT_WIDTH
    py = (1 - (ly - yr[0]) / (yr[1] - yr[0])) * PLOT_HEIGHT
    return px.tolist(), py.tolist()
