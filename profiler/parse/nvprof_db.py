"""nvprof's own profile files (`nvprof -o FILE`, `--export-profile`, the `.nvprof` or `.nvvp` the
Visual Profiler opens): an SQLite database of the CUPTI activity records nvprof collected.

Kernels (`CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL`, or `..._KERNEL` where nvprof serialised them
to collect metrics), copies (`..._MEMCPY`, peer copies in `..._MEMCPY2`) and memsets
(`..._MEMSET`) are read into the arrays of profgen's own CUPTI records (`parse.cupti.Raw`):
nvprof stored CUPTI's fields and enums as they are, so `parse.cupti.gpu_trace` makes the GPU
trace, copy kinds and labels exactly as for profgen's cupti backend. Kernel names are left as
nvprof stored them (mangled); the importer demangles them. API calls are not read: nvprof
stores each by its CUPTI callback id, and the file does not name them.

Opened read-only and immutable (nothing is written beside it); a file SQLite cannot read, or one
without the tables, is refused naming the file.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from urllib.parse import quote

import numpy as np

from profiler.errors import ParseError
from profiler.parse.cupti import Raw

EXPECTED = "an nvprof profile (nvprof -o / --export-profile: an SQLite database of CUPTI records)"
SUFFIXES = (".nvprof", ".nvvp")
SQLITE_MAGIC = b"SQLite format 3\x00"
_TABLE = "CUPTI_ACTIVITY_KIND_"
_HEAD_BYTES = 1 << 16
_KERNEL_FIELDS = {  # Raw field -> nvprof column
    "start": "start",
    "end": "end",
    "device_id": "deviceId",
    "stream_id": "streamId",
    "correlation_id": "correlationId",
    "grid_x": "gridX",
    "grid_y": "gridY",
    "grid_z": "gridZ",
    "block_x": "blockX",
    "block_y": "blockY",
    "block_z": "blockZ",
    "registers_per_thread": "registersPerThread",
    "static_shared_memory": "staticSharedMemory",
    "dynamic_shared_memory": "dynamicSharedMemory",
    "name": "name",
}
_COPY_FIELDS = {
    "start": "start",
    "end": "end",
    "device_id": "deviceId",
    "stream_id": "streamId",
    "correlation_id": "correlationId",
    "bytes": "bytes",
    "copy_kind": "copyKind",
    "src_kind": "srcKind",
    "dst_kind": "dstKind",
}
_MEMSET_FIELDS = {k: v for k, v in _COPY_FIELDS.items() if not k.endswith("kind")}
_GROUPS = (  # Raw group, nvprof tables (those the file has are read, one after the other), fields
    ("kernel", ("CONCURRENT_KERNEL", "KERNEL"), _KERNEL_FIELDS),
    ("memcpy", ("MEMCPY", "MEMCPY2"), _COPY_FIELDS),
    ("memset", ("MEMSET",), _MEMSET_FIELDS),
)


def is_profile(path: Path) -> bool:
    """Whether the regular file at `path` is an nvprof profile: an SQLite database named
    `.nvprof` or `.nvvp`, or one whose schema (in its first 64 KiB) names CUPTI activity
    tables."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError:
        return False
    if not head.startswith(SQLITE_MAGIC):
        return False
    return path.suffix.lower() in SUFFIXES or _TABLE.encode() in head


def read_raw(path: Path) -> Raw:
    """The GPU records of the nvprof profile at `path` as `parse.cupti.Raw` arrays (kernel
    names mangled, as stored).

    Raises: ParseError naming the file when SQLite cannot read it or it has none of nvprof's
        activity tables.
    """
    try:
        with contextlib.closing(_opened(path)) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            raw: Raw = {}
            found = 0
            for group, names, fields in _GROUPS:
                present = [f"{_TABLE}{t}" for t in names if f"{_TABLE}{t}" in tables]
                raw.update(_group(db, group, present, fields))
                found += len(present)
            if not found:
                raise ParseError(path, EXPECTED, "it has no CUPTI activity table of nvprof's")
            raw["names.kernel"] = _kernel_names(db, raw, "StringTable" in tables)
    except sqlite3.Error as exc:
        raise ParseError(path, EXPECTED, f"SQLite cannot read it: {exc}") from None
    return raw


def _opened(path: Path) -> sqlite3.Connection:
    """The database at `path`, read-only and immutable (no journal or lock file is made)."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True)


def _group(
    db: sqlite3.Connection, group: str, tables: list[str], fields: dict[str, str]
) -> dict[str, np.ndarray]:
    """The columns `fields` of the rows of `tables` (one after the other), as `group.field`
    arrays of int64 (NULL read as 0)."""
    columns = ", ".join(f"IFNULL({column}, 0)" for column in fields.values())
    rows: list[tuple[int, ...]] = []
    for table in tables:
        rows.extend(db.execute(f"SELECT {columns} FROM {table}"))  # names: this module's own
    values = np.array(rows, dtype=np.int64).reshape(len(rows), len(fields))
    return {f"{group}.{field}": values[:, k] for k, field in enumerate(fields)}


def _kernel_names(db: sqlite3.Connection, raw: Raw, has_strings: bool) -> np.ndarray:
    """The kernels' names (`names.kernel`), each kernel's `kernel.name` made an index into
    them: nvprof stores a name as an id in its `StringTable`."""
    ids, index = np.unique(raw["kernel.name"], return_inverse=True)
    raw["kernel.name"] = index.astype(np.int64)
    strings = dict(db.execute("SELECT _id_, value FROM StringTable")) if has_strings else {}
    return np.array([str(strings.get(int(i), f"kernel {int(i)}")) for i in ids], dtype=object)
