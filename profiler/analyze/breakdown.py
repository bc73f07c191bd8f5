"""Where GPU time goes in each stage, ready to stack: the report's kernel-time breakdown.

Kernels that matter anywhere in the study are named individually, the rest summed as `other
kernels`; copies and memsets keep their own series. Which kernels are named is a ranking over
the whole study: a kernel's share of its stage's GPU time, summed over the stages, so that each
stage's main kernels show however short the stage is. Times are per profiled repeat (summaries
cover every profiled repeat; stages profile different numbers of them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from profiler import schema
from profiler.schema import Column

OTHER = "other kernels"
DEFAULT_TOP = 10

BREAKDOWN = schema.Table(
    "kernel_breakdown",
    "GPU time per series (a named kernel, other kernels, a copy or memset kind) and stage.",
    (
        Column("series", "string", doc="a kernel's name, `other kernels`, or a copy/memset label"),
        Column("kind", "string", doc="`kernel` (named), `other` or the activity kind"),
        Column("rank", "int64", doc="stacking order: named kernels by rank, other, the rest"),
        Column("stage", "string"),
        Column("per_repeat_ns", "float64", "ns", "GPU time per profiled repeat"),
        Column("share_pct", "float64", "%", "of the stage's GPU time (NaN: the stage has none)"),
    ),
)


def ranked_kernels(activities: pd.DataFrame, top: int = DEFAULT_TOP) -> list[str]:
    """The `top` kernels with the largest shares of their stages' GPU time, summed over the
    stages, largest first (ties by name).

    Args:
        activities: DataFrame with `schema.GPU_ACTIVITIES` columns.
    """
    kernels = activities[activities["kind"] == schema.KERNEL]
    stage_total = activities.groupby("stage")["total_ns"].transform("sum")[kernels.index]
    share = kernels["total_ns"] / stage_total.replace(0, np.nan)
    ranked = share.groupby(kernels["name"]).sum()  # by name, so that ties rank by name
    return list(ranked.sort_values(ascending=False, kind="stable").index[:top])


def kernel_breakdown(
    activities: pd.DataFrame,
    order: Sequence[str],
    repeats: Mapping[str, int] | None = None,
    top: int = DEFAULT_TOP,
) -> pd.DataFrame:
    """Every stage's GPU time by series, one row per series and stage (zero where a series has
    no time in a stage, so that bars stack).

    Args:
        activities: DataFrame with `schema.GPU_ACTIVITIES` columns.
        order: stage keys in study order; stages without activities are left out.
        repeats: profiled repeats per stage (default 1): times are per repeat.
        top: how many kernels are named individually (see `ranked_kernels`).

    Returns: DataFrame with `BREAKDOWN` columns, by `rank` then study order.
    """
    keep = ranked_kernels(activities, top)
    is_kernel = activities["kind"] == schema.KERNEL
    named = activities["name"].isin(keep)
    df = activities.assign(
        series=activities["name"].where(~is_kernel | named, OTHER),
        kind=np.where(is_kernel, np.where(named, schema.KERNEL, "other"), activities["kind"]),
        per_repeat_ns=activities["total_ns"].astype("float64")
        / activities["stage"].map(lambda k: max((repeats or {}).get(str(k), 1), 1)),
    )
    stages = [k for k in order if k in set(df["stage"])]
    sums = df.groupby(["series", "kind", "stage"], sort=False)["per_repeat_ns"].sum()
    series = _series_order(df, keep)
    index = pd.MultiIndex.from_tuples(
        [(s, k, st) for s, k in series for st in stages], names=["series", "kind", "stage"]
    )
    out = sums.reindex(index, fill_value=0.0).reset_index()
    out["rank"] = out.groupby(["series", "kind"], sort=False).ngroup()
    total = out.groupby("stage")["per_repeat_ns"].transform("sum")
    out["share_pct"] = out["per_repeat_ns"] / total.where(total > 0) * 100.0
    return schema.validate(schema.conform(out, BREAKDOWN), BREAKDOWN)


def _series_order(df: pd.DataFrame, keep: list[str]) -> list[tuple[str, str]]:
    """(series, kind) in stacking order: named kernels by rank, other kernels, then the copies
    and memsets by name."""
    named = [(n, schema.KERNEL) for n in keep]
    other = [(OTHER, "other")] if (df["kind"] == "other").any() else []
    rest = sorted(
        {(str(s), str(k)) for s, k in zip(df["series"], df["kind"], strict=True)}
        - set(named)
        - set(other)
    )
    return named + other + rest
