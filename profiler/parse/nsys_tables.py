"""Parsed nsys report fields (`nsys_fields`) -> profgen's tables.

The builders turn the field frames of a set of reports into `schema` tables: a gpu trace, an
api trace, a range trace, or the nvprof-style summaries. Only the nsys readers call this module.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import cell_quotes, gpuops, reader_notes
from profiler.ranges import DOMAIN

_GPU_SUM = "nsys cuda_gpu_sum report (kernels and memory operations)"
_DOMAIN_PREFIX = re.compile(rf"^(?:{re.escape(DOMAIN)}:|:)")


def build(frames: dict[str, tuple[pd.DataFrame, Path]], stage: str) -> dict[str, pd.DataFrame]:
    """The tables a set of parsed reports gives (see `nsys_csv`'s table of reports)."""
    get = {name: frame for name, (frame, _) in frames.items()}
    out: dict[str, pd.DataFrame] = {}
    if "cuda_gpu_trace" in get:
        out["gpu_trace"] = gpu_trace(get["cuda_gpu_trace"], stage, frames["cuda_gpu_trace"][1])
    elif "cuda_gpu_kern_sum" in get or "cuda_gpu_mem_time_sum" in get:
        out["gpu_activities"] = gpu_activities(
            get.get("cuda_gpu_kern_sum"),
            get.get("cuda_gpu_mem_time_sum"),
            get.get("cuda_gpu_mem_size_sum"),
            stage,
        )
    elif "cuda_gpu_sum" in get:
        kern, mem_time = by_category(*frames["cuda_gpu_sum"])
        out["gpu_activities"] = gpu_activities(
            kern, mem_time, get.get("cuda_gpu_mem_size_sum"), stage
        )
    if "cuda_api_trace" in get:
        out["api_trace"] = api_trace(get["cuda_api_trace"], stage)
    elif "cuda_api_sum" in get:
        out["api_calls"] = api_calls(get["cuda_api_sum"], stage)
    if "nvtx_gpu_proj_trace" in get:
        out["range_trace"] = range_trace(get["nvtx_gpu_proj_trace"], stage)
    if "nvtx_sum" in get:
        out["ranges"] = ranges(get["nvtx_sum"], get.get("nvtx_gpu_proj_sum"), stage)
    return out


def gpu_trace(f: pd.DataFrame, stage: str, path: Path) -> pd.DataFrame:
    """cuda_gpu_trace fields -> `schema.GPU_TRACE` in start order; rows of no known kind dropped."""
    return gpuops.trace_table(f, stage)


def api_trace(f: pd.DataFrame, stage: str) -> pd.DataFrame:
    """cuda_api_trace fields -> `schema.API_TRACE`, in start order."""
    out = pd.DataFrame(
        {
            "stage": stage,
            "repeat": -1,
            "name": f["name"],
            "start_ns": f["start"],
            "end_ns": f["start"] + f["duration"],
            "duration_ns": f["duration"],
            "thread": _col(f, "thread"),
            "correlation_id": _col(f, "corr"),
        }
    )
    out = schema.conform(out.sort_values("start_ns", kind="stable"), schema.API_TRACE)
    return schema.validate(out, schema.API_TRACE)


def range_trace(f: pd.DataFrame, stage: str) -> pd.DataFrame:
    """nvtx_gpu_proj_trace fields -> `schema.RANGE_TRACE`, in start order."""
    out = pd.DataFrame(
        {
            "stage": stage,
            "repeat": -1,
            "name": strip_domain(f["name"]),
            "level": _col(f, "level").fillna(0),
            "start_ns": f["start"],
            "end_ns": f["start"] + f["duration"],
            "duration_ns": f["duration"],
            "gpu_start_ns": _col(f, "gpu_start"),
            "gpu_end_ns": _col(f, "gpu_start") + _col(f, "gpu_duration"),
            "gpu_ops": _col(f, "gpu_ops"),
            "thread": _col(f, "thread"),
        }
    )
    out = schema.conform(out.sort_values("start_ns", kind="stable"), schema.RANGE_TRACE)
    return schema.validate(out, schema.RANGE_TRACE)


def gpu_activities(
    kern: pd.DataFrame | None,
    mem_time: pd.DataFrame | None,
    mem_size: pd.DataFrame | None,
    stage: str,
) -> pd.DataFrame:
    """Kernel and memory-operation summaries -> `schema.GPU_ACTIVITIES` (nvprof's `GPU activities`).

    A summary row has only its name, so copies and memsets are told apart by nsys's labels here;
    bytes come from the size summary of the same label.
    """
    parts = []
    if kern is not None:
        missing = [pd.NA] * len(kern)
        parts.append(
            kern.assign(
                kind=schema.KERNEL,
                copy_kind=pd.array(missing, dtype="string"),
                bytes=pd.array(missing, dtype="Int64"),
            )
        )
    if mem_time is not None:
        names = mem_time["name"]
        memset = names.map(gpuops.is_memset_label).astype(bool)
        copy_kind = gpuops.map_strings(names, gpuops.copy_direction)
        kind = pd.Series(
            np.where(memset, schema.MEMSET, schema.MEMCPY), index=names.index, dtype="string"
        )
        sizes = {} if mem_size is None else _sizes_of(mem_time, mem_size)
        nbytes = pd.array([sizes.get(n, pd.NA) for n in names], dtype="Int64")
        copy_kind = copy_kind.where(~memset, pd.NA)
        label = gpuops.map_strings(names, gpuops.copy_name).fillna(names.astype("string"))
        label = label.where(~memset, schema.MEMSET_LABEL)
        mem = mem_time.assign(kind=kind, copy_kind=copy_kind, bytes=nbytes, name=label)
        parts.append(mem)
    df = pd.concat(parts, ignore_index=True)
    df = df.rename(columns={"total": "total_ns", "avg": "avg_ns", "min": "min_ns", "max": "max_ns"})
    return _summary(df.assign(stage=stage), schema.GPU_ACTIVITIES)


def _sizes_of(mem_time: pd.DataFrame, mem_size: pd.DataFrame) -> dict[str, object]:
    """The bytes of each operation of the size summary, by name, where its count is the time
    summary's (nsys prints both of one run, an operation counted alike in each); none, and a
    note that says so, when any operation is counted otherwise (a size table of another run
    pasted beside the time table: its bytes are not those copies')."""
    if "calls" not in mem_time or "calls" not in mem_size:
        return dict(zip(mem_size["name"], mem_size["total"], strict=True))
    timed = dict(zip(mem_time["name"], mem_time["calls"], strict=True))
    unlike = [
        name for name, calls in zip(mem_size["name"], mem_size["calls"], strict=True)
        if name in timed and timed[name] != calls
    ]
    if unlike:
        reader_notes.read_note(
            f"the memory size summary counts {unlike[0]} {_count_of(mem_size, unlike[0])} times "
            f"and the time summary {timed[unlike[0]]}: tables of different runs, so no bytes "
            "are taken from it"
        )
        return {}
    return dict(zip(mem_size["name"], mem_size["total"], strict=True))


def _count_of(frame: pd.DataFrame, name: str) -> object:
    return frame.loc[frame["name"] == name, "calls"].iloc[0]


def by_category(f: pd.DataFrame, path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """cuda_gpu_sum fields (kernels and memory operations in one table) -> the rows a kernel
    summary and a memory-time summary would hold, by each row's `Category` (`CUDA_KERNEL`,
    `MEMORY_OPER`: nsys's words for the two).

    Raises: ParseError naming a category that is neither (no row is guessed at).
    """
    category = f["category"].astype("string").str.strip()
    other = sorted(set(category.fillna("(empty)")) - {"CUDA_KERNEL", "MEMORY_OPER"})
    if other:
        said = ", ".join(cell_quotes.shown_cell(c, 40) for c in other[:3])
        detail = f"a row's Category is {said}, not CUDA_KERNEL or MEMORY_OPER"
        raise ParseError(path, _GPU_SUM, detail)
    rows = f.drop(columns="category")
    return rows[category.eq("CUDA_KERNEL").to_numpy()], rows[category.eq("MEMORY_OPER").to_numpy()]


def api_calls(f: pd.DataFrame, stage: str) -> pd.DataFrame:
    """cuda_api_sum fields -> `schema.API_CALLS`."""
    df = f.rename(columns={"total": "total_ns", "avg": "avg_ns", "min": "min_ns", "max": "max_ns"})
    return _summary(df.assign(stage=stage), schema.API_CALLS)


def ranges(nvtx_sum: pd.DataFrame, proj_sum: pd.DataFrame | None, stage: str) -> pd.DataFrame:
    """nvtx_sum (CPU times) joined with nvtx_gpu_proj_sum (GPU times) -> `schema.RANGES`."""
    df = nvtx_sum.rename(
        columns={"total": "total_ns", "avg": "avg_ns", "min": "min_ns", "max": "max_ns"}
    )
    df = df.assign(stage=stage, name=strip_domain(df["name"]))
    if proj_sum is not None:
        gpu = proj_sum.assign(name=strip_domain(proj_sum["name"]))
        on = ["name", "style"] if "style" in df and "style" in gpu else ["name"]
        gpu = gpu[on + [c for c in ("gpu_total", "gpu_ops") if c in gpu]].drop_duplicates(on)
        df = df.merge(gpu, on=on, how="left")
    df = df.rename(columns={"gpu_total": "gpu_total_ns"})
    df = df.sort_values("total_ns", ascending=False, kind="stable")
    out = schema.conform(df, schema.RANGES, fill=("gpu_total_ns", "gpu_ops"))
    return schema.validate(out, schema.RANGES)


def strip_domain(names: pd.Series) -> pd.Series:
    """Drop profgen's `profgen:` prefix (and the bare `:` of the default domain) from range names.

    Other domains keep their prefix: a range name may itself contain `:`, so only the domains
    profgen knows can be told apart from the name.
    """
    return names.astype("string").str.replace(_DOMAIN_PREFIX, "", regex=True)


def _summary(df: pd.DataFrame, tbl: schema.Table) -> pd.DataFrame:
    total = df["total_ns"].astype("float64")
    share = total / total.sum() * 100 if total.sum() > 0 else total * 0.0
    df = df.assign(time_pct=share.to_numpy())
    df = df.sort_values(["total_ns", "name"], ascending=[False, True], kind="stable")
    out = schema.conform(df, tbl, fill=[c for c in ("bytes", "copy_kind") if c in tbl.names])
    return schema.validate(out, tbl)


def _col(f: pd.DataFrame, field: str) -> pd.Series:
    return f[field] if field in f else pd.Series(pd.NA, index=f.index, dtype="Int64")
