"""CUPTI records (the `.npz` the cupti backend writes) -> GPU, API and range traces, in bulk.

The raw format is described in `profiler.collect.cupti`: one flat array per record field. Every
column here is built with numpy over whole arrays; no Python loop runs per record. The frames
come out with `range` missing and `repeat` -1: `profiler.analyze.attribution.attribute` fills
them (and the ranges' GPU projection) for this backend and nsys alike.

Copies are classified by CUPTI's copyKind and memory kinds, never by a name.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from profiler import files, schema
from profiler.errors import DataError, ParseError
from profiler.parse import bounded_names

FORMAT = 1
# What the arrays of one record file may unpack to (a million kernels take about 100 MB).
UNPACKED_LIMIT = 4 << 30
EXPECTED = "a CUPTI record file (.npz) written by profgen's cupti backend"

# CUpti_ActivityMemcpyKind -> copy direction; CUDA arrays are device memory.
COPY_KIND = {
    1: "HtoD",
    2: "DtoH",
    3: "HtoD",
    4: "DtoH",
    5: "DtoD",
    6: "DtoD",
    7: "DtoD",
    8: "DtoD",
    9: "HtoH",
    10: "PtoP",
}
UNKNOWN_COPY = "Unknown"
# CUpti_ActivityMemoryKind -> memory kind of a copy's source or destination.
MEMORY_KIND = {
    1: "pageable",
    2: "pinned",
    3: "device",
    4: "device",
    5: "managed",
    6: "device",
    7: "managed",
}
_VERSION_SUFFIX = re.compile(r"_v3020$")  # nsys shows cudaMemcpyAsync_v3020 as cudaMemcpyAsync

_REQUIRED = (
    "kernel.start",
    "kernel.end",
    "kernel.name",
    "names.kernel",
    "memcpy.start",
    "memcpy.copy_kind",
    "memset.start",
    "runtime.start",
    "driver.start",
    "cbid.runtime",
    "name.runtime",
    "cbid.driver",
    "name.driver",
    "range.op",
    "range.ts",
    "range.thread",
    "range.name",
    "names.range",
)

Raw = dict[str, np.ndarray]


def read_raw(path: str | Path) -> Raw:
    """Load a raw CUPTI record file, read through `profiler.files` (a FIFO or device is refused
    before it is read) and unpacked only when its arrays declare at most `UNPACKED_LIMIT` bytes.

    Raises: ParseError naming the file when it is missing, not a regular file, not an npz, too
        large unpacked, or not this format.
    """
    path = Path(path)
    try:
        data = files.read_bytes(path)
    except DataError as exc:
        raise ParseError(path, EXPECTED, str(exc).removeprefix(f"{path}: ")) from None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
        if unpacked > UNPACKED_LIMIT:
            raise ParseError(path, EXPECTED, f"its arrays unpack to {unpacked} bytes")
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            raw = {k: npz[k] for k in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise ParseError(path, EXPECTED, f"not readable as npz: {exc}") from exc
    if "meta" not in raw:
        raise ParseError(path, EXPECTED, "no `meta` entry")
    try:
        info = json.loads(str(raw["meta"]))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(path, EXPECTED, f"`meta` is not JSON: {exc}") from exc
    if not isinstance(info, dict) or info.get("format") != FORMAT:
        got = info.get("format") if isinstance(info, dict) else info
        raise ParseError(path, EXPECTED, f"format {repr(got)[:40]}, this profgen reads {FORMAT}")
    missing = [k for k in _REQUIRED if k not in raw]
    if missing:
        raise ParseError(path, EXPECTED, f"missing arrays {missing[:5]}")
    return raw


def is_record_file(path: Path) -> bool:
    """Whether `path` is a zip archive holding this format's arrays (`meta` and `kernel.start`
    among them), from its member names alone: nothing is unpacked."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        return False
    return {"meta.npy", "kernel.start.npy"} <= names


def meta(raw: Raw) -> dict[str, Any]:
    """The file's metadata (format, cupti-python version, demangler, record counts)."""
    return dict(json.loads(str(raw["meta"])))


