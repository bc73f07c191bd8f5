"""Everything the report's templates receive, computed from a run's tables. Pure: reads nothing,
writes nothing, starts nothing.

`build_context(run)` returns plain records (dicts of str, int, float, bool, None), verdicts and
labels already decided, and each chart as a `fig.to_html(full_html=False, include_plotlyjs=False)`
fragment whose script is deferred (type `DEFERRED_TYPE`) until the page has loaded plotly.js.
Templates only loop and format units; every number comes from the run's tables.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from profiler import schema
from profiler.analyze import advice, amdahl, overlap, roofline, stages, sweep, timeline
from profiler.analyze.assemble import missing_summaries
from profiler.render import figures
from profiler.render.header import header_rows, report_title
from profiler.store import Run

DEFERRED_TYPE = "text/x-profgen-plot"
PLOT_CONFIG = {"displaylogo": False, "responsive": True}
TIMELINE_LIMIT = timeline.DEFAULT_LIMIT
VERDICT_CLASSES = {
    schema.PASS: "pass",
    schema.FAIL: "fail",
    schema.TIMEOUT: "fail",
    schema.ERROR: "fail",
    schema.SKIPPED: "skipped",
}


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts of plain Python values; missing values (NA, NaN) become None."""
    columns = {c: [_plain(v) for v in df[c].astype(object).tolist()] for c in df.columns}
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]


def _plain(value: Any) -> Any:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def figure_html(fig: go.Figure, div_id: str) -> str:
    """The figure as an HTML fragment (no plotly.js) whose script waits for the page's loader.

    Raises: ValueError when plotly's fragment does not hold exactly one script tag.
    """
    html = str(
        fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config=PLOT_CONFIG)
    )
    if html.count("<script") != 1:
        raise ValueError(
            f"plotly fragment for {div_id} has {html.count('<script')} scripts, expected 1"
        )
    return html.replace("<script", f'<script type="{DEFERRED_TYPE}"', 1)


def with_summaries(run: Run) -> Run:
    """`run`, with the summaries derived from its traces where it has the traces but not the
    summaries (see `profiler.analyze.assemble.missing_summaries`)."""
    missing = missing_summaries(run.tables)
    return Run(meta=run.meta, tables={**run.tables, **missing}, path=run.path) if missing else run


def build_context(run: Run) -> dict[str, Any]:
    """The report's content, section by section; optional sections are None when absent."""
    run = with_summaries(run)
    meta = run.meta
    staged = stages.staged_table(run.table("stages"))
    order = _order(staged, run)
    titles = _titles(staged)
    repeats = profiled_repeats(run.table("samples"), run.table("gpu_trace"))
    ov = overlap.stage_overlap(run.table("gpu_trace"), meta.get("ceilings"))
    roof = roofline.roofline(run.table("metrics"), meta.get("ceilings"))
    ctx: dict[str, Any] = {
        "title": report_title(meta),
        "unit": str(meta.get("unit") or "items"),
        "header": header_rows(meta, run.path),
        "trimmed": trimmed_note(meta),
        "deferred_type": DEFERRED_TYPE,
        "staged": _staged(staged, titles),
        "charts": _charts(staged, run.table("gpu_activities"), order, repeats, titles),
        "stage_tables": _stage_tables(run, order, titles, ov, repeats),
        "timeline": _timeline(run, order, titles, repeats),
        "amdahl": _amdahl(run.table("gpu_activities"), staged, repeats, order, titles),
        "advice": _advice(run, ov, roof, order, titles, repeats),
        "roofline": _roofline(roof, meta.get("ceilings")) if run.has("metrics") else None,
        "batch_sweep": _batch_sweep(run.table("batch_sweep")) if run.has("batch_sweep") else None,
        "regressions": _regressions(run.table("regressions")) if run.has("regressions") else None,
    }
    ctx["sections"] = _sections(ctx)
    return ctx


def _order(staged: pd.DataFrame, run: Run) -> list[str]:
    """Stage keys in study order; stages seen only in traces come after, as first seen."""
    keys = list(staged["stage"])
    for name in ("gpu_activities", "gpu_trace", "api_calls"):
        keys += [str(k) for k in run.table(name)["stage"].dropna().unique() if k not in keys]
    return keys


