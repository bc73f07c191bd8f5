"""The CUPTI tracer's record handling, without a GPU: records laid out in a real memory buffer
with struct dtypes like cupti-python's, read by the fast (buffer) path and the slow (attribute)
path, which must agree; a layout that does not match falls back to the slow path."""

from __future__ import annotations

import json
import sys
import types

import numpy as np
import pytest

from profiler import ranges
from profiler.collect import cupti as C
from profiler.parse import cupti as P

KERNEL = np.dtype(
    {
        "names": [
            "kind",
            "start",
            "end",
            "device_id",
            "stream_id",
            "correlation_id",
            "grid_x",
            "grid_y",
            "grid_z",
            "block_x",
            "block_y",
            "block_z",
            "registers_per_thread",
            "static_shared_memory",
            "dynamic_shared_memory",
            "name",
        ],
        "formats": [
            "<u4",
            "<u8",
            "<u8",
            "<u4",
            "<u4",
            "<u4",
            "<i4",
            "<i4",
            "<i4",
            "<i4",
            "<i4",
            "<i4",
            "<u2",
            "<i4",
            "<i4",
            "<u8",
        ],
        "offsets": [0, 8, 16, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68, 72],
        "itemsize": 88,
    }
)
MEMCPY = np.dtype(
    {
        "names": [
            "kind",
            "copy_kind",
            "src_kind",
            "dst_kind",
            "bytes",
            "start",
            "end",
            "device_id",
            "stream_id",
            "correlation_id",
        ],
        "formats": ["<u4", "u1", "u1", "u1", "<u8", "<u8", "<u8", "<u4", "<u4", "<u4"],
        "offsets": [0, 4, 5, 6, 8, 16, 24, 32, 36, 40],
        "itemsize": 48,
    }
)
API = np.dtype(
    {
        "names": ["kind", "cbid", "start", "end", "process_id", "thread_id", "correlation_id"],
        "formats": ["<u4", "<u4", "<u8", "<u8", "<u4", "<u4", "<u4"],
        "offsets": [0, 4, 8, 16, 24, 28, 32],
        "itemsize": 40,
    }
)
NAMES = [b"conv1_kernel\0", b"_Z5scaleIfEvPT_S0_i\0"]


class Record:
    """Like cupti-python's record objects: a `ptr` and one attribute per struct field."""

    def __init__(self, buf: np.ndarray, offset: int, dtype: np.dtype, name_of: dict[int, str]):
        self.ptr = buf.ctypes.data + offset
        rec = buf[offset : offset + dtype.itemsize].view(dtype)[0]
        for field in dtype.names:
            value = int(rec[field])
            setattr(self, field, name_of.get(value, "") if field == "name" else value)


def fake_cupti() -> types.SimpleNamespace:
    return types.SimpleNamespace(
        activity_kernel10_dtype=KERNEL,
        activity_memcpy6_dtype=MEMCPY,
        activity_api_dtype=API,
        CallbackDomain=types.SimpleNamespace(RUNTIME_API=2, DRIVER_API=1),
        get_callback_name=lambda domain, cbid: {
            (2, 41): "cudaMemcpyAsync_v3020",
            (1, 307): "cuLaunchKernel",
        }[(int(domain), cbid)],
        get_timestamp=iter(range(1000, 10**9, 10)).__next__,
    )


@pytest.fixture
def cupti_module(monkeypatch):
    fake = fake_cupti()
    monkeypatch.setitem(sys.modules, "cupti", types.SimpleNamespace(cupti=fake))
    return fake


@pytest.fixture
def records():
    """A buffer of 30 records: kernels, copies, runtime and driver API calls, interleaved."""
    name_buf = [np.frombuffer(n, np.uint8).copy() for n in NAMES]
    name_of = {a.ctypes.data: n[:-1].decode() for a, n in zip(name_buf, NAMES, strict=False)}
    ptrs = list(name_of)
    buf = np.zeros(4096, np.uint8)
    classes = {
        10: ("ActivityKernel10", KERNEL),
        1: ("ActivityMemcpy6", MEMCPY),
        5: ("ActivityAPI", API),
        4: ("ActivityAPI", API),
    }
    acts, offset = [], 0
    for i in range(30):
        kind = (10, 5, 1, 4, 10)[i % 5]
        cls_name, dtype = classes[kind]
        rec = np.zeros(1, dtype)
        rec["kind"], rec["start"], rec["end"], rec["correlation_id"] = (
            kind,
            1000 + 10 * i,
            1005 + 10 * i,
            i,
        )
        if kind == 10:
            rec["grid_x"], rec["block_x"], rec["name"], rec["stream_id"] = (
                8 + i,
                256,
                ptrs[i % 2],
                7,
            )
            rec["registers_per_thread"], rec["static_shared_memory"] = 32, 1024
        elif kind == 1:
            rec["copy_kind"], rec["src_kind"], rec["dst_kind"], rec["bytes"] = 1, 2, 3, 4096 * i
        else:
            rec["cbid"], rec["thread_id"] = (41 if kind == 5 else 307), 77
        buf[offset : offset + dtype.itemsize] = rec.view(np.uint8)
        acts.append(type(cls_name, (Record,), {})(buf, offset, dtype, name_of))
        offset += dtype.itemsize
    return acts, (buf, name_buf)  # keep the buffers alive


