"""What a GPU operation is, from the fields the tools give: kernel, copy or memset; copy direction;
memory kinds; device ordinal.

A row is a kernel when it has a grid; a copy when it moves bytes between a source and a
destination memory kind; a memset when it has bytes and one memory kind only (that is how nsys
and nvprof fill these columns). Names are used only for the copy direction, which both tools
write only into the label (`[CUDA memcpy Host-to-Device]`, `[CUDA memcpy HtoD]`; the memory
kinds decide when the label does not), and for old nvprof traces that have no memory-kind
columns at all.

Everything here works on the distinct values of a column (a categorical's categories) and
integer codes, never per row, so a million-row trace costs a few vectorised passes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from profiler import schema

KINDS = (schema.KERNEL, schema.MEMCPY, schema.MEMSET)
# nsys spells directions out; array memory counts as device memory.
_NSYS_DIRECTIONS = {
    "host-to-device": "HtoD",
    "device-to-host": "DtoH",
    "device-to-device": "DtoD",
    "host-to-host": "HtoH",
    "peer-to-peer": "PtoP",
    "host-to-array": "HtoD",
    "array-to-host": "DtoH",
    "array-to-array": "DtoD",
    "array-to-device": "DtoD",
    "device-to-array": "DtoD",
}
_NVPROF_DIRECTIONS = {
    "HtoD": "HtoD",
    "DtoH": "DtoH",
    "DtoD": "DtoD",
    "HtoH": "HtoH",
    "PtoP": "PtoP",
    "HtoA": "HtoD",
    "AtoH": "DtoH",
    "AtoA": "DtoD",
    "AtoD": "DtoD",
    "DtoA": "DtoD",
}
# nsys's copies to and from CUDA arrays, by the short label nvprof prints for them: a copy keeps
# its array in its name (its direction, above, counts array memory as device memory)
_NSYS_ARRAY_LABELS = {
    "host-to-array": "HtoA",
    "array-to-host": "AtoH",
    "array-to-array": "AtoA",
    "array-to-device": "AtoD",
    "device-to-array": "DtoA",
}
_COPY_LABEL = re.compile(r"^\[CUDA memcpy (?P<dir>[A-Za-z-]+)\]$")
# nsys's managed-memory migrations: `[CUDA memcpy Unified Host-to-Device]` (its copy kinds
# `Unified Host-to-Device`, `Unified Device-to-Host`, `Unified Device-to-Device`, as a real
# report's ENUM_CUDA_MEMCPY_OPER names them: tests/data/nsys/2025.3.2/qiyue-report1.sqlite) and
# `[CUDA Unified Memory memcpy HtoD]` (2020.x). Their labels state the direction; they keep
# their names, as they are no copies the program asked for.
_UNIFIED_LABEL = re.compile(
    r"^\[(?:CUDA memcpy Unified|CUDA Unified Memory memcpy) (?P<dir>[A-Za-z-]+)\]$"
)
_DEVICE_ORDINAL = re.compile(r"\((\d+)\)\s*$")
_MEMORY_KINDS = {
    "pageable": "pageable",
    "pinned": "pinned",
    "device": "device",
    "managed": "managed",
    "array": "device",
    "device static": "device",
    "managed static": "managed",
}
_HOST_OR_DEVICE = {"pageable": "H", "pinned": "H", "device": "D"}


def copy_direction(label: object) -> str | None:
    """`[CUDA memcpy Host-to-Device]`, `[CUDA memcpy HtoD]` or nsys's managed-memory migration
    `[CUDA memcpy Unified Host-to-Device]` -> `HtoD`; anything else -> None."""
    if not isinstance(label, str):
        return None
    match = _COPY_LABEL.match(label.strip()) or _UNIFIED_LABEL.match(label.strip())
    if match is None:
        return None
    text = match["dir"]
    return _NVPROF_DIRECTIONS.get(text) or _NSYS_DIRECTIONS.get(text.lower())


def copy_name(label: object) -> str | None:
    """A copy's name as a summary row shows it: nvprof's label as printed (`[CUDA memcpy HtoD]`,
    `[CUDA memcpy HtoA]`), nsys's in nvprof's spelling (`[CUDA memcpy Host-to-Device]` ->
    `[CUDA memcpy HtoD]`, `Host-to-Array` -> `HtoA`); None for a label that is no copy's.

    A copy to or from a CUDA array keeps its name: its direction (`copy_direction`) is that of
    device memory, and naming it so would give a summary two `[CUDA memcpy HtoD]` rows; so
    does a managed-memory migration (`[CUDA memcpy Unified Host-to-Device]`)."""
    direction = copy_direction(label)
    if direction is None or not isinstance(label, str):
        return None
    if is_unified_label(label):
        return label.strip()
    text = label.strip()[len("[CUDA memcpy ") : -1]
    short = text if text in _NVPROF_DIRECTIONS else _NSYS_ARRAY_LABELS.get(text.lower(), direction)
    return schema.copy_label(short)


def is_unified_label(label: object) -> bool:
    """True for nsys's managed-memory migrations (`[CUDA memcpy Unified Host-to-Device]`)."""
    return isinstance(label, str) and _UNIFIED_LABEL.match(label.strip()) is not None


