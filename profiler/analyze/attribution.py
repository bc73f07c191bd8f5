"""Attributing GPU work to profgen's ranges, as Nsight Systems projects NVTX ranges on the GPU.

A GPU op (kernel, copy, memset) belongs to the innermost range that was open on the thread that
made its API call, at the time of the call (the op and its call share a correlation id). From
that follow:

- `gpu_trace.range`: the name of that innermost range (missing when the call was outside every
  range, or has no API record);
- `repeat` (both traces): the index, in time order, of the level-0 stage range instance
  (`<model>:<stage>`) during which the call was made (for a range: its start); -1 outside;
- `range_trace.gpu_start_ns / gpu_end_ns / gpu_ops`: the projection of a range: the first start,
  the last end and the count of the GPU ops issued inside it or inside any range nested in it.

Pure pandas and numpy: per thread, the ranges' push and pop events are sorted once and every
call is placed with `np.searchsorted`; the projection is rolled up level by level.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from profiler import schema

NO_THREAD = -1


def attribute(
    gpu_trace: pd.DataFrame,
    api_trace: pd.DataFrame,
    range_trace: pd.DataFrame,
    stage_range: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fill `gpu_trace.range`, `repeat` of both traces and the ranges' GPU projection.

    Args:
        gpu_trace, api_trace, range_trace: one stage's traces (`schema.GPU_TRACE`, `API_TRACE`,
            `RANGE_TRACE`); their `range`, `repeat` and `gpu_*` columns are ignored.
        stage_range: name of the level-0 range that marks a repeat (`lenet:no_sync`); None
            counts every level-0 range as one.
    Returns: (gpu_trace, range_trace), new DataFrames with the same schemas. When the ranges
    carry no thread ids, threads are ignored (every call is matched against every range).
    """
    schema.validate(gpu_trace, schema.GPU_TRACE)
    schema.validate(api_trace, schema.API_TRACE)
    schema.validate(range_trace, schema.RANGE_TRACE)
    ignore_threads = bool(range_trace["thread"].isna().all())
    r_thread = _threads(range_trace["thread"], ignore_threads)
    r_start = range_trace["start_ns"].to_numpy(np.int64)
    r_end = range_trace["end_ns"].to_numpy(np.int64)
    r_level = range_trace["level"].to_numpy(np.int64)
    parent = parents(r_thread, r_start, r_level)
    call_t, call_thread, has_call = calls_of(gpu_trace, api_trace, ignore_threads)
    inner = innermost(r_thread, r_start, r_end, r_level, parent, call_t, call_thread)
    inner[~has_call] = -1
    repeats = Repeats(range_trace, stage_range)

    gpu = gpu_trace.copy()
    names = _names_and_none(range_trace["name"])
    gpu["range"] = pd.array(names[inner], dtype="string")  # inner -1 takes the trailing None
    gpu["repeat"] = np.where(has_call, repeats.at(call_t), -1).astype(np.int64)

    rng = range_trace.copy()
    rng["repeat"] = repeats.at(r_start)
    first, last, count = project(gpu_trace, inner, parent, r_level)
    seen = count > 0
    rng["gpu_start_ns"] = pd.arrays.IntegerArray(np.where(seen, first, 0), ~seen)
    rng["gpu_end_ns"] = pd.arrays.IntegerArray(np.where(seen, last, 0), ~seen)
    rng["gpu_ops"] = pd.array(count, dtype="Int64")
    return schema.validate(gpu, schema.GPU_TRACE), schema.validate(rng, schema.RANGE_TRACE)


def api_repeats(
    api_trace: pd.DataFrame, range_trace: pd.DataFrame, stage_range: str | None = None
) -> pd.DataFrame:
    """`api_trace` with `repeat` filled: the stage range instance the call started in, -1 for
    calls outside every one (the harness's own synchronisations between repeats, a tracer's
    flush), which then belong to no repeat of the stage.

    Returns: a new DataFrame with `schema.API_TRACE` columns.
    """
    api = api_trace.copy()
    api["repeat"] = Repeats(range_trace, stage_range).at(api["start_ns"].to_numpy(np.int64))
    return schema.validate(api, schema.API_TRACE)


def _names_and_none(names: pd.Series) -> np.ndarray:
    """The range names as objects (None for missing), plus a trailing None for index -1."""
    objs = names.astype(object).where(names.notna(), None).to_list()
    return np.array([*objs, None], dtype=object)


def _threads(column: pd.Series, ignore: bool) -> np.ndarray:
    if ignore:
        return np.full(len(column), NO_THREAD, np.int64)
    return column.fillna(NO_THREAD).to_numpy(np.int64)


