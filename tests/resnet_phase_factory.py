"""A synthetic ResNet-50 run in the shape of the `resnet50` study's contract
(/work/prompts/resnet-contract.md): stages torch_gpu (framework), unfused (baseline), bn_folded,
fuse_res3, fuse_all and graph; every stage but graph opens one NVTX range per phase (`stem`,
`res{L}.{i}/conv1|conv2|downsample|tail`, `head`, `h2d`, `d2h`), graph one range `graph`.

The host and GPU timeline is simulated (a launch every few microseconds, kernels back to back on
one stream, a synchronous copy out), written as the raw traces a worker returns (GPU trace, API
trace, range trace, no attribution), and assembled by profgen's own `assemble_tables`, so the
phase ranges' GPU times and the trace's `range` column come out of the real attribution.
`truth` keeps what the simulation knows and the tables must say: each phase instance's first
GPU start and last GPU end, per stage and repeat.

Kernel times are plausible, not measured: the tail of a block (conv3, BN, the residual Add, the
ReLU) is 1.45 T after BN folding (T: the block's conv time) and 1.45 T / 1.146 fused, the
case's 14.6% local gain.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from profiler import schema, store
from profiler.analyze.assemble import assemble_tables

MODEL = "resnet50"
BLOCKS = {2: 3, 3: 4, 4: 6, 5: 3}
CASE = ("res3.2/tail", "res3.3/tail", "res3.4/tail")
STAGES = (("torch_gpu", "framework"), ("unfused", "baseline"), ("bn_folded", "step"),
          ("fuse_res3", "step"), ("fuse_all", "step"), ("graph", "step"))
CONV_NS = {2: 700_000, 3: 650_000, 4: 600_000, 5: 550_000}
FUSED_TAIL = 1.45 / 1.146
REPEATS, ITEMS = 3, 256
LAUNCH_NS, LATENCY_NS, GAP_NS = 6_000, 4_000, 1_500
OVERHEAD = 0.985  # unprofiled time over profiled time


def phases() -> list[str]:
    out = ["h2d", "stem"]
    for layer, n in BLOCKS.items():
        for i in range(1, n + 1):
            parts = ["conv1", "conv2"] + (["downsample"] if i == 1 else []) + ["tail"]
            out += [f"res{layer}.{i}/{p}" for p in parts]
    return out + ["head", "d2h"]


def _conv_time(phase: str) -> int:
    if phase == "stem":
        return 900_000
    layer = int(phase[3])
    return CONV_NS[layer] // (2 if phase.endswith("conv1") else 1)


Op = tuple[str, str, float]  # (kind, name, duration ns)


def ops(stage: str, phase: str) -> list[Op]:
    """The GPU operations a stage launches for a phase."""
    if phase in ("h2d", "d2h"):
        name = "[CUDA memcpy HtoD]" if phase == "h2d" else "[CUDA memcpy DtoH]"
        return [(schema.MEMCPY, name, 9_000_000 if phase == "h2d" else 40_000)]
    if phase == "head":
        return [(schema.KERNEL, "avgpool_kernel", 60_000), (schema.KERNEL, "gemm_fc", 90_000)]
    t = _conv_time(phase)
    tail, relu = phase.endswith("/tail"), not phase.endswith("downsample")
    if stage == "torch_gpu":
        out = [(schema.KERNEL, "cudnn_implicit_gemm", 0.8 * t),
               (schema.KERNEL, "bn_fw_inf", 0.2 * t)]
        out += [(schema.KERNEL, "elementwise_add", 0.2 * t)] if tail else []
        out += [(schema.KERNEL, "relu_kernel", 0.15 * t)] if relu else []
    elif stage == "unfused":
        out = [(schema.KERNEL, "conv_implicit_gemm", t), (schema.KERNEL, "batchnorm", 0.2 * t)]
        out += [(schema.KERNEL, "add", 0.2 * t)] if tail else []
        out += [(schema.KERNEL, "relu", 0.15 * t)] if relu else []
    elif (stage == "fuse_res3" and phase in CASE) or (stage == "fuse_all" and tail):
        out = [(schema.KERNEL, "conv_bias_add_relu", FUSED_TAIL * t)]
    elif stage == "fuse_all":
        name, cost = ("conv_bias_relu", 1.25 * t) if relu else ("conv_bias", 1.1 * t)
        out = [(schema.KERNEL, name, cost)]
    else:  # bn_folded, and fuse_res3 outside the case
        out = [(schema.KERNEL, "conv_implicit_gemm", t), (schema.KERNEL, "bias", 0.1 * t)]
        out += [(schema.KERNEL, "add", 0.2 * t)] if tail else []
        out += [(schema.KERNEL, "relu", 0.15 * t)] if relu else []
    if phase == "stem":
        out.append((schema.KERNEL, "maxpool", 120_000))
    return out


#: a change to plant: (stage, phase) -> the phase's operations, given the normal ones
Plant = Callable[[list[Op]], list[Op]]


@dataclass
class Built:
    run: store.Run
    truth: pd.DataFrame  # stage, repeat, phase, gpu_start_ns, gpu_end_ns, ops, kernels
    plants: dict[tuple[str, str], Plant] = field(default_factory=dict)


def build(plants: dict[tuple[str, str], Plant] | None = None, seed: int = 0) -> Built:
    """The synthetic run; `plants` replaces a stage's phase's operations (a planted change)."""
    plants = plants or {}
    rng = np.random.default_rng(seed)
    parts, truth, timing = [], [], []
    clock = 1_000_000_000
    for stage, _role in STAGES:
        gpu, api, ranges, spans = [], [], [], []
        for repeat in range(REPEATS):
            clock, span = _repeat(stage, repeat, clock, rng, plants, gpu, api, ranges, truth)
            spans.append(span)
            clock += 5_000_000
        parts.append(_part(stage, gpu, api, ranges))
        timing.append((stage, spans))
    tables = assemble_tables(parts, MODEL)
    tables["stages"] = _stages(timing)
    meta = {"model": MODEL, "unit": "images", "settings": {"items": ITEMS}}
    return Built(store.Run(meta=meta, tables=tables), pd.DataFrame(truth), plants)


def _repeat(stage: str, repeat: int, clock: int, rng: np.random.Generator,
            plants: dict[tuple[str, str], Plant], gpu: list[dict], api: list[dict],
            ranges: list[dict], truth: list[dict]) -> tuple[int, int]:
    """One profiled repeat of one stage: returns the clock after it and its span (ns)."""
    host, gpu_free = clock + 50_000, clock + 50_000
    stage_start = clock
    named = [("graph", p) for p in phases()[1:-1]] if stage == "graph" else None
    groups: list[tuple[str, list[Op]]] = []
    for phase in phases():
        todo = plants.get((stage, phase), lambda o: o)(ops(stage if stage != "graph" else
                                                           "fuse_all", phase))
        groups.append((phase, todo))
    if named is not None:  # one range around all the forward's kernels
        inner = [op for phase, todo in groups[1:-1] for op in todo]
        groups = [groups[0], ("graph", inner), groups[-1]]
    for phase, todo in groups:
        push = host
        first = last = None
        for kind, name, dur in todo:
            host += LAUNCH_NS
            corr = len(api) + 1 + hash(stage) % 1000 * 1_000_000
            api.append({"name": "cudaLaunchKernel" if kind == schema.KERNEL else
                        "cudaMemcpyAsync", "start_ns": host, "end_ns": host + 2_000,
                        "correlation_id": corr})
            start = max(host + LATENCY_NS, gpu_free + GAP_NS)
            length = int(dur * (1.0 + rng.normal(0.0, 0.002)))
            gpu.append({"kind": kind, "name": name, "start_ns": start, "end_ns": start + length,
                        "correlation_id": corr, "repeat": repeat})
            gpu_free = start + length
            first = start if first is None else first
            last = gpu_free
        if phase == "d2h":  # a synchronous copy: the host waits for it
            host = gpu_free + 3_000
        host += 1_000
        ranges.append({"name": phase, "level": 1, "start_ns": push, "end_ns": host})
        truth.append({"stage": stage, "repeat": repeat, "phase": phase, "gpu_start_ns": first,
                      "gpu_end_ns": last, "ops": len(todo),
                      "kernels": sum(k == schema.KERNEL for k, _, _ in todo)})
    end = host + 20_000
    ranges.append({"name": f"{MODEL}:{stage}", "level": 0, "start_ns": stage_start,
                   "end_ns": end})
    return end, end - stage_start


def _part(stage: str, gpu: list[dict], api: list[dict], ranges: list[dict]
          ) -> dict[str, pd.DataFrame]:
    g = pd.DataFrame(gpu).assign(stage=stage, device=0, stream=7)
    g["duration_ns"] = g["end_ns"] - g["start_ns"]
    copy = g["kind"] == schema.MEMCPY
    g["copy_kind"] = np.where(copy, np.where(g["name"].str.contains("HtoD"), "HtoD", "DtoH"),
                              None)
    g["src_kind"] = np.where(copy, np.where(g["copy_kind"] == "HtoD", "pageable", "device"),
                             None)
    g["dst_kind"] = np.where(copy, np.where(g["copy_kind"] == "HtoD", "device", "pageable"),
                             None)
    a = pd.DataFrame(api).assign(stage=stage, repeat=-1, thread=1)
    a["duration_ns"] = a["end_ns"] - a["start_ns"]
    r = pd.DataFrame(ranges).assign(stage=stage, repeat=-1, thread=1)
    r["duration_ns"] = r["end_ns"] - r["start_ns"]
    r = r.sort_values(["start_ns", "level"], kind="stable").reset_index(drop=True)
    g = g.sort_values("start_ns", kind="stable").reset_index(drop=True)
    fill = [c.name for c in schema.GPU_TRACE.columns] + ["gpu_start_ns", "gpu_end_ns", "gpu_ops"]
    return {
        "gpu_trace": schema.conform(g.assign(repeat=-1), schema.GPU_TRACE, fill=fill),
        "api_trace": schema.conform(a, schema.API_TRACE),
        "range_trace": schema.conform(r, schema.RANGE_TRACE, fill=fill),
    }


def _stages(timing: list[tuple[str, list[int]]]) -> pd.DataFrame:
    """The stages table: the profiled pass's median span, and an unprofiled time a little
    shorter (the profiler's overhead), min and max 0.3% around it."""
    rows = []
    for order, ((stage, role), (_, spans)) in enumerate(zip(STAGES, timing, strict=True)):
        profiled = int(np.median(spans))
        median = int(profiled * OVERHEAD)
        rows.append({"stage": stage, "order": order, "title": stage, "technique": "",
                     "role": role, "runtime": "cupy", "status": schema.PASS, "reason": None,
                     "items": ITEMS, "batch": ITEMS, "warmup": 1, "repeats": 10,
                     "timing": "host", "timing_range": None, "median_ns": median,
                     "min_ns": int(median * 0.997), "max_ns": int(median * 1.003),
                     "max_rel_err": 0.0, "max_abs_err": 0.0, "topk_mismatches": 0,
                     "comparison": "allclose", "profiled_median_ns": profiled,
                     "overhead_pct": (profiled / median - 1) * 100})
    return schema.conform(pd.DataFrame(rows), schema.STAGES)
