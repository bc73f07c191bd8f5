"""An Nsight Systems export (`.sqlite`, `nsys export --type sqlite`) read with Python's sqlite3,
for a machine without `nsys`: its CUDA kernels, memory copies and sets, and CUDA API calls,
written as the `cuda_gpu_trace` and `cuda_api_trace` CSV files that `nsys stats --format csv`
writes (the 2025 layout), for `parse.nsys_csv.read_stats_dir`.

The tables read are those nsys's own reports read: `CUPTI_ACTIVITY_KIND_KERNEL`, `_MEMCPY`,
`_MEMSET` and `_RUNTIME`, names through `StringIds`. A copy's name is nsys's, `[CUDA memcpy
Host-to-Device]` (its label in `ENUM_CUDA_MEMCPY_OPER`, or CUPTI's copy kinds where an older
export lacks that table). An API call's name is cut as nsys's `cuda_api_trace` report cuts it
(`cudaMalloc_v3020` -> `cudaMalloc`; `cuGetProcAddress_v2` and `cudaStreamIsCapturing_v10000`
kept: `_unversioned`).

Two things differ from `nsys stats`, both on purpose: bytes are exact (`4.194304` MB where nsys
rounds to `4.194`), and NVTX ranges are not read (their GPU projection is nsys's own), so
`--range` needs nsys.
"""

from __future__ import annotations

import csv
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from profiler.errors import ProfgenError

GPU_TRACE = "cuda_gpu_trace"
API_TRACE = "cuda_api_trace"
_GPU_HEADER = (
    "Start (ns)", "Duration (ns)", "CorrId", "GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ",
    "Reg/Trd", "StcSMem (MB)", "DymSMem (MB)", "Bytes (MB)", "Throughput (MB/s)", "SrcMemKd",
    "DstMemKd", "Device", "Ctx", "GreenCtx", "Strm", "Name",
)  # fmt: skip
_API_HEADER = (
    "Start (ns)", "Duration (ns)", "Name", "Result", "CorrID", "Pid", "Tid", "T-Pri",
    "Thread Name",
)  # fmt: skip
# CUPTI's copy kinds (CUpti_ActivityMemcpyKind), for an export without ENUM_CUDA_MEMCPY_OPER
_COPY_KINDS = {
    0: "Unknown", 1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array",
    4: "Array-to-Host", 5: "Array-to-Array", 6: "Array-to-Device", 7: "Device-to-Array",
    8: "Device-to-Device", 9: "Host-to-Host", 10: "Peer-to-Peer",
}  # fmt: skip
_MEMORY_KINDS = {
    0: "Pageable", 1: "Pinned", 2: "Device", 3: "Array", 4: "Managed", 5: "Device Static",
    6: "Managed Static",
}  # fmt: skip
_ACTIVITY = ("KERNEL", "MEMCPY", "MEMSET", "RUNTIME")


