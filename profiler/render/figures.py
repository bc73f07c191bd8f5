"""Figures of the report: each a function from DataFrames to a plotly Figure. None shows or writes.

Times arrive as integer nanoseconds and are converted for the axes here (the axis title names the
unit). Colours are fixed per category so that a copy is the same colour in every chart.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from profiler import schema

TEMPLATE = "plotly_white"
STATUS_COLOURS = {schema.PASS: "#4c78a8", schema.FAIL: "#e45756"}
CATEGORY_COLOURS = {
    "kernel": "#4c78a8",
    "memcpy HtoD": "#f58518",
    "memcpy DtoH": "#54a24b",
    "memcpy DtoD": "#b279a2",
    "memset": "#9d755d",
    "nvtx": "#bab0ac",
}
COPY_COLOURS = {
    schema.copy_label("HtoD"): "#f58518",
    schema.copy_label("DtoH"): "#54a24b",
    schema.copy_label("DtoD"): "#b279a2",
    schema.MEMSET_LABEL: "#9d755d",
}
KERNEL_PALETTE = (
    "#4c78a8",
    "#72b7b2",
    "#eeca3b",
    "#ff9da6",
    "#9ecae9",
    "#439894",
    "#d67195",
    "#79706e",
    "#e15759",
    "#b6992d",
)
OTHER = "other kernels"
SHORT_NAME = 40  # characters of a kernel name in a legend or a marker label
LABEL_SHARE_PCT = 15.0  # the roofline names a kernel that has this share of its stage's time


def short_name(name: str, width: int = SHORT_NAME) -> str:
    """A kernel's name for a legend: a demangled C++ signature loses `void`, its template
    arguments, its parameters and its namespaces (`at::native::<unnamed>::max_pool_forward_nchw<
    float, int>(T2, ...)` -> `max_pool_forward_nchw`); then at most `width` characters."""
    text = re.sub(r"^void\s+", "", name.strip())
    kept, depth = [], 0
    for ch in text:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(depth - 1, 0)
        elif depth == 0:
            kept.append(ch)
    base = "".join(kept).strip().rsplit("::", 1)[-1].strip() or name
    return base if len(base) <= width else base[: width - 1] + "…"


def short_names(names: Iterable[str], width: int = SHORT_NAME) -> dict[str, str]:
    """`short_name` of each, made unique (`name (2)`) where two shorten alike."""
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    for name in dict.fromkeys(names):
        short = short_name(name, width)
        seen[short] = seen.get(short, 0) + 1
        out[name] = short if seen[short] == 1 else f"{short} ({seen[short]})"
    return out


def _hover(name: str) -> str:
    """A full kernel name for a hover label (plotly reads it as HTML), wrapped every 80 chars."""
    text = html.escape(name)
    return "<br>".join(text[i : i + 80] for i in range(0, len(text), 80))


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(
        template=TEMPLATE,
        title={"text": title, "x": 0.01},
        height=height,
        margin={"l": 70, "r": 20, "t": 50, "b": 60},
        legend={"orientation": "v"},
        font={"size": 12},
    )
    return fig


def log_ticks(values: Sequence[float] | pd.Series | np.ndarray) -> dict[str, object]:
    """Axis settings for a log axis: one labelled tick per decade when the data spans two or
    more (plotly otherwise labels the 2s and 5s too, which crowds the axis)."""
    v = np.asarray(values, dtype="float64")
    v = v[np.isfinite(v) & (v > 0)]
    if len(v) and np.log10(v.max() / v.min()) >= 2:
        return {"dtick": 1, "exponentformat": "power"}
    return {"exponentformat": "power"}


def stage_times(staged: pd.DataFrame, labels: Mapping[str, str] | None = None) -> go.Figure:
    """Time for all images per stage (log scale), min-max over repeats as error bars.

    Args:
        staged: DataFrame with `profiler.analyze.stages.STAGED` columns; stages without a time
            are left out (the staged table says why).
        labels: x-axis label per stage key (default: the key).
    """
    df = staged[staged["median_ns"].notna()]
    median = df["median_ns"].astype("float64") / 1e9
    x = [(labels or {}).get(k, k) for k in df["stage"]]
    fig = go.Figure()
    for status, colour in (
        ("PASS", STATUS_COLOURS[schema.PASS]),
        ("not PASS", STATUS_COLOURS[schema.FAIL]),
    ):
        sel = (df["status"] == schema.PASS) == (status == "PASS")
        if not sel.any():
            continue
        fig.add_trace(
            go.Bar(
                x=[v for v, s in zip(x, sel, strict=True) if s],
                y=median[sel],
                name=status,
                marker_color=colour,
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": (df.loc[sel, "max_ns"].astype("float64") / 1e9 - median[sel]),
                    "arrayminus": (median[sel] - df.loc[sel, "min_ns"].astype("float64") / 1e9),
                },
                hovertemplate="%{x}<br>%{y:.4g} s<extra></extra>",
            )
        )
    fig.update_yaxes(type="log", title="time for all images (s)", **log_ticks(median))
    fig.update_xaxes(categoryorder="array", categoryarray=x)
    fig.update_layout(barmode="overlay")
    return _layout(fig, "Time per stage (median over repeats; bars: min to max)", 420)


def kernel_breakdown(
    activities: pd.DataFrame,
    order: Sequence[str],
    repeats: Mapping[str, int] | None = None,
    shares: bool = False,
    top: int = 10,
    labels: Mapping[str, str] | None = None,
) -> go.Figure:
    """Stacked bars of where GPU time goes in each stage: kernels by name, copies, memsets.

    Args:
        activities: DataFrame with `schema.GPU_ACTIVITIES` columns.
        order: stage keys in study order (stages without activities are skipped).
        repeats: profiled repeats per stage; absolute times are per repeat (default 1).
        shares: stack shares of each stage's GPU time (%) instead of milliseconds.
        top: kernels named individually: those with the largest shares summed over the stages
            (so each stage's main kernels show, however short the stage); the rest are `other
            kernels`.
        labels: x-axis label per stage key.
    """
    table, keep = _breakdown_table(activities, order, repeats, top)
    stages = list(table.columns)
    if shares:
        table = table / table.sum(axis=0).replace(0, np.nan) * 100.0
    others = sorted(n for n in table.index if n not in keep and n != OTHER)
    series = keep + ([OTHER] if OTHER in table.index else []) + others
    colours = {n: KERNEL_PALETTE[i % len(KERNEL_PALETTE)] for i, n in enumerate(keep)}
    legend = short_names(series)
    fig = go.Figure()
    unit = "%" if shares else " ms"
    for name in series:
        fig.add_trace(
            go.Bar(
                x=[(labels or {}).get(k, k) for k in stages],
                y=table.loc[name].to_numpy(),
                name=legend[name],
                marker_color=colours.get(name, COPY_COLOURS.get(name, "#bab0ac")),
                hovertemplate=f"{_hover(name)}<br>%{{x}}: %{{y:.4g}}{unit}<extra></extra>",
            )
        )
    fig.update_layout(barmode="stack", legend={"traceorder": "reversed"})
    fig.update_yaxes(
        title="share of GPU time (%)" if shares else "GPU time per profiled repeat (ms)"
    )
    if not shares:  # stages differ by orders of magnitude: let the reader switch to a log axis
        fig.update_layout(updatemenus=[_axis_buttons()])
    title = "Kernel-time breakdown, shares" if shares else "Kernel-time breakdown, absolute"
    return _layout(fig, title, 460)


def _breakdown_table(
    activities: pd.DataFrame, order: Sequence[str], repeats: Mapping[str, int] | None, top: int
) -> tuple[pd.DataFrame, list[str]]:
    """(ms per profiled repeat by series x stage in `order`, the kernels named individually)."""
    df = activities.copy()
    df["value"] = (
        df["total_ns"] / df["stage"].map(lambda k: max((repeats or {}).get(k, 1), 1)) / 1e6
    )
    kernels = df[df["kind"] == schema.KERNEL]
    share = kernels["total_ns"] / df.groupby("stage")["total_ns"].transform("sum")[kernels.index]
    ranked = share.groupby(kernels["name"]).sum().sort_values(ascending=False, kind="stable")
    keep = list(ranked.index[:top])
    df["series"] = df["name"].where((df["kind"] != schema.KERNEL) | df["name"].isin(keep), OTHER)
    table = df.pivot_table(
        index="series", columns="stage", values="value", aggfunc="sum", fill_value=0.0
    )
    return table[[k for k in order if k in table.columns]], keep


def _axis_buttons() -> dict[str, object]:
    """Buttons above a chart that switch its y axis between linear and log."""
    return {
        "type": "buttons",
        "direction": "right",
        "x": 0.45,
        "xanchor": "left",
        "y": 1.14,
        "yanchor": "top",
        "showactive": True,
        "buttons": [
            {"label": "linear", "method": "relayout", "args": [{"yaxis.type": "linear"}]},
            {"label": "log", "method": "relayout", "args": [{"yaxis.type": "log"}]},
        ],
    }


def timeline(ops: pd.DataFrame, phases: pd.DataFrame, title: str) -> go.Figure:
    """One repeat as horizontal bars: a lane per stream, NVTX ranges in lanes above.

    Args:
        ops: DataFrame with `profiler.analyze.timeline.TIMELINE_OPS` columns.
        phases: DataFrame with `profiler.analyze.timeline.TIMELINE_PHASES` columns.
        title: the figure's title.
    """
    fig = go.Figure()
    lanes_gpu = sorted(ops["lane"].unique(), key=_lane_key)
    lanes_nvtx = sorted(phases["lane"].unique(), key=_lane_key)
    if not phases.empty:
        nvtx = _bars(phases, "NVTX range", CATEGORY_COLOURS["nvtx"], phases["name"])
        nvtx.update(
            text=phases["name"].astype(str).to_numpy(),
            textposition="inside",
            insidetextanchor="middle",
            textfont={"color": "#1f2328"},
        )
        fig.add_trace(nvtx)
    for category, g in ops.groupby("category", sort=True):
        colour = CATEGORY_COLOURS.get(str(category), "#79706e")
        fig.add_trace(_bars(g, str(category), colour, g["name"]))
    lanes = list(reversed(lanes_gpu)) + list(reversed(lanes_nvtx))
    fig.update_yaxes(categoryorder="array", categoryarray=lanes, type="category")
    fig.update_xaxes(title="time since the repeat's first GPU operation (µs)")
    fig.update_layout(  # a range name that does not fit its bar is hidden (hover shows it)
        barmode="overlay", bargap=0.25, uniformtext={"minsize": 9, "mode": "hide"}
    )
    return _layout(fig, title, 140 + 38 * max(len(lanes), 2))


def _bars(df: pd.DataFrame, name: str, colour: str, text: pd.Series) -> go.Bar:
    return go.Bar(
        y=df["lane"].to_numpy(),
        x=df["duration_ns"].to_numpy() / 1e3,
        base=df["start_ns"].to_numpy() / 1e3,
        orientation="h",
        name=name,
        marker={"color": colour, "line": {"width": 0}},
        hovertext=text.astype(str).to_numpy(),
        hovertemplate="%{hovertext}<br>start %{base:.4g} µs, %{x:.4g} µs<extra></extra>",
    )


def _lane_key(lane: str) -> tuple[str, float]:
    head, _, tail = lane.partition(" ")
    try:
        return head, float(tail)
    except ValueError:
        return head, math.inf


def roofline(roof: pd.DataFrame, dram_bytes_per_s: float, fp32_flops_per_s: float) -> go.Figure:
    """Kernels by arithmetic intensity and achieved FLOP/s, under the DRAM and FP32 ceilings.

    Args:
        roof: DataFrame with `profiler.analyze.roofline.ROOFLINE` columns; kernels without
            FLOPs or bytes cannot sit on log axes and are left out (the table lists them).
        dram_bytes_per_s: peak DRAM bandwidth (NaN: no ceiling drawn).
        fp32_flops_per_s: peak FP32 rate (NaN: no ceiling drawn).

    A kernel with `LABEL_SHARE_PCT` of its stage's time is named next to its marker, once per
    name and place (the same kernel in several stages sits at one place); hover names every one.
    """
    placed = roof[(roof["intensity"] > 0) & (roof["flops_per_s"] > 0)]
    fig = go.Figure()
    lo = float(placed["intensity"].min()) / 10 if not placed.empty else 0.01
    hi = float(placed["intensity"].max()) * 10 if not placed.empty else 100.0
    if not (math.isnan(dram_bytes_per_s) or math.isnan(fp32_flops_per_s)):
        ridge = fp32_flops_per_s / dram_bytes_per_s
        lo, hi = min(lo, ridge / 100), max(hi, ridge * 10)
        xs = np.array([lo, ridge, hi])
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
    labelled: set[tuple[str, int, int]] = set()
    for stage, g in placed.groupby("stage", sort=False):
        text = _roofline_labels(g, labelled)
        fig.add_trace(
            go.Scatter(
                x=g["intensity"],
                y=g["flops_per_s"] / 1e9,
                mode="markers+text",
                name=str(stage),
                text=text,
                textposition="top center",
                textfont={"size": 10},
                marker={"size": 9},
                hovertext=[f"{stage}<br>{_hover(n)}" for n in g["name"]],
                hovertemplate="%{hovertext}<br>%{x:.3g} FLOP/byte, %{y:.4g} GFLOP/s<extra></extra>",
            )
        )
    fig.update_xaxes(
        type="log", title="arithmetic intensity (FP32 FLOP / DRAM byte)", **log_ticks([lo, hi])
    )
    fig.update_yaxes(type="log", title="achieved GFLOP/s", dtick=1, exponentformat="power")
    return _layout(fig, "Roofline (Nsight Compute, replayed launches)", 540)


def _roofline_labels(kernels: pd.DataFrame, labelled: set[tuple[str, int, int]]) -> list[str]:
    """Marker labels of one stage's kernels: the short name of each that has `LABEL_SHARE_PCT`
    of its stage's time, unless `labelled` has it at that place (a quarter decade); updates
    `labelled`."""
    text = []
    points = zip(
        kernels["name"],
        kernels["intensity"],
        kernels["flops_per_s"],
        kernels["share_pct"],
        strict=True,
    )
    for name, x, y, share in points:
        spot = (short_name(name, 28), round(math.log10(x) * 4), round(math.log10(y) * 4))
        named = share >= LABEL_SHARE_PCT and spot not in labelled
        text.append(spot[0] if named else "")
        labelled.update([spot] if named else [])
    return text


def batch_curves(curves: pd.DataFrame) -> go.Figure:
    """Time per image (throughput) and the latency of one batch against batch size, log axes.

    Args:
        curves: DataFrame with `profiler.analyze.sweep.BATCH_CURVES` columns.
    """
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("time per item (µs)", "latency of one batch (ms)")
    )
    for i, (stage, g) in enumerate(curves.groupby("stage", sort=False)):
        colour = KERNEL_PALETTE[i % len(KERNEL_PALETTE)]
        fig.add_trace(
            go.Scatter(
                x=g["batch"],
                y=g["per_item_ns"] / 1e3,
                mode="lines+markers",
                name=str(stage),
                line={"color": colour},
                legendgroup=str(stage),
                customdata=g["items_per_s"],
                hovertemplate="batch %{x}<br>%{y:.4g} µs per item<br>"
                "%{customdata:.4g} items/s<extra></extra>",
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=g["batch"],
                y=g["batch_median_ns"] / 1e6,
                mode="lines+markers",
                name=str(stage),
                line={"color": colour, "dash": "dot"},
                legendgroup=str(stage),
                showlegend=False,
                hovertemplate="batch %{x}<br>%{y:.4g} ms per batch<extra></extra>",
            ),
            row=1,
            col=2,
        )
    batches = sorted(curves["batch"].unique())
    fig.update_xaxes(
        type="log", title="batch size", tickvals=batches, ticktext=[f"{b:,}" for b in batches]
    )
    fig.update_yaxes(type="log", row=1, col=1, **log_ticks(curves["per_item_ns"]))
    fig.update_yaxes(type="log", row=1, col=2, **log_ticks(curves["batch_median_ns"]))
    return _layout(fig, "Batch size: time per item and latency of one batch", 420)