def read_traces(path: str | Path, stage: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The three traces of one stage's CUPTI file.

    Returns: DataFrames with `schema.GPU_TRACE`, `schema.API_TRACE` and `schema.RANGE_TRACE`
    columns (range unset, repeat -1: see `profiler.analyze.attribution.attribute`).
    Raises: ParseError naming the file.
    """
    raw = read_raw(path)
    try:
        return gpu_trace(raw, stage), api_trace(raw, stage), range_trace(raw, stage)
    except (KeyError, IndexError, ValueError) as exc:
        raise ParseError(path, EXPECTED, f"inconsistent arrays: {exc}") from exc


def _ints(values: np.ndarray, mask: np.ndarray | None = None) -> pd.arrays.IntegerArray:
    values = np.asarray(values, dtype=np.int64)
    return pd.arrays.IntegerArray(values, np.zeros(len(values), bool) if mask is None else mask)


def _missing_ints(n: int) -> pd.arrays.IntegerArray:
    return pd.arrays.IntegerArray(np.zeros(n, np.int64), np.ones(n, bool))


def _strings(table: np.ndarray, codes: np.ndarray) -> Any:
    """`table[codes]` as a string array, names capped (`bounded_names.cap_name`); code -1 is
    missing."""
    objs = np.asarray([bounded_names.cap_name(str(x)) for x in table] + [None], dtype=object)
    return pd.array(objs[np.where(codes < 0, len(table), codes)], dtype="string")


def _as_strings(objs: np.ndarray) -> Any:
    """An object array (None for missing) as a pandas string array."""
    return pd.array(objs, dtype="string")


def _const(text: str, n: int) -> Any:
    return pd.array(np.full(n, text, dtype=object), dtype="string")


def _stacker(raw: Raw, sizes: dict[str, int]) -> Callable[..., np.ndarray]:
    """col(field, *groups): `field` over the rows of every group in `sizes`, 0 where absent."""

    def col(field: str, *groups: str) -> np.ndarray:
        parts = []
        for group, size in sizes.items():
            key = f"{group}.{field}"
            use = (not groups or group in groups) and key in raw
            parts.append(raw[key].astype(np.int64) if use else np.zeros(size, np.int64))
        return np.concatenate(parts)

    return col


def gpu_trace(raw: Raw, stage: str) -> pd.DataFrame:
    """Kernels, copies and memsets as one trace in start order.

    Returns: DataFrame with `schema.GPU_TRACE` columns.
    """
    sizes = {g: len(raw[f"{g}.start"]) for g in ("kernel", "memcpy", "memset")}
    k, m, s = sizes.values()
    col = _stacker(raw, sizes)
    start, end = col("start"), col("end")
    order = np.argsort(start, kind="stable")
    group = np.repeat(np.arange(3), [k, m, s])[order]  # 0 kernel, 1 memcpy, 2 memset
    data: dict[str, Any] = {
        "stage": _const(stage, len(order)),
        "repeat": np.full(len(order), -1, np.int64),
        "kind": pd.array(
            np.array([schema.KERNEL, schema.MEMCPY, schema.MEMSET], object)[group], dtype="string"
        ),
        "name": _names(raw, col, order),
        "start_ns": start[order],
        "end_ns": end[order],
        "duration_ns": (end - start)[order],
    }
    for out, field in (
        ("device", "device_id"),
        ("stream", "stream_id"),
        ("correlation_id", "correlation_id"),
    ):
        data[out] = _ints(col(field)[order])
    not_kernel = group != 0
    for axis in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"):
        data[axis] = _ints(col(axis, "kernel")[order], not_kernel)
    data["registers"] = _ints(col("registers_per_thread", "kernel")[order], not_kernel)
    shared = col("static_shared_memory", "kernel") + col("dynamic_shared_memory", "kernel")
    data["shared_bytes"] = _ints(shared[order], not_kernel)
    data["bytes"] = _ints(col("bytes", "memcpy", "memset")[order], group == 0)
    data.update(_copy_kinds(col, order, group != 1))
    data["range"] = pd.array(np.full(len(order), None, object), dtype="string")
    return schema.validate(pd.DataFrame(data), schema.GPU_TRACE)


def _names(raw: Raw, col: Callable[..., np.ndarray], order: np.ndarray) -> Any:
    """Kernel names from the name table; copies and memsets by their nvprof labels."""
    kernel_names = raw["names.kernel"]
    nk = len(kernel_names)
    labels = [schema.copy_label(COPY_KIND.get(c, UNKNOWN_COPY)) for c in range(11)]
    table = np.concatenate([kernel_names.astype(object), labels, [schema.MEMSET_LABEL]])
    k, m = len(raw["kernel.start"]), len(raw["memcpy.start"])
    s = len(raw["memset.start"])
    codes = np.concatenate(
        [
            raw["kernel.name"].astype(np.int64),
            nk + np.clip(raw["memcpy.copy_kind"].astype(np.int64), 0, 10),
            np.full(s, nk + 11, np.int64),
        ]
    )
    if len(codes) != k + m + s or (k and (codes[:k].min() < 0 or codes[:k].max() >= nk)):
        raise ValueError("kernel.name holds indices outside names.kernel")
    return _strings(table, codes[order])


def _copy_kinds(
    col: Callable[..., np.ndarray], order: np.ndarray, not_copy: np.ndarray
) -> dict[str, Any]:
    """copy_kind, src_kind and dst_kind: from CUPTI's copyKind and memory kinds (copies only)."""
    copy_names = np.array([COPY_KIND.get(c, UNKNOWN_COPY) for c in range(11)], dtype=object)
    mem_names = np.array([None] + [MEMORY_KIND[c] for c in range(1, 8)], dtype=object)
    out = {"copy_kind": copy_names[np.clip(col("copy_kind", "memcpy")[order], 0, 10)]}
    for side in ("src_kind", "dst_kind"):
        out[side] = mem_names[np.clip(col(side, "memcpy")[order], 0, 7)]
    return {
        k: _as_strings(np.asarray(np.where(not_copy, None, v), dtype=object))
        for k, v in out.items()
    }


def api_trace(raw: Raw, stage: str) -> pd.DataFrame:
    """Runtime and driver API calls in start order.

    Returns: DataFrame with `schema.API_TRACE` columns.
    """
    names: list[np.ndarray] = []
    cols: dict[str, list[np.ndarray]] = {
        f: [] for f in ("start", "end", "thread_id", "correlation_id")
    }
    for group in ("runtime", "driver"):
        cbids = raw[f"cbid.{group}"].astype(np.int64)
        table = np.array(
            [bounded_names.cap_name(_VERSION_SUFFIX.sub("", str(x))) for x in raw[f"name.{group}"]],
            dtype=object,
        )
        calls = raw[f"{group}.cbid"].astype(np.int64)
        idx = np.searchsorted(cbids, calls)
        known = idx < len(cbids)
        known[known] = cbids[idx[known]] == calls[known]
        if not known.all():
            raise ValueError(f"{group} callback ids without a name: {np.unique(calls[~known])[:5]}")
        names.append(table[idx] if len(calls) else np.empty(0, object))
        for f in cols:
            cols[f].append(raw[f"{group}.{f}"].astype(np.int64))
    cat = {f: np.concatenate(v) for f, v in cols.items()}
    order = np.argsort(cat["start"], kind="stable")
    data = {
        "stage": _const(stage, len(order)),
        "repeat": np.full(len(order), -1, np.int64),
        "name": pd.array(np.concatenate(names)[order], dtype="string"),
        "start_ns": cat["start"][order],
        "end_ns": cat["end"][order],
        "duration_ns": (cat["end"] - cat["start"])[order],
        "thread": _ints(cat["thread_id"][order]),
        "correlation_id": _ints(cat["correlation_id"][order]),
    }
    return schema.validate(pd.DataFrame(data), schema.API_TRACE)


def pair_ranges(op: np.ndarray, thread: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Match pushes with pops per thread, in recording order.

    Args: op (1 push, 0 pop) and thread of each event, in the order they were recorded.
    Returns: (push index, pop index, level) of every matched pair; a push never popped or a
    pop without a push is left out.
    """
    op = np.asarray(op, np.int64)
    thread = np.asarray(thread, np.int64)
    by_thread = np.argsort(thread, kind="stable")  # recording order kept within a thread
    th = thread[by_thread]
    step = np.where(op[by_thread] == 1, 1, -1)
    total = np.cumsum(step)
    first = np.r_[True, th[1:] != th[:-1]] if len(th) else np.zeros(0, bool)
    depth = total - (total - step)[first][np.cumsum(first) - 1]  # depth after each event
    level = np.where(step == 1, depth - 1, depth)
    pair = np.lexsort((np.arange(len(th)), level, th))  # events of one (thread, level), in order
    p_push, p_lvl, p_th = step[pair] == 1, level[pair], th[pair]
    ok = (
        p_push[:-1]
        & ~p_push[1:]
        & (p_lvl[:-1] == p_lvl[1:])
        & (p_th[:-1] == p_th[1:])
        & (p_lvl[:-1] >= 0)
    )
    pos = np.flatnonzero(ok)
    return by_thread[pair[pos]], by_thread[pair[pos + 1]], p_lvl[pos]


def range_trace(raw: Raw, stage: str) -> pd.DataFrame:
    """profgen's ranges, push and pop paired per thread (nesting gives the level).

    Returns: DataFrame with `schema.RANGE_TRACE` columns, in start order.
    """
    ts = raw["range.ts"].astype(np.int64)
    push, pop, level = pair_ranges(raw["range.op"], raw["range.thread"])
    start, end = ts[push], ts[pop]
    order = np.lexsort((level, start))
    n = len(order)
    data = {
        "stage": _const(stage, n),
        "repeat": np.full(n, -1, np.int64),
        "name": _strings(raw["names.range"], raw["range.name"].astype(np.int64)[push][order]),
        "level": level[order].astype(np.int64),
        "start_ns": start[order],
        "end_ns": end[order],
        "duration_ns": (end - start)[order],
        "gpu_start_ns": _missing_ints(n),
        "gpu_end_ns": _missing_ints(n),
        "gpu_ops": _missing_ints(n),
        "thread": _ints(raw["range.thread"].astype(np.int64)[push][order]),
    }
    return schema.validate(pd.DataFrame(data), schema.RANGE_TRACE)
