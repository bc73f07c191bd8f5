"""Busy time, memcpy share, bandwidth, copy/compute overlap and gaps, from the GPU trace.

Busy time is a union of intervals, never a sum of durations: two kernels on two streams that run
at the same time are busy once. Copies are recognised by their activity kind (`memcpy`), never by
their name.

Every quantity is first computed per profiled repeat (a repeat's span runs from its first GPU
activity's start to its last one's end), then summed over the repeats of the stage, so ratios are
of totals, not means of ratios.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from profiler import schema
from profiler.schema import Column

OVERLAP = schema.Table(
    "overlap",
    "Per stage: GPU busy time, memcpy share, bytes and bandwidth each way, copy/compute overlap.",
    (
        Column("stage", "string"),
        Column("repeats", "int64", doc="profiled repeats in the trace"),
        Column("ops", "int64", doc="GPU activities (kernels, copies, memsets)"),
        Column("kernels", "int64"),
        Column("copies", "int64"),
        Column("span_ns", "int64", "ns", "first start to last end, summed over repeats"),
        Column("busy_ns", "int64", "ns", "union of all activity intervals"),
        Column("activity_ns", "int64", "ns", "sum of all activity durations"),
        Column("kernel_busy_ns", "int64", "ns", "union of kernel intervals"),
        Column("copy_busy_ns", "int64", "ns", "union of copy intervals"),
        Column("overlap_ns", "int64", "ns", "time with a copy and a kernel in flight at once"),
        Column("overlap_pct", "float64", "%", "overlap_ns / copy_busy_ns"),
        Column(
            "hidden_pct",
            "float64",
            "%",
            "overlap_ns / min(kernel_busy_ns, copy_busy_ns): how much of the shorter of copy "
            "and compute time is hidden under the other (100: as much as possible)",
        ),
        Column("memcpy_ns", "int64", "ns", "sum of copy durations"),
        Column(
            "memcpy_pct", "float64", "%", "memcpy_ns / activity_ns: the copies' share of GPU time"
        ),
        Column("busy_pct", "float64", "%", "busy_ns / span_ns"),
        Column("idle_ns", "int64", "ns", "span_ns - busy_ns: the GPU waits on the host"),
        Column("gaps", "int64", doc="idle gaps between consecutive busy intervals"),
        Column("gap_median_ns", "float64", "ns"),
        Column("kernel_median_ns", "float64", "ns", "median kernel duration"),
        Column("h2d_bytes", "Int64", "bytes", "<NA> when the trace gives no copy sizes"),
        Column("d2h_bytes", "Int64", "bytes", "<NA> when the trace gives no copy sizes"),
        Column("h2d_ns", "int64", "ns", "sum of HtoD copy durations"),
        Column("d2h_ns", "int64", "ns", "sum of DtoH copy durations"),
        Column("h2d_bytes_per_s", "float64", "bytes/s", "achieved: h2d_bytes / h2d_ns"),
        Column("d2h_bytes_per_s", "float64", "bytes/s", "achieved: d2h_bytes / d2h_ns"),
        Column("h2d_pct_of_pinned", "float64", "%", "against the run's measured pinned HtoD copy"),
        Column("d2h_pct_of_pinned", "float64", "%", "against the run's measured pinned DtoH copy"),
    ),
)


def merge_intervals(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals [start, end) as sorted, disjoint intervals.

    Touching intervals (one ends where the next starts) are merged.
    """
    if len(start) == 0:
        return np.array([], dtype=np.int64), np.array([], dtype=np.int64)
    order = np.argsort(start, kind="stable")
    s, e = np.asarray(start, dtype=np.int64)[order], np.asarray(end, dtype=np.int64)[order]
    reach = np.maximum.accumulate(e)
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    group = np.cumsum(new) - 1
    starts = s[new]
    ends = np.zeros(len(starts), dtype=np.int64)
    np.maximum.at(ends, group, e)
    return starts, ends


def union_ns(start: np.ndarray, end: np.ndarray) -> int:
    """Length of the union of intervals [start, end): busy time, not a sum of durations."""
    s, e = merge_intervals(start, end)
    return int((e - s).sum())