def _titles(staged: pd.DataFrame) -> dict[str, str]:
    return {
        str(k): str(t) if pd.notna(t) and str(t) else str(k)
        for k, t in zip(staged["stage"], staged["title"], strict=True)
    }


def profiled_repeats(samples: pd.DataFrame, gpu_trace: pd.DataFrame) -> dict[str, int]:
    """Profiled repeats per stage: the `profiled` samples (the summaries cover them all, even
    when the trace was trimmed to fewer), else the repeats seen in the GPU trace."""
    seen = gpu_trace.groupby("stage")["repeat"].nunique()
    out = {str(k): int(v) for k, v in seen.items()}
    profiled = samples[samples["pass"] == "profiled"].groupby("stage").size()
    out.update({str(k): int(v) for k, v in profiled.items()})
    return out


def trimmed_note(meta: Mapping[str, Any]) -> str | None:
    """What was cut from the run's traces before it was committed (run.json's `trimmed`)."""
    cut = meta.get("trimmed")
    if not cut:
        return None
    if isinstance(cut, Mapping):
        return "; ".join(f"{k}: {v}" for k, v in cut.items())
    return str(cut)


def _staged(staged: pd.DataFrame, titles: Mapping[str, str]) -> dict[str, Any]:
    rows = records(staged)
    base, framework = stages.baseline_key(staged), stages.framework_key(staged)
    for r in rows:
        r["position"] = r["order"] + 1
        r["verdict"] = r["status"]
        r["verdict_class"] = VERDICT_CLASSES.get(r["status"], "fail")
        r["prev_title"] = titles.get(r["prev_stage"], r["prev_stage"]) if r["prev_stage"] else None
        r["is_baseline"] = r["role"] == stages.BASELINE
        r["is_framework"] = r["role"] == stages.FRAMEWORK
    return {
        "rows": rows,
        "baseline": titles.get(base, base) if base else None,
        "framework": titles.get(framework, framework) if framework else None,
        "failed": sum(r["verdict_class"] == "fail" for r in rows),
        "item_count": int(staged["items"].iloc[0]) if staged["items"].nunique() == 1 else None,
    }


def _charts(
    staged: pd.DataFrame,
    activities: pd.DataFrame,
    order: list[str],
    repeats: Mapping[str, int],
    titles: Mapping[str, str],
) -> dict[str, str | None]:
    timed = staged["median_ns"].notna().any()
    has_acts = not activities.empty
    return {
        "stage_times": figure_html(figures.stage_times(staged, titles), "chart-stage-times")
        if timed
        else None,
        "breakdown_abs": figure_html(
            figures.kernel_breakdown(activities, order, repeats, labels=titles),
            "chart-breakdown-abs",
        )
        if has_acts
        else None,
        "breakdown_share": figure_html(
            figures.kernel_breakdown(activities, order, repeats, shares=True, labels=titles),
            "chart-breakdown-share",
        )
        if has_acts
        else None,
    }


def _stage_tables(
    run: Run,
    order: list[str],
    titles: Mapping[str, str],
    ov: pd.DataFrame,
    repeats: Mapping[str, int],
) -> list[dict[str, Any]]:
    acts, api, st = run.table("gpu_activities"), run.table("api_calls"), run.table("stages")
    status = dict(zip(st["stage"], st["status"], strict=True))
    reason = dict(zip(st["stage"], st["reason"], strict=True))
    ov_rows = {r["stage"]: r for r in records(ov)}
    copies = {r["stage"]: r for r in records(overlap.copy_summary(acts, run.meta.get("ceilings")))}
    calls = acts.groupby("stage")["calls"].sum()
    out = []
    for key in order:
        a = acts[acts["stage"] == key].sort_values("total_ns", ascending=False, kind="stable")
        c = api[api["stage"] == key].sort_values("total_ns", ascending=False, kind="stable")
        out.append(
            {
                "stage": key,
                "title": titles.get(key, key),
                "anchor": f"stage-{key}",
                "status": _plain(status.get(key)),
                "reason": _plain(reason.get(key)),
                "activities": records(a),
                "api_calls": records(c),
                "stats": _stage_stats(
                    copies.get(key), ov_rows.get(key), repeats.get(key, 1), calls.get(key)
                ),
            }
        )
    return out