def calls_of(
    gpu_trace: pd.DataFrame, api_trace: pd.DataFrame, ignore_threads: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each GPU op: (time of its API call, the call's thread, whether a call was found).

    A correlation id seen on several API rows is matched to the earliest of them.
    """
    api = api_trace[api_trace["correlation_id"].notna()]
    api = api.sort_values(["correlation_id", "start_ns"], kind="stable")
    api = api.drop_duplicates("correlation_id", keep="first")
    a_corr = api["correlation_id"].to_numpy(np.int64)
    a_start = api["start_ns"].to_numpy(np.int64)
    a_thread = _threads(api["thread"], ignore_threads)
    g_has = gpu_trace["correlation_id"].notna().to_numpy()
    g_corr = gpu_trace["correlation_id"].fillna(-1).to_numpy(np.int64)
    idx = np.searchsorted(a_corr, g_corr)
    found = g_has & (idx < len(a_corr))
    found[found] = a_corr[idx[found]] == g_corr[found]
    safe = np.where(found, idx, 0)
    t = np.where(found, a_start[safe] if len(a_start) else 0, 0)
    th = np.where(found, a_thread[safe] if len(a_thread) else NO_THREAD, NO_THREAD)
    return t.astype(np.int64), th.astype(np.int64), found


def parents(thread: np.ndarray, start: np.ndarray, level: np.ndarray) -> np.ndarray:
    """Index of each range's parent: the last range one level up, on its thread, that started
    at or before it (-1 for level 0 or an orphan)."""
    parent = np.full(len(start), -1, np.int64)
    for th in np.unique(thread):
        on = np.flatnonzero(thread == th)
        for lvl in np.unique(level[on]):
            if lvl <= 0:
                continue
            kids = on[level[on] == lvl]
            ups = on[level[on] == lvl - 1]
            ups = ups[np.argsort(start[ups], kind="stable")]
            j = np.searchsorted(start[ups], start[kids], side="right") - 1
            parent[kids] = np.where(j >= 0, ups[np.maximum(j, 0)] if len(ups) else -1, -1)
    return parent


def innermost(
    r_thread: np.ndarray,
    r_start: np.ndarray,
    r_end: np.ndarray,
    r_level: np.ndarray,
    parent: np.ndarray,
    t: np.ndarray,
    thread: np.ndarray,
) -> np.ndarray:
    """Index of the innermost range open at time `t` on `thread` (start <= t < end), or -1.

    Per thread, every push makes its range the innermost and every pop makes its parent the
    innermost; a query takes the state after the last event at or before it. At one instant,
    pops come before pushes, pushes outer first, pops inner first.
    """
    out = np.full(len(t), -1, np.int64)
    for th in np.unique(r_thread):
        on = np.flatnonzero((r_thread == th) & (r_end > r_start))  # an empty range holds no call
        ev_t = np.concatenate([r_end[on], r_start[on]])
        ev_kind = np.r_[np.zeros(len(on), np.int64), np.ones(len(on), np.int64)]
        ev_rank = np.concatenate([-r_level[on], r_level[on]])
        ev_top = np.concatenate([parent[on], on])
        order = np.lexsort((ev_rank, ev_kind, ev_t))
        ev_t, ev_top = ev_t[order], ev_top[order]
        ask = np.flatnonzero(thread == th)
        pos = np.searchsorted(ev_t, t[ask], side="right") - 1
        out[ask] = np.where(pos >= 0, ev_top[np.maximum(pos, 0)] if len(ev_top) else -1, -1)
    return out


class Repeats:
    """Which repeat (level-0 stage range instance, in time order) a time falls in."""

    def __init__(self, range_trace: pd.DataFrame, stage_range: str | None) -> None:
        is_top = range_trace["level"] == 0
        if stage_range is not None:
            is_top &= range_trace["name"] == stage_range
        top = is_top.fillna(False).to_numpy(bool)
        order = np.argsort(range_trace["start_ns"].to_numpy(np.int64)[top], kind="stable")
        self.start = range_trace["start_ns"].to_numpy(np.int64)[top][order]
        self.end = range_trace["end_ns"].to_numpy(np.int64)[top][order]

    def at(self, t: np.ndarray) -> np.ndarray:
        """Repeat index of each time in `t` (start <= t < end), -1 outside every repeat."""
        if not len(self.start):
            return np.full(len(t), -1, np.int64)
        j = np.searchsorted(self.start, t, side="right") - 1
        inside = (j >= 0) & (t < self.end[np.maximum(j, 0)])
        return np.where(inside, j, -1).astype(np.int64)


def project(
    gpu_trace: pd.DataFrame, inner: np.ndarray, parent: np.ndarray, level: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per range: first GPU start, last GPU end and count of the ops inside it or its children."""
    n = len(parent)
    first = np.full(n, np.iinfo(np.int64).max, np.int64)
    last = np.full(n, np.iinfo(np.int64).min, np.int64)
    count = np.zeros(n, np.int64)
    hit = inner >= 0
    idx = inner[hit]
    np.minimum.at(first, idx, gpu_trace["start_ns"].to_numpy(np.int64)[hit])
    np.maximum.at(last, idx, gpu_trace["end_ns"].to_numpy(np.int64)[hit])
    np.add.at(count, idx, 1)
    for lvl in sorted(set(level.tolist()), reverse=True):  # children before their parents
        kids = np.flatnonzero((level == lvl) & (parent >= 0))
        if lvl <= 0 or not len(kids):
            continue
        np.minimum.at(first, parent[kids], first[kids])
        np.maximum.at(last, parent[kids], last[kids])
        np.add.at(count, parent[kids], count[kids])
    return first, last, count
