"""nsys report CSV text -> fields with units applied -> profgen's tables.

`parse` renames a report's headers once to short field names (`start`, `total`, `calls`, ...),
converting times to ns and sizes to bytes by the unit in each header; the builders then turn
those frames into `schema` tables. Only `nsys_csv` calls this module.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import csvtext, gpuops, values
from profiler.parse.values import Origin
from profiler.ranges import DOMAIN

_TRACE = {
    "start": "start",
    "duration": "duration",
    "corrid": "corr",
    "grdx": "grid_x",
    "grdy": "grid_y",
    "grdz": "grid_z",
    "blkx": "block_x",
    "blky": "block_y",
    "blkz": "block_z",
    "reg/trd": "registers",
    "stcsmem": "ssmem",
    "dymsmem": "dsmem",
    "bytes": "bytes",
    "srcmemkd": "src",
    "dstmemkd": "dst",
    "device": "device",
    "strm": "stream",
    "name": "name",
}
_API_TRACE = {
    "start": "start",
    "duration": "duration",
    "name": "name",
    "corrid": "corr",
    "tid": "thread",
}
_PROJ_TRACE = {
    "name": "name",
    "projectedstart": "gpu_start",
    "projectedduration": "gpu_duration",
    "origstart": "start",
    "origduration": "duration",
    "tid": "thread",
    "numgpuops": "gpu_ops",
    "lvl": "level",
}
_SUM = {
    "time": "pct",  # Time (%), Time(%): checked to add up to 100, then recomputed
    "totaltime": "total",
    "instances": "calls",
    "numcalls": "calls",
    "calls": "calls",
    "count": "calls",
    "operations": "calls",
    "avg": "avg",
    "average": "avg",
    "min": "min",
    "minimum": "min",
    "max": "max",
    "maximum": "max",
    "name": "name",
    "operation": "name",
    "range": "name",
    "style": "style",
}
_SIZE_SUM = {"total": "total", "count": "calls", "operations": "calls", "operation": "name"}
_PROJ_SUM = {
    "range": "name",
    "style": "style",
    "totalprojtime": "gpu_total",
    "totalrangetime": "total",
    "rangeinstances": "calls",
    "totalgpuops": "gpu_ops",
}
FIELDS = {
    "cuda_gpu_trace": _TRACE,
    "cuda_api_trace": _API_TRACE,
    "nvtx_gpu_proj_trace": _PROJ_TRACE,
    "cuda_gpu_kern_sum": _SUM,
    "cuda_gpu_mem_time_sum": _SUM,
    "cuda_api_sum": _SUM,
    "nvtx_sum": _SUM,
    "cuda_gpu_mem_size_sum": _SIZE_SUM,
    "nvtx_gpu_proj_sum": _PROJ_SUM,
}
REQUIRED = {
    "cuda_gpu_trace": ("start", "duration", "name"),
    "cuda_api_trace": ("start", "duration", "name"),
    "nvtx_gpu_proj_trace": ("name", "start", "duration"),
    "cuda_gpu_mem_size_sum": ("total", "name"),
    "nvtx_gpu_proj_sum": ("name", "gpu_total"),
}
_TIMES = set("start duration total avg min max gpu_start gpu_duration gpu_total".split())
_SIZES = {"ssmem", "dsmem", "bytes"}
_SUMMED = {"duration", "total", "gpu_duration", "gpu_total"}  # analyses add these up
_INTS = set(
    "corr grid_x grid_y grid_z block_x block_y block_z registers stream calls thread gpu_ops"
    " level".split()
)
_LABELS = {"name", "device", "src", "dst"}
_DOMAIN_PREFIX = re.compile(rf"^(?:{re.escape(DOMAIN)}:|:)")


def key(header: str) -> tuple[str, str]:
    """`Total Time (ns)` -> (`totaltime`, `ns`): the header's name, lower-cased without blanks."""
    name, unit = csvtext.split_unit(header)
    return re.sub(r"[\s_]", "", name.lower()), unit


def parse(source: str | bytes, header_line: str, report: str, origin: Origin) -> pd.DataFrame:
    """One report's CSV text -> a frame of field columns, times in ns, sizes in bytes, names
    capped; no rows when the report has only its header.

    Args:
        source: the report's CSV text, header line first.
        header_line: that header line.
        report: the canonical report name.
        origin: where the text is in its file (for line numbers in errors).

    Raises: ParseError for a repeated or missing column, a cell that is no number in range, or
        an incomplete (truncated) row.
    """
    columns = _columns(header_line, report, origin)
    raw = _read_fast(source, columns, origin) if report == "cuda_gpu_trace" else None
    if raw is None:
        raw = csvtext.read_csv_text(source, origin.path, origin.expected, usecols=list(columns))
    out = {}
    for col, (field, unit) in columns.items():
        out[field] = _convert(raw[col], field, unit, report, origin, col)
    frame = pd.DataFrame(out, index=raw.index, copy=False)
    _check_complete(frame, source, report, columns, origin)
    for col, (field, _) in columns.items():
        if field in _SUMMED:
            values.check_total(frame[field], origin, col)
    if "pct" in frame and "total" in frame and frame["total"].sum() > 0:
        values.check_shares(frame["pct"], 0.1, origin, report)
    return frame