def stage_overlap(
    gpu_trace: pd.DataFrame, ceilings: Mapping[str, object] | None = None
) -> pd.DataFrame:
    """Busy time, memcpy share, bandwidth and copy/compute overlap of every stage in the trace.

    Args:
        gpu_trace: DataFrame with `schema.GPU_TRACE` columns.
        ceilings: the run's `meta["ceilings"]` (`h2d_pinned_bytes_per_s`,
            `d2h_pinned_bytes_per_s`); missing values give NaN percentages.

    Returns: DataFrame with `OVERLAP` columns, one row per stage, in first-appearance order.
    Raises: SchemaError when `gpu_trace` does not match `schema.GPU_TRACE`.
    """
    schema.validate(gpu_trace, schema.GPU_TRACE)
    rows = [
        _repeat_row(str(stage), ops)
        for (stage, _), ops in gpu_trace.groupby(["stage", "repeat"], sort=False)
    ]
    if not rows:
        return schema.empty(OVERLAP)
    per_repeat = pd.DataFrame(rows)
    return _stage_totals(per_repeat, ceilings or {})


def _repeat_row(stage: str, ops: pd.DataFrame) -> dict[str, object]:
    start = ops["start_ns"].to_numpy(np.int64)
    end = ops["end_ns"].to_numpy(np.int64)
    is_kernel = (ops["kind"] == schema.KERNEL).to_numpy(bool)
    is_copy = (ops["kind"] == schema.MEMCPY).to_numpy(bool)
    bs, be = merge_intervals(start, end)
    gaps = bs[1:] - be[:-1]
    kernel_busy = union_ns(start[is_kernel], end[is_kernel])
    copy_busy = union_ns(start[is_copy], end[is_copy])
    both = union_ns(start[is_kernel | is_copy], end[is_kernel | is_copy])
    row: dict[str, object] = {
        "stage": stage,
        "ops": len(ops),
        "kernels": int(is_kernel.sum()),
        "copies": int(is_copy.sum()),
        "span_ns": int(end.max() - start.min()),
        "busy_ns": int((be - bs).sum()),
        "activity_ns": int(ops["duration_ns"].sum()),
        "kernel_busy_ns": kernel_busy,
        "copy_busy_ns": copy_busy,
        "overlap_ns": kernel_busy + copy_busy - both,  # |K ∩ C| = |K| + |C| - |K ∪ C|
        "memcpy_ns": int(ops.loc[is_copy, "duration_ns"].sum()),
        "gap_list": gaps,
        "kernel_durations": ops.loc[is_kernel, "duration_ns"].to_numpy(np.int64),
    }
    for direction, label in (("HtoD", "h2d"), ("DtoH", "d2h")):
        sel = is_copy & (ops["copy_kind"] == direction).fillna(False).to_numpy(bool)
        sizes = ops.loc[sel, "bytes"]
        row[f"{label}_bytes"] = int(sizes.sum()) if sizes.notna().any() else pd.NA
        row[f"{label}_ns"] = int(ops.loc[sel, "duration_ns"].sum())
    return row


_SUMMED = (
    "ops",
    "kernels",
    "copies",
    "span_ns",
    "busy_ns",
    "activity_ns",
    "kernel_busy_ns",
    "copy_busy_ns",
    "overlap_ns",
    "memcpy_ns",
    "h2d_bytes",
    "d2h_bytes",
    "h2d_ns",
    "d2h_ns",
)


def _stage_totals(per_repeat: pd.DataFrame, ceilings: Mapping[str, object]) -> pd.DataFrame:
    per_repeat = per_repeat.astype({"h2d_bytes": "Int64", "d2h_bytes": "Int64"})
    out = per_repeat.groupby("stage", sort=False)[list(_SUMMED)].sum(min_count=1)
    out["repeats"] = per_repeat.groupby("stage", sort=False).size()
    gaps = per_repeat.groupby("stage", sort=False)["gap_list"].agg(_concat)
    kdur = per_repeat.groupby("stage", sort=False)["kernel_durations"].agg(_concat)
    out["gaps"] = gaps.map(len)
    out["gap_median_ns"] = gaps.map(_median)
    out["kernel_median_ns"] = kdur.map(_median)
    out["overlap_pct"] = _pct(out["overlap_ns"], out["copy_busy_ns"])
    out["hidden_pct"] = _pct(out["overlap_ns"], out[["kernel_busy_ns", "copy_busy_ns"]].min(axis=1))
    out["memcpy_pct"] = _pct(out["memcpy_ns"], out["activity_ns"])
    out["busy_pct"] = _pct(out["busy_ns"], out["span_ns"])
    out["idle_ns"] = out["span_ns"] - out["busy_ns"]
    for label in ("h2d", "d2h"):
        bytes_ = out[f"{label}_bytes"].astype("float64")
        rate = bytes_ / out[f"{label}_ns"].where(out[f"{label}_ns"] > 0) * 1e9
        out[f"{label}_bytes_per_s"] = rate.astype("float64")
        ceiling = ceiling_value(ceilings, f"{label}_pinned_bytes_per_s")
        out[f"{label}_pct_of_pinned"] = rate / ceiling * 100.0
    out = out.reset_index()
    return schema.validate(schema.conform(out, OVERLAP), OVERLAP)