def _stage_stats(
    copies: dict[str, Any] | None, ov: dict[str, Any] | None, repeats: int, calls: Any
) -> dict[str, Any] | None:
    """The figures above a stage's tables: copies and bandwidth from the GPU-activities summary
    (whole even when the trace was trimmed), busy time and overlap from the trace (None without
    one), and, when the trace holds less than the summary, how much it holds."""
    if copies is None:
        return None
    n = max(repeats, 1)
    keys = ("memcpy_pct", "h2d_bytes_per_s", "d2h_bytes_per_s", "h2d_pct_of_pinned")
    stats: dict[str, Any] = {k: copies[k] for k in (*keys, "d2h_pct_of_pinned")}
    for k in ("h2d_bytes", "d2h_bytes"):  # per profiled repeat
        stats[k] = None if copies[k] is None else copies[k] / n
    ops = int(calls) / n
    stats.update(repeats=n, ops_per_repeat=ops, trace_note=None)
    for k in ("busy_ns", "span_ns", "busy_pct", "overlap_pct"):
        stats[k] = ov[k] if ov is not None else None
    if ov is not None:
        whole = round(ops * ov["repeats"])
        kept = f"{ov['repeats']} of the {n} profiled repeats"
        if ov["ops"] < whole:
            stats["trace_note"] = f"the first {ov['ops']:,} of the {whole:,} operations of {kept}"
        elif ov["repeats"] < n:
            stats["trace_note"] = f"{kept}, {ov['ops']:,} operations"
    return stats


def _timeline(
    run: Run, order: list[str], titles: Mapping[str, str], repeats: Mapping[str, int]
) -> dict[str, Any] | None:
    ceilings = run.meta.get("ceilings")
    trace = run.table("gpu_trace")
    stage = timeline.default_stage(trace, order)
    if stage is None:
        return None
    tl = timeline.timeline(trace, run.table("range_trace"), stage, limit=TIMELINE_LIMIT)
    ops = trace[(trace["stage"] == stage) & (trace["repeat"] == tl.repeat)]
    measured = records(overlap.stage_overlap(ops.reset_index(drop=True), ceilings))[0]
    title = f"{titles.get(stage, stage)}: repeat {tl.repeat}"
    return {
        "stage": stage,
        "title": titles.get(stage, stage),
        "repeat": tl.repeat,
        "html": figure_html(figures.timeline(tl.ops, tl.phases, title), "chart-timeline"),
        "shown": len(tl.ops),
        "total": tl.total_ops,
        "capped": len(tl.ops) < tl.total_ops,
        "limit": TIMELINE_LIMIT,
        "span_ns": tl.span_ns,
        "overlap": measured,
        "shown_span_ns": int((tl.ops["start_ns"] + tl.ops["duration_ns"]).max()),
        "trace_repeats": (seen := int(trace.loc[trace["stage"] == stage, "repeat"].nunique())),
        "repeats": max(repeats.get(stage, seen), seen),
    }


def _amdahl(
    activities: pd.DataFrame,
    staged: pd.DataFrame,
    repeats: Mapping[str, int],
    order: list[str],
    titles: Mapping[str, str],
) -> dict[str, Any]:
    gains = amdahl.kernel_gains(activities)
    per_stage = [
        {
            "stage": k,
            "title": titles.get(k, k),
            "anchor": f"amdahl-{k}",
            "rows": records(gains[gains["stage"] == k]),
        }
        for k in order
        if (gains["stage"] == k).any()
    ]
    moves = records(amdahl.transitions(activities, staged, repeats))
    for m in moves:
        m["prev_title"] = titles.get(m["prev_stage"], m["prev_stage"])
        m["title"] = titles.get(m["stage"], m["stage"])
    labels = [f"S = {s:g}" if math.isfinite(s) else "S = ∞ (removed)" for s in amdahl.SPEEDUPS]
    return {"speedup_labels": labels, "stages": per_stage, "transitions": moves}


