"""Everything the report's templates receive, computed from a run's tables. Pure: reads nothing,
writes nothing, starts nothing.

`build_context(run)` returns plain records (dicts of str, int, float, bool, None), verdicts and
labels already decided, and each chart as a `fig.to_html(full_html=False, include_plotlyjs=False)`
fragment whose script is deferred (type `DEFERRED_TYPE`) until the page has loaded plotly.js.
Templates only loop and format units; every number comes from the run's tables. Sections are
built in `profiler.render.sections` (tables) and `profiler.render.charts` (charts).

Run text is bounded and made safe here (`profiler.render.records`): every string a template gets
is clipped to `escape.TEXT_LIMIT` characters with its control characters written out, and stage
titles to `escape.NAME_LIMIT`; the templates autoescape it; figures escape what they draw.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from profiler import schema
from profiler.analyze import overlap, roofline, stages, timeline
from profiler.analyze.assemble import missing_summaries
from profiler.render import charts, sections
from profiler.render.counter_section import COUNTERS, KERNELS, counter_section
from profiler.render.escape import NAME_LIMIT
from profiler.render.header import header_rows, report_title
from profiler.render.layer_section import layer_section
from profiler.render.phase_section import analysis, phase_section
from profiler.render.records import DEFERRED_TYPE, records, shown
from profiler.store import Run

__all__ = ["DEFERRED_TYPE", "build_context", "records", "with_summaries"]

TIMELINE_LIMIT = timeline.DEFAULT_LIMIT


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
    repeats = profiled_repeats(run.table("samples"), run.table("gpu_trace"), run.table("stages"))
    ov = overlap.stage_overlap(run.table("gpu_trace"), meta.get("ceilings"))
    roof = roofline.roofline(run.table("metrics"), meta.get("ceilings"))
    acts = run.table("gpu_activities")
    whole = whole_program(run.table("stages"))
    unit = str(meta.get("unit") or "items")
    ctx: dict[str, Any] = {
        "title": shown(report_title(meta), NAME_LIMIT),
        "unit": shown(unit, NAME_LIMIT),
        "header": [{k: shown(v) for k, v in row.items()} for row in header_rows(meta, run.path)],
        "trimmed": shown(trimmed_note(meta)) if trimmed_note(meta) else None,
        "deferred_type": DEFERRED_TYPE,
        "staged": sections.staged_section(staged, titles, unit),
        "breakdown_per": charts.breakdown_per(staged, acts, whole),
        "charts": charts.charts_section(
            staged, acts, order, repeats, titles, unit, charts.breakdown_per(staged, acts, whole)
        ),
        "stage_tables": sections.stage_tables_section(run, order, titles, ov, repeats, whole),
        "timeline": charts.timeline_section(run, order, titles, repeats),
        "amdahl": sections.amdahl_section(acts, staged, repeats, order, titles),
        "phase_amdahl": phase_section(analysis(run), titles),
        "advice": sections.advice_section(run, ov, roof, order, titles, repeats),
        "roofline": charts.roofline_section(roof, meta.get("ceilings"), titles)
        if run.has("metrics")
        else None,
        "layers": layer_section(run, titles),
        "counters": counter_section(run, titles),
        "counters_limits": {"kernels": KERNELS, "counters": COUNTERS},
        "batch_sweep": charts.batch_sweep_section(run.table("batch_sweep"), _roles(run))
        if run.has("batch_sweep")
        else None,
        "regressions": sections.regressions_section(run.table("regressions"))
        if run.has("regressions")
        else None,
    }
    ctx["sections"] = _sections(ctx)
    return ctx


def _order(staged: pd.DataFrame, run: Run) -> list[str]:
    """Stage keys in study order; stages seen only in traces come after, as first seen."""
    keys = list(staged["stage"])
    for name in ("gpu_activities", "gpu_trace", "api_calls"):
        keys += [str(k) for k in run.table(name)["stage"].dropna().unique() if k not in keys]
    return keys


def _roles(run: Run) -> dict[str, str]:
    """Each stage's role (baseline, framework, step) by its key, from the stages table."""
    stages = run.table("stages")
    if "role" not in stages:
        return {}
    pairs = zip(stages["stage"], stages["role"], strict=True)
    return {str(k): str(r) for k, r in pairs if pd.notna(r)}


def _titles(staged: pd.DataFrame) -> dict[str, str]:
    """Each stage's title as the page shows it (its key when it has none), looked up by the
    stage key as the run has it and as records show it (clipped, controls escaped)."""
    out: dict[str, str] = {}
    for key, title in zip(staged["stage"], staged["title"], strict=True):
        text = shown(title if pd.notna(title) and str(title) else key, NAME_LIMIT)
        out[str(key)] = out[shown(key)] = text
    return out


def profiled_repeats(
    samples: pd.DataFrame, gpu_trace: pd.DataFrame, stages: pd.DataFrame | None = None
) -> dict[str, int]:
    """Profiled repeats per stage: the `profiled` samples (the summaries cover them all, even
    when the trace was trimmed to fewer), else the repeats seen in the GPU trace. An imported
    stage's output covers the whole program: the repeats the user said it ran, else 1 (its
    per-repeat figures are then whole-program totals, and say so)."""
    seen = gpu_trace.groupby("stage")["repeat"].nunique()
    out = {str(k): int(v) for k, v in seen.items()}
    profiled = samples[samples["pass"] == "profiled"].groupby("stage").size()
    out.update({str(k): int(v) for k, v in profiled.items()})
    if stages is not None:
        imported = stages[stages["status"] == schema.IMPORTED]
        out.update(
            {
                str(k): max(int(n), 1)
                for k, n in zip(imported["stage"], imported["repeats"], strict=True)
            }
        )
    return out


def whole_program(stages: pd.DataFrame) -> set[str]:
    """The imported stages whose repeats were not given: their per-repeat figures are
    whole-program totals."""
    imported = stages[(stages["status"] == schema.IMPORTED) & (stages["repeats"] <= 0)]
    return {str(k) for k in imported["stage"]}


def trimmed_note(meta: Mapping[str, Any]) -> str | None:
    """What was cut from the run's traces before it was committed (run.json's `trimmed`)."""
    cut = meta.get("trimmed")
    if not cut:
        return None
    if isinstance(cut, Mapping):
        return "; ".join(f"{k}: {_trim_text(v)}" for k, v in cut.items())
    return str(cut)


def _trim_text(value: Any) -> str:
    """`{kept, of, rule}` as words; an older run's sentence as it is."""
    if not isinstance(value, Mapping):
        return str(value)
    kept, of, rule = value.get("kept"), value.get("of"), value.get("rule")
    whole = isinstance(kept, int) and isinstance(of, int)
    counts = f"{kept:,} of {of:,} rows kept" if whole else ""
    return ", ".join(str(p) for p in (counts, rule) if p) or "cut"


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
        *([("phase-amdahl", "Amdahl by phase")] if ctx["phase_amdahl"] is not None else []),
        ("advice", "Advice"),
    ]
    optional = [
        ("roofline", "roofline", "Roofline"),
        ("layers", "layers", "Per layer"),
        ("counters", "counters", "Counters"),
        ("batch_sweep", "batch-sweep", "Batch size"),
        ("regressions", "regressions", "Regressions"),
    ]
    sections += [(sid, title) for key, sid, title in optional if ctx[key] is not None]
    return [{"id": sid, "title": title} for sid, title in sections]