def stats_dir(db: Path, out_dir: Path) -> Path:
    """Write `cuda_gpu_trace.csv` and `cuda_api_trace.csv` of the export `db` into `out_dir`
    (a report with no row is not written); returns `out_dir`.

    Raises: ProfgenError when `db` is no SQLite database, is not an nsys export, or holds no
        CUDA activity (the profile was recorded without CUDA tracing).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            tables = _tables(con)
            if "StringIds" not in tables:
                raise ProfgenError("it is no Nsight Systems export: it has no StringIds table")
            if not any(f"CUPTI_ACTIVITY_KIND_{kind}" in tables for kind in _ACTIVITY):
                raise ProfgenError(
                    "the export holds no CUDA kernel, memory or API activity (recorded without "
                    "`-t cuda`?)"
                )
            names = dict(con.execute("SELECT id, value FROM StringIds"))
            gpu = sorted(_gpu_rows(con, tables, names), key=lambda row: row[0])
            api = sorted(_api_rows(con, tables, names), key=lambda row: row[0])
    except sqlite3.Error as exc:
        raise ProfgenError(f"Python's sqlite3 could not read it ({exc})") from None
    _write(out_dir / f"{GPU_TRACE}.csv", _GPU_HEADER, gpu)
    _write(out_dir / f"{API_TRACE}.csv", _API_HEADER, api)
    return out_dir


def _tables(con: sqlite3.Connection) -> dict[str, set[str]]:
    """The export's tables, each with its columns."""
    names = [row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    return {n: {c[1] for c in con.execute(f"PRAGMA table_info([{n}])")} for n in names}


def _gpu_rows(
    con: sqlite3.Connection, tables: dict[str, set[str]], names: dict[int, str]
) -> Iterable[list[Any]]:
    """The trace's rows: kernels, copies and sets (start not yet in order)."""
    devices = _devices(con, tables)
    kernels = "CUPTI_ACTIVITY_KIND_KERNEL"
    if kernels in tables:
        cols = tables[kernels]
        name = "demangledName" if "demangledName" in cols else "shortName"
        query = (
            f"SELECT start, end, correlationId, gridX, gridY, gridZ, blockX, blockY, blockZ, "
            f"registersPerThread, staticSharedMemory, dynamicSharedMemory, deviceId, contextId, "
            f"{_or_null(cols, 'greenContextId')}, streamId, {name} FROM {kernels}"
        )
        for r in con.execute(query):
            launch = [*r[3:10], _mb(r[10]), _mb(r[11]), "", "", "", ""]
            yield [r[0], r[1] - r[0], r[2], *launch, devices(r[12]), *r[13:16], names.get(r[16])]
    memory = _labels(con, tables, "ENUM_CUDA_MEM_KIND", _MEMORY_KINDS)
    copies = "CUPTI_ACTIVITY_KIND_MEMCPY"
    if copies in tables:
        kinds = _labels(con, tables, "ENUM_CUDA_MEMCPY_OPER", _COPY_KINDS)
        query = (
            f"SELECT {_memory_columns(tables[copies])}, srcKind, dstKind, copyKind FROM {copies}"
        )
        for r in con.execute(query):
            ends = [memory.get(r[8], ""), memory.get(r[9], "")]
            name = f"[CUDA memcpy {kinds.get(r[10], 'Unknown')}]"
            yield _memory_row(r[:8], ends, devices, name)
    sets = "CUPTI_ACTIVITY_KIND_MEMSET"
    if sets in tables:
        query = f"SELECT {_memory_columns(tables[sets])}, memKind FROM {sets}"
        for r in con.execute(query):
            yield _memory_row(r[:8], [memory.get(r[8], ""), ""], devices, "[CUDA memset]")


def _memory_columns(columns: set[str]) -> str:
    """The columns `_memory_row` takes from a copy's or set's table, in its order."""
    green = _or_null(columns, "greenContextId")
    return f"start, end, correlationId, bytes, deviceId, contextId, {green}, streamId"


def _memory_row(
    r: Sequence[Any], ends: list[str], devices: Callable[[int], str], name: str
) -> list[Any]:
    """A copy's or set's trace row from its `_memory_columns` (`r`) and its source and
    destination memory kinds."""
    start, end, corr, size, device, *place = r
    launch = [""] * 9  # (a kernel's grid, block, registers and shared memory)
    return [start, end - start, corr, *launch, *_moved(size, end - start), *ends, devices(device),
            *place, name]  # fmt: skip


def _api_rows(
    con: sqlite3.Connection, tables: dict[str, set[str]], names: dict[int, str]
) -> Iterable[list[Any]]:
    """The CUDA API calls (runtime and driver), their names without the version suffix."""
    runtime = "CUPTI_ACTIVITY_KIND_RUNTIME"
    if runtime not in tables:
        return
    query = f"SELECT start, end, nameId, returnValue, correlationId, globalTid FROM {runtime}"
    for start, end, name, result, corr, tid in con.execute(query):
        call = _unversioned(names.get(name) or "")
        pid, thread = (tid >> 24) & 0xFFFFFF, tid & 0xFFFFFF
        yield [start, end - start, call, result, corr, pid, thread, "", ""]


def _unversioned(name: str) -> str:
    """An API function's name as nsys's `cuda_api_trace` prints it: its last six characters
    dropped when they start `_v` (`cudaMalloc_v3020`), else whole (`cuGetProcAddress_v2`,
    `cudaStreamIsCapturing_v10000`)."""
    return name[:-6] if name[-6:-4] == "_v" else name


def _devices(con: sqlite3.Connection, tables: dict[str, set[str]]) -> Callable[[int], str]:
    """A device's column text, `NVIDIA H100 80GB HBM3 (0)`, by its CUDA id: the GPU that
    `TARGET_INFO_CUDA_DEVICE` maps it to, else the first GPU whose `cuDevice` it is (a WSL
    export lists the render drivers too, under the same `cuDevice`)."""
    named: dict[int, str] = {}
    gpus = tables.get("TARGET_INFO_GPU", set())
    if {"id", "name", "cuDevice"} <= gpus:
        rows = con.execute("SELECT cuDevice, name FROM TARGET_INFO_GPU ORDER BY id DESC")
        named = dict(rows)  # (the first of each cuDevice, by id, written last)
        if {"gpuId", "cudaId"} <= tables.get("TARGET_INFO_CUDA_DEVICE", set()):
            query = (
                "SELECT d.cudaId, g.name FROM TARGET_INFO_CUDA_DEVICE d "
                "JOIN TARGET_INFO_GPU g ON g.id = d.gpuId"
            )
            named.update(dict(con.execute(query)))
    return lambda device: f"{named.get(device, 'GPU')} ({device})"


def _labels(
    con: sqlite3.Connection, tables: dict[str, set[str]], enum: str, known: dict[int, str]
) -> dict[int, str]:
    """An enum's labels by id, from the export's own table where it has one."""
    if enum in tables and {"id", "label"} <= tables[enum]:
        return dict(con.execute(f"SELECT id, label FROM {enum}"))
    return known


def _or_null(columns: set[str], column: str) -> str:
    """`column` where the table has it, else NULL (older exports lack newer columns)."""
    return column if column in columns else "NULL"


def _mb(size: object) -> str:
    """Bytes as MB with every byte kept (`4.194304`); empty for none."""
    return "" if size is None else f"{int(size) / 1e6:.6f}"  # type: ignore[call-overload]


def _moved(size: object, duration_ns: int) -> list[str]:
    """`Bytes (MB)` and `Throughput (MB/s)` of a copy or set of `size` bytes."""
    if size is None:
        return ["", ""]
    rate = int(size) / 1e6 / (duration_ns / 1e9) if duration_ns > 0 else 0.0  # type: ignore[call-overload]
    return [_mb(size), f"{rate:.3f}"]


def _write(path: Path, header: Sequence[str], rows: list[list[Any]]) -> None:
    """One report's CSV, as nsys writes it; none when it has no row."""
    if not rows:
        return
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(["" if cell is None else cell for cell in row] for row in rows)
