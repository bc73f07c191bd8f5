"""The runs the report tests render.

`sample_run()`: the committed sample run recorded on an H100 with the cupti backend
(`tests/data/runs/lenet-h100-schema1-cupti/`, see its README): every table real, traces trimmed to
the first profiled repeat (summaries whole). `METRICS_RUN` (cupti + Nsight Compute metrics, with
the roofline and one ERROR stage) and `NSYS_RUN` (nsys backend) are its siblings.

`build_run()`: a run with every section (roofline, batch sweep, regressions), for the tests that
need what the sample lacks, built from real profiler output plus hand-written tables:

What is real (captured on an H100 by NVIDIA's tools, copied unedited from the shared fixtures into
tests/data/report/, see its README.md): the GPU traces of two stages (`cuda_baseline` is the
`addone` demo program, `overlap_fusion` is `fixture_prog.py`: two streams, pinned memory), their
nsys summaries (GPU activities, API calls) and the Nsight Compute counters of `overlap_fusion`.

What is written by hand (tests/data/report/*.csv and meta.json): the stage times, repeats and
verdicts, the batch sweep, the regressions table and the run's metadata and ceilings. They are
plausible numbers, not measurements.

Derived here from the fixture program's structure (`fixture_prog.py`): which repeat and which
NVTX range each GPU operation belongs to, and the range instances' GPU projections (their CPU
push/pop times are not in the fixture; they are set to the projection).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from profiler import schema, store, tablecsv

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data" / "report"
SAMPLE_RUN = ROOT / "tests" / "data" / "runs" / "lenet-h100-schema1-cupti"
METRICS_RUN = ROOT / "tests" / "data" / "runs" / "lenet-h100-schema1-metrics"
NSYS_RUN = ROOT / "tests" / "data" / "runs" / "lenet-h100-schema1-nsys"

NSYS_DEMO = DATA / "nsys-2025.3.1-h100"  # stage cuda_baseline
NSYS_OVERLAP = DATA / "nsys-2025.3.1-h100-overlap"  # stage overlap_fusion
NCU = DATA / "ncu-2025.3.1-h100" / "raw-metrics.csv"  # stage overlap_fusion
TRACED = {"cuda_baseline": NSYS_DEMO, "overlap_fusion": NSYS_OVERLAP}
_DIRECTIONS = {"Host-to-Device": "HtoD", "Device-to-Host": "DtoH", "Device-to-Device": "DtoD"}


def sample_run() -> store.Run:
    """The committed H100 sample run (cupti backend), read from disk."""
    return store.load_run(SAMPLE_RUN)


def build_run(tile: int | Mapping[str, int] = 1) -> store.Run:
    """The test run. `tile` > 1 replicates each traced repeat's operations `tile` times in time
    (a realistic volume for benchmarks: a per-image stage issues ~90,000 operations a repeat);
    a mapping gives a factor per stage (default 1)."""
    tiles = {s: (tile.get(s, 1) if isinstance(tile, Mapping) else tile) for s in TRACED}
    meta = json.loads((DATA / "meta.json").read_text())
    traces = [_gpu_trace(stage, folder) for stage, folder in TRACED.items()]
    gpu_trace = pd.concat(
        [tile_trace(t, tiles[str(t["stage"].iloc[0])]) for t in traces], ignore_index=True
    )
    activities = pd.concat(
        [_gpu_activities(s, f, tiles[s]) for s, f in TRACED.items()], ignore_index=True
    )
    tables = {
        "stages": _hand_table("stages.csv", schema.STAGES),
        "samples": _hand_table("samples.csv", schema.SAMPLES),
        "batch_sweep": _hand_table("batch_sweep.csv", schema.BATCH_SWEEP),
        "regressions": _hand_table("regressions.csv", schema.REGRESSIONS),
        "gpu_trace": schema.validate(gpu_trace, schema.GPU_TRACE),
        "range_trace": pd.concat([_range_trace(t) for t in traces], ignore_index=True),
        "gpu_activities": activities,
        "api_calls": pd.concat(
            [_api_calls(s, f, tiles[s]) for s, f in TRACED.items()], ignore_index=True
        ),
        "metrics": ncu_metrics(NCU, "overlap_fusion"),
    }
    return store.Run(meta=meta, tables=tables)


def _hand_table(name: str, tbl: schema.Table) -> pd.DataFrame:
    return tablecsv.read_csv(DATA / name, tbl)


def read_nsys_trace(path: Path) -> pd.DataFrame:
    """nsys `cuda_gpu_trace` CSV -> `schema.GPU_TRACE` columns (stage, repeat, range unset)."""
    raw = pd.read_csv(path)
    name = raw["Name"].astype("string")
    is_copy = name.str.startswith("[CUDA memcpy")
    direction = name.str.extract(r"\[CUDA memcpy (.*)\]")[0].map(_DIRECTIONS).astype("string")
    kind = np.where(
        is_copy,
        schema.MEMCPY,
        np.where(name.str.startswith("[CUDA memset"), schema.MEMSET, schema.KERNEL),
    )
    smem = (raw["StcSMem (MB)"].fillna(0) + raw["DymSMem (MB)"].fillna(0)) * 1e6
    df = pd.DataFrame(
        {
            "stage": pd.NA,
            "repeat": -1,
            "kind": kind,
            "name": name.where(~is_copy, "[CUDA memcpy " + direction + "]"),
            "start_ns": raw["Start (ns)"],
            "end_ns": raw["Start (ns)"] + raw["Duration (ns)"],
            "duration_ns": raw["Duration (ns)"],
            "device": raw["Device"].str.extract(r"\((\d+)\)$")[0].astype("Int64"),
            "stream": raw["Strm"],
            "correlation_id": raw["CorrId"],
            "grid_x": raw["GrdX"],
            "grid_y": raw["GrdY"],
            "grid_z": raw["GrdZ"],
            "block_x": raw["BlkX"],
            "block_y": raw["BlkY"],
            "block_z": raw["BlkZ"],
            "registers": raw["Reg/Trd"],
            "shared_bytes": smem.where(~is_copy).round(),
            "bytes": (raw["Bytes (MB)"] * 1e6).round(),  # nsys prints MB (1e6 bytes) to 3 decimals
            "copy_kind": direction,
            "src_kind": raw["SrcMemKd"].str.lower(),
            "dst_kind": raw["DstMemKd"].str.lower(),
            "range": pd.NA,
        }
    )
    return schema.conform(df, schema.GPU_TRACE)


def _gpu_trace(stage: str, folder: Path) -> pd.DataFrame:
    """The trace with its stage, repeats and ranges, as the fixture programs issued them."""
    df = read_nsys_trace(folder / "cuda_gpu_trace.csv").sort_values("start_ns", ignore_index=True)
    df["stage"] = stage
    if folder == NSYS_OVERLAP:  # 2 repeats x 4 chunks x (h2d, scale, relu, d2h)
        df["repeat"] = np.arange(len(df)) // 16
        df["range"] = np.array(["h2d", "compute", "compute", "d2h"] * (len(df) // 4))
    else:  # one pass, all inside range `stage:demo`
        df["repeat"] = 0
        df["range"] = "stage:demo"
    return schema.conform(df, schema.GPU_TRACE)


def _range_trace(trace: pd.DataFrame) -> pd.DataFrame:
    """Range instances with their GPU projections (first op's start to last op's end)."""
    rows = []
    stage = trace["stage"].iloc[0]
    for repeat, ops in trace.groupby("repeat"):
        top = "stage:demo" if stage == "cuda_baseline" else f"stage/overlap/rep{repeat}"
        rows.append(_instance(stage, repeat, top, 0, ops))
        if stage == "overlap_fusion":
            for chunk in range(len(ops) // 4):
                part = ops.iloc[4 * chunk : 4 * chunk + 4]
                for name, sel in (("h2d", [0]), ("compute", [1, 2]), ("d2h", [3])):
                    rows.append(_instance(stage, repeat, name, 1, part.iloc[sel]))
    df = pd.DataFrame(rows)
    return schema.validate(schema.conform(df, schema.RANGE_TRACE), schema.RANGE_TRACE)


def _instance(
    stage: str, repeat: int, name: str, level: int, ops: pd.DataFrame
) -> dict[str, object]:
    start, end = int(ops["start_ns"].min()), int(ops["end_ns"].max())
    return {
        "stage": stage,
        "repeat": repeat,
        "name": name,
        "level": level,
        "start_ns": start,
        "end_ns": end,
        "duration_ns": end - start,
        "gpu_start_ns": start,
        "gpu_end_ns": end,
        "gpu_ops": len(ops),
        "thread": pd.NA,
    }


def tile_trace(trace: pd.DataFrame, tile: int) -> pd.DataFrame:
    """Each repeat's operations replicated `tile` times, one copy after the other."""
    if tile == 1:
        return trace
    parts = []
    for _, ops in trace.groupby("repeat"):
        period = int(ops["end_ns"].max() - ops["start_ns"].min()) + 1000
        offsets = np.repeat(np.arange(tile, dtype=np.int64) * period, len(ops))
        big = ops.iloc[np.tile(np.arange(len(ops)), tile)].reset_index(drop=True)
        big["start_ns"] += offsets
        big["end_ns"] += offsets
        parts.append(big)
    return pd.concat(parts, ignore_index=True)


