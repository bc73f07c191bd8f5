"""Figures of the report: each a function from DataFrames to a plotly Figure. None shows or writes,
and none decides anything: what to rank, sum or normalise comes computed from `profiler.analyze`
(`breakdown.kernel_breakdown`, `roofline.roofline_points`, `timeline.timeline`, ...).

Times arrive as integer nanoseconds and are converted for the axes here (the axis title names the
unit). Colours are fixed per category so that a copy is the same colour in every chart.

Run text (stage titles and keys, kernel and range names) is drawn escaped: plotly reads its text
as HTML (`<a href>`, `<b>`, `<br>`), so every such string goes through `escape.plotly_text`, and
reaches hover labels as data (`hovertext`, `customdata`), never inside a hover template, where
`%{...}` would be read. Categories are stage keys, shown through `ticktext` (two stages with one
title stay two bars).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from profiler import schema
from profiler.render.escape import NAME_LIMIT, clip, plotly_text

TEMPLATE = "plotly_white"
WHOLE_CAPTURE = "whole capture"  # the timeline of an import whose repeats are not known
STATUS_COLOURS = {schema.PASS: "#4c78a8", schema.FAIL: "#e45756", schema.IMPORTED: "#8a949e"}
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
SHORT_NAME = 40  # characters of a kernel name in a legend or a marker label
HOVER_WRAP = 80  # characters per line of a name in a hover label
TICK_LABEL = 48  # characters of a stage title under a bar


def short_name(name: str, width: int = SHORT_NAME) -> str:
    """A kernel's name for a legend: a demangled C++ signature loses `void`, its template
    arguments, its parameters and its namespaces (`at::native::<unnamed>::max_pool_forward_nchw<
    float, int>(T2, ...)` -> `max_pool_forward_nchw`); then at most `width` characters."""
    text = re.sub(r"^void\s+", "", clip(name, 4 * NAME_LIMIT).strip())
    kept, depth = [], 0
    for ch in text:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(depth - 1, 0)
        elif depth == 0:
            kept.append(ch)
    base = "".join(kept).strip().rsplit("::", 1)[-1].strip() or name
    return clip(base, width, tail=False)


def short_names(names: Iterable[str], width: int = SHORT_NAME) -> dict[str, str]:
    """`short_name` of each, made unique (`name (2)`) where two shorten alike."""
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    for name in dict.fromkeys(names):
        short = short_name(name, width)
        seen[short] = seen.get(short, 0) + 1
        out[name] = short if seen[short] == 1 else f"{short} ({seen[short]})"
    return out


def hover_name(name: object) -> str:
    """A name for a hover label: clipped to `NAME_LIMIT`, escaped, a line break every
    `HOVER_WRAP` characters (never inside an escaped character)."""
    text = clip(name)
    lines = [text[i : i + HOVER_WRAP] for i in range(0, len(text), HOVER_WRAP)]
    return "<br>".join(plotly_text(line) for line in lines)


def stage_x(keys: Iterable[object]) -> list[str]:
    """Stage keys as category values: clipped (a huge key costs little in each trace) and
    escaped like any text plotly might draw."""
    return [plotly_text(k) for k in keys]


def stage_axis(keys: Sequence[str], labels: Mapping[str, str] | None) -> dict[str, object]:
    """A category axis of stage keys, in order, labelled by their titles (escaped, at most
    `TICK_LABEL` characters: hover shows the whole title)."""
    keys = list(keys)
    text = [plotly_text(clip((labels or {}).get(k, k), TICK_LABEL, tail=False)) for k in keys]
    return {
        "type": "category",
        "categoryorder": "array",
        "categoryarray": stage_x(keys),
        "tickmode": "array",
        "tickvals": stage_x(keys),
        "ticktext": text,
    }


def layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    """The shared look; `title` is profgen's own text (callers escape run text in it)."""
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