def _concat(arrays: pd.Series) -> np.ndarray:
    return np.concatenate(list(arrays)) if len(arrays) else np.array([], dtype=np.int64)


def _median(values: np.ndarray) -> float:
    return float(np.median(values)) if len(values) else float("nan")


def _pct(num: pd.Series, den: pd.Series) -> pd.Series:
    return (num / den.where(den > 0) * 100.0).astype("float64")


def ceiling_value(ceilings: Mapping[str, object] | None, key: str) -> float:
    """The run's ceiling `key` (e.g. `h2d_pinned_bytes_per_s`) as a float.

    Returns: NaN when the run has no such ceiling or it is not a positive number (an imported
    run, or a measurement that failed and recorded its error instead).
    """
    value = (ceilings or {}).get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return float("nan")
    return float(value) if value > 0 else float("nan")


COPY_SUMMARY = schema.Table(
    "copy_summary",
    "Per stage, from the GPU-activities summary: memcpy share, bytes and bandwidth each way.",
    (
        Column("stage", "string"),
        Column("activity_ns", "int64", "ns", "summed GPU activity time, all profiled repeats"),
        Column("memcpy_ns", "int64", "ns", "summed copy time"),
        Column("memcpy_pct", "float64", "%", "memcpy_ns / activity_ns"),
        Column("h2d_bytes", "Int64", "bytes", "all profiled repeats; <NA> without sizes"),
        Column("d2h_bytes", "Int64", "bytes", "all profiled repeats; <NA> without sizes"),
        Column("h2d_ns", "int64", "ns"),
        Column("d2h_ns", "int64", "ns"),
        Column("h2d_bytes_per_s", "float64", "bytes/s", "h2d_bytes / h2d_ns"),
        Column("d2h_bytes_per_s", "float64", "bytes/s", "d2h_bytes / d2h_ns"),
        Column("h2d_pct_of_pinned", "float64", "%", "against the run's measured pinned HtoD copy"),
        Column("d2h_pct_of_pinned", "float64", "%", "against the run's measured pinned DtoH copy"),
    ),
)


def copy_summary(
    gpu_activities: pd.DataFrame, ceilings: Mapping[str, object] | None = None
) -> pd.DataFrame:
    """Memcpy share and achieved bandwidth of every stage, from its GPU-activities summary.

    The same quantities as `stage_overlap`'s, from the summary instead of the trace: a run whose
    traces were trimmed (a committed sample) keeps its summaries whole.

    Args:
        gpu_activities: DataFrame with `schema.GPU_ACTIVITIES` columns.
        ceilings: the run's `meta["ceilings"]`.

    Returns: DataFrame with `COPY_SUMMARY` columns, one row per stage, in first-appearance order.
    """
    acts = schema.validate(gpu_activities, schema.GPU_ACTIVITIES)
    rows = []
    for stage, g in acts.groupby("stage", sort=False):
        copies = g[g["kind"] == schema.MEMCPY]
        row: dict[str, object] = {
            "stage": stage,
            "activity_ns": int(g["total_ns"].sum()),
            "memcpy_ns": int(copies["total_ns"].sum()),
        }
        for direction, label in (("HtoD", "h2d"), ("DtoH", "d2h")):
            sel = copies[(copies["copy_kind"] == direction).fillna(False)]
            sizes = sel["bytes"]
            row[f"{label}_bytes"] = int(sizes.sum()) if sizes.notna().any() else pd.NA
            row[f"{label}_ns"] = int(sel["total_ns"].sum())
        rows.append(row)
    if not rows:
        return schema.empty(COPY_SUMMARY)
    out = pd.DataFrame(rows).astype({"h2d_bytes": "Int64", "d2h_bytes": "Int64"})
    out["memcpy_pct"] = _pct(out["memcpy_ns"], out["activity_ns"])
    for label in ("h2d", "d2h"):
        rate = out[f"{label}_bytes"].astype("float64") / out[f"{label}_ns"].where(
            out[f"{label}_ns"] > 0
        )
        out[f"{label}_bytes_per_s"] = (rate * 1e9).astype("float64")
        ceiling = ceiling_value(ceilings, f"{label}_pinned_bytes_per_s")
        out[f"{label}_pct_of_pinned"] = out[f"{label}_bytes_per_s"] / ceiling * 100.0
    return schema.validate(schema.conform(out, COPY_SUMMARY), COPY_SUMMARY)
