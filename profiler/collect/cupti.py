"""In-process tracing with NVIDIA's cupti-python: activity records to columns, in bulk.

`CuptiTracer` enables CUPTI activity records for kernels (CONCURRENT_KERNEL), copies (MEMCPY),
memsets, runtime and driver API calls and synchronisation, installs itself as the recorder of
`profiler.ranges` (so profgen's ranges are recorded on CUPTI's clock with their OS thread id),
and on `save` writes everything as one `.npz` of flat arrays (the raw format `profiler.parse.cupti`
reads):

    <group>.<field>      one array per record field; groups: kernel, memcpy, memset, runtime,
                         driver, sync, range
    names.kernel         demangled kernel names (as Nsight Systems shows them); kernel.name
                         holds indices into it; names.kernel_mangled the names CUPTI gave
    names.range          range names; range.name holds indices into it (-1 for a pop)
    cbid.runtime, name.runtime, cbid.driver, name.driver
                         the API function name of every callback id seen
    meta                 JSON: format version, cupti-python version, demangler, record counts

Records reach Python through cupti-python's buffer-completed callback as a list of objects
whose attributes are slow to read one by one (about 3 us each, measured on an H100).
`_columns_fast` reads only each object's address, copies the buffer once and gathers every
field with numpy through cupti-python's own record dtypes (750,000 records in 1.4 s); it checks
itself against the attributes of the first and last record of each kind and falls back to
attribute reads (`_columns_slow`) for a buffer where the layout does not match. cupti-python
itself spends about 8 us per record building those objects, on CUPTI's thread and under the
GIL: the worker therefore calls `flush()` between profiled repeats (outside their timing), and
buffers are large enough (64 MB) for one repeat of the per-image baseline (under 32 MB).
"""

from __future__ import annotations

import ctypes
import json
import threading
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from profiler import ranges
from profiler.collect import demangle

FORMAT = 1
BUFFER_BYTES = 64 * 1024 * 1024  # one repeat of the per-image baseline fits (< 32 MB)
# ActivityKind values (cupti.ActivityKind, stable C ABI) -> record group.
KIND_GROUPS = {10: "kernel", 1: "memcpy", 2: "memset", 5: "runtime", 4: "driver", 38: "sync"}
FIELDS: dict[str, dict[str, str]] = {
    "kernel": {
        "start": "u8",
        "end": "u8",
        "device_id": "u4",
        "stream_id": "u4",
        "correlation_id": "u4",
        "grid_x": "i4",
        "grid_y": "i4",
        "grid_z": "i4",
        "block_x": "i4",
        "block_y": "i4",
        "block_z": "i4",
        "registers_per_thread": "u2",
        "static_shared_memory": "i4",
        "dynamic_shared_memory": "i4",
    },
    "memcpy": {
        "start": "u8",
        "end": "u8",
        "device_id": "u4",
        "stream_id": "u4",
        "correlation_id": "u4",
        "bytes": "u8",
        "copy_kind": "u1",
        "src_kind": "u1",
        "dst_kind": "u1",
    },
    "memset": {
        "start": "u8",
        "end": "u8",
        "device_id": "u4",
        "stream_id": "u4",
        "correlation_id": "u4",
        "bytes": "u8",
        "memory_kind": "u2",
    },
    "runtime": {
        "start": "u8",
        "end": "u8",
        "cbid": "u4",
        "thread_id": "u4",
        "correlation_id": "u4",
    },
    "driver": {"start": "u8", "end": "u8", "cbid": "u4", "thread_id": "u4", "correlation_id": "u4"},
    "sync": {"start": "u8", "end": "u8", "type": "u4", "stream_id": "u4", "correlation_id": "u4"},
}
RANGE_FIELDS = {"op": "u1", "ts": "u8", "thread": "u4", "name": "i4"}  # op: 1 push, 0 pop


class FastPathUnavailable(Exception):
    """The raw-buffer reading does not apply to this buffer (internal; triggers the fallback)."""


