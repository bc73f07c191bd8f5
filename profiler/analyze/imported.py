"""The time of an imported stage: the span the user names, per repeat when the user says how
many repeats the program ran.

An import has no unprofiled host time: what the profiler printed covers the whole program
(nvprof and nsys summaries, a whole trace). The staged table's time for an imported stage is,
in this order:

- `nvtx_range`: the NVTX range the user names (`--range NAME`): its summed push-to-pop time over
  all its instances, from the stage's `ranges` table;
- `gpu_span`: the GPU span of the capture, from the first GPU activity's start to the last one's
  end, when the stage has a GPU trace;
- `gpu_time`: the summed time of the stage's GPU activities (kernels, copies, memsets; work that
  overlapped counts twice), when it has only summaries;
- none (missing) when it has none of these (an ncu metrics file, API calls only).

With `repeats` > 0 the time is divided by it (a mean per repeat); with 0 it stays the
whole-program total. Pure: tables in, a value out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from profiler import schema


@dataclass(frozen=True)
class StageTime:
    """What an imported stage's staged-table time is, and its value.

    timing: one of `schema.TIMINGS` but `host`, or None when the input holds no time.
    timing_range: the NVTX range for `nvtx_range`, else None.
    total_ns: the span over the whole program (None: no time).
    repeats: the repeats the program ran as the user said (0: not said).
    """

    timing: str | None
    timing_range: str | None
    total_ns: int | None
    repeats: int

    @property
    def median_ns(self) -> int | None:
        """The staged table's time: the total per repeat when repeats are known, else the
        whole-program total."""
        if self.total_ns is None:
            return None
        return round(self.total_ns / self.repeats) if self.repeats > 0 else self.total_ns


def range_names(tables: Mapping[str, pd.DataFrame], stage: str) -> list[str]:
    """The NVTX ranges `stage` has (its `ranges` rows), by total time, longest first."""
    ranges = _rows(tables, schema.RANGES.name, stage)
    if ranges.empty:
        return []
    ranges = ranges.sort_values(["total_ns", "name"], ascending=[False, True], kind="stable")
    return [str(n) for n in ranges["name"].dropna()]


def kernel_range_names(tables: Mapping[str, pd.DataFrame], stage: str) -> list[str]:
    """The NVTX ranges `stage`'s profiled kernels ran in (its `metrics` rows: ncu names a
    launch's range but times no range), by their kernels' summed duration, longest first."""
    metrics = _rows(tables, schema.METRICS.name, stage)
    metrics = metrics[metrics["range"].notna()]
    if metrics.empty:
        return []
    total = metrics.groupby(metrics["range"].astype(str))["duration_ns"].sum(min_count=0)
    ordered = sorted(total.items(), key=lambda kv: (-float(kv[1]), kv[0]))
    return [str(name) for name, _ in ordered]


def stage_time(
    tables: Mapping[str, pd.DataFrame], stage: str, repeats: int = 0, range_name: str | None = None
) -> StageTime:
    """The time of the imported stage `stage` (see the module docstring).

    Args:
        tables: the run's tables by name (all stages; `stage`'s rows are used).
        stage: the stage key.
        repeats: the repeats the program ran (0: not known).
        range_name: the NVTX range whose time is the stage's, as `ranges` names it.

    Raises: KeyError when `range_name` is given and `stage` has no range of that name (the
        caller names the ranges there are: `range_names`).
    """
    if range_name is not None:
        ranges = _rows(tables, schema.RANGES.name, stage)
        match = ranges[ranges["name"] == range_name]
        if match.empty:
            raise KeyError(range_name)
        total = int(match["total_ns"].sum())
        return StageTime(schema.NVTX_RANGE, range_name, total, repeats)
    trace = _rows(tables, schema.GPU_TRACE.name, stage)
    if not trace.empty:
        span = int(trace["end_ns"].max()) - int(trace["start_ns"].min())
        return StageTime(schema.GPU_SPAN, None, span, repeats)
    acts = _rows(tables, schema.GPU_ACTIVITIES.name, stage)
    if not acts.empty:
        return StageTime(schema.GPU_TIME, None, int(acts["total_ns"].sum()), repeats)
    return StageTime(None, None, None, repeats)


def _rows(tables: Mapping[str, pd.DataFrame], name: str, stage: str) -> pd.DataFrame:
    if name not in tables:
        return schema.empty(schema.table(name))
    df = tables[name]
    return df[(df["stage"] == stage).fillna(False).to_numpy()]
