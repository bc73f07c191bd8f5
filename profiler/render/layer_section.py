"""The per-layer section of a network of many layers: time per op kind per stage, each stage's
nodes against the vendor library's, and which nodes gained and lost from stage to stage.
Pure: a run's tables in, records out (`profiler.analyze.layers` decides every number).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from profiler.analyze import layers
from profiler.render.records import anchor, records, shown
from profiler.store import Run

#: rows highlighted in each per-layer table, and shown open for the fastest stage
TOP = 10
#: nodes listed as gained and as lost per pair of consecutive stages
STEP_TOP = 5


def layer_section(run: Run, titles: Mapping[str, str]) -> dict[str, Any] | None:
    """The section's records, or None when the run has no per-node ranges."""
    stages = run.table("stages")
    times = layers.node_times(run.table("ranges"), stages, run.table("range_trace"))
    if times.empty:
        return None
    ref = str(times.columns[0])
    facts = _facts(run)
    batch = int(run.meta.get("settings", {}).get("items") or 1)
    ceilings = run.meta.get("ceilings")
    own = [str(s) for s in times.columns[1:]]
    tables = [_stage_table(times, s, ref, facts, batch, ceilings, titles, i)
              for i, s in enumerate(own)]
    fastest = min(tables, key=lambda t: t["total_ns"])
    return {
        "reference": ref,
        "reference_title": titles.get(ref, ref),
        "nodes": len(times),
        "has_facts": facts is not None,
        "by_kind": _by_kind(times, facts, titles),
        "stages": tables,
        "fastest": fastest,
        "steps": _steps(times, titles),
    }


def _facts(run: Run) -> pd.DataFrame | None:
    """Per-node facts (kind, shapes, FLOPs, bytes per item) when the run carries them (a node
    listed twice, as only a damaged table has it, by its first row)."""
    if not run.has("layers"):
        return None
    facts = run.table("layers").set_index("node")
    return facts[~facts.index.duplicated()]


def _stage_table(times: pd.DataFrame, stage: str, ref: str, facts: pd.DataFrame | None,
                 batch: int, ceilings: Any, titles: Mapping[str, str], position: int
                 ) -> dict[str, Any]:
    table = layers.versus(times, stage, ref, facts, batch, ceilings)
    rows = records(table.reset_index())
    for r in rows:
        r["top"] = r["rank"] <= TOP
    top = sorted(rows, key=lambda r: r["rank"])[:TOP]
    total, ref_total = float(table["stage_ns"].sum()), float(times[ref].sum())
    return {
        "stage": shown(stage),
        "title": titles.get(stage, stage),
        "id": anchor("layers", stage, position),
        "rows": rows,
        "top": top,
        "total_ns": total,
        "reference_ns": ref_total,
        "ratio": total / ref_total if ref_total else None,
        "faster": int((table["ratio"] < 1).sum()),
        "count": len(table),
    }


def _by_kind(times: pd.DataFrame, facts: pd.DataFrame | None, titles: Mapping[str, str]
             ) -> dict[str, Any] | None:
    if facts is None:
        return None
    table = layers.by_kind(times, facts)
    return {
        "stages": [{"key": shown(s), "title": titles.get(s, s)} for s in table.columns],
        "rows": [{"kind": shown(k), "ns": [float(v) for v in row]} for k, row in table.iterrows()],
    }


def _steps(times: pd.DataFrame, titles: Mapping[str, str]) -> list[dict[str, Any]]:
    detail = layers.steps(times, STEP_TOP)
    out = records(layers.step_counts(times))
    for r in out:
        pair = detail[(detail["before"] == r["before"]) & (detail["after"] == r["after"])]
        r["before_title"] = titles.get(r["before"], r["before"])
        r["after_title"] = titles.get(r["after"], r["after"])
        r["gained_rows"] = records(pair[pair["change"] == "gained"])
        r["lost_rows"] = records(pair[pair["change"] == "lost"])
    return out