def _gpu_activities(stage: str, folder: Path, tile: int = 1) -> pd.DataFrame:
    """nsys's kernel and memcpy summaries merged into nvprof's `GPU activities` table."""
    kern = pd.read_csv(folder / "cuda_gpu_kern_sum.csv")
    mem = pd.read_csv(folder / "cuda_gpu_mem_time_sum.csv")
    size = pd.read_csv(folder / "cuda_gpu_mem_size_sum.csv").set_index("Operation")["Total (MB)"]
    rows = [
        {
            "kind": schema.KERNEL,
            "name": r["Name"],
            "copy_kind": None,
            "total_ns": r["Total Time (ns)"],
            "calls": r["Instances"],
            "avg_ns": r["Avg (ns)"],
            "min_ns": r["Min (ns)"],
            "max_ns": r["Max (ns)"],
            "bytes": None,
        }
        for r in kern.to_dict("records")
    ]
    for r in mem.to_dict("records"):
        direction = _DIRECTIONS[r["Operation"][len("[CUDA memcpy ") : -1]]
        rows.append(
            {
                "kind": schema.MEMCPY,
                "name": schema.copy_label(direction),
                "copy_kind": direction,
                "total_ns": r["Total Time (ns)"],
                "calls": r["Count"],
                "avg_ns": r["Avg (ns)"],
                "min_ns": r["Min (ns)"],
                "max_ns": r["Max (ns)"],
                "bytes": round(size[r["Operation"]] * 1e6),
            }  # nsys prints MB (1e6 bytes), 3 decimals
        )
    df = pd.DataFrame(rows).astype({"total_ns": "Int64", "calls": "Int64", "bytes": "Int64"})
    df[["total_ns", "calls", "bytes"]] *= tile
    df["stage"] = stage
    df["time_pct"] = df["total_ns"] / df["total_ns"].sum() * 100.0
    df = df.sort_values("total_ns", ascending=False, kind="stable")
    return schema.validate(schema.conform(df, schema.GPU_ACTIVITIES), schema.GPU_ACTIVITIES)