class CuptiTracer:
    """Collects CUPTI activity records and profgen ranges between `start()` and `stop()`."""

    def __init__(self, buffer_bytes: int = BUFFER_BYTES) -> None:
        self._cupti: Any = None
        self._buffer_bytes = buffer_bytes
        self._chunks: list[dict[str, dict[str, np.ndarray]]] = []
        self._errors: list[BaseException] = []
        self._lock = threading.Lock()
        self.kernel_names: dict[str, int] = {}
        self._range_names: dict[str, int] = {}
        self._rng: dict[str, list[int]] = {k: [] for k in RANGE_FIELDS}
        self.paths = {"fast": 0, "slow": 0}

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """Enable the activity kinds and start recording ranges.

        Raises: ImportError when cupti-python is missing; cupti.cuptiError when CUPTI refuses.
        """
        from cupti import cupti

        self._cupti = cupti
        cupti.set_thread_id_type(cupti.ActivityThreadIdType.SYSTEM)  # OS thread ids, as ranges
        cupti.activity_register_callbacks(self._requested, self._completed)
        for kind in KIND_GROUPS:
            cupti.activity_enable(cupti.ActivityKind(kind))
        ranges.set_recorder(self)

    def flush(self) -> None:
        """Hand every record collected so far to the buffer callback (call between repeats).

        Raises: the first exception raised inside the buffer callback, if any.
        """
        self._cupti.activity_flush_all(1)
        if self._errors:
            raise self._errors[0]

    def stop(self) -> None:
        """Flush every buffer, disable the kinds and stop recording ranges.

        Raises: the first exception raised inside the buffer callback, if any.
        """
        cupti = self._cupti
        ranges.set_recorder(None)
        cupti.activity_flush_all(1)
        for kind in KIND_GROUPS:
            cupti.activity_disable(cupti.ActivityKind(kind))
        if self._errors:
            raise self._errors[0]

    # -- ranges.Recorder ---------------------------------------------------------------------
    def push(self, name: str) -> None:
        code = self._range_names.setdefault(name, len(self._range_names))
        self._record_range(1, code)

    def pop(self) -> None:
        self._record_range(0, -1)

    def _record_range(self, op: int, code: int) -> None:
        rng = self._rng
        rng["ts"].append(self._cupti.get_timestamp())
        rng["op"].append(op)
        rng["thread"].append(threading.get_native_id())
        rng["name"].append(code)

    # -- CUPTI buffer callbacks ----------------------------------------------------------------
    def _requested(self) -> tuple[int, int]:
        return self._buffer_bytes, 0

    def _completed(self, activities: Sequence[Any]) -> None:
        if not activities:
            return
        try:
            try:
                chunk = _columns_fast(activities, self.kernel_names)
                path = "fast"
            except FastPathUnavailable:
                chunk = _columns_slow(activities, self.kernel_names)
                path = "slow"
            with self._lock:
                self._chunks.append(chunk)
                self.paths[path] += 1
        except BaseException as exc:  # raised again by stop(): CUPTI's thread cannot take it
            self._errors.append(exc)

    # -- output ----------------------------------------------------------------------------------
    def arrays(self) -> dict[str, np.ndarray]:
        """Every collected column, concatenated, plus the name tables (the raw format)."""
        out: dict[str, np.ndarray] = {}
        for group, fields in FIELDS.items():
            cols = [c[group] for c in self._chunks if group in c]
            for field, dt in fields.items():
                out[f"{group}.{field}"] = (
                    np.concatenate([c[field] for c in cols]) if cols else np.empty(0, dt)
                )
            if group == "kernel":
                out["kernel.name"] = (
                    np.concatenate([c["name"] for c in cols]) if cols else np.empty(0, "i4")
                )
        for field, dt in RANGE_FIELDS.items():
            out[f"range.{field}"] = np.asarray(self._rng[field], dtype=dt)
        out["names.range"] = _str_array(self._range_names)
        mangled = _str_array(self.kernel_names)
        out["names.kernel_mangled"] = mangled
        shown, method = demangle.demangle(list(mangled))
        out["names.kernel"] = np.asarray(shown, dtype=str) if shown else np.empty(0, "U1")
        for group, domain in (("runtime", "RUNTIME_API"), ("driver", "DRIVER_API")):
            cbids = np.unique(out[f"{group}.cbid"])
            dom = getattr(self._cupti.CallbackDomain, domain)
            names = [self._cupti.get_callback_name(dom, int(c)) for c in cbids]
            out[f"cbid.{group}"] = cbids.astype("u4")
            out[f"name.{group}"] = np.asarray(names, dtype=str) if names else np.empty(0, "U1")
        out["meta"] = np.asarray(json.dumps(self._meta(out, method)))
        return out

    def save(self, path: Path) -> dict[str, int]:
        """Write the raw `.npz` (atomically) and return the record count of each group."""
        arrays = self.arrays()
        write_npz(path, arrays)
        return dict(json.loads(str(arrays["meta"]))["records"])

    def _meta(self, out: dict[str, np.ndarray], demangler: str) -> dict[str, Any]:
        from importlib import metadata

        try:
            version: str | None = metadata.version("cupti-python")
        except metadata.PackageNotFoundError:  # a stand-in module (tests)
            version = None
        return {
            "format": FORMAT,
            "clock": "cupti.get_timestamp (ns)",
            "cupti_python": version,
            "demangler": demangler,
            "buffers": dict(self.paths),
            "records": {g: int(out[f"{g}.start"].size) for g in FIELDS}
            | {"range": len(self._rng["op"])},
        }


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write `arrays` as an `.npz` that `np.load` reads, atomically (a temporary file renamed).

    Deflate at level 1: about 6x faster than `np.savez_compressed` for the same size class.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, array in arrays.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.asanyarray(array), allow_pickle=False)
    tmp.replace(path)


