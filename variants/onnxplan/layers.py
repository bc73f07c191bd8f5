"""Per-layer facts of a plan and per-layer times of a run: the per-layer report's pieces.

`facts(plan)` is one row per layer: phase, op, kind (first conv, 1x1 conv, depthwise 3x3,
conv, add, activation, pool, gemm, reshape), shapes, FLOPs and bytes per item (inputs, weights
and output read or written once: the floor a kernel cannot go under). `group_of(plan)` maps
each layer's phase to the phase of the fused layer that computes it (a ReLU6 or an Add folded
into its convolution), so a fused stage's ranges line up with a framework's per-node ranges.
`by_kind(ranges, plan)` and `versus(ranges, plan, stage, reference)` turn a run's `ranges`
table (GPU time per NVTX range and stage) into the per-kind table and the per-layer table
against the vendor library. Pure: DataFrames in, DataFrames out.
"""

from __future__ import annotations

import math

import pandas as pd

from profiler import schema
from variants.onnxplan import fuse
from variants.onnxplan.plan import Layer, Plan

KINDS = ("first conv", "1x1 conv", "depthwise 3x3", "conv", "add", "activation", "pool",
         "gemm", "batchnorm", "reshape")


def kind_of(layer: Layer) -> str:
    """The op kind a per-kind table groups `layer` under."""
    if layer.op == "Conv":
        a = layer.attrs
        if layer.in_shape[0] <= 4:
            return "first conv"
        if a["kernel"] == (1, 1) and a["group"] == 1:
            return "1x1 conv"
        if a["kernel"] == (3, 3) and a["group"] == layer.in_shape[0]:
            return "depthwise 3x3"
        return "conv"
    return {"Add": "add", "Clip": "activation", "Relu": "activation", "Gemm": "gemm",
            "BatchNormalization": "batchnorm", "Flatten": "reshape", "Reshape": "reshape"}.get(
        layer.op, "pool")


def flops(layer: Layer) -> int:
    """Floating-point operations per item (a multiply-add counts 2)."""
    out = math.prod(layer.out_shape)
    if layer.op == "Conv":
        cg, kh, kw = layer.params["weight"].shape[1:]
        return 2 * out * cg * kh * kw
    if layer.op == "Gemm":
        return 2 * out * layer.params["weight"].shape[1]
    if layer.op in ("MaxPool", "AveragePool"):
        return out * math.prod(layer.attrs["kernel"])
    if layer.op in ("Flatten", "Reshape"):
        return 0
    return max(out, math.prod(layer.in_shape))


def bytes_moved(layer: Layer, batch: int = 1) -> int:
    """Bytes a layer must move for `batch` items: its inputs and output once each (float32),
    its weights once per call."""
    if layer.op in ("Flatten", "Reshape"):
        return 0
    acts = sum(math.prod(s) for s in layer.in_shapes) + math.prod(layer.out_shape)
    weights = sum(p.size for p in layer.params.values())
    return 4 * (acts * batch + weights)


def facts(plan: Plan) -> pd.DataFrame:
    """One row per layer: phase, name, op, kind, in_shape, out_shape, flops and bytes per item."""
    rows = [
        {
            "phase": ly.phase,
            "name": ly.name,
            "op": ly.op,
            "kind": kind_of(ly),
            "in_shape": "x".join(map(str, ly.in_shape)),
            "out_shape": "x".join(map(str, ly.out_shape)),
            "flops": flops(ly),
            "bytes": bytes_moved(ly),
        }
        for ly in plan.layers
    ]
    return pd.DataFrame(rows)


def group_of(plan: Plan) -> dict[str, str]:
    """Each layer's phase -> the phase of the layer of `fuse.epilogues(plan)` computing it."""
    by_name = {ly.name: ly.phase for ly in plan.layers}
    out = {phase: phase for phase in by_name.values()}
    for layer in fuse.epilogues(plan).layers:
        for name in layer.attrs.get("fused", ()):
            out[by_name[name]] = layer.phase
    return out


def _layer_times(ranges: pd.DataFrame, plan: Plan, stage: str, grouped: bool = True
                 ) -> pd.Series:
    """GPU ns per forward of every layer's range for `stage`, summed by fused group when
    `grouped`; a range's calls are the profiled forwards (a node runs once a forward)."""
    rows = ranges[ranges["stage"] == stage]
    groups = group_of(plan)
    rows = rows[rows["name"].isin(groups)]
    per_call = rows["gpu_total_ns"].astype("float64") / rows["calls"].clip(lower=1)
    keys = rows["name"].map(groups) if grouped else rows["name"]
    return per_call.groupby(keys).sum()


def by_kind(ranges: pd.DataFrame, plan: Plan, stages: list[str]) -> pd.DataFrame:
    """GPU ms per forward by op kind (rows) and stage (columns), from the stages' phase
    ranges. A fused layer counts under its conv's kind."""
    info = facts(plan).set_index("phase")
    table = {}
    for stage in stages:
        times = _layer_times(ranges, plan, stage, grouped=False)
        kinds = times.index.map(lambda p: info.loc[p, "kind"])
        table[stage] = times.groupby(kinds).sum() / 1e6
    out = pd.DataFrame(table).fillna(0.0)
    order = [k for k in KINDS if k in out.index]
    return out.loc[order]


def versus(ranges: pd.DataFrame, plan: Plan, stage: str, reference: str, batch: int
           ) -> pd.DataFrame:
    """One row per fused group (index: its phase): the stage's and the reference's GPU us per
    forward of `batch` items, their ratio, FLOPs, bytes and the stage's achieved GFLOP/s and
    GB/s, the stage's slowest first."""
    info = facts(plan).set_index("phase")
    groups = pd.Series(group_of(plan))
    mine = _layer_times(ranges, plan, stage)
    theirs = _layer_times(ranges, plan, reference)
    out = pd.DataFrame({"stage_us": mine / 1e3, "reference_us": theirs / 1e3}).dropna()
    members = groups.groupby(groups.values).apply(lambda s: list(s.index))
    out["flops"] = [int(info.loc[members[p], "flops"].sum()) * batch for p in out.index]
    out["bytes"] = [int(info.loc[p, "bytes"]) * batch for p in out.index]
    out["ratio"] = out["stage_us"] / out["reference_us"]
    out["gflops"] = out["flops"] / (out["stage_us"] * 1e3)
    out["gbps"] = out["bytes"] / (out["stage_us"] * 1e3)
    out.insert(0, "kind", [info.loc[p, "kind"] for p in out.index])
    out.insert(1, "shape", [f"{info.loc[p, 'in_shape']} -> {info.loc[p, 'out_shape']}"
                            for p in out.index])
    return out.sort_values("stage_us", ascending=False)


def node_table(plan: Plan) -> pd.DataFrame:
    """The plan's layers as a run's `layers` table (`profiler.schema.LAYERS`): one row per
    node range (its phase), bytes split into activations per item and weights per call."""
    rows = facts(plan).rename(columns={"phase": "node"})
    rows["weight_bytes"] = [4 * sum(p.size for p in ly.params.values()) for ly in plan.layers]
    rows["bytes"] = [bytes_moved(ly, 1) - w for ly, w in zip(plan.layers, rows["weight_bytes"],
                                                               strict=True)]
    return schema.conform(rows.drop(columns="name"), schema.LAYERS)