def _columns(header_line: str, report: str, origin: Origin) -> dict[str, tuple[str, str]]:
    """The header's columns this report uses: header -> (field, unit)."""
    header = csvtext.header_cells(header_line)
    csvtext.check_header(header, origin.path, origin.expected)
    fields = FIELDS[report]
    columns: dict[str, tuple[str, str]] = {}
    for h in header:
        name, unit = key(h)
        if name not in fields:
            continue
        twin = next((c for c, (f, _) in columns.items() if f == fields[name]), None)
        if twin is not None:
            pair = f"{values.shown_cell(twin, 80)} and {values.shown_cell(h, 80)}"
            raise origin.error(f"columns {pair} both give the {fields[name]} field")
        columns[h] = (fields[name], unit)
    required = REQUIRED.get(report, ("total", "calls", "name"))
    missing = [f for f in required if f not in {v[0] for v in columns.values()}]
    if missing:
        raise origin.error(f"no column for {', '.join(missing)}")
    return columns


def _check_complete(
    frame: pd.DataFrame,
    source: str | bytes,
    report: str,
    columns: dict[str, tuple[str, str]],
    origin: Origin,
) -> None:
    """Every required field of every row is there, and the last row has every cell."""
    n_cells = len(csvtext.header_cells(_first_line(source)))
    csvtext.check_last_row(origin, n_cells, len(frame) - 1)
    required = REQUIRED.get(report, ("total", "calls", "name"))
    header_of = {field: col for col, (field, _) in columns.items()}
    for field in required:
        empty = np.flatnonzero(frame[field].isna().to_numpy())
        if len(empty):
            raise origin.cell_error(
                int(empty[0]), header_of[field], "the cell is empty (truncated file?)"
            )


def _first_line(source: str | bytes) -> str:
    if isinstance(source, bytes):
        return source[: source.find(b"\n")].decode("utf-8-sig", "replace")
    return source.split("\n", 1)[0]


def _read_fast(
    source: str | bytes, columns: dict[str, tuple[str, str]], origin: Origin
) -> pd.DataFrame | None:
    """The big trace with explicit dtypes (C reader, no per-row Python); None if that fails.

    Start and duration in ns are never empty: read as int64, exact (timestamps may exceed
    2**53). The small integer fields, which may be empty, are read as float64 and made Int64
    afterwards (pandas 2's reader parses nullable Int64 columns an order of magnitude slower).
    A cell the reader cannot take (`nan`, a thousands separator, a number past int64) sends the
    file down the string path, which names the cell; `inf` and out-of-range values the reader
    takes are caught by the checks in `_convert`.
    """
    dtypes = {}
    for col, (field, unit) in columns.items():
        if field in _LABELS:
            dtypes[col] = "category"
        elif field in ("start", "duration") and csvtext.NS_PER_UNIT.get(unit.lower(), 1) == 1:
            dtypes[col] = "int64"
        else:
            dtypes[col] = "float64"
    try:
        return csvtext.read_csv_text(
            source, origin.path, origin.expected, usecols=list(columns), dtype=dtypes
        )
    except ParseError:
        return None  # e.g. thousands separators: the string path below handles them


def _convert(
    raw: pd.Series, field: str, unit: str, report: str, origin: Origin, col: str
) -> pd.Series:
    if field in _LABELS or field == "style":
        labels = raw if isinstance(raw.dtype, pd.CategoricalDtype) else raw.astype("string")
        return values.cap_names(labels)
    if report == "cuda_gpu_mem_size_sum" and field == "total":
        # gpumemsizesum (before 2021.2) wrote a bare `Total` in KiB.
        factor = csvtext.byte_factor(unit or "KiB", origin.path, col)
    elif field in _SIZES:
        factor = csvtext.byte_factor(unit, origin.path, col)
    elif field in _TIMES:
        factor = csvtext.time_factor(unit, origin.path, col)
    else:
        factor = 1
    rule = (
        values.TIME if field in _TIMES
        else values.SIZE if field in _SIZES
        else values.SHARE if field == "pct"
        else values.COUNT
    )  # fmt: skip
    if field in ("avg", "pct"):
        return values.numbers(raw, origin, col, rule, factor)
    return values.integers(raw, origin, col, rule, factor)


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
        sizes = (
            {} if mem_size is None else dict(zip(mem_size["name"], mem_size["total"], strict=True))
        )
        nbytes = pd.array([sizes.get(n, pd.NA) for n in names], dtype="Int64")
        copy_kind = copy_kind.where(~memset, pd.NA)
        label = copy_kind.map(schema.copy_label, na_action="ignore").fillna(names.astype("string"))
        label = label.where(~memset, schema.MEMSET_LABEL)
        mem = mem_time.assign(kind=kind, copy_kind=copy_kind, bytes=nbytes, name=label)
        parts.append(mem)
    df = pd.concat(parts, ignore_index=True)
    df = df.rename(columns={"total": "total_ns", "avg": "avg_ns", "min": "min_ns", "max": "max_ns"})
    return _summary(df.assign(stage=stage), schema.GPU_ACTIVITIES)


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