def _str_array(codes: dict[str, int]) -> np.ndarray:
    names = sorted(codes, key=codes.__getitem__)
    return np.asarray(names, dtype=str) if names else np.empty(0, "U1")


def _columns_slow(acts: Sequence[Any], names: dict[str, int]) -> dict[str, dict[str, np.ndarray]]:
    """Columns from the record objects' attributes (about 3 us per attribute)."""
    by_group: dict[str, list[Any]] = {}
    for a in acts:
        group = KIND_GROUPS.get(int(a.kind))
        if group:
            by_group.setdefault(group, []).append(a)
    out: dict[str, dict[str, np.ndarray]] = {}
    for group, recs in by_group.items():
        cols = {
            f: np.fromiter((getattr(a, f) for a in recs), dtype=dt, count=len(recs))
            for f, dt in FIELDS[group].items()
        }
        if group == "kernel":
            cols["name"] = np.fromiter(
                (names.setdefault(a.name, len(names)) for a in recs), dtype="i4", count=len(recs)
            )
        out[group] = cols
    return out


def _columns_fast(acts: Sequence[Any], names: dict[str, int]) -> dict[str, dict[str, np.ndarray]]:
    """Columns gathered with numpy from one copy of the activity buffer.

    Raises: FastPathUnavailable when an address, a dtype or a check does not fit.
    """
    try:
        ptrs = np.fromiter((a.ptr for a in acts), dtype=np.uint64, count=len(acts))
    except (AttributeError, TypeError, ValueError) as exc:
        raise FastPathUnavailable(f"record addresses: {exc}") from exc
    base = int(ptrs.min())
    offs = (ptrs - np.uint64(base)).astype(np.int64)
    if (offs % 8).any():
        raise FastPathUnavailable("records are not 8-byte aligned")
    top = int(ptrs.argmax())
    span = int(offs[top]) + _dtype_of(acts[top]).itemsize
    raw = np.zeros((span + 7) // 8 * 8, dtype=np.uint8)
    ctypes.memmove(raw.ctypes.data, base, span)
    kinds = raw.view(np.uint32)[offs // 4]
    out: dict[str, dict[str, np.ndarray]] = {}
    for kind in np.unique(kinds):
        group = KIND_GROUPS.get(int(kind))
        if group is None:
            continue
        sel = np.flatnonzero(kinds == kind)
        dtype = _dtype_of(acts[int(sel[0])])
        cols = {f: _gather(raw, offs[sel], dtype, f).astype(dt) for f, dt in FIELDS[group].items()}
        for i in (int(sel[0]), int(sel[-1])):
            _check(acts[i], cols, int(np.searchsorted(sel, i)))
        if group == "kernel":
            cols["name"] = _kernel_names(raw, offs[sel], dtype, acts, sel, names)
        out[group] = cols
    return out


def _dtype_of(record: Any) -> np.dtype:
    """cupti-python's numpy dtype of a record's struct.

    `ActivityKernel10` -> `activity_kernel10_dtype`.
    """
    from cupti import cupti

    cls = type(record).__name__
    snake = "".join("_" + c.lower() if c.isupper() else c for c in cls).lstrip("_")
    dtype = getattr(cupti, f"{snake.replace('_a_p_i', '_api')}_dtype", None)
    if not isinstance(dtype, np.dtype) or dtype.fields is None:
        raise FastPathUnavailable(f"no record dtype for {cls}")
    return dtype


def _gather(raw: np.ndarray, offs: np.ndarray, dtype: np.dtype, field: str) -> np.ndarray:
    fields: dict[str, Any] = dict(dtype.fields or {})
    if field not in fields:
        raise FastPathUnavailable(f"{dtype} has no field {field!r}")
    ftype, foff = fields[field][:2]
    if ftype.kind not in "iu" or foff % ftype.itemsize:
        raise FastPathUnavailable(f"field {field!r} is {ftype} at offset {foff}")
    view = raw.view(ftype)
    return view[(offs + foff) // ftype.itemsize]


def _check(record: Any, cols: dict[str, np.ndarray], i: int) -> None:
    for field, values in cols.items():
        if int(getattr(record, field)) != int(values[i]):
            raise FastPathUnavailable(
                f"field {field!r}: {values[i]} read, {getattr(record, field)} expected"
            )


def _kernel_names(
    raw: np.ndarray,
    offs: np.ndarray,
    dtype: np.dtype,
    acts: Sequence[Any],
    sel: np.ndarray,
    names: dict[str, int],
) -> np.ndarray:
    """Name codes of kernel records: CUPTI shares one string per kernel, so each distinct
    pointer is read once (checked against the attribute of one record that uses it)."""
    try:
        ptrs = _gather(raw, offs, dtype, "name")
    except FastPathUnavailable:  # names only by attribute; every other field stays fast
        return np.fromiter(
            (names.setdefault(acts[int(i)].name, len(names)) for i in sel),
            dtype="i4",
            count=len(sel),
        )
    uniq, first, inverse = np.unique(ptrs, return_index=True, return_inverse=True)
    codes = np.empty(len(uniq), dtype="i4")
    for j in np.argsort(first, kind="stable").tolist():  # codes in order of first appearance
        ptr, at = int(uniq[j]), int(first[j])
        text = ctypes.string_at(int(ptr)).decode("utf-8", errors="replace") if ptr else ""
        if text != acts[int(sel[at])].name:
            raise FastPathUnavailable("kernel name pointer does not match the record's name")
        codes[j] = names.setdefault(text, len(names))
    return codes[inverse.reshape(-1)]


def selftest() -> dict[str, Any]:
    """Trace a tiny CuPy kernel and copy inside a range; what `profgen doctor` runs (in a child).

    Returns: record counts and the names seen. Raises: whatever CuPy or CUPTI raises.
    """
    import cupy as cp

    x = cp.arange(1 << 16, dtype=cp.float32)
    (x * 2).sum()  # compile and load before tracing
    cp.cuda.runtime.deviceSynchronize()
    tracer = CuptiTracer(buffer_bytes=1 << 20)
    tracer.start()
    with ranges.range("doctor"):
        y = cp.asarray(np.ones(1 << 16, np.float32))
        (x * y).sum().get()
    cp.cuda.runtime.deviceSynchronize()
    tracer.stop()
    arrays = tracer.arrays()
    meta = json.loads(str(arrays["meta"]))
    return {
        "records": meta["records"],
        "kernels": sorted(set(arrays["names.kernel"].tolist())),
        "buffers": meta["buffers"],
        "cupti_python": meta["cupti_python"],
    }


if __name__ == "__main__":
    print(json.dumps(selftest()))
