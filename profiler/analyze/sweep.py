"""Batch-size curves: time per item, throughput and the latency of one batch against batch size.

Larger batches amortise launch and copy overheads (time per image falls, throughput rises) until
the GPU is full; the latency of one batch grows with it. Both come from `schema.BATCH_SWEEP`.
"""

from __future__ import annotations

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
