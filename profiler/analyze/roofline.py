"""The roofline from Nsight Compute counters: where each kernel sits against the machine's ceilings.

Per stage and kernel name (launches summed, the NVTX ranges they ran in listed): arithmetic
intensity = FP32 FLOPs / DRAM bytes (read + write), achieved FLOP/s and DRAM bytes/s over the
replayed duration, and the roof at that intensity, min(peak FP32, intensity x peak DRAM
bandwidth). A kernel left of the ridge point (peak FP32 / peak DRAM) is memory-bound and is judged
by its bandwidth; right of it, by its FLOP rate. Ceilings come from the run's `meta["ceilings"]`
(DRAM: a given peak, else the measured device-to-device copy bandwidth); without them the
percentages are NaN and the bound is `unknown`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from profiler import schema
from profiler.analyze.overlap import ceiling_value
from profiler.schema import Column

ROOFLINE = schema.Table(
    "roofline",
    "Per stage and kernel: arithmetic intensity and achieved rates against the ceilings.",
    (
        Column("stage", "string"),
        Column("name", "string"),
        Column(
            "ranges",
            "string",
            doc="the NVTX ranges its launches ran in, first seen first, joined by ', ' (NA: none)",
        ),
        Column("launches", "int64"),
        Column("duration_ns", "int64", "ns", "summed replay duration"),
        Column("share_pct", "float64", "%", "of the stage's profiled kernel time"),
        Column("fp32_flops", "int64"),
        Column("dram_bytes", "int64", "bytes", "read + write"),
        Column("intensity", "float64", "FLOP/byte"),
        Column("flops_per_s", "float64", "FLOP/s"),
        Column("bytes_per_s", "float64", "bytes/s"),
        Column("roof_flops_per_s", "float64", "FLOP/s", "min(peak FP32, intensity x peak DRAM)"),
        Column("bound", "string", doc="`memory` left of the ridge point, `compute` right of it"),
        Column("bandwidth_pct", "float64", "%", "bytes_per_s over peak DRAM bandwidth"),
        Column("flops_pct", "float64", "%", "flops_per_s over peak FP32 rate"),
        Column("efficiency_pct", "float64", "%", "bandwidth_pct when memory-bound, else flops_pct"),
        Column(
            "occupancy_pct", "float64", "%", "achieved occupancy, mean over launches (NaN: none)"
        ),
    ),
)


ROOFLINE_POINTS = schema.Table(
    "roofline_points",
    "The roofline's rows, each kernel the chart can place numbered for its marker and the table.",
    (
        *ROOFLINE.columns,
        Column("point", "Int64", doc="the number on the chart; <NA>: not placed (no FLOPs/bytes)"),
        Column("labelled", "bool", doc="this row's marker carries the number (one per number)"),
    ),
)
#: two kernels of one name closer than this on both log axes (decades) share a number
SAME_PLACE_DECADES = 0.25


#: where the DRAM ceiling comes from, in order of preference: a peak given with the run, else the
#: bandwidth profgen measured with a large device-to-device copy (bytes read plus written: what a
#: streaming kernel can reach on that machine)
DRAM_CEILINGS = ("dram_bytes_per_s", "d2d_bytes_per_s")


def dram_ceiling_key(ceilings: Mapping[str, object] | None) -> str | None:
    """The key of `DRAM_CEILINGS` the run has (a positive number), or None."""
    return next(
        (k for k in DRAM_CEILINGS if not np.isnan(ceiling_value(ceilings, k))),
        None,
    )


def ceiling_values(ceilings: Mapping[str, object] | None) -> tuple[float, float]:
    """(peak DRAM bytes/s, peak FP32 FLOP/s) from a run's ceilings; NaN where missing.

    The DRAM ceiling is the first of `DRAM_CEILINGS` the run has.
    """
    key = dram_ceiling_key(ceilings)
    dram = ceiling_value(ceilings, key) if key else float("nan")
    return dram, ceiling_value(ceilings, "fp32_flops_per_s")


def roofline(metrics: pd.DataFrame, ceilings: Mapping[str, object] | None = None) -> pd.DataFrame:
    """Place every kernel of every stage on the roofline.

    Args:
        metrics: DataFrame with `schema.METRICS` columns (one row per replayed launch).
        ceilings: the run's `meta["ceilings"]`.

    Returns: DataFrame with `ROOFLINE` columns, per stage by decreasing share.
    Raises: SchemaError when `metrics` does not match `schema.METRICS`.
    """
    schema.validate(metrics, schema.METRICS)
    m = metrics.assign(
        dram_bytes=metrics["dram_read_bytes"].fillna(0) + metrics["dram_write_bytes"].fillna(0),
        fp32=metrics["fp32_flops"].fillna(0),
        dur=metrics["duration_ns"].fillna(0),
    )
    df = (
        m.groupby(["stage", "name"], sort=False)
        .agg(
            ranges=("range", _ranges),
            launches=("kernel_id", "size"),
            duration_ns=("dur", "sum"),
            fp32_flops=("fp32", "sum"),
            dram_bytes=("dram_bytes", "sum"),
            occupancy_pct=("achieved_occupancy_pct", "mean"),
        )
        .reset_index()
    )
    dram, fp32 = ceiling_values(ceilings)
    seconds = df["duration_ns"].astype("float64").where(df["duration_ns"] > 0) / 1e9
    stage_ns = df.groupby("stage", sort=False)["duration_ns"].transform("sum").astype("float64")
    df["share_pct"] = df["duration_ns"] / stage_ns.where(stage_ns > 0) * 100.0
    df["intensity"] = df["fp32_flops"] / df["dram_bytes"].astype("float64").where(
        df["dram_bytes"] > 0
    )
    df["flops_per_s"] = df["fp32_flops"] / seconds
    df["bytes_per_s"] = df["dram_bytes"] / seconds
    df["roof_flops_per_s"] = np.minimum(fp32, df["intensity"] * dram)
    ridge = fp32 / dram
    memory_bound = (df["dram_bytes"] > 0) & ~(df["intensity"] >= ridge)
    df["bound"] = np.where(memory_bound, "memory", "compute")
    if np.isnan(ridge):
        df["bound"] = "unknown"
    df["bandwidth_pct"] = df["bytes_per_s"] / dram * 100.0
    df["flops_pct"] = df["flops_per_s"] / fp32 * 100.0
    df["efficiency_pct"] = df["bandwidth_pct"].where(memory_bound, df["flops_pct"])
    df["_pos"] = df["stage"].map({k: i for i, k in enumerate(dict.fromkeys(df["stage"]))})
    df = df.sort_values(["_pos", "share_pct"], ascending=[True, False], kind="stable")
    return schema.validate(schema.conform(df, ROOFLINE), ROOFLINE)


def _ranges(ranges: pd.Series) -> str | None:
    """The distinct ranges of one kernel's launches, first seen first; None when none has one."""
    seen = dict.fromkeys(str(r) for r in ranges.dropna())
    return ", ".join(seen) or None