def test_fast_and_slow_paths_agree(cupti_module, records):
    acts, _keep = records
    fast_names: dict[str, int] = {}
    slow_names: dict[str, int] = {}
    fast = C._columns_fast(acts, fast_names)
    slow = C._columns_slow(acts, slow_names)
    assert set(fast) == set(slow) == {"kernel", "memcpy", "runtime", "driver"}
    for group in slow:
        for field in slow[group]:
            np.testing.assert_array_equal(
                fast[group][field], slow[group][field], err_msg=f"{group}.{field}"
            )
    assert fast_names == slow_names == {"conv1_kernel": 0, "_Z5scaleIfEvPT_S0_i": 1}
    assert list(fast["kernel"]["grid_x"]) == [8 + i for i in range(30) if i % 5 in (0, 4)]
    assert list(fast["memcpy"]["bytes"]) == [4096 * i for i in range(2, 30, 5)]


def test_layout_mismatch_falls_back_to_attributes(cupti_module, records):
    acts, _keep = records
    acts[-1].start += 1  # the memory no longer says what the object says
    with pytest.raises(C.FastPathUnavailable):
        C._columns_fast(acts, {})
    tracer = C.CuptiTracer()
    tracer._completed(acts)
    assert tracer.paths == {"fast": 0, "slow": 1}
    assert not tracer._errors


def test_missing_dtype_falls_back(cupti_module, records):
    acts, _keep = records
    del cupti_module.activity_memcpy6_dtype
    with pytest.raises(C.FastPathUnavailable, match="ActivityMemcpy6"):
        C._columns_fast(acts, {})


def test_error_in_callback_is_raised_by_stop(cupti_module):
    cupti_module.activity_flush_all = lambda flag: None
    cupti_module.activity_disable = lambda kind: None
    cupti_module.ActivityKind = int
    tracer = C.CuptiTracer()
    tracer._cupti = cupti_module
    tracer._completed([object()])  # no ptr, no kind: the slow path cannot read it either
    with pytest.raises(AttributeError):
        tracer.flush()
    with pytest.raises(AttributeError):
        tracer.stop()


def test_tracer_writes_the_raw_format(cupti_module, records, tmp_path):
    acts, _keep = records
    tracer = C.CuptiTracer()
    tracer._cupti = cupti_module
    tracer._completed(acts[:17])
    tracer._completed(acts[17:])  # two buffers
    ranges.set_recorder(tracer)
    try:
        with ranges.range("m:s"):
            with ranges.range("conv1"):
                pass
    finally:
        ranges.set_recorder(None)
    counts = tracer.save(tmp_path / "cupti.npz")
    assert counts["kernel"] == 12 and counts["memcpy"] == 6 and counts["runtime"] == 6
    assert counts["range"] == 4
    raw = P.read_raw(tmp_path / "cupti.npz")
    meta = json.loads(str(raw["meta"]))
    assert meta["buffers"] == {"fast": 2, "slow": 0}
    assert raw["names.kernel"][1] in (
        "void scale<float>(T1 *, T1, int)",
        "void scale<float>(float*, float, int)",
    )
    gpu, api, rng = P.read_traces(tmp_path / "cupti.npz", "s")
    assert list(api["name"].unique()) == ["cuLaunchKernel", "cudaMemcpyAsync"] or set(
        api["name"]
    ) == {"cuLaunchKernel", "cudaMemcpyAsync"}
    assert list(rng["name"]) == ["m:s", "conv1"] and list(rng["level"]) == [0, 1]
    assert gpu["start_ns"].is_monotonic_increasing and len(gpu) == 18
