"""nvprof's summary tables from traces: `GPU activities`, `API calls` and NVTX ranges.

nvprof semantics: one row per kernel name, per copy direction (`[CUDA memcpy HtoD]`, grouped by
the trace's `copy_kind`, never by name; nsys's managed-memory migrations, `[CUDA memcpy Unified
Host-to-Device]`, keep their names) and one `[CUDA memset]` row; `Time(%)` is the row's
share of the stage's summed GPU activity time (a sum of durations: overlapping work counts
twice, as in nvprof); rows sorted by total time, largest first, within each stage; stages in
the order they first appear in the trace.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from profiler import schema
from profiler.parse import gpuops


def gpu_activities(gpu_trace: pd.DataFrame) -> pd.DataFrame:
    """Summarise a GPU trace per stage as nvprof's `GPU activities` table.

    Args:
        gpu_trace: DataFrame with `schema.GPU_TRACE` columns.

    Returns: DataFrame with `schema.GPU_ACTIVITIES` columns.
    """
    trace = schema.validate(gpu_trace, schema.GPU_TRACE)
    if trace.empty:
        return schema.empty(schema.GPU_ACTIVITIES)
    kind = trace["kind"].astype("string")
    copy_kind = trace["copy_kind"].where(kind == schema.MEMCPY, pd.NA)
    label = trace["name"].astype("string").copy()
    unified = [n for n in label.dropna().unique() if gpuops.is_unified_label(n)]
    copies = ((kind == schema.MEMCPY) & ~label.isin(unified)).fillna(False).to_numpy()
    label[copies] = copy_kind[copies].map(schema.copy_label, na_action="ignore").astype("string")
    label[(kind == schema.MEMSET).fillna(False).to_numpy()] = schema.MEMSET_LABEL
    frame = pd.DataFrame(
        {
            "stage": trace["stage"],
            "kind": kind,
            "name": label.fillna("[CUDA memcpy]"),
            "copy_kind": copy_kind.fillna(""),
            "duration_ns": trace["duration_ns"],
            "bytes": trace["bytes"].where(kind != schema.KERNEL, pd.NA),
        }
    )
    grouped = frame.groupby(["stage", "kind", "name", "copy_kind"], sort=False, dropna=False)
    out = grouped.agg(
        total_ns=("duration_ns", "sum"),
        calls=("duration_ns", "size"),
        min_ns=("duration_ns", "min"),
        max_ns=("duration_ns", "max"),
        bytes=("bytes", lambda b: b.sum() if b.notna().any() else pd.NA),
    ).reset_index()
    out["copy_kind"] = out["copy_kind"].replace("", pd.NA)
    out["avg_ns"] = out["total_ns"] / out["calls"]
    return _finish(out, _stage_order(trace["stage"]), schema.GPU_ACTIVITIES)


def api_calls(api_trace: pd.DataFrame) -> pd.DataFrame:
    """Summarise an API trace per stage as nvprof's `API calls` table.

    Args:
        api_trace: DataFrame with `schema.API_TRACE` columns.

    Returns: DataFrame with `schema.API_CALLS` columns; `time_pct` is the call's share of the
        stage's summed API time.
    """
    trace = schema.validate(api_trace, schema.API_TRACE)
    if trace.empty:
        return schema.empty(schema.API_CALLS)
    grouped = trace.groupby(["stage", "name"], sort=False)
    out = grouped.agg(
        total_ns=("duration_ns", "sum"),
        calls=("duration_ns", "size"),
        min_ns=("duration_ns", "min"),
        max_ns=("duration_ns", "max"),
    ).reset_index()
    out["avg_ns"] = out["total_ns"] / out["calls"]
    return _finish(out, _stage_order(trace["stage"]), schema.API_CALLS)


def ranges(range_trace: pd.DataFrame) -> pd.DataFrame:
    """Summarise NVTX range instances per stage and name: CPU time and projected GPU time.

    Args:
        range_trace: DataFrame with `schema.RANGE_TRACE` columns.

    Returns: DataFrame with `schema.RANGES` columns, sorted by CPU total time within a stage;
        `gpu_total_ns` sums the instances' projected GPU spans (missing when none has one).
    """
    trace = schema.validate(range_trace, schema.RANGE_TRACE)
    if trace.empty:
        return schema.empty(schema.RANGES)
    frame = trace.assign(gpu_span=trace["gpu_end_ns"] - trace["gpu_start_ns"])
    grouped = frame.groupby(["stage", "name"], sort=False)
    out = grouped.agg(
        calls=("duration_ns", "size"),
        total_ns=("duration_ns", "sum"),
        min_ns=("duration_ns", "min"),
        max_ns=("duration_ns", "max"),
        gpu_total_ns=("gpu_span", lambda s: s.sum() if s.notna().any() else pd.NA),
        gpu_ops=("gpu_ops", lambda s: s.sum() if s.notna().any() else pd.NA),
    ).reset_index()
    out["avg_ns"] = out["total_ns"] / out["calls"]
    order = _stage_order(trace["stage"])
    out = out.assign(_order=out["stage"].map(order))
    out = out.sort_values(
        ["_order", "total_ns", "name"], ascending=[True, False, True], kind="stable"
    )
    return schema.validate(schema.conform(out, schema.RANGES), schema.RANGES)


def _stage_order(stages: pd.Series) -> dict[str, int]:
    return {stage: i for i, stage in enumerate(pd.unique(stages.to_numpy()))}


def _finish(out: pd.DataFrame, order: dict[str, int], tbl: schema.Table) -> pd.DataFrame:
    """Add each row's share of its stage's total, sort within stages, conform to `tbl`."""
    stage_total = out.groupby("stage", sort=False)["total_ns"].transform("sum").astype("float64")
    total = out["total_ns"].astype("float64")
    out["time_pct"] = np.where(
        stage_total > 0, total / stage_total.where(stage_total > 0, 1) * 100, 0.0
    )
    out = out.assign(_order=out["stage"].map(order))
    out = out.sort_values(
        ["_order", "total_ns", "name"], ascending=[True, False, True], kind="stable"
    )
    return schema.validate(schema.conform(out, tbl), tbl)