def stage_times(
    staged: pd.DataFrame,
    labels: Mapping[str, str] | None = None,
    axis_title: str = "time for all items (s)",
) -> go.Figure:
    """Time per stage (log scale), min-max over repeats as error bars; PASS, IMPORTED (neutral)
    and other stages in their own colours.

    Args:
        staged: DataFrame with `profiler.analyze.stages.STAGED` columns; stages without a time
            are left out (the staged table says why).
        labels: x-axis label per stage key (default: the key).
        axis_title: the y axis's title (what the times are).
    """
    df = staged[staged["median_ns"].notna()]
    median = df["median_ns"].astype("float64") / 1e9
    keys = [str(k) for k in df["stage"]]
    names = np.array([hover_name((labels or {}).get(k, k)) for k in keys], dtype=object)
    fig = go.Figure()
    status = df["status"].to_numpy()
    groups = (
        ("PASS", status == schema.PASS, STATUS_COLOURS[schema.PASS]),
        ("IMPORTED", status == schema.IMPORTED, STATUS_COLOURS[schema.IMPORTED]),
        ("not PASS", ~np.isin(status, [schema.PASS, schema.IMPORTED]), STATUS_COLOURS[schema.FAIL]),
    )
    for name, sel, colour in groups:
        if not sel.any():
            continue
        low, high = df.loc[sel, "min_ns"], df.loc[sel, "max_ns"]
        fig.add_trace(
            go.Bar(
                x=stage_x(k for k, s in zip(keys, sel, strict=True) if s),
                y=median[sel],
                name=name,
                marker_color=colour,
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": (high.astype("float64") / 1e9 - median[sel]),
                    "arrayminus": (median[sel] - low.astype("float64") / 1e9),
                },
                hovertext=names[sel],
                hovertemplate="%{hovertext}<br>%{y:.4g} s<extra></extra>",
            )
        )
    fig.update_yaxes(type="log", title=axis_title, **log_ticks(median))
    fig.update_xaxes(**stage_axis(keys, labels))
    fig.update_layout(barmode="overlay")
    return layout(fig, "Time per stage (median over repeats; bars: min to max)", 420)


def kernel_breakdown(
    breakdown: pd.DataFrame,
    shares: bool = False,
    labels: Mapping[str, str] | None = None,
    per: str = "per profiled repeat",
) -> go.Figure:
    """Stacked bars of where GPU time goes in each stage: kernels by name, copies, memsets.

    Args:
        breakdown: DataFrame with `profiler.analyze.breakdown.BREAKDOWN` columns.
        shares: stack shares of each stage's GPU time (%) instead of milliseconds per repeat.
        labels: x-axis label per stage key.
        per: what the absolute times cover, for the axis title.
    """
    stages = list(dict.fromkeys(breakdown["stage"]))
    legend = short_names(breakdown.loc[breakdown["kind"] == schema.KERNEL, "series"])
    fig = go.Figure()
    unit = "%" if shares else " ms"
    titles = {k: plotly_text((labels or {}).get(k, k)) for k in stages}
    for _, g in breakdown.groupby("rank", sort=True):
        name, kind, rank = str(g["series"].iloc[0]), str(g["kind"].iloc[0]), int(g["rank"].iloc[0])
        y = g["share_pct"] if shares else g["per_repeat_ns"] / 1e6
        fig.add_trace(
            go.Bar(
                x=stage_x(g["stage"]),
                y=y.to_numpy(),
                name=plotly_text(legend.get(name, name)),
                marker_color=_series_colour(name, kind, rank),
                hovertext=[hover_name(name)] * len(g),
                customdata=[titles[k] for k in g["stage"]],
                hovertemplate=f"%{{hovertext}}<br>%{{customdata}}: %{{y:.4g}}{unit}<extra></extra>",
            )
        )
    fig.update_xaxes(**stage_axis(stages, labels))
    fig.update_layout(barmode="stack", legend={"traceorder": "reversed"})
    fig.update_yaxes(title="share of GPU time (%)" if shares else f"GPU time {per} (ms)")
    if not shares:  # stages differ by orders of magnitude: let the reader switch to a log axis
        fig.update_layout(updatemenus=[_axis_buttons()])
    title = "Kernel-time breakdown, shares" if shares else "Kernel-time breakdown, absolute"
    return layout(fig, title, 460)


def _series_colour(name: str, kind: str, rank: int) -> str:
    """Named kernels take the palette in rank order; copies and memsets their fixed colours."""
    if kind == schema.KERNEL:
        return KERNEL_PALETTE[rank % len(KERNEL_PALETTE)]
    return COPY_COLOURS.get(name, "#bab0ac")


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


