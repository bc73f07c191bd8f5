"""A run's phases, stage by stage: what each phase range cost on the GPU and which GPU operations
it launched, for the stages of the study's own that name their phases.

A phase is an NVTX range a stage opens inside its forward (`profiler.ranges.range`): an ONNX
node, a residual block's tail (`res3.2/tail`), the copies in and out. Its time is the range's
projected GPU time (`ranges.gpu_total_ns`: first GPU op issued inside it to the end of the last)
over the stage's profiled repeats: the phase's GPU time per repeat, every forward of a repeat
summed (a study that enters each phase once a forward has `forwards` of them a repeat).

Which operations a phase launched is read from the GPU trace's `range` column: a kernel by its
name, a copy by its label and its host memory (pageable or pinned), a memset by its label. A
trace may be trimmed to its first repeat (`scripts/trim_run.py`): each phase's operation counts
are scaled to the ops per repeat the untrimmed `ranges` table holds (`gpu_ops` over repeats), so
a phase's launches per repeat are exact whatever part of the trace was kept.

Pure: DataFrames in, values out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from profiler import schema
from profiler.analyze.stages import FRAMEWORK

#: phases that are copies, not the network's work: a stage needs `MIN_PHASES` others
COPIES = frozenset({"h2d", "d2h"})
#: a stage of the study's own takes part from this many phase ranges besides the copies: one
#: range around a whole CUDA graph is no phase breakdown
MIN_PHASES = 2
#: a stage whose phases' summed GPU time passes its own range's GPU time by more than this share
#: runs phases at once (streams): their shares of the stage's time do not add up, and Amdahl over
#: them says nothing; such a stage takes no part
OVERLAP_PCT = 1.0
#: relative tolerance when per-repeat operation counts are compared (they are scaled floats)
COUNT_RTOL = 1e-6


@dataclass(frozen=True)
class Phases:
    """The phases of a run's custom stages (in study order, the columns of each frame).

    `times`: GPU ns per repeat (index: phase in network order; NaN where a stage has none);
    `ops`: per stage, GPU operations per repeat by (phase, op) (op: `ops_key`); `ops_per_repeat`:
    GPU operations per repeat (phase x stage, from `ranges`); `kernels`: kernel launches per repeat
    (phase x stage; NaN where the trace has none of the phase's rows); `total_ns`, `min_ns`,
    `max_ns`: the staged table's unprofiled end-to-end time per repeat (median, min, max) by
    stage; `profiled_ns`: the same for the profiled pass (median), the pass the phase times are
    from; `forwards`: forwards (`infer` calls) per repeat by stage.
    """

    stages: list[str]
    times: pd.DataFrame
    ops: dict[str, pd.Series]
    ops_per_repeat: pd.DataFrame
    kernels: pd.DataFrame
    total_ns: pd.Series
    min_ns: pd.Series
    max_ns: pd.Series
    profiled_ns: pd.Series
    forwards: pd.Series

    @property
    def empty(self) -> bool:
        return len(self.stages) < 2


def phase_rows(ranges: pd.DataFrame) -> pd.DataFrame:
    """The ranges that are phases: not a stage's own range (`<model>:<stage>`), with GPU time."""
    names = ranges["name"].astype(str)
    return ranges[~names.str.contains(":", regex=False) & ranges["gpu_total_ns"].notna()]


def custom_stages(stages: pd.DataFrame, ranges: pd.DataFrame, model: str) -> list[str]:
    """The stages whose phases the Amdahl steps compare, in study order: PASSed, not a framework
    stage (the study's reference, not a step of its own), with its own range and at least
    `MIN_PHASES` phase ranges besides the copies, run one after another (their summed GPU time
    within `OVERLAP_PCT` of the stage range's); a stage listed twice, as only a damaged table
    has it, once."""
    phases = phase_rows(ranges)
    counts = phases[~phases["name"].astype(str).isin(COPIES)].groupby("stage").size()
    summed = phases.groupby("stage")["gpu_total_ns"].sum().astype("float64")
    own = ranges[_own_range(ranges, model)].groupby("stage")["gpu_total_ns"].sum()
    span = own.astype("float64")
    ordered = stages.sort_values("order")
    keep = (ordered["status"] == schema.PASS) & (ordered["role"] != FRAMEWORK)
    timed = ordered.loc[keep & ordered["median_ns"].notna(), "stage"]
    keys = list(dict.fromkeys(str(k) for k in timed))
    return [
        k for k in keys
        if counts.get(k, 0) >= MIN_PHASES and k in span.index and span[k] > 0
        and summed[k] <= span[k] * (1.0 + OVERLAP_PCT / 100.0)
    ]


def _own_range(ranges: pd.DataFrame, model: str) -> pd.Series:
    """Which rows of `ranges` are a stage's own range, `<model>:<stage>` (the worker opens it
    once a profiled repeat)."""
    return ranges["name"].astype(str) == (f"{model}:" + ranges["stage"].astype(str))


def ops_key(trace: pd.DataFrame) -> pd.Series:
    """What identifies a GPU operation across stages: a kernel's name; a copy's label and its
    source and destination memory (a pageable and a pinned copy are different work); a memset's
    label."""
    name = trace["name"].astype(str)
    copy = trace["kind"] == schema.MEMCPY
    memory = trace["src_kind"].astype(str) + "->" + trace["dst_kind"].astype(str)
    return name.where(~copy, name + " (" + memory + ")")


def collect(
    ranges: pd.DataFrame, gpu_trace: pd.DataFrame, stages: pd.DataFrame, model: str
) -> Phases:
    """The phases of `custom_stages`, read from the run's `ranges`, `gpu_trace` and `stages`
    tables (`model`: the study's name, whose stage ranges are `<model>:<stage>`).

    Returns: `Phases`; its `empty` is True when fewer than two stages take part.
    """
    keys = custom_stages(stages, ranges, model)
    repeats = ranges[_own_range(ranges, model)].groupby("stage")["calls"].max().clip(lower=1)
    rows = phase_rows(ranges)
    rows = rows[rows["stage"].isin(keys)]
    per = rows["stage"].map(repeats).astype("float64")
    times = _wide(rows, rows["gpu_total_ns"].astype("float64") / per, keys)
    ops_per = _wide(rows, rows["gpu_ops"].astype("float64") / per, keys)
    order = _network_order(list(times.index), gpu_trace, keys)
    times, ops_per = times.reindex(order), ops_per.reindex(order)
    ops, kernels = {}, {}
    for key in keys:
        ops[key], kernels[key] = _stage_ops(gpu_trace, key, ops_per[key])
    st = stages.set_index(stages["stage"].astype(str))
    st = st[~st.index.duplicated()]
    return Phases(
        stages=keys,
        times=times,
        ops=ops,
        ops_per_repeat=ops_per,
        kernels=pd.DataFrame(kernels, index=times.index, columns=keys),
        total_ns=st.loc[keys, "median_ns"].astype("float64"),
        min_ns=st.loc[keys, "min_ns"].astype("float64"),
        max_ns=st.loc[keys, "max_ns"].astype("float64"),
        profiled_ns=st.loc[keys, "profiled_median_ns"].astype("float64").fillna(
            st.loc[keys, "median_ns"].astype("float64")),
        forwards=pd.Series(
            [_forwards(int(i), int(b)) for i, b in zip(st.loc[keys, "items"],
                                                        st.loc[keys, "batch"], strict=True)],
            index=keys, dtype="float64",
        ),
    )


def _forwards(items: int, batch: int) -> int:
    return max(math.ceil(items / batch), 1) if batch > 0 else 1


def _wide(rows: pd.DataFrame, values: pd.Series, keys: list[str]) -> pd.DataFrame:
    """`values` (one per row of `rows`) as a phase x stage frame, stages in `keys` order."""
    frame = pd.DataFrame({"stage": rows["stage"].astype(str), "name": rows["name"].astype(str),
                          "v": values.to_numpy()})
    wide = frame.pivot_table(index="name", columns="stage", values="v", aggfunc="sum")
    return wide.reindex(columns=keys).rename_axis(index="phase", columns=None)


def _network_order(names: list[str], gpu_trace: pd.DataFrame, keys: list[str]) -> list[str]:
    """Phases in the order the GPU ran them: first start in the earliest custom stage's trace
    that has them (copies in first and out last, as a forward runs); the rest as found."""
    order: list[str] = []
    for key in keys:
        rows = gpu_trace[(gpu_trace["stage"] == key) & gpu_trace["range"].notna()]
        first = rows.groupby(rows["range"].astype(str))["start_ns"].min().sort_values()
        order += [n for n in first.index if n in names and n not in order]
    return order + [n for n in names if n not in order]


def _stage_ops(
    gpu_trace: pd.DataFrame, key: str, ops_per: pd.Series
) -> tuple[pd.Series, pd.Series]:
    """One stage's GPU operations per repeat by (phase, op), and kernel launches per repeat by
    phase: the trace's counts scaled to the phase's operations per repeat (`ops_per`)."""
    rows = gpu_trace[(gpu_trace["stage"] == key) & gpu_trace["range"].notna()]
    inside = rows[rows["repeat"] >= 0]
    rows = inside if not inside.empty else rows
    phase = rows["range"].astype(str)
    counts = rows.groupby([phase.rename("phase"), ops_key(rows).rename("op")]).size()
    seen = rows.groupby(phase).size()
    scale = ops_per.reindex(seen.index) / seen
    scaled = counts * scale.reindex(counts.index.get_level_values("phase")).to_numpy()
    kernel_rows = rows["kind"] == schema.KERNEL
    kernels = kernel_rows.groupby(phase).sum() * scale
    return scaled.astype("float64"), kernels.reindex(ops_per.index).astype("float64")


def changed_phases(ph: Phases, before: str, after: str) -> tuple[list[str], int]:
    """The phases a step changed, in network order, and how many phases both stages have whose
    operations could not be compared (the trace kept none of a stage's rows for them; only their
    operation counts were).

    A phase changed when one stage has it and the other not, when its GPU operations per repeat
    differ in number, or when the operations it launched differ (another kernel's name, a copy
    from other host memory): the multiset of `ops_key` per repeat.
    """
    a, b = ph.times[before], ph.times[after]
    changed, unknown = [], 0
    for phase in ph.times.index:
        if pd.isna(a[phase]) and pd.isna(b[phase]):
            continue
        if pd.isna(a[phase]) or pd.isna(b[phase]):
            changed.append(phase)
            continue
        n_a = float(ph.ops_per_repeat[before][phase])
        n_b = float(ph.ops_per_repeat[after][phase])
        if not math.isclose(n_a, n_b, rel_tol=COUNT_RTOL):
            changed.append(phase)
            continue
        mix_a, mix_b = _mix(ph.ops[before], phase), _mix(ph.ops[after], phase)
        if mix_a is None or mix_b is None:
            unknown += 1
        elif not _same(mix_a, mix_b):
            changed.append(phase)
    return changed, unknown


def _mix(ops: pd.Series, phase: str) -> pd.Series | None:
    if ops.empty or phase not in ops.index.get_level_values("phase"):
        return None
    return ops.xs(phase, level="phase")


def _same(a: pd.Series, b: pd.Series) -> bool:
    names = a.index.union(b.index)
    x, y = a.reindex(names, fill_value=0.0), b.reindex(names, fill_value=0.0)
    return all(math.isclose(u, v, rel_tol=COUNT_RTOL, abs_tol=1e-9) for u, v in zip(x, y,
                                                                                  strict=True))
