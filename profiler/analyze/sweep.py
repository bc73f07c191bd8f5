"""Batch-size curves: time per item, throughput and the latency of one batch against batch size,
and where the study's own stages and the frameworks' cross.

Larger batches amortise launch and copy overheads (time per image falls, throughput rises) until
the GPU is full; the latency of one batch grows with it. Both come from `schema.BATCH_SWEEP`.
A framework may win at some batch sizes and lose at others (the known LeNet study's CUDA won
at batch 1 and lost at large batches): `batch_versus` puts each framework stage against the
fastest custom stage at every batch size and `batch_crossings` says from where to where the
custom code is faster.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from profiler import schema
from profiler.schema import Column

BATCH_CURVES = schema.Table(
    "batch_curves",
    "Per stage and batch size: time per item, throughput and batch latency.",
    (
        Column("stage", "string"),
        Column("batch", "int64"),
        Column("items", "int64"),
        Column("median_ns", "int64", "ns", "time for all items"),
        Column("per_item_ns", "float64", "ns", "median_ns / items"),
        Column("per_item_min_ns", "float64", "ns", "min_ns / items"),
        Column("per_item_max_ns", "float64", "ns", "max_ns / items"),
        Column("items_per_s", "float64", "items/s", "throughput"),
        Column("batch_median_ns", "int64", "ns", "latency of one batch"),
        Column("speedup_vs_smallest", "float64", doc="time per item at the smallest batch / here"),
    ),
)


def batch_curves(batch_sweep: pd.DataFrame) -> pd.DataFrame:
    """Time per item and throughput for every stage and batch size.

    Args:
        batch_sweep: DataFrame with `schema.BATCH_SWEEP` columns.

    Returns: DataFrame with `BATCH_CURVES` columns, sorted by stage (first appearance) and batch.
    Raises: SchemaError when `batch_sweep` does not match `schema.BATCH_SWEEP`.
    """
    schema.validate(batch_sweep, schema.BATCH_SWEEP)
    df = batch_sweep[batch_sweep["items"] > 0].copy()
    items = df["items"].astype("float64")
    df["per_item_ns"] = df["median_ns"] / items
    df["per_item_min_ns"] = df["min_ns"] / items
    df["per_item_max_ns"] = df["max_ns"] / items
    df["items_per_s"] = items / (
        df["median_ns"].astype("float64").where(df["median_ns"] > 0) / 1e9
    )
    df["_pos"] = df["stage"].map({k: i for i, k in enumerate(dict.fromkeys(df["stage"]))})
    df = df.sort_values(["_pos", "batch"], kind="stable")
    smallest = df.groupby("stage", sort=False)["per_item_ns"].transform("first")
    df["speedup_vs_smallest"] = smallest / df["per_item_ns"]
    return schema.validate(schema.conform(df, BATCH_CURVES), BATCH_CURVES)


#: the roles whose stages are the study's own code (against the `framework` stages)
CUSTOM_ROLES = ("baseline", "step")

BATCH_VERSUS = schema.Table(
    "batch_versus",
    "Per batch size and framework stage: the fastest custom stage per item against it.",
    (
        Column("batch", "int64"),
        Column("framework", "string", doc="a stage of role `framework`"),
        Column("framework_per_item_ns", "float64", "ns"),
        Column("custom", "string", doc="the fastest stage per item of role baseline or step"),
        Column("custom_per_item_ns", "float64", "ns"),
        Column("speedup", "float64", doc="framework / custom time per item: > 1, custom faster"),
    ),
)

BATCH_CROSSINGS = schema.Table(
    "batch_crossings",
    "Per framework stage: from which batch size to which the fastest custom stage is faster.",
    (
        Column("framework", "string"),
        Column("batches", "int64", doc="batch sizes measured for it and for a custom stage"),
        Column("faster", "int64", doc="of those, where the fastest custom stage is faster"),
        Column("faster_from", "Int64", doc="smallest batch of the first run of faster sizes"),
        Column("faster_to", "Int64", doc="largest batch of that run (where the lines cross)"),
        Column("first_slower", "Int64", doc="smallest batch where the framework is as fast"),
        Column("min_speedup", "float64", doc="the framework's worst batch for custom"),
        Column("min_speedup_batch", "int64"),
        Column("max_speedup", "float64"),
        Column("max_speedup_batch", "int64"),
    ),
)


def batch_versus(curves: pd.DataFrame, roles: Mapping[str, str]) -> pd.DataFrame:
    """At every batch size, each framework stage against the fastest custom stage there.

    Args:
        curves: DataFrame with `BATCH_CURVES` columns.
        roles: each stage's role (`baseline`, `framework`, `step`); stages not named are left out.

    Returns: DataFrame with `BATCH_VERSUS` columns, by framework (first appearance) and batch;
        empty when the sweep has no framework stage or no custom stage.
    """
    schema.validate(curves, BATCH_CURVES)
    # (as objects: pandas maps a pyarrow-backed column through an empty dict to doubles, which
    # `isin` then refuses to compare with strings)
    role = curves["stage"].astype(object).map(dict(roles))
    frameworks = curves[role == "framework"]
    custom = curves[role.isin(CUSTOM_ROLES)]
    if frameworks.empty or custom.empty:
        return schema.empty(BATCH_VERSUS)
    best = custom.loc[custom.groupby("batch")["per_item_ns"].idxmin()]
    best = best[["batch", "stage", "per_item_ns"]].rename(
        columns={"stage": "custom", "per_item_ns": "custom_per_item_ns"}
    )
    df = frameworks[["stage", "batch", "per_item_ns"]].rename(
        columns={"stage": "framework", "per_item_ns": "framework_per_item_ns"}
    )
    df = df.merge(best, on="batch", how="inner")
    df["speedup"] = df["framework_per_item_ns"] / df["custom_per_item_ns"]
    order = {k: i for i, k in enumerate(dict.fromkeys(frameworks["stage"]))}
    df["_pos"] = df["framework"].map(order)
    df = df.sort_values(["_pos", "batch"], kind="stable")
    return schema.validate(schema.conform(df.reset_index(drop=True), BATCH_VERSUS), BATCH_VERSUS)


def batch_crossings(versus: pd.DataFrame) -> pd.DataFrame:
    """Per framework stage, where the fastest custom stage is faster per item: "custom is faster
    than torch from batch `faster_from` to `faster_to`", and where it is not.

    Args:
        versus: DataFrame with `BATCH_VERSUS` columns.

    Returns: DataFrame with `BATCH_CROSSINGS` columns, one row per framework stage.
    """
    schema.validate(versus, BATCH_VERSUS)
    rows = []
    for framework, g in versus.groupby("framework", sort=False):
        g = g.sort_values("batch").reset_index(drop=True)
        batches, faster = g["batch"].to_numpy(), (g["speedup"] > 1).to_numpy()
        start = int(faster.argmax()) if faster.any() else None
        end = start
        while start is not None and end is not None and end + 1 < len(faster) and faster[end + 1]:
            end += 1
        speedup = g["speedup"].to_numpy()
        worst, best = g.iloc[int(speedup.argmin())], g.iloc[int(speedup.argmax())]
        rows.append(
            {
                "framework": framework,
                "batches": len(g),
                "faster": int(faster.sum()),
                "faster_from": batches[start] if start is not None else pd.NA,
                "faster_to": batches[end] if end is not None else pd.NA,
                "first_slower": batches[~faster][0] if (~faster).any() else pd.NA,
                "min_speedup": worst["speedup"],
                "min_speedup_batch": worst["batch"],
                "max_speedup": best["speedup"],
                "max_speedup_batch": best["batch"],
            }
        )
    df = pd.DataFrame(rows) if rows else schema.empty(BATCH_CROSSINGS)
    return schema.validate(schema.conform(df, BATCH_CROSSINGS), BATCH_CROSSINGS)