def timeline(
    ops: pd.DataFrame, phases: pd.DataFrame, stage_title: str, window: str = "repeat 0"
) -> go.Figure:
    """One repeat (or a whole capture) as horizontal bars: a lane per stream, NVTX ranges in
    lanes above.

    Args:
        ops: DataFrame with `profiler.analyze.timeline.TIMELINE_OPS` columns.
        phases: DataFrame with `profiler.analyze.timeline.TIMELINE_PHASES` columns.
        stage_title: the stage's title (run text: escaped here).
        window: what is shown, `repeat 2` or `whole capture`.
    """
    fig = go.Figure()
    lanes_gpu = sorted(ops["lane"].unique(), key=_lane_key)
    lanes_nvtx = sorted(phases["lane"].unique(), key=_lane_key)
    if not phases.empty:
        nvtx = _bars(phases, "NVTX range", CATEGORY_COLOURS["nvtx"])
        nvtx.update(
            text=_escaped(phases["name"]),
            textposition="inside",
            insidetextanchor="middle",
            textfont={"color": "#1f2328"},
        )
        fig.add_trace(nvtx)
    for category, g in ops.groupby("category", sort=True):
        colour = CATEGORY_COLOURS.get(str(category), "#79706e")
        fig.add_trace(_bars(g, plotly_text(category), colour))
    lanes = [plotly_text(lane) for lane in [*reversed(lanes_gpu), *reversed(lanes_nvtx)]]
    fig.update_yaxes(categoryorder="array", categoryarray=lanes, type="category")
    start = "the capture's" if window == WHOLE_CAPTURE else "the repeat's"
    fig.update_xaxes(title=f"time since {start} first GPU operation (µs)")
    fig.update_layout(  # a range name that does not fit its bar is hidden (hover shows it)
        barmode="overlay", bargap=0.25, uniformtext={"minsize": 9, "mode": "hide"}
    )
    title = f"{plotly_text(stage_title)}: {window}"
    return layout(fig, title, 140 + 38 * max(len(lanes), 2))


def _escaped(names: pd.Series, hover: bool = False) -> np.ndarray:
    """Names escaped for plotly, each distinct name once (a trace has thousands of rows)."""
    text = names.astype(str)
    shown = {n: hover_name(n) if hover else plotly_text(n) for n in text.unique()}
    return np.array([shown[n] for n in text], dtype=object)


def _bars(df: pd.DataFrame, name: str, colour: str) -> go.Bar:
    return go.Bar(
        y=_escaped(df["lane"]),
        x=df["duration_ns"].to_numpy() / 1e3,
        base=df["start_ns"].to_numpy() / 1e3,
        orientation="h",
        name=name,
        marker={"color": colour, "line": {"width": 0}},
        hovertext=_escaped(df["name"], hover=True),
        hovertemplate="%{hovertext}<br>start %{base:.4g} µs, %{x:.4g} µs<extra></extra>",
    )


def _lane_key(lane: str) -> tuple[str, float]:
    head, _, tail = lane.partition(" ")
    try:
        return head, float(tail)
    except ValueError:
        return head, math.inf


def batch_curves(curves: pd.DataFrame, roles: Mapping[str, str] | None = None) -> go.Figure:
    """Time per image (throughput) and the latency of one batch against batch size, log axes;
    stages whose role is `framework` drawn dashed with open markers, the study's own solid.

    Args:
        curves: DataFrame with `profiler.analyze.sweep.BATCH_CURVES` columns.
        roles: each stage's role, where known.
    """
    roles = roles or {}
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("time per item (µs)", "latency of one batch (ms)")
    )
    for i, (key, g) in enumerate(curves.groupby("stage", sort=False)):
        colour = KERNEL_PALETTE[i % len(KERNEL_PALETTE)]
        stage = plotly_text(key)
        framework = roles.get(str(key)) == "framework"
        fig.add_trace(
            go.Scatter(
                x=g["batch"],
                y=g["per_item_ns"] / 1e3,
                mode="lines+markers",
                name=str(stage) + (" (framework)" if framework else ""),
                line={"color": colour, "dash": "dash" if framework else "solid"},
                marker={"symbol": "circle-open" if framework else "circle"},
                legendgroup=stage,
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
                legendgroup=stage,
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
    return layout(fig, "Batch size: time per item and latency of one batch", 420)