def is_memset_label(label: object) -> bool:
    """True for `[CUDA memset]`."""
    return isinstance(label, str) and label.strip() == schema.MEMSET_LABEL


def memory_kind(text: object) -> str | None:
    """`Pinned` -> `pinned`, `Device` -> `device`, ...; other spellings are lower-cased."""
    if not isinstance(text, str) or not text.strip():
        return None
    key = text.strip().lower()
    return _MEMORY_KINDS.get(key, key)


def device_ordinal(text: object) -> int | None:
    """`NVIDIA H100 80GB HBM3 (0)` -> 0; a bare number -> itself; anything else -> None."""
    if not isinstance(text, str):
        return None
    match = _DEVICE_ORDINAL.search(text)
    if match:
        return int(match.group(1))
    return int(text) if text.strip().isdecimal() else None  # ("²" is a digit, not decimal)


def as_category(series: pd.Series) -> pd.Series:
    """`series` as a categorical (a no-op for one)."""
    return series if isinstance(series.dtype, pd.CategoricalDtype) else series.astype("category")


def lookup(series: pd.Series, func: Callable[[object], object]) -> tuple[list[object], np.ndarray]:
    """`func` of each distinct value, and each row's index into that list (-1 for NA rows)."""
    cat = as_category(series)
    return [func(v) for v in cat.cat.categories], cat.cat.codes.to_numpy()


def strings(values: Sequence[object], codes: np.ndarray, index: pd.Index) -> pd.Series:
    """A `string` Series whose row i is `values[codes[i]]`; code -1 or a None value -> NA."""
    cells = np.array([pd.NA if v is None else v for v in values] + [pd.NA], dtype=object)
    pool = pd.array(cells, dtype="string")  # NA last, where numpy's take puts code -1
    return pd.Series(pool.take(codes), index=index, copy=False)  # (a copy costs a pass)


def map_strings(series: pd.Series, func: Callable[[object], str | None]) -> pd.Series:
    """`func` applied to each distinct value of `series`, as a `string` Series."""
    values, codes = lookup(series, func)
    return strings(values, codes, series.index)


def map_ints(series: pd.Series, func: Callable[[object], int | None]) -> pd.Series:
    """`func` applied to each distinct value of `series`, as an `Int64` Series."""
    values, codes = lookup(series, func)
    pool = np.array([0 if v is None else v for v in values] + [0], dtype="int64")
    missing = np.array([v is None for v in values] + [True])  # (code -1 takes the last)
    ints = pd.arrays.IntegerArray(pool[codes], missing[codes])
    return pd.Series(ints, index=series.index, copy=False)


