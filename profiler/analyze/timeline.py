"""What the report's timeline shows: one profiled repeat of one stage, capped, in lanes.

A per-image stage issues about 90,000 GPU operations per repeat; a browser cannot draw all of
them and a reader cannot see them. The timeline shows one repeat (the one whose span is the
median of the stage's repeats: a typical one) and at most `limit` operations of it, the first
ones in time, and says how many it left out.

Lanes: one per stream for GPU work; NVTX ranges (their projection onto the GPU: first op issued
inside to last op's end) go in lanes above, packed so that bars in one lane never overlap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiler import schema
from profiler.schema import Column

DEFAULT_STAGE = "overlap_fusion"
DEFAULT_LIMIT = 2000

TIMELINE_OPS = schema.Table(
    "timeline_ops",
    "GPU operations of one repeat, times relative to the repeat's first start.",
    (
        Column("lane", "string", doc="`stream N`"),
        Column("category", "string", doc="`kernel`, `memcpy HtoD`, `memcpy DtoH`, `memset`, ..."),
        Column("name", "string"),
        Column("start_ns", "int64", "ns", "relative to the repeat's first GPU start"),
        Column("duration_ns", "int64", "ns"),
        Column("bytes", "Int64", "bytes"),
        Column("range", "string"),
    ),
)

TIMELINE_PHASES = schema.Table(
    "timeline_phases",
    "NVTX ranges projected onto the GPU, in non-overlapping lanes.",
    (
        Column("lane", "string", doc="`NVTX 1`, `NVTX 1.2`, ... (level, then packed lane)"),
        Column("name", "string"),
        Column("level", "int64"),
        Column("start_ns", "int64", "ns", "relative to the repeat's first GPU start"),
        Column("duration_ns", "int64", "ns"),
    ),
)


@dataclass(frozen=True)
class Timeline:
    """One repeat of one stage, ready to draw."""

    stage: str
    repeat: int
    ops: pd.DataFrame  # TIMELINE_OPS
    phases: pd.DataFrame  # TIMELINE_PHASES
    total_ops: int  # operations in the repeat; len(ops) is at most the limit
    span_ns: int  # the whole repeat's span, shown or not
    window: tuple[int, int]  # absolute [start, end) of the repeat on the profiler's clock


def default_stage(gpu_trace: pd.DataFrame, order: list[str]) -> str | None:
    """`overlap_fusion` when it has a trace, else the last stage (in `order`) that has one."""
    traced = set(gpu_trace["stage"].dropna().unique())
    if DEFAULT_STAGE in traced:
        return DEFAULT_STAGE
    return next((k for k in reversed(order) if k in traced), None)


def typical_repeat(gpu_trace: pd.DataFrame, stage: str) -> int:
    """The repeat of `stage` whose span is the median one (the shorter of the two middle ones)."""
    ops = gpu_trace[gpu_trace["stage"] == stage]
    if ops.empty:
        raise ValueError(f"stage {stage!r} has no GPU trace")
    spans = ops.groupby("repeat")["end_ns"].max() - ops.groupby("repeat")["start_ns"].min()
    spans = spans.sort_values(kind="stable")
    return int(spans.index[(len(spans) - 1) // 2])


def timeline(
    gpu_trace: pd.DataFrame,
    range_trace: pd.DataFrame,
    stage: str,
    repeat: int | None = None,
    limit: int = DEFAULT_LIMIT,
) -> Timeline:
    """The operations and NVTX phases of one repeat of `stage`, capped at `limit` operations.

    Args:
        gpu_trace: DataFrame with `schema.GPU_TRACE` columns.
        range_trace: DataFrame with `schema.RANGE_TRACE` columns (may be empty).
        stage: the stage to show.
        repeat: the profiled repeat; default `typical_repeat`.
        limit: the most operations to return (the first ones in time).

    Returns: a `Timeline` whose `ops` has `TIMELINE_OPS` and `phases` `TIMELINE_PHASES` columns.
    Raises: ValueError when the stage has no trace.
    """
    repeat = typical_repeat(gpu_trace, stage) if repeat is None else repeat
    sel = gpu_trace[(gpu_trace["stage"] == stage) & (gpu_trace["repeat"] == repeat)]
    if sel.empty:
        raise ValueError(f"stage {stage!r} has no GPU trace for repeat {repeat}")
    sel = sel.sort_values("start_ns", kind="stable")
    origin, end = int(sel["start_ns"].min()), int(sel["end_ns"].max())
    shown = sel.head(limit)
    ops = pd.DataFrame(
        {
            "lane": "stream " + shown["stream"].astype("string").fillna("?"),
            "category": _category(shown),
            "name": shown["name"],
            "start_ns": shown["start_ns"] - origin,
            "duration_ns": shown["duration_ns"],
            "bytes": shown["bytes"],
            "range": shown["range"],
        }
    )
    shown_end = int(shown["end_ns"].max())
    phases = _phases(range_trace, stage, origin, shown_end)
    ops = schema.validate(schema.conform(ops, TIMELINE_OPS), TIMELINE_OPS)
    return Timeline(stage, int(repeat), ops, phases, len(sel), end - origin, (origin, end))


def _category(ops: pd.DataFrame) -> pd.Series:
    copy = "memcpy " + ops["copy_kind"].fillna("?")
    return ops["kind"].where(ops["kind"] != schema.MEMCPY, copy)


def _phases(range_trace: pd.DataFrame, stage: str, origin: int, end: int) -> pd.DataFrame:
    """Ranges of `stage` whose GPU projection falls inside [origin, end], packed in lanes (a
    range with a start and no end on the GPU, as a damaged table has, is not drawn)."""
    projected = range_trace["gpu_start_ns"].notna() & range_trace["gpu_end_ns"].notna()
    r = range_trace[(range_trace["stage"] == stage) & projected]
    r = r[(r["gpu_start_ns"] >= origin) & (r["gpu_start_ns"] <= end)]
    r = r.sort_values(["level", "gpu_start_ns"], kind="stable")
    starts = r["gpu_start_ns"].astype("int64").to_numpy() - origin
    ends = np.minimum(r["gpu_end_ns"].astype("int64").to_numpy(), end) - origin
    lanes = _pack(r["level"].to_numpy(np.int64), starts, ends)
    phases = pd.DataFrame(
        {
            "lane": lanes,
            "name": r["name"].to_numpy(),
            "level": r["level"].to_numpy(np.int64),
            "start_ns": starts,
            "duration_ns": ends - starts,
        }
    )
    return schema.validate(schema.conform(phases, TIMELINE_PHASES), TIMELINE_PHASES)


def _pack(levels: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[str]:
    """Greedy interval packing per level: a bar goes to the first lane whose last bar has ended."""
    lane_ends: dict[int, list[int]] = {}
    out = []
    for level, s, e in zip(levels, starts, ends, strict=True):
        ends_of_level = lane_ends.setdefault(int(level), [])
        idx = next((i for i, last in enumerate(ends_of_level) if last <= s), len(ends_of_level))
        if idx == len(ends_of_level):
            ends_of_level.append(int(e))
        else:
            ends_of_level[idx] = int(e)
        out.append(f"NVTX {level}" + ("" if idx == 0 else f".{idx + 1}"))
    return out
