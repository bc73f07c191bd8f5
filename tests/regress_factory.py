"""Synthetic LeNet runs for the regression tests and benchmarks (clearly not measured).

`make_run` builds a `store.Run` whose tables look like a LeNet sweep on an H100: stage times
around what the study's stages take for 10,000 items, each timed repeat drawn with a seeded
RNG (log-normal jitter of about 1%, and now and then a slow outlier, as a shared machine gives),
and a GPU trace of a few launches per kernel per profiled repeat (jitter about 0.5%). Nothing
here is copied from profgen's own output: every number is built from the constants below.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from profiler import schema
from profiler.store import Run

# stage key -> host time for 10,000 images (ns), roughly an H100's.
STAGE_NS: dict[str, float] = {
    "torch_gpu": 3.1e6,
    "cuda_baseline": 480e6,
    "batch_parallel": 21e6,
    "conv_opt": 5.2e6,
    "fc_opt": 3.4e6,
    "no_sync": 2.6e6,
    "pinned": 1.6e6,
    "fc_coalesced": 1.3e6,
    "overlap_fusion": 1.0e6,
}
# kernel name -> share of its stage's GPU kernel time; copies take COPY_SHARE of the stage.
KERNEL_SHARE: dict[str, float] = {
    "conv1_kernel": 0.34,
    "pool1_kernel": 0.08,
    "conv2_kernel": 0.30,
    "pool2_kernel": 0.05,
    "fc1_kernel": 0.15,
    "fc2_kernel": 0.05,
    "fc3_kernel": 0.03,
}
COPY_SHARE = 0.25
GPU_BUSY = 0.8  # GPU activity time over host time
MACHINE = {"gpu_name": "NVIDIA H100 80GB HBM3", "driver": "580.95.05", "cuda": "13.0"}


def make_run(
    seed: int,
    *,
    stages: tuple[str, ...] = tuple(STAGE_NS),
    timed: int = 10,
    profiled: int = 3,
    launches: int = 4,
    noise: float = 0.01,
    stage_scale: Mapping[str, float] | None = None,
    kernel_scale: Mapping[tuple[str, str], float] | None = None,
    status: Mapping[str, str] | None = None,
    trace: bool = True,
    items: int = 10_000,
    machine: Mapping[str, str] | None = None,
) -> Run:
    """A synthetic run. `stage_scale[stage]` multiplies a stage's host time; `kernel_scale[(stage,
    kernel)]` multiplies one kernel's time (and the stage's host time by the time it adds);
    `status[stage]` marks a stage FAIL/TIMEOUT/ERROR/SKIPPED (it then has no samples)."""
    rng = np.random.default_rng(seed)
    stage_scale, kernel_scale, status = stage_scale or {}, kernel_scale or {}, status or {}
    stage_rows, sample_rows, trace_rows = [], [], []
    for order, stage in enumerate(stages):
        st = status.get(stage, schema.PASS)
        kernels = _kernel_ns(stage, kernel_scale)
        added = sum(kernels.values()) - sum(_kernel_ns(stage, {}).values())
        host_ns = STAGE_NS[stage] * stage_scale.get(stage, 1.0) + added
        walls = _jitter(rng, host_ns, timed, noise) if st == schema.PASS else np.array([])
        stage_rows.append(_stage_row(stage, order, st, items, timed, walls))
        sample_rows += [
            {"stage": stage, "pass": "timed", "repeat": i, "wall_ns": int(w)}
            for i, w in enumerate(walls)
        ]
        if st != schema.PASS:
            continue
        for rep in range(profiled):
            sample_rows.append(
                {"stage": stage, "pass": "profiled", "repeat": rep, "wall_ns": int(host_ns * 1.08)}
            )
            trace_rows += _trace_rows(rng, stage, rep, kernels, launches)
    run = Run(
        meta={
            "model": "lenet",
            "machine": dict(machine or MACHINE),
            "settings": {"items": items},
            "unit": "images",
        },
        tables={
            "stages": schema.conform(pd.DataFrame(stage_rows), schema.STAGES),
            "samples": schema.conform(pd.DataFrame(sample_rows), schema.SAMPLES),
        },
    )
    gpu_trace = schema.conform(pd.DataFrame(trace_rows), schema.GPU_TRACE, fill=_TRACE_FILL)
    run.tables["gpu_activities"] = activities_from_trace(gpu_trace)
    if trace:
        run.tables["gpu_trace"] = gpu_trace
    return run


def _kernel_ns(stage: str, kernel_scale: Mapping[tuple[str, str], float]) -> dict[str, float]:
    """Per-repeat GPU time of each kernel and copy of `stage` (ns)."""
    gpu = STAGE_NS[stage] * GPU_BUSY
    out = {
        k: gpu * (1 - COPY_SHARE) * share * kernel_scale.get((stage, k), 1.0)
        for k, share in KERNEL_SHARE.items()
    }
    out[schema.copy_label("HtoD")] = gpu * COPY_SHARE * 0.97
    out[schema.copy_label("DtoH")] = gpu * COPY_SHARE * 0.03
    return out


def _jitter(rng: np.random.Generator, center: float, n: int, noise: float) -> np.ndarray:
    values = center * rng.lognormal(0.0, noise, n)
    outliers = rng.random(n) < 0.1
    return np.where(outliers, values * (1 + 5 * noise), values).round()


def _stage_row(stage: str, order: int, st: str, items: int, timed: int, walls: np.ndarray) -> dict:
    ok = st == schema.PASS
    return {
        "stage": stage,
        "order": order,
        "title": stage.replace("_", " ").title(),
        "technique": f"synthetic {stage}",
        "status": st,
        "reason": pd.NA if ok else "max relative error 0.5 >= 0.0001",
        "role": "baseline" if stage == "cuda_baseline" else "step",
        "runtime": "cupy",
        "items": items,
        "batch": items,
        "warmup": 2,
        "repeats": timed,
        "median_ns": int(np.median(walls)) if ok else pd.NA,
        "min_ns": int(walls.min()) if ok else pd.NA,
        "max_ns": int(walls.max()) if ok else pd.NA,
        "max_rel_err": 1e-6 if ok else 0.5,
        "max_abs_err": 1e-5 if ok else 5.0,
        "topk_mismatches": 0 if ok else 12,
        "comparison": "allclose rtol=0.0001 atol=0 (scale: row maximum)",
        "profiled_median_ns": pd.NA,
        "overhead_pct": np.nan,
    }


_TRACE_FILL = [
    c.name
    for c in schema.GPU_TRACE.columns
    if c.name
    not in ("stage", "repeat", "kind", "name", "start_ns", "end_ns", "duration_ns", "copy_kind")
]


def _trace_rows(
    rng: np.random.Generator, stage: str, rep: int, kernels: dict[str, float], launches: int
) -> list[dict]:
    rows, clock = [], 1_000_000_000 * (rep + 1)
    for name, total in kernels.items():
        is_copy = name.startswith("[CUDA memcpy")
        for dur in _jitter(rng, total / launches, launches, 0.005):
            rows.append(
                {
                    "stage": stage,
                    "repeat": rep,
                    "kind": schema.MEMCPY if is_copy else schema.KERNEL,
                    "name": name,
                    "start_ns": clock,
                    "end_ns": clock + int(dur),
                    "duration_ns": int(dur),
                    "copy_kind": name[13:-1] if is_copy else pd.NA,
                }
            )
            clock += int(dur) + 1000
    return rows


def activities_from_trace(trace: pd.DataFrame) -> pd.DataFrame:
    """nvprof's GPU activities table computed from a trace (independently of profgen's code)."""
    g = trace.groupby(["stage", "kind", "name"], as_index=False).agg(
        total_ns=("duration_ns", "sum"),
        calls=("duration_ns", "size"),
        min_ns=("duration_ns", "min"),
        max_ns=("duration_ns", "max"),
    )
    g["avg_ns"] = g["total_ns"] / g["calls"]
    g["time_pct"] = 100.0 * g["total_ns"] / g.groupby("stage")["total_ns"].transform("sum")
    g["copy_kind"] = [
        n[13:-1] if k == schema.MEMCPY else pd.NA for k, n in zip(g["kind"], g["name"], strict=True)
    ]
    return schema.conform(g, schema.GPU_ACTIVITIES, fill=["bytes"])