def _api_calls(stage: str, folder: Path, tile: int = 1) -> pd.DataFrame:
    """nsys's `cuda_api_sum` as nvprof's `API calls` table."""
    raw = pd.read_csv(folder / "cuda_api_sum.csv")
    df = pd.DataFrame(
        {
            "stage": stage,
            "name": raw["Name"],
            "total_ns": raw["Total Time (ns)"] * tile,
            "calls": raw["Num Calls"] * tile,
            "avg_ns": raw["Avg (ns)"],
            "min_ns": raw["Min (ns)"],
            "max_ns": raw["Max (ns)"],
        }
    )
    df["time_pct"] = df["total_ns"] / df["total_ns"].sum() * 100.0
    return schema.validate(schema.conform(df, schema.API_CALLS), schema.API_CALLS)


def ncu_metrics(path: Path, stage: str) -> pd.DataFrame:
    """Nsight Compute `--page raw` CSV -> `schema.METRICS` columns (the few the report uses)."""
    text = path.read_text().splitlines()
    header = next(i for i, line in enumerate(text) if line.startswith('"ID"'))
    raw = pd.read_csv(path, skiprows=header, thousands=",", dtype=str).iloc[1:]  # row 1: units
    num = lambda col: pd.to_numeric(raw[col].str.replace(",", ""), errors="coerce")  # noqa: E731
    nvtx = raw.iloc[:, 4].fillna("")
    flops = (
        2 * num("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")
        + num("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum")
        + num("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum")
    )
    df = pd.DataFrame(
        {
            "stage": stage,
            "kernel_id": num("ID"),
            "name": raw["Kernel Name"],
            "range": nvtx.map(lambda s: (re.findall(r"profgen:([^:\"]+):", s) or [pd.NA])[-1]),
            "grid": raw["Grid Size"],
            "block": raw["Block Size"],
            "duration_ns": num("gpu__time_duration.sum"),
            "dram_read_bytes": num("dram__bytes_read.sum"),
            "dram_write_bytes": num("dram__bytes_write.sum"),
            "fp32_flops": flops,
            "sm_throughput_pct": num("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
            "dram_throughput_pct": np.nan,
            "achieved_occupancy_pct": np.nan,
            "registers": num("launch__registers_per_thread"),
        }
    )
    return schema.validate(schema.conform(df, schema.METRICS), schema.METRICS)