def kinds(
    name: pd.Series,
    grid_x: pd.Series,
    nbytes: pd.Series,
    src: pd.Series | None,
    dst: pd.Series | None,
) -> np.ndarray:
    """Each row's index into `KINDS` (-1: no kernel, copy or memset) of a GPU trace.

    Args:
        name: the tool's name of each row (kernel name or copy/memset label).
        grid_x: grid size (NA for copies and memsets).
        nbytes: bytes moved (NA for kernels).
        src: source memory kind (for a memset: its memory kind), or None when the tool has
            no such column (nvprof before CUDA 8).
        dst: destination memory kind, or None when the tool has no such column.
    """
    is_kernel = grid_x.notna().to_numpy()
    has_bytes = nbytes.notna().to_numpy() & ~is_kernel
    if src is not None and dst is not None:
        has_src = src.notna().to_numpy()
        two_kinds = has_src & dst.notna().to_numpy()
        is_copy, is_set = has_bytes & two_kinds, has_bytes & has_src & ~two_kinds
    else:
        cats, ncodes = lookup(name, lambda v: v)
        memset = np.array([is_memset_label(c) for c in cats] + [False])[ncodes]
        is_copy, is_set = has_bytes & ~memset, has_bytes & memset
    codes: np.ndarray = np.select([is_kernel, is_copy, is_set], [0, 1, 2], -1)
    return codes


def describe(
    name: pd.Series, kind: np.ndarray, src: pd.Series | None, dst: pd.Series | None
) -> dict[str, pd.Series]:
    """Kind, display name, copy direction and memory kinds of every row of a GPU trace.

    Args:
        name, src, dst: as `kinds`'.
        kind: `kinds` of the rows.

    Returns: `string` Series by column: `kind` (`kernel`, `memcpy`, `memset`, NA when none),
        `name` (copies as `[CUDA memcpy HtoD]`, memsets as `[CUDA memset]`), `copy_kind`,
        `src_kind`, `dst_kind`.
    """
    cats, ncodes = lookup(name, lambda v: v)
    direction = _direction_codes(ncodes, cats, kind == 1, src, dst)
    labels = [schema.copy_label(k) for k in schema.COPY_KINDS] + [schema.MEMSET_LABEL]
    unified = np.array([is_unified_label(c) for c in cats] + [False])[ncodes]  # keep their names
    final = np.where((kind == 1) & (direction >= 0) & ~unified, len(cats) + direction, ncodes)
    final = np.where(kind == 2, len(cats) + len(schema.COPY_KINDS), final)
    copies_or_sets = kind >= 1
    return {
        "kind": strings(KINDS, kind, name.index),
        "name": strings(cats + labels, final, name.index),
        "copy_kind": strings(schema.COPY_KINDS, np.where(kind == 1, direction, -1), name.index),
        "src_kind": _kinds(src, copies_or_sets, name.index),
        "dst_kind": _kinds(dst, kind == 1, name.index),
    }


def _direction_codes(
    ncodes: np.ndarray,
    cats: list[object],
    copies: np.ndarray,
    src: pd.Series | None,
    dst: pd.Series | None,
) -> np.ndarray:
    """Index into `schema.COPY_KINDS` per row: from the label, else from the memory kinds."""
    index = {k: i for i, k in enumerate(schema.COPY_KINDS)}
    by_label: np.ndarray = np.array([index.get(copy_direction(c) or "", -1) for c in cats] + [-1])
    by_label = by_label[ncodes]
    unknown = copies & (by_label < 0)
    if not unknown.any() or src is None or dst is None:
        return by_label
    s_vals, s_codes = lookup(src, lambda v: _HOST_OR_DEVICE.get(memory_kind(v) or ""))
    d_vals, d_codes = lookup(dst, lambda v: _HOST_OR_DEVICE.get(memory_kind(v) or ""))
    s = np.array(s_vals + [None], dtype=object)[np.where(s_codes < 0, len(s_vals), s_codes)]
    d = np.array(d_vals + [None], dtype=object)[np.where(d_codes < 0, len(d_vals), d_codes)]
    guess = [
        index.get(f"{a}to{b}", -1) if a and b else -1
        for a, b in zip(s[unknown], d[unknown], strict=True)
    ]
    out = by_label.copy()
    out[unknown] = guess
    return out