def roofline_points(roof: pd.DataFrame) -> pd.DataFrame:
    """Number the kernels the roofline can place (positive intensity and FLOP rate), in the
    table's order (study order, then by decreasing share): the chart shows numbers, which do not
    pile up as names do, and the table says which kernel each is. The same kernel name at the
    same place (within `SAME_PLACE_DECADES` on both axes) as an earlier row, as one kernel in
    several stages, shares that row's number and marker label.

    Args:
        roof: DataFrame with `ROOFLINE` columns (as `roofline` returns it).

    Returns: DataFrame with `ROOFLINE_POINTS` columns, rows in `roof`'s order.
    """
    placed = (roof["intensity"] > 0) & (roof["flops_per_s"] > 0)
    points: list[int | None] = []
    labelled: list[bool] = []
    seen: dict[tuple[str, int, int], int] = {}
    rows = zip(placed, roof["name"], roof["intensity"], roof["flops_per_s"], strict=True)
    for ok, name, x, y in rows:
        if not ok:
            points.append(None)
            labelled.append(False)
            continue
        place = (str(name), _bucket(x), _bucket(y))
        labelled.append(place not in seen)
        points.append(seen.setdefault(place, len(seen) + 1))
    out = roof.assign(point=pd.array(points, dtype="Int64"), labelled=labelled)
    return schema.validate(schema.conform(out, ROOFLINE_POINTS), ROOFLINE_POINTS)


def _bucket(value: float) -> int:
    return round(float(np.log10(value)) / SAME_PLACE_DECADES)
