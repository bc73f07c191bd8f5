"""Synthetic CUPTI record files in the raw format the cupti backend writes (for tests and the
benchmark): `repeats` stage ranges, each with nested phase ranges, every phase issuing one API
call per GPU op, ops cycling through kernels, copies and memsets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from profiler.collect.cupti import FIELDS, RANGE_FIELDS, write_npz

KERNEL_NAMES = ["conv1_kernel", "pool_kernel", "void fc<float, 16>(const float *, float *, int)"]
RUNTIME = {
    41: "cudaMemcpyAsync_v3020",
    165: "cudaDeviceSynchronize_v3020",
    54: "cudaMemsetAsync_v3020",
}
DRIVER = {307: "cuLaunchKernel"}


def synthetic(
    ops: int, repeats: int = 3, thread: int = 1234, seed: int = 0
) -> dict[str, np.ndarray]:
    """`ops` GPU ops spread over `repeats` repeats of range `m:s` > `phase` (> `inner` for every
    third op); one API call per op, 100 ns before the op starts."""
    rng = np.random.default_rng(seed)
    per = max(1, ops // repeats)
    t0 = 1_000_000
    idx = np.arange(ops)
    call = t0 + idx * 1000 + (idx // per) * 10_000  # 10 us gap between repeats
    start = call + 100
    dur = rng.integers(50, 500, ops)
    kind = idx % 4  # 0, 1 kernel; 2 memcpy; 3 memset
    corr = idx + 1
    out: dict[str, np.ndarray] = {}
    groups = {
        "kernel": np.flatnonzero(kind < 2),
        "memcpy": np.flatnonzero(kind == 2),
        "memset": np.flatnonzero(kind == 3),
    }
    for group, sel in groups.items():
        n = len(sel)
        base = {
            "start": start[sel],
            "end": start[sel] + dur[sel],
            "device_id": np.zeros(n),
            "stream_id": np.full(n, 7),
            "correlation_id": corr[sel],
        }
        extra = {
            "kernel": {
                "grid_x": np.full(n, 40),
                "grid_y": np.ones(n),
                "grid_z": np.ones(n),
                "block_x": np.full(n, 256),
                "block_y": np.ones(n),
                "block_z": np.ones(n),
                "registers_per_thread": np.full(n, 32),
                "static_shared_memory": np.full(n, 1024),
                "dynamic_shared_memory": np.zeros(n),
            },
            "memcpy": {
                "bytes": np.full(n, 4096),
                "copy_kind": np.where(sel % 8 == 2, 1, 2),
                "src_kind": np.where(sel % 8 == 2, 2, 3),
                "dst_kind": np.where(sel % 8 == 2, 3, 1),
            },
            "memset": {"bytes": np.full(n, 512), "memory_kind": np.full(n, 3)},
        }[group]
        for field, dt in FIELDS[group].items():
            out[f"{group}.{field}"] = np.asarray({**base, **extra}[field]).astype(dt)
    out["kernel.name"] = (groups["kernel"] % len(KERNEL_NAMES)).astype("i4")
    out["names.kernel"] = np.array(KERNEL_NAMES)
    out["names.kernel_mangled"] = np.array(KERNEL_NAMES)
    api_cbid = np.where(kind < 2, 307, np.where(kind == 2, 41, 54))
    for group, table in (("runtime", RUNTIME), ("driver", DRIVER)):
        sel = np.flatnonzero(np.isin(api_cbid, list(table)))
        cols = {
            "start": call[sel],
            "end": call[sel] + 50,
            "cbid": api_cbid[sel],
            "thread_id": np.full(len(sel), thread),
            "correlation_id": corr[sel],
        }
        for field, dt in FIELDS[group].items():
            out[f"{group}.{field}"] = np.asarray(cols[field]).astype(dt)
        out[f"cbid.{group}"] = np.array(sorted(table), dtype="u4")
        out[f"name.{group}"] = np.array([table[c] for c in sorted(table)])
    for field, dt in FIELDS["sync"].items():
        out[f"sync.{field}"] = np.empty(0, dt)
    out.update(_ranges(call, idx, per, repeats, ops, thread))
    counts = {g: int(out[f"{g}.start"].size) for g in FIELDS} | {"range": int(out["range.op"].size)}
    out["meta"] = np.asarray(json.dumps({"format": 1, "records": counts, "demangler": "none"}))
    return out


def _ranges(
    call: np.ndarray, idx: np.ndarray, per: int, repeats: int, ops: int, thread: int
) -> dict[str, np.ndarray]:
    """Events: per repeat, push stage; per op, push phase (+ inner every third op), pop(s);
    pop stage. Built with numpy: each op contributes a fixed 4-event slot."""
    rep = np.minimum(idx // per, repeats - 1)
    inner = idx % 3 == 0
    # per op: push phase at call-20, push inner at call-10 (if inner),
    # pop inner at call+60, pop phase at call+80
    ts = np.stack([call - 20, call - 10, call + 60, call + 80], axis=1)
    op = np.tile([1, 1, 0, 0], (ops, 1))
    name = np.tile([1, 2, -1, -1], (ops, 1))
    keep = np.stack([np.ones(ops, bool), inner, inner, np.ones(ops, bool)], axis=1)
    ev_ts, ev_op, ev_name = ts[keep], op[keep], name[keep]
    ev_rep = np.repeat(rep, keep.sum(axis=1))
    firsts = np.searchsorted(ev_rep, np.arange(repeats))
    lasts = np.searchsorted(ev_rep, np.arange(repeats), side="right")
    starts = ev_ts[firsts] - 5
    ends = ev_ts[lasts - 1] + 5
    ev_ts = np.insert(ev_ts, lasts, ends)
    ev_op = np.insert(ev_op, lasts, 0)
    ev_name = np.insert(ev_name, lasts, -1)
    firsts_after = firsts + np.arange(repeats)  # indices shift by the pops inserted before them
    ev_ts = np.insert(ev_ts, firsts_after, starts)
    ev_op = np.insert(ev_op, firsts_after, 1)
    ev_name = np.insert(ev_name, firsts_after, 0)
    cols = {"op": ev_op, "ts": ev_ts, "thread": np.full(len(ev_op), thread), "name": ev_name}
    out = {f"range.{f}": np.asarray(cols[f]).astype(dt) for f, dt in RANGE_FIELDS.items()}
    out["names.range"] = np.array(["m:s", "phase", "inner"])
    return out


def write(path: Path, arrays: dict[str, np.ndarray]) -> Path:
    """Write as the worker does (`profiler.collect.cupti.write_npz`)."""
    write_npz(path, arrays)
    return path