def _kinds(kinds: pd.Series | None, rows: np.ndarray, index: pd.Index) -> pd.Series:
    if kinds is None:
        return strings([], np.full(len(index), -1), index)
    values, codes = lookup(kinds, memory_kind)
    return strings(values, np.where(rows, codes, -1), index)


_TRACE_INTS = (
    "grid_x",
    "grid_y",
    "grid_z",
    "block_x",
    "block_y",
    "block_z",
    "registers",
    "bytes",
    "stream",
)


def trace_table(f: pd.DataFrame, stage: str) -> pd.DataFrame:
    """A parsed trace's fields -> `schema.GPU_TRACE`, in start order.

    Args:
        f: one row per GPU operation with fields `start`, `duration` (ns) and `name`, and any of
            `grid_x`.. `block_z`, `registers`, `ssmem`, `dsmem`, `bytes` (bytes), `stream`,
            `corr`, `device` (the tool's device label), `src`, `dst` (memory kinds).
        stage: the stage key of every row.

    Returns: DataFrame with `schema.GPU_TRACE` columns; rows that are no kernel, copy or memset
        are dropped; `range` is missing and `repeat` -1 (attribution fills them later).
    """
    order = _start_order(f["start"])
    if order is not None:  # sort the fields, not the table: its strings are then built sorted
        f = f.take(order).set_axis(pd.RangeIndex(len(f)), axis=0)
    na = pd.Series(pd.NA, index=f.index, dtype="Int64")

    def col(name: str) -> pd.Series:
        return f[name] if name in f else na

    name = as_category(f["name"])
    kind = kinds(name, col("grid_x"), col("bytes"), f.get("src"), f.get("dst"))
    ops = describe(name, kind, f.get("src"), f.get("dst"))
    shared = (col("ssmem").fillna(0) + col("dsmem").fillna(0)).where(
        col("ssmem").notna() | col("dsmem").notna()
    )
    fields = {
        "stage": strings([stage], np.zeros(len(f), dtype="int64"), f.index),
        "repeat": -1,
        **ops,
        "start_ns": f["start"],
        "end_ns": f["start"] + f["duration"],
        "duration_ns": f["duration"],
        "device": map_ints(f["device"], device_ordinal) if "device" in f else na,
        "correlation_id": col("corr"),
        "shared_bytes": shared,
        **{name: col(name) for name in _TRACE_INTS},
    }
    out = pd.DataFrame(fields, index=f.index, copy=False)
    known = kind >= 0
    out = schema.conform(out if known.all() else out[known], schema.GPU_TRACE, fill=("range",))
    if not out["start_ns"].is_monotonic_increasing:
        out = out.sort_values("start_ns", kind="stable", ignore_index=True)
    return schema.validate(out, schema.GPU_TRACE)


def _start_order(start: pd.Series) -> np.ndarray | None:
    """The rows in start order (a stable sort, as `trace_table`'s) when the start times are
    whole numbers, none missing, out of order; else None. Rows dropped later keep the order of
    the others: the table is then as if sorted after the drop (`schema.conform` renumbers it)."""
    if str(start.dtype) not in ("int64", "Int64") or start.isna().any():
        return None
    values = start.to_numpy(dtype="int64")
    if len(values) < 2 or bool((values[1:] >= values[:-1]).all()):
        return None
    order: np.ndarray = np.argsort(values, kind="stable")
    return order
