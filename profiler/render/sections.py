"""The report's table sections, each built from a run's tables by one function: the staged
table, the per-stage nvprof-style tables, Amdahl, advice and regressions. Pure: records in,
records out (see `profiler.render.records`); the charts are in `profiler.render.charts`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import pandas as pd

from profiler import schema
from profiler.analyze import advice, amdahl, overlap, stages
from profiler.render import timing
from profiler.render.records import anchor, plain, records, shown
from profiler.store import Run

VERDICT_CLASSES = {
    schema.PASS: "pass",
    schema.FAIL: "fail",
    schema.TIMEOUT: "fail",
    schema.ERROR: "fail",
    schema.SKIPPED: "skipped",
    schema.IMPORTED: "imported",  # neither a pass nor a failure: shown neutrally
}


def staged_section(
    staged: pd.DataFrame, titles: Mapping[str, str], unit: str = "items"
) -> dict[str, Any]:
    """The staged table: one row per stage, its verdict class, its references named and, for an
    imported stage, what its time is (`profiler.render.timing`). `measured` and `imported` count
    the stages of each kind: the page shows the columns that apply to the stages it has."""
    rows = records(staged)
    base, framework = stages.baseline_key(staged), stages.framework_key(staged)
    for r in rows:
        r["position"] = r["order"] + 1
        r["title"] = titles.get(r["stage"], r["stage"])
        r["verdict"] = r["status"]
        r["verdict_class"] = VERDICT_CLASSES.get(r["status"], "fail")
        r["prev_title"] = titles.get(r["prev_stage"], r["prev_stage"]) if r["prev_stage"] else None
        r["is_baseline"] = r["role"] == stages.BASELINE
        r["is_framework"] = r["role"] == stages.FRAMEWORK
        r["anchor"] = anchor("staged", r["stage"], r["position"])
        r["time_label"], r["time_note"] = timing.time_label(r), timing.time_note(r)
    imported = sum(r["verdict_class"] == "imported" for r in rows)
    return {
        "rows": rows,
        "baseline": titles.get(base, base) if base else None,
        "framework": titles.get(framework, framework) if framework else None,
        "failed": sum(r["verdict_class"] == "fail" for r in rows),
        "imported": imported,
        "measured": len(rows) - imported,
        "time_heading": shown(timing.time_heading(staged, unit)),
    }


def stage_tables_section(
    run: Run,
    order: list[str],
    titles: Mapping[str, str],
    ov: pd.DataFrame,
    repeats: Mapping[str, int],
    whole: Collection[str] = (),
) -> list[dict[str, Any]]:
    """Per stage: GPU activities and API calls as nvprof printed them, and the figures above.
    `whole`: the imported stages whose figures are whole-program totals (repeats not given)."""
    acts, api, st = run.table("gpu_activities"), run.table("api_calls"), run.table("stages")
    status = dict(zip(st["stage"], st["status"], strict=True))
    reason = dict(zip(st["stage"], st["reason"], strict=True))
    ov_rows = {r["stage"]: r for r in records(ov)}
    copies = {r["stage"]: r for r in records(overlap.copy_summary(acts, run.meta.get("ceilings")))}
    calls = acts.groupby("stage")["calls"].sum()
    out = []
    for position, key in enumerate(order, 1):
        a = acts[acts["stage"] == key].sort_values("total_ns", ascending=False, kind="stable")
        c = api[api["stage"] == key].sort_values("total_ns", ascending=False, kind="stable")
        out.append(
            {
                "stage": plain(key),
                "title": titles.get(key, plain(key)),
                "anchor": anchor("stage", key, position),
                "status": plain(status.get(key)),
                "verdict_class": VERDICT_CLASSES.get(str(status.get(key)), "fail"),
                "reason": plain(reason.get(key)),
                "activities": records(a),
                "api_calls": records(c),
                "stats": stage_stats(
                    copies.get(plain(key)),
                    ov_rows.get(plain(key)),
                    repeats.get(key, 1),
                    calls.get(key),
                    imported=status.get(key) == schema.IMPORTED,
                    whole=key in whole,
                ),
            }
        )
    return out


def stage_stats(
    copies: dict[str, Any] | None,
    ov: dict[str, Any] | None,
    repeats: int,
    calls: Any,
    imported: bool = False,
    whole: bool = False,
) -> dict[str, Any] | None:
    """The figures above a stage's tables: copies and bandwidth from the GPU-activities summary
    (whole even when the trace was trimmed), busy time and overlap from the trace (None without
    one), and, when the trace holds less than the summary, how much it holds. `per` says what
    the per-repeat figures cover (`a repeat`; `whole program` for an import whose repeats were
    not given) and `repeats_label` what the repeat count is (None: there is none to show)."""
    if copies is None:
        return None
    n = max(repeats, 1)
    keys = ("memcpy_pct", "h2d_bytes_per_s", "d2h_bytes_per_s", "h2d_pct_of_pinned")
    stats: dict[str, Any] = {k: copies[k] for k in (*keys, "d2h_pct_of_pinned")}
    for k in ("h2d_bytes", "d2h_bytes"):  # per profiled repeat
        stats[k] = None if copies[k] is None else copies[k] / n
    ops = int(calls) / n
    stats.update(repeats=n, ops_per_repeat=ops, trace_note=None)
    stats["per"] = timing.repeat_word(imported, 0 if whole else n)
    stats["repeats_label"] = (
        None if whole else "repeats (as given)" if imported else "profiled repeats"
    )
    for k in ("busy_ns", "span_ns", "busy_pct", "overlap_pct"):
        stats[k] = ov[k] if ov is not None else None
    if ov is not None and not imported:
        whole = round(ops * ov["repeats"])
        kept = f"{ov['repeats']} of the {n} profiled repeats"
        if ov["ops"] < whole:
            stats["trace_note"] = f"the first {ov['ops']:,} of the {whole:,} operations of {kept}"
        elif ov["repeats"] < n:
            stats["trace_note"] = f"{kept}, {ov['ops']:,} operations"
    return stats


def amdahl_section(
    activities: pd.DataFrame,
    staged: pd.DataFrame,
    repeats: Mapping[str, int],
    order: list[str],
    titles: Mapping[str, str],
) -> dict[str, Any]:
    """Each activity's gain if it alone got faster, per stage; predicted against measured."""
    gains = amdahl.kernel_gains(activities)
    per_stage = [
        {
            "stage": plain(k),
            "title": titles.get(k, plain(k)),
            "anchor": anchor("amdahl", k, position),
            "rows": records(gains[gains["stage"] == k]),
        }
        for position, k in enumerate(order, 1)
        if (gains["stage"] == k).any()
    ]
    moves = records(amdahl.transitions(activities, staged, repeats))
    for m in moves:
        m["prev_title"] = titles.get(m["prev_stage"], m["prev_stage"])
        m["title"] = titles.get(m["stage"], m["stage"])
    labels = [f"S = {s:g}" if s != float("inf") else "S = ∞ (removed)" for s in amdahl.SPEEDUPS]
    return {"speedup_labels": labels, "stages": per_stage, "transitions": moves}


def advice_section(
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


def regressions_section(reg: pd.DataFrame) -> dict[str, Any]:
    """The comparison with the baseline: regressions first, then improvements, by change."""
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
