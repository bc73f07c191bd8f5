"""Amdahl's law over the GPU-activities tables.

If an activity takes a share P of a stage's GPU time and it alone becomes S times faster, the
whole becomes 1 / ((1 - P) + P / S) times faster. A 14.6% faster kernel (S = 1.146) that is 10%
of the time buys 1 / (0.9 + 0.1 / 1.146) = 1.013: about 1.3% end to end. Gains here are ratios
(1.013 means 1.3% faster), computed over GPU time: the end-to-end gain when the GPU work is what
the host waits for.

For consecutive stages, the change is judged twice: predicted from the previous stage's shares
and each activity's measured local speedup (GPU time, per profiled repeat), and measured end to
end (the staged table's unprofiled times).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from profiler import schema
from profiler.schema import Column

SPEEDUPS = (1.15, 2.0, math.inf)

AMDAHL = schema.Table(
    "amdahl",
    "Per stage and activity: its share of GPU time and the gain if it alone were S times faster.",
    (
        Column("stage", "string"),
        Column("kind", "string"),
        Column("name", "string"),
        Column("total_ns", "int64", "ns"),
        Column("share_pct", "float64", "%", "P: total_ns over the stage's summed GPU time"),
        Column("gain_s1_15", "float64", doc="whole-stage speedup if this alone were 1.15x faster"),
        Column("gain_s2", "float64", doc="... 2x faster"),
        Column("gain_sinf", "float64", doc="... infinitely fast (removed): 1 / (1 - P)"),
    ),
)

TRANSITIONS = schema.Table(
    "amdahl_transitions",
    "For consecutive PASS stages with GPU activities: predicted against measured gain.",
    (
        Column("prev_stage", "string"),
        Column("stage", "string"),
        Column("prev_gpu_ns", "float64", "ns", "previous stage's GPU time per profiled repeat"),
        Column("gpu_ns", "float64", "ns", "this stage's GPU time per profiled repeat"),
        Column("top_name", "string", doc="the activity whose time changed the most (either way)"),
        Column("top_share_pct", "float64", "%", "its share P of the previous stage's GPU time"),
        Column("top_speedup", "float64", doc="its local speedup S (inf when it is gone)"),
        Column("predicted_top", "float64", doc="Amdahl gain from that activity alone"),
        Column("predicted_gpu", "float64", doc="gain from every activity's local speedup"),
        Column("measured", "float64", doc="previous stage's time / this stage's time, end to end"),
    ),
)


def gain(share: float, speedup: float) -> float:
    """Amdahl: the whole's speedup when a part of share `share` (0..1) is `speedup` times faster
    (NaN when a part of no time became some: 0 / 0)."""
    if speedup == 0:
        return 0.0 if share > 0 else math.nan
    rest = (1.0 - share) + (0.0 if math.isinf(speedup) else share / speedup)
    return math.inf if rest <= 0 else 1.0 / rest


def kernel_gains(gpu_activities: pd.DataFrame) -> pd.DataFrame:
    """Each activity's share P of its stage's GPU time and its Amdahl gains at `SPEEDUPS`.

    Args:
        gpu_activities: DataFrame with `schema.GPU_ACTIVITIES` columns.

    Returns: DataFrame with `AMDAHL` columns, per stage by decreasing share.
    Raises: SchemaError when `gpu_activities` does not match `schema.GPU_ACTIVITIES`.
    """
    schema.validate(gpu_activities, schema.GPU_ACTIVITIES)
    df = gpu_activities[["stage", "kind", "name", "total_ns"]].copy()
    stage_total = df.groupby("stage", sort=False)["total_ns"].transform("sum").astype("float64")
    df["share_pct"] = df["total_ns"] / stage_total.where(stage_total > 0) * 100.0
    for speedup, col in zip(SPEEDUPS, ("gain_s1_15", "gain_s2", "gain_sinf"), strict=True):
        df[col] = [gain(p / 100.0, speedup) if pd.notna(p) else math.nan for p in df["share_pct"]]
    order = {k: i for i, k in enumerate(dict.fromkeys(df["stage"]))}
    df["_stage_pos"] = df["stage"].map(order)
    df = df.sort_values(["_stage_pos", "share_pct"], ascending=[True, False], kind="stable")
    return schema.validate(schema.conform(df, AMDAHL), AMDAHL)


_COMPARED = (schema.PASS, schema.IMPORTED)


def transitions(
    gpu_activities: pd.DataFrame,
    staged: pd.DataFrame,
    repeats: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """Predicted against measured gain for each pair of consecutive PASS stages with activities,
    and each imported stage against the stage its staged-table speedup is against (the nearest
    earlier imported stage whose time is of the same kind: `stages.staged_table`).

    Args:
        gpu_activities: DataFrame with `schema.GPU_ACTIVITIES` columns.
        staged: the staged table (`profiler.analyze.stages.STAGED` columns).
        repeats: profiled repeats per stage (the activity totals are divided by it); default 1.

    Returns: DataFrame with `TRANSITIONS` columns, in study order.
    """
    repeats = repeats or {}
    per_stage = {
        str(k): g.groupby("name")["total_ns"].sum().astype("float64")
        / max(repeats.get(str(k), 1), 1)
        for k, g in gpu_activities.groupby("stage", sort=False)
    }
    ok = staged[staged["status"].isin(list(_COMPARED)) & staged["stage"].isin(list(per_stage))]
    ok = ok.sort_values("order")
    times = dict(zip(ok["stage"], ok["median_ns"].astype("float64"), strict=True))
    passed = list(ok.loc[ok["status"] == schema.PASS, "stage"])
    pairs = list(zip(passed, passed[1:], strict=False))
    imported = ok[ok["status"] == schema.IMPORTED]
    pairs += [
        (str(prev), str(key))
        for key, prev in zip(imported["stage"], imported["prev_stage"], strict=True)
        if isinstance(prev, str) and prev in per_stage
    ]
    order = dict(zip(ok["stage"], ok["order"], strict=True))
    pairs.sort(key=lambda pair: order[pair[1]])
    rows = [_transition(a, b, per_stage[a], per_stage[b], times) for a, b in pairs]
    out = pd.DataFrame(rows, columns=TRANSITIONS.names) if rows else schema.empty(TRANSITIONS)
    return schema.validate(schema.conform(out, TRANSITIONS), TRANSITIONS)


def _transition(
    prev: str, cur: str, before: pd.Series, after: pd.Series, times: Mapping[str, float]
) -> dict[str, object]:
    prev_total, cur_total = float(before.sum()), float(after.sum())
    aligned = after.reindex(before.index).fillna(0.0)
    change = (before - aligned).abs()
    top = str(change.idxmax())
    share = before[top] / prev_total if prev_total > 0 else math.nan
    local = math.inf if aligned[top] == 0 else before[top] / aligned[top]
    measured = times[prev] / times[cur] if pd.notna(times[prev]) and times[cur] else math.nan
    return {
        "prev_stage": prev,
        "stage": cur,
        "prev_gpu_ns": prev_total,
        "gpu_ns": cur_total,
        "top_name": top,
        "top_share_pct": share * 100.0,
        "top_speedup": local,
        "predicted_top": gain(share, local) if pd.notna(share) else math.nan,
        "predicted_gpu": prev_total / cur_total if cur_total > 0 else math.inf,
        "measured": measured,
    }