def _advice(
    run: Run,
    ov: pd.DataFrame,
    roof: pd.DataFrame,
    order: list[str],
    titles: Mapping[str, str],
    repeats: Mapping[str, int],
) -> list[dict[str, Any]]:
    """Findings grouped by rule and technique (one card each), stages in study order."""
    acts = run.table("gpu_activities")
    launches = acts[acts["kind"] == schema.KERNEL].groupby("stage")["calls"].sum()
    per_repeat = {str(k): int(v) / max(repeats.get(str(k), 1), 1) for k, v in launches.items()}
    found = advice.findings(
        run.table("gpu_trace"),
        run.table("api_calls"),
        ov,
        roof,
        run.meta.get("ceilings"),
        order,
        kernels_per_repeat=per_repeat,
    )
    cards: dict[tuple[str, str], dict[str, Any]] = {}
    for r in records(found):
        card = cards.setdefault(
            (r["rule"], r["technique"]),
            {
                "rule": r["rule"],
                "title": advice.RULE_TITLES.get(r["rule"], r["rule"]),
                "technique": r["technique"],
                "stages": [],
            },
        )
        detail = r["finding"] if r["finding"].lower() != card["title"].lower() else None
        card["stages"].append(dict(r, title=titles.get(r["stage"], r["stage"]), detail=detail))
    return list(cards.values())


def _roofline(roof: pd.DataFrame, ceilings: Any) -> dict[str, Any]:
    dram, fp32 = roofline.ceiling_values(ceilings)
    source = {
        "dram_bytes_per_s": "peak DRAM bandwidth",
        "d2d_bytes_per_s": "DRAM bandwidth of a large device-to-device copy",
    }.get(roofline.dram_ceiling_key(ceilings) or "", "DRAM bandwidth")
    return {
        "html": figure_html(figures.roofline(roof, dram, fp32), "chart-roofline"),
        "rows": records(roof),
        "dram_source": source,
        "label_share_pct": figures.LABEL_SHARE_PCT,
        "dram_bytes_per_s": _plain(dram),
        "fp32_flops_per_s": _plain(fp32),
        "ridge": _plain(fp32 / dram),
    }


def _batch_sweep(batch: pd.DataFrame) -> dict[str, Any]:
    curves = sweep.batch_curves(batch)
    return {
        "html": figure_html(figures.batch_curves(curves), "chart-batch-sweep"),
        "rows": records(curves),
    }


def _regressions(reg: pd.DataFrame) -> dict[str, Any]:
    rank = {"regression": 0, "improvement": 1, "unchanged": 2}
    reg = reg.assign(_rank=reg["verdict"].map(lambda v: rank.get(v, 3)))
    reg = reg.sort_values(["_rank", "ratio"], ascending=[True, False], kind="stable").drop(
        columns="_rank"
    )
    rows = records(reg)
    counts = {
        v: sum(r["verdict"] == v for r in rows) for v in ("regression", "improvement", "unchanged")
    }
    return {"rows": rows, "counts": counts}


def _sections(ctx: Mapping[str, Any]) -> list[dict[str, str]]:
    """The sections present, in page order, for the navigation bar."""
    sections = [
        ("run", "Run"),
        ("staged-table", "Staged table"),
        ("time-chart", "Time per stage"),
        ("breakdown", "Kernel-time breakdown"),
        ("stage-tables", "Per-stage tables"),
        ("timeline", "Timeline"),
        ("amdahl", "Amdahl"),
        ("advice", "Advice"),
    ]
    optional = [
        ("roofline", "roofline", "Roofline"),
        ("batch_sweep", "batch-sweep", "Batch size"),
        ("regressions", "regressions", "Regressions"),
    ]
    sections += [(sid, title) for key, sid, title in optional if ctx[key] is not None]
    return [{"id": sid, "title": title} for sid, title in sections]
