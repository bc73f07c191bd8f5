"""Per-stage tables -> the run's tables: GPU work attributed to ranges, nvprof-style summaries.

Each stage's traces are attributed on their own (each stage ran in its own process, on its own
clock); then the stages' tables are concatenated in study order. A stage with a GPU trace gets
its summaries computed from it; a stage that only has summaries (an import) keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from profiler import ranges, schema
from profiler.analyze import activities
from profiler.analyze.attribution import api_repeats, attribute

TRACES = (schema.GPU_TRACE, schema.API_TRACE, schema.RANGE_TRACE)
SUMMARIES = {  # summary table <- (trace it is computed from, function)
    schema.GPU_ACTIVITIES.name: (schema.GPU_TRACE.name, activities.gpu_activities),
    schema.API_CALLS.name: (schema.API_TRACE.name, activities.api_calls),
    schema.RANGES.name: (schema.RANGE_TRACE.name, activities.ranges),
}


def assemble_tables(
    parts: Sequence[Mapping[str, pd.DataFrame]], model: str, keep_printed: bool = False
) -> dict[str, pd.DataFrame]:
    """Concatenate the stages' tables, attributing and summarising each stage's traces.

    Args:
        parts: each stage's tables by name.
        model: the study's name (its stage ranges are `<model>:<stage>`).
        keep_printed: keep a summary a stage already has (an import: the one its tool printed,
            whole, where a trace pasted beside it may be cut short); derive only the missing.

    Returns: tables by schema name; only tables some stage has (plus `stages` and `samples`).
    """
    stages = [with_summaries(attributed(decoded(part), model), keep_printed) for part in parts]
    names = [t for t in schema.TABLES if any(t in part for part in stages)]
    out = {}
    for name in names:
        frames = [part[name] for part in stages if name in part and not part[name].empty]
        tbl = schema.table(name)
        out[name] = (
            schema.conform(pd.concat(frames, ignore_index=True), tbl)
            if frames
            else schema.empty(tbl)
        )
    if schema.LAYERS.name in out:  # every stage's worker gives the study's same facts
        out[schema.LAYERS.name] = out[schema.LAYERS.name].drop_duplicates("node", ignore_index=True)
    return out


#: the columns that hold range names, as NVTX carried them (see `profiler.ranges.encode`)
RANGE_NAMES = {"range_trace": "name", "gpu_trace": "range", "ranges": "name", "metrics": "range"}


def decoded(part: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """One stage's tables with every range name as the stage wrote it (`ranges.decode`)."""
    out = dict(part)
    for name, column in RANGE_NAMES.items():
        if name in out and not out[name].empty:
            names = out[name][column].map(ranges.decode, na_action="ignore")
            out[name] = out[name].assign(**{column: names.astype("string")})
    return out


def attributed(part: Mapping[str, pd.DataFrame], model: str) -> dict[str, pd.DataFrame]:
    """One stage's tables with `range`/`repeat` and the ranges' GPU projection filled in."""
    part = dict(part)
    if not all(t.name in part for t in TRACES) or part[schema.GPU_TRACE.name].empty:
        return part
    stage = str(part[schema.GPU_TRACE.name]["stage"].iloc[0])
    stage_range = f"{model}:{stage}"
    gpu, ranges = attribute(
        part["gpu_trace"], part["api_trace"], part["range_trace"], stage_range=stage_range
    )
    api = api_repeats(part["api_trace"], part["range_trace"], stage_range)
    part.update(gpu_trace=gpu, api_trace=api, range_trace=ranges)
    return part


def with_summaries(
    part: Mapping[str, pd.DataFrame], keep_printed: bool = False
) -> dict[str, pd.DataFrame]:
    """One stage's tables plus every summary its traces can give (traces win over a tool's
    own summary, so all backends summarise the same way; with `keep_printed` a summary the stage
    has is kept). When a trace knows its repeats, only what happened inside the stage's repeats
    is summarised: the harness's own calls between repeats (a device synchronise, a tracer's
    flush) are not the stage's."""
    part = dict(part)
    for summary, (trace, summarise) in SUMMARIES.items():
        printed = summary in part and not part[summary].empty
        if trace in part and not part[trace].empty and not (keep_printed and printed):
            part[summary] = summarise(in_repeats(part[trace]))
    return part


def missing_summaries(tables: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The summaries a run lacks but its traces can give, by the same rule as `with_summaries`
    (stage by stage, only what happened inside the repeats). A summary the run has is kept:
    a trimmed run's summaries came from its full traces."""
    out = {}
    for summary, (trace, summarise) in SUMMARIES.items():
        have = summary in tables and not tables[summary].empty
        if not have and trace in tables and not tables[trace].empty:
            out[summary] = summarise(in_repeats(tables[trace]))
    return out


def in_repeats(trace: pd.DataFrame) -> pd.DataFrame:
    """The rows inside a stage repeat; a stage none of whose rows is known to be inside one (an
    import) keeps them all."""
    inside = trace["repeat"] >= 0
    known = inside.groupby(trace["stage"]).transform("any")
    keep = inside | ~known
    return trace if keep.all() else trace[keep].reset_index(drop=True)
