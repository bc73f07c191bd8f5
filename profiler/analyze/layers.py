"""Per-layer tables for a network of many layers, from a run's NVTX ranges: one range per
network node per stage, named after the node (an ONNX node, a module), the framework stage's
the same as the hand-written stages'.

`node_times(ranges, stages)` is GPU ns per forward of every node range of every stage that has
them; `versus(times, stage, reference)` sets one stage against the vendor library's (the
framework stage's range of the same name); `steps(times, order)` says which nodes gained and
which lost between consecutive stages; `by_kind(times, facts)` sums by op kind when the run
carries per-node facts (kind, shapes, FLOPs, bytes). Pure: DataFrames in, DataFrames out.

A stage's node time is its range's projected GPU time (`ranges.gpu_total_ns`: first GPU op
issued inside the range to the end of the last) over the range's calls: a node runs once a
forward. A stage that folds a node into another (a ReLU6 into its convolution) has no range
for it; the node it was folded into carries its time, and is set against the framework's time
for it and the nodes it folded (`folded`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from profiler.analyze import roofline

#: a run's per-node section appears from this many node ranges shared by its framework stage
#: and a stage of its own: LeNet's five layers are already the per-stage tables' rows
MIN_NODES = 20

#: names of ranges that are not nodes: the copies in and out, a wait
NOT_NODES = frozenset({"h2d", "d2h", "sync"})

#: the per-kind table's rows in this order, as the study's facts name them
KIND_ORDER = ("first conv", "1x1 conv", "depthwise 3x3", "conv", "add", "activation", "pool",
              "gemm", "batchnorm", "reshape")


def _node_ranges(ranges: pd.DataFrame) -> pd.DataFrame:
    """The ranges that may be nodes: not a stage's own range (`<model>:<stage>`), not a copy,
    with GPU time."""
    names = ranges["name"].astype(str)
    keep = ~names.str.contains(":", regex=False) & ~names.isin(NOT_NODES)
    return ranges[keep & ranges["gpu_total_ns"].notna()]


def reference_stage(ranges: pd.DataFrame, stages: pd.DataFrame) -> str | None:
    """The framework stage whose node ranges the other stages line up with: the first in study
    order sharing at least `MIN_NODES` node names with a stage of the study's own; None when
    none does (a run of a few layers, or without per-node ranges)."""
    nodes = _node_ranges(ranges)
    names = nodes.groupby("stage")["name"].apply(lambda s: set(map(str, s)))
    ordered = stages.sort_values("order")
    frameworks = ordered.loc[ordered["role"] == "framework", "stage"].astype(str)
    own = ordered.loc[ordered["role"] != "framework", "stage"].astype(str)
    for ref in frameworks:
        if ref not in names:
            continue
        if any(len(names[ref] & names.get(s, set())) >= MIN_NODES for s in own):
            return ref
    return None


def node_times(ranges: pd.DataFrame, stages: pd.DataFrame,
               range_trace: pd.DataFrame | None = None) -> pd.DataFrame:
    """GPU ns per forward of each node (rows) for each stage with at least `MIN_NODES` of its
    node ranges (columns, in study order). Rows are in the network's order, the reference
    stage's order of first push in `range_trace`, when the trace has them; else as `ranges`.

    Returns: DataFrame indexed by node name, one float column per stage (NaN where the stage
    has no range of that name); empty when the run has no per-node ranges.
    """
    ref = reference_stage(ranges, stages)
    if ref is None:
        return pd.DataFrame()
    nodes = _node_ranges(ranges)
    order = [str(s) for s in stages.sort_values("order")["stage"]]
    own = dict.fromkeys(str(n) for n in nodes.loc[nodes["stage"] == ref, "name"])
    names = _network_order(list(own), range_trace, ref)
    columns = {}
    for stage in order:
        rows = nodes[nodes["stage"] == stage]
        per_call = rows["gpu_total_ns"].astype("float64") / rows["calls"].clip(lower=1)
        times = pd.Series(per_call.to_numpy(), index=rows["name"].astype(str).to_numpy())
        times = times[~times.index.duplicated()]  # a range listed twice (damaged): its first row
        if len(times.index.intersection(names)) >= MIN_NODES:
            columns[stage] = times.reindex(names)
    return pd.DataFrame(columns, index=pd.Index(names, name="node"))


def _network_order(names: list[str], range_trace: pd.DataFrame | None, ref: str) -> list[str]:
    """`names` in the order the reference stage first pushed them; those the trace lacks last."""
    if range_trace is None or range_trace.empty:
        return names
    rows = range_trace[range_trace["stage"] == ref]
    first = rows.groupby(rows["name"].astype(str))["start_ns"].min()
    seen = first.reindex(names).dropna().sort_values()
    return list(seen.index) + [n for n in names if n not in seen.index]


def versus(
    times: pd.DataFrame,
    stage: str,
    reference: str,
    facts: pd.DataFrame | None = None,
    batch: int = 1,
    ceilings: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """One row per node `stage` has a range for: its GPU ns per forward, the reference's (the
    vendor library's) for the same node, their ratio, and, where `facts` (indexed by node: kind,
    in_shape, out_shape, flops and bytes per item, weight_bytes per call: `schema.LAYERS`) has
    the node, FLOPs and bytes for `batch` items, achieved GFLOP/s and GB/s and their share of
    the measured `ceilings`. `rank` is 1 for the node the stage spends most time in;
    `share_pct` is its part of the stage's node time.

    Returns: DataFrame indexed by node, in the network's order.
    """
    mine = times[stage].dropna()
    reference_ns, folded = _with_folded(times[reference], times[stage].notna())
    out = pd.DataFrame({"stage_ns": mine, "reference_ns": reference_ns.reindex(mine.index)})
    out["folded"] = folded.reindex(mine.index).fillna(0).astype("int64")
    out["ratio"] = out["stage_ns"] / out["reference_ns"]
    out["share_pct"] = 100.0 * out["stage_ns"] / out["stage_ns"].sum()
    out["rank"] = out["stage_ns"].rank(ascending=False, method="first").astype("int64")
    if facts is not None:
        out = out.join(_rates(facts.reindex(out.index), out["stage_ns"], batch, ceilings))
    return out


def _with_folded(reference: pd.Series, has_range: pd.Series) -> tuple[pd.Series, pd.Series]:
    """The reference's time per node with the time of the nodes after it (network order) that
    the stage folded away added in: a stage that computes a ReLU6 or a residual Add in its
    convolution's epilogue has no range for them, so its convolution is set against the
    framework's convolution and the nodes it absorbed, not against the convolution alone.

    Returns: (reference ns per node the stage has, nodes folded into each).
    """
    owner = has_range.astype("int64").cumsum()  # each node's nearest range at or before it
    kept = has_range.to_numpy()
    groups = pd.Series(reference.to_numpy(), index=owner.to_numpy())
    summed = groups.groupby(level=0).sum(min_count=1)
    counts = pd.Series(~kept, index=owner.to_numpy()).groupby(level=0).sum()
    index = reference.index[kept]
    return (
        pd.Series(summed.reindex(owner[kept].to_numpy()).to_numpy(), index=index),
        pd.Series(counts.reindex(owner[kept].to_numpy()).to_numpy(), index=index),
    )


def _rates(facts: pd.DataFrame, ns: pd.Series, batch: int, ceilings: Mapping[str, Any] | None
           ) -> pd.DataFrame:
    """Kind, shapes, FLOPs and bytes for `batch` items, achieved rates and their share of the
    FP32 rate and DRAM bandwidth as the roofline reads them (`roofline.ceiling_values`)."""
    dram, fp32 = roofline.ceiling_values(ceilings)
    out = facts[["kind", "in_shape", "out_shape"]].copy()
    out["flops"] = facts["flops"].astype("float64") * batch
    out["bytes"] = (facts["bytes"].astype("float64") * batch
                    + facts["weight_bytes"].astype("float64"))
    out["flops_per_s"] = out["flops"] / (ns / 1e9)
    out["bytes_per_s"] = out["bytes"] / (ns / 1e9)
    out["flops_pct"] = 100.0 * out["flops_per_s"] / fp32
    out["bytes_pct"] = 100.0 * out["bytes_per_s"] / dram
    return out


def steps(times: pd.DataFrame, top: int = 5) -> pd.DataFrame:
    """Between each pair of consecutive stages (the columns of `times`, in order): the `top`
    nodes that gained most and the `top` that lost most, by the change in their GPU ns per
    forward, over the nodes both stages have a range for; `folded` counts the nodes the later
    stage has no range for that the earlier one had (folded into another node).

    Returns: DataFrame with columns before, after, node, change (gained / lost), before_ns,
    after_ns, delta_ns, ratio, folded; one row per node shown.
    """
    rows: list[dict[str, Any]] = []
    cols = list(times.columns)
    for before, after in zip(cols, cols[1:], strict=False):
        both = times[[before, after]].dropna()
        delta = both[after] - both[before]
        folded = int((times[before].notna() & times[after].isna()).sum())
        picks = [("gained", delta[delta < 0].nsmallest(top)),
                 ("lost", delta[delta > 0].nlargest(top))]
        for change, chosen in picks:
            for node in chosen.index:
                old, new = float(both[before][node]), float(both[after][node])
                rows.append({"before": before, "after": after, "node": node, "change": change,
                             "before_ns": old, "after_ns": new, "delta_ns": new - old,
                             "ratio": new / old, "folded": folded})
    columns = ["before", "after", "node", "change", "before_ns", "after_ns", "delta_ns", "ratio",
               "folded"]
    return pd.DataFrame(rows, columns=columns)


def by_kind(times: pd.DataFrame, facts: pd.DataFrame) -> pd.DataFrame:
    """GPU ns per forward by op kind (rows, `KIND_ORDER` first) and stage (columns), from the
    nodes' facts (`kind` column, indexed by node). A folded node's time counts under the kind of
    the node that carries it."""
    kinds = facts["kind"].reindex(times.index).fillna("other")
    out = times.fillna(0.0).groupby(kinds).sum()
    order = [k for k in KIND_ORDER if k in out.index] + sorted(set(out.index) - set(KIND_ORDER))
    return out.loc[order]


def stage_totals(times: pd.DataFrame) -> pd.Series:
    """Each stage's GPU ns per forward summed over its node ranges."""
    return times.sum(skipna=True)


def top_nodes(table: pd.DataFrame, n: int = 10) -> list[str]:
    """The `n` nodes a `versus` table spends most time in, slowest first."""
    return list(table.sort_values("rank").index[:n])



def step_counts(times: pd.DataFrame) -> pd.DataFrame:
    """For each pair of consecutive stages (columns of `times`): how many nodes gained, lost or
    were folded away, and both stages' node time summed.

    Returns: DataFrame with columns before, after, gained, lost, folded, before_ns, after_ns.
    """
    rows = []
    cols = list(times.columns)
    for before, after in zip(cols, cols[1:], strict=False):
        both = times[[before, after]].dropna()
        delta = both[after] - both[before]
        rows.append({"before": before, "after": after, "gained": int((delta < 0).sum()),
                     "lost": int((delta > 0).sum()),
                     "folded": int((times[before].notna() & times[after].isna()).sum()),
                     "before_ns": float(times[before].sum()),
                     "after_ns": float(times[after].sum())})
    return pd.DataFrame(rows, columns=["before", "after", "gained", "lost", "folded", "before_ns",
                                       "after_ns"])
