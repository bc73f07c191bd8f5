"""The report's chart sections: time per stage, the kernel-time breakdown, the timeline, the
roofline and the batch-size curves. Each takes a run's tables, asks `profiler.analyze` for what
to draw, has `profiler.render.figures` draw it, and returns the fragment with the records the
section's table shows.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import pandas as pd

from profiler import schema
from profiler.analyze import breakdown, overlap, roofline, sweep, timeline
from profiler.render import figures, figures_roofline, timing
from profiler.render.records import figure_html, plain, records
from profiler.store import Run

TIMELINE_LIMIT = timeline.DEFAULT_LIMIT


def charts_section(
    staged: pd.DataFrame,
    activities: pd.DataFrame,
    order: list[str],
    repeats: Mapping[str, int],
    titles: Mapping[str, str],
    unit: str = "items",
    per: str = "per profiled repeat",
) -> dict[str, str | None]:
    """Time per stage, and the kernel-time breakdown as shares and as absolute times, `per`
    saying what those cover (`breakdown_per`)."""
    out: dict[str, str | None] = {"stage_times": None, "breakdown_abs": None}
    out["breakdown_share"] = None
    if staged["median_ns"].notna().any():
        axis = f"{timing.time_heading(staged, unit).lower()} (s)"
        fig = figures.stage_times(staged, titles, axis_title=axis)
        out["stage_times"] = figure_html(fig, "chart-stage-times")
    if not activities.empty:
        parts = breakdown.kernel_breakdown(activities, order, repeats)
        for key, shares in (("breakdown_abs", False), ("breakdown_share", True)):
            fig = figures.kernel_breakdown(
                parts, shares=shares, labels=titles, per=timing.axis_per(per)
            )
            out[key] = figure_html(fig, f"chart-{key.replace('_', '-')}")
    return out


def breakdown_per(staged: pd.DataFrame, activities: pd.DataFrame, whole: Collection[str]) -> str:
    """What the breakdown's absolute times (and Amdahl's GPU times) cover: per profiled repeat,
    per repeat as given, or whole program for the imported stages in `whole`."""
    imported = staged.loc[staged["status"] == schema.IMPORTED, "stage"].astype(str)
    shown = set(activities["stage"].dropna().astype(str))
    return timing.breakdown_per(shown, set(imported), whole)


def timeline_section(
    run: Run, order: list[str], titles: Mapping[str, str], repeats: Mapping[str, int]
) -> dict[str, Any] | None:
    """One repeat of one stage (the default stage, its median repeat), capped, in lanes."""
    ceilings = run.meta.get("ceilings")
    trace = run.table("gpu_trace")
    stage = timeline.default_stage(trace, order)
    if stage is None:
        return None
    tl = timeline.timeline(trace, run.table("range_trace"), stage, limit=TIMELINE_LIMIT)
    ops = trace[(trace["stage"] == stage) & (trace["repeat"] == tl.repeat)]
    measured = records(overlap.stage_overlap(ops.reset_index(drop=True), ceilings))[0]
    whole = tl.repeat < 0  # an import: the trace does not mark its repeats
    window = figures.WHOLE_CAPTURE if whole else f"repeat {tl.repeat}"
    fig = figures.timeline(tl.ops, tl.phases, titles.get(stage, stage), window)
    seen = int(trace.loc[trace["stage"] == stage, "repeat"].nunique())
    return {
        "stage": plain(stage),
        "title": titles.get(stage, plain(stage)),
        "repeat": tl.repeat,
        "whole_capture": whole,
        "html": figure_html(fig, "chart-timeline"),
        "shown": len(tl.ops),
        "total": tl.total_ops,
        "capped": len(tl.ops) < tl.total_ops,
        "limit": TIMELINE_LIMIT,
        "span_ns": tl.span_ns,
        "overlap": measured,
        "shown_span_ns": int((tl.ops["start_ns"] + tl.ops["duration_ns"]).max()),
        "trace_repeats": seen,
        "repeats": max(repeats.get(stage, seen), seen),
    }


def roofline_section(
    roof: pd.DataFrame, ceilings: Any, titles: Mapping[str, str]
) -> dict[str, Any]:
    """The roofline chart, its kernels numbered, and the table that says which is which (with
    the NVTX ranges each kernel ran in when any has one: `has_ranges`)."""
    dram, fp32 = roofline.ceiling_values(ceilings)
    source = {
        "dram_bytes_per_s": "peak DRAM bandwidth",
        "d2d_bytes_per_s": "DRAM bandwidth of a large device-to-device copy",
    }.get(roofline.dram_ceiling_key(ceilings) or "", "DRAM bandwidth")
    points = roofline.roofline_points(roof)
    fig = figures_roofline.roofline(points, dram, fp32, titles)
    rows = records(points)
    for r in rows:
        r["title"] = titles.get(r["stage"], r["stage"])
    return {
        "html": figure_html(fig, "chart-roofline"),
        "rows": rows,
        "has_ranges": bool(points["ranges"].notna().any()),
        "dram_source": source,
        "dram_bytes_per_s": plain(dram),
        "fp32_flops_per_s": plain(fp32),
        "ridge": plain(fp32 / dram),
    }


def batch_sweep_section(
    batch: pd.DataFrame, roles: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Time per image and the latency of one batch against batch size, framework stages drawn
    dashed; with the stages' roles, where the fastest custom stage beats each framework."""
    roles = dict(roles or {})
    curves = sweep.batch_curves(batch)
    versus = sweep.batch_versus(curves, roles)
    return {
        "html": figure_html(figures.batch_curves(curves, roles), "chart-batch-sweep"),
        "rows": records(curves),
        "versus": records(versus),
        "crossings": records(sweep.batch_crossings(versus)),
    }
