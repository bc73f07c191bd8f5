"""The serving figure: p99 latency against throughput, one line per configuration, the Pareto
front and its knee marked, flagged points drawn hollow and grey (never as good)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from profiler.render.figures import layout


def latency_throughput(
    points: pd.DataFrame, front: pd.Series, knee: str | None, unit: str
) -> go.Figure:
    """`points` (schema.SERVE_POINTS), `front` its Pareto mask, `knee` a point label or None."""
    fig = go.Figure()
    ok = points["flag"].fillna("") == ""
    for config, rows in points[ok].groupby("config", sort=False):
        rows = rows.sort_values("items_per_s")
        fig.add_trace(
            go.Scatter(
                x=rows["items_per_s"],
                y=rows["p99_ns"] / 1e3,
                mode="lines+markers",
                name=str(config),
                text=rows["point"],
                hovertemplate="%{text}<br>%{x:,.0f} "
                + unit
                + "/s<br>p99 %{y:,.1f} us<extra></extra>",
            )
        )
    bad = points[~ok]
    if not bad.empty:
        fig.add_trace(
            go.Scatter(
                x=bad["items_per_s"],
                y=bad["p99_ns"] / 1e3,
                mode="markers",
                name="flagged (not good)",
                marker={"symbol": "x-open", "color": "#999", "size": 9},
                text=bad["flag"],
                hovertemplate="%{text}<extra>flagged</extra>",
            )
        )
    pf = points[front].sort_values("items_per_s")
    fig.add_trace(
        go.Scatter(
            x=pf["items_per_s"],
            y=pf["p99_ns"] / 1e3,
            mode="lines",
            name="Pareto front",
            line={"dash": "dot", "color": "#222"},
        )
    )
    if knee is not None:
        k = points[points["point"] == knee]
        fig.add_trace(
            go.Scatter(
                x=k["items_per_s"],
                y=k["p99_ns"] / 1e3,
                mode="markers+text",
                name="knee",
                text=["knee"],
                textposition="top left",
                marker={"symbol": "star", "size": 16, "color": "#d62728"},
            )
        )
    fig.update_xaxes(title=f"throughput ({unit}/s)")
    fig.update_yaxes(title="p99 latency (us)", type="log")
    return layout(fig, "Latency against throughput", 480)
