"""Every table profgen passes between stages, declared once.

A table is a pandas DataFrame whose columns, dtypes and units are fixed here. Parsers rename
tool headers to these names, cast, and call `validate`; nothing downstream ever sees an nsys,
ncu, nvprof or CUPTI spelling. Durations and timestamps are integer nanoseconds in columns named
`*_ns`; byte counts are integers in columns named `bytes` or `*_bytes`; shares are floats in
percent in columns named `*_pct`. Units are formatted only in templates.

Dtypes use pandas' names: "int64" and "float64" never hold missing values; "Int64" (nullable)
and "string" may hold <NA> where a field does not apply (a copy has no grid, a kernel no bytes).

A run directory stores each table as `<table.name>.csv`; `profiler.tablecsv` reads and writes
them without loss.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiler.errors import SchemaError

SCHEMA_VERSION = 2


@dataclass(frozen=True)
class Column:
    """One column: its name, pandas dtype, unit (for the reader) and meaning.

    `added` marks a column added to its table after runs were written without it: a table that
    lacks it (read from an older run, or built by older code) gets `default` (None: missing).
    """

    name: str
    dtype: str
    unit: str = ""
    doc: str = ""
    added: bool = False
    default: str | None = None


@dataclass(frozen=True)
class Table:
    """A named, ordered set of columns."""

    name: str
    doc: str
    columns: tuple[Column, ...]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def dtypes(self) -> dict[str, str]:
        return {c.name: c.dtype for c in self.columns}


def _c(name: str, dtype: str, unit: str = "", doc: str = "") -> Column:
    return Column(name, dtype, unit, doc)


# Activity kinds (column `kind` of GPU_TRACE and GPU_ACTIVITIES).
KERNEL, MEMCPY, MEMSET = "kernel", "memcpy", "memset"
# Copy directions (column `copy_kind`), as nvprof spelled them.
COPY_KINDS = ("HtoD", "DtoH", "DtoD", "HtoH", "PtoP")
# Stage verdicts (column `status` of STAGES). IMPORTED: made from profiler output found elsewhere
# (`profgen import`): nothing was checked, so it is neither a pass nor a failure.
PASS, FAIL, TIMEOUT, ERROR, SKIPPED = "PASS", "FAIL", "TIMEOUT", "ERROR", "SKIPPED"
IMPORTED = "IMPORTED"
# Where an imported stage's technique says what its tables lack (rows a paste elided or trimmed):
# each such note follows this mark, and `profgen show` repeats them under the stages table.
PARTIAL = "; partial: "
STATUSES = (PASS, FAIL, TIMEOUT, ERROR, SKIPPED, IMPORTED)
# What a stage's `median_ns` measures (column `timing` of STAGES): the host clock around `infer`
# (a sweep), or, for an imported stage, an NVTX range's total time, the GPU span of the capture
# (first GPU start to last GPU end) or the summed GPU activity time (no trace to take a span from).
HOST, NVTX_RANGE, GPU_SPAN, GPU_TIME = "host", "nvtx_range", "gpu_span", "gpu_time"
TIMINGS = (HOST, NVTX_RANGE, GPU_SPAN, GPU_TIME)


def copy_label(copy_kind: str) -> str:
    """nvprof's display name of a copy row, e.g. `[CUDA memcpy HtoD]`."""
    return f"[CUDA memcpy {copy_kind}]"


MEMSET_LABEL = "[CUDA memset]"

_STAGE = _c("stage", "string", doc="stage key, e.g. `no_sync`")
_REPEAT = _c("repeat", "int64", doc="index of the profiled repeat (0-based); -1 when unknown")

GPU_TRACE = Table(
    "gpu_trace",
    "One row per GPU activity (kernel, copy, memset) of the profiled pass, in start order.",
    (
        _STAGE,
        _REPEAT,
        _c("kind", "string", doc="`kernel`, `memcpy` or `memset`, from the activity kind"),
        _c("name", "string", doc="kernel name; `[CUDA memcpy HtoD]`-style label for copies"),
        _c("start_ns", "int64", "ns", "start on the profiler's clock"),
        _c("end_ns", "int64", "ns", "end on the profiler's clock"),
        _c("duration_ns", "int64", "ns"),
        _c("device", "Int64", doc="CUDA device ordinal"),
        _c("stream", "Int64", doc="stream id as the profiler numbers it"),
        _c("correlation_id", "Int64", doc="links the activity to its API call"),
        _c("grid_x", "Int64"),
        _c("grid_y", "Int64"),
        _c("grid_z", "Int64"),
        _c("block_x", "Int64"),
        _c("block_y", "Int64"),
        _c("block_z", "Int64"),
        _c("registers", "Int64", doc="registers per thread (kernels)"),
        _c("shared_bytes", "Int64", "bytes", "static + dynamic shared memory per block (kernels)"),
        _c("bytes", "Int64", "bytes", "bytes moved (copies and memsets)"),
        _c("copy_kind", "string", doc="HtoD, DtoH, DtoD, HtoH or PtoP (copies)"),
        _c("src_kind", "string", doc="`pageable`, `pinned`, `device` or `managed` (copies)"),
        _c("dst_kind", "string", doc="`pageable`, `pinned`, `device` or `managed` (copies)"),
        _c("range", "string", doc="innermost profgen NVTX range open when the work was issued"),
    ),
)

API_TRACE = Table(
    "api_trace",
    "One row per CUDA runtime/driver API call of the profiled pass.",
    (
        _STAGE,
        _REPEAT,
        _c("name", "string", doc="API function, e.g. `cudaLaunchKernel`"),
        _c("start_ns", "int64", "ns"),
        _c("end_ns", "int64", "ns"),
        _c("duration_ns", "int64", "ns"),
        _c("thread", "Int64", doc="OS thread id"),
        _c("correlation_id", "Int64"),
    ),
)

RANGE_TRACE = Table(
    "range_trace",
    "One row per profgen NVTX range instance, with its projection onto the GPU.",
    (
        _STAGE,
        _REPEAT,
        _c("name", "string", doc="range name without the `profgen:` domain prefix"),
        _c("level", "int64", doc="nesting depth; 0 is the stage range `<model>:<stage>`"),
        _c("start_ns", "int64", "ns", "CPU push time"),
        _c("end_ns", "int64", "ns", "CPU pop time"),
        _c("duration_ns", "int64", "ns"),
        _c("gpu_start_ns", "Int64", "ns", "start of the first GPU op issued inside the range"),
        _c("gpu_end_ns", "Int64", "ns", "end of the last GPU op issued inside the range"),
        _c("gpu_ops", "Int64", doc="GPU ops issued inside the range"),
        _c("thread", "Int64", doc="OS thread id that pushed the range"),
    ),
)

GPU_ACTIVITIES = Table(
    "gpu_activities",
    "nvprof's `GPU activities` table per stage: kernels and copies together.",
    (
        _STAGE,
        _c("kind", "string", doc="`kernel`, `memcpy` or `memset`"),
        _c("name", "string", doc="kernel name or `[CUDA memcpy HtoD]`-style label"),
        _c("copy_kind", "string", doc="copy direction for memcpy rows"),
        _c("time_pct", "float64", "%", "share of the stage's summed GPU activity time"),
        _c("total_ns", "int64", "ns"),
        _c("calls", "int64"),
        _c("avg_ns", "float64", "ns"),
        _c("min_ns", "int64", "ns"),
        _c("max_ns", "int64", "ns"),
        _c("bytes", "Int64", "bytes", "total bytes moved (copies)"),
    ),
)

API_CALLS = Table(
    "api_calls",
    "nvprof's `API calls` table per stage.",
    (
        _STAGE,
        _c("name", "string"),
        _c("time_pct", "float64", "%", "share of the stage's summed API time"),
        _c("total_ns", "int64", "ns"),
        _c("calls", "int64"),
        _c("avg_ns", "float64", "ns"),
        _c("min_ns", "int64", "ns"),
        _c("max_ns", "int64", "ns"),
    ),
)

RANGES = Table(
    "ranges",
    "NVTX ranges per stage: CPU time and projected GPU time.",
    (
        _STAGE,
        _c("name", "string"),
        _c("calls", "int64"),
        _c("total_ns", "int64", "ns", "summed CPU (push to pop) time"),
        _c("avg_ns", "float64", "ns"),
        _c("min_ns", "int64", "ns"),
        _c("max_ns", "int64", "ns"),
        _c("gpu_total_ns", "Int64", "ns", "summed projected GPU time"),
        _c("gpu_ops", "Int64"),
    ),
)

STAGES = Table(
    "stages",
    "One row per stage: the unprofiled timing, the correctness verdict and the profiler overhead.",
    (
        _STAGE,
        _c("order", "int64", doc="position in the study, 0-based"),
        _c("title", "string"),
        _c("technique", "string"),
        _c("role", "string", doc="`baseline`, `framework` or `step`, as the study states it"),
        _c("runtime", "string", doc="cupy, torch, triton, numba, jax, cudart or cpu"),
        _c("status", "string", doc="PASS, FAIL, TIMEOUT, ERROR, SKIPPED or IMPORTED"),
        _c("reason", "string", doc="why a stage did not PASS (one line)"),
        _c("items", "int64", doc="items (in the study's unit) per repeat; 0 for an import"),
        _c("batch", "int64", doc="items per `infer` call"),
        _c("warmup", "int64"),
        _c(
            "repeats",
            "int64",
            doc="timed repeats; for an import, the repeats the program ran as the user said "
            "(0: not said, and times are whole-program totals)",
        ),
        Column(
            "timing",
            "string",
            doc="what `median_ns` measures: one of `TIMINGS` (missing: no time)",
            added=True,
            default=HOST,
        ),
        Column(
            "timing_range",
            "string",
            doc="the NVTX range `median_ns` is the time of (timing `nvtx_range`)",
            added=True,
        ),
        _c(
            "median_ns",
            "Int64",
            "ns",
            "host time for all items, median over repeats; for an import, the `timing` span "
            "divided by `repeats` (when said)",
        ),
        _c("min_ns", "Int64", "ns"),
        _c("max_ns", "Int64", "ns"),
        _c("max_rel_err", "float64", doc="largest relative error under the comparison rule"),
        _c("max_abs_err", "float64", doc="largest |out - ref|"),
        _c("topk_mismatches", "Int64", doc="rows whose top-k set differs (near ties excluded)"),
        _c("comparison", "string", doc="the rule the outputs were held to"),
        _c("profiled_median_ns", "Int64", "ns", "host time of the profiled pass, median"),
        _c("overhead_pct", "float64", "%", "profiled over unprofiled time, minus 100"),
    ),
)

SAMPLES = Table(
    "samples",
    "Every timed repeat of every stage, for noise-aware comparison.",
    (
        _STAGE,
        _c("pass", "string", doc="`timed` (unprofiled) or `profiled`"),
        _REPEAT,
        _c("wall_ns", "int64", "ns", "host clock around `infer` for all items, after a sync"),
    ),
)

METRICS = Table(
    "metrics",
    "Nsight Compute counters, one row per profiled kernel launch (replay times).",
    (
        _STAGE,
        _c("kernel_id", "int64", doc="ncu's launch ID"),
        _c("name", "string"),
        _c("range", "string", doc="innermost profgen NVTX range of the launch, else the user's"),
        _c("grid", "string"),
        _c("block", "string"),
        _c("duration_ns", "Int64", "ns", "gpu__time_duration.sum under replay"),
        _c("dram_read_bytes", "Int64", "bytes"),
        _c("dram_write_bytes", "Int64", "bytes"),
        _c("fp32_flops", "Int64", doc="2*ffma + fadd + fmul, thread instructions"),
        _c("sm_throughput_pct", "float64", "%"),
        _c("dram_throughput_pct", "float64", "%"),
        _c("achieved_occupancy_pct", "float64", "%"),
        _c("registers", "Int64", doc="registers per thread"),
    ),
)

COUNTERS = Table(
    "counters",
    "Every metric and event a profiler printed, one row per printed value (a kernel's metric in "
    "nvprof's `--metrics`/`--events` output, a launch's metric in Nsight Compute's text or CSV), "
    "kept as the tool named and printed it: what `metrics` maps is a few of these.",
    (
        _STAGE,
        _c(
            "kernel_id",
            "int64",
            doc="the `metrics` table's `kernel_id` of the kernel (nvprof: its place in the file; "
            "ncu: the launch ID)",
        ),
        _c("name", "string", doc="kernel name"),
        _c(
            "section",
            "string",
            doc="Nsight Compute's section of the metric (text `Section:`, CSV `Section Name`); "
            "missing for nvprof and ncu's raw page",
        ),
        _c(
            "metric",
            "string",
            doc="the metric or event as the tool names it, e.g. `gld_efficiency`, "
            "`dram__throughput.avg.pct_of_peak_sustained_elapsed`, `Memory Throughput`",
        ),
        _c(
            "unit",
            "string",
            doc="the unit as printed (ncu's unit column; nvprof's value suffix: `%`, `GB/s`); "
            "missing when none",
        ),
        _c(
            "value",
            "float64",
            doc="the value in `unit` (nvprof: Avg over the invocations; a level `Low (3)` is 3); "
            "NaN when the cell is no number",
        ),
        _c("text", "string", doc="the value's cell as printed"),
        _c(
            "invocations",
            "Int64",
            doc="nvprof, or ncu's per-kernel summary: the launches the row covers",
        ),
        _c("min", "float64", doc="nvprof: the smallest value over the invocations, in `unit`"),
        _c("max", "float64", doc="nvprof: the largest value over the invocations, in `unit`"),
    ),
)

LAYERS = Table(
    "layers",
    "One row per network node a study names with an NVTX range: what the per-layer report needs "
    "beyond the node's time.",
    (
        _c("node", "string", doc="the node's range name, as the stages push it"),
        _c("op", "string", doc="the node's operator, e.g. `Conv`"),
        _c("kind", "string", doc="the per-kind table's row, e.g. `depthwise 3x3`"),
        _c("in_shape", "string", doc="input shape of one item, e.g. `32x112x112`"),
        _c("out_shape", "string", doc="output shape of one item"),
        _c("flops", "int64", doc="floating-point operations per item (a multiply-add counts 2)"),
        _c("bytes", "int64", "B", "activation bytes per item read and written once"),
        _c("weight_bytes", "int64", "B", "parameter bytes read once per call"),
    ),
)

BATCH_SWEEP = Table(
    "batch_sweep",
    "Stage time against batch size (`--batch-sizes`).",
    (
        _STAGE,
        _c("batch", "int64"),
        _c("items", "int64"),
        _c("repeats", "int64"),
        _c("median_ns", "int64", "ns", "time for all items"),
        _c("min_ns", "int64", "ns"),
        _c("max_ns", "int64", "ns"),
        _c("batch_median_ns", "int64", "ns", "latency of one batch, median"),
    ),
)

REGRESSIONS = Table(
    "regressions",
    "Verdicts of comparing this run with a baseline, one row per compared metric.",
    (
        _c("check", "string", doc="the check as given, e.g. `stage:median:5%`"),
        _c("metric", "string", doc="`stage` (end-to-end time) or `kernel` (a kernel's total time)"),
        _STAGE,
        _c("name", "string", doc="kernel name for kernel metrics"),
        _c("base_ns", "float64", "ns", "baseline statistic (median or total)"),
        _c("new_ns", "float64", "ns", "this run's statistic"),
        _c("ratio", "float64", doc="new / base"),
        _c("threshold_pct", "float64", "%"),
        _c(
            "p_value",
            "float64",
            doc="Mann-Whitney U two-sided p; NaN when interval overlap decided",
        ),
        _c("significant", "bool"),
        _c("method", "string", doc="`mann-whitney` or `interval-overlap`"),
        _c("share_pct", "float64", "%", "the kernel's share of its stage's GPU time"),
        _c(
            "verdict",
            "string",
            doc="`regression`, `improvement` or `unchanged`; `failed`, `skipped`, `missing` "
            "(in one run only) or `incomparable` (numbers of different kinds: an imported "
            "stage's) when the stage or kernel was not compared",
        ),
    ),
)

_POINT = _c("point", "string", doc="the load point's label, e.g. `c8-b32-w200us-s2-graphs`")

SERVE_POINTS = Table(
    "serve_points",
    "`profgen serve`: one row per load point (configuration and load), measured window only.",
    (
        _POINT,
        _c("config", "string", doc="the engine configuration, e.g. `b32-w200us-s2-graphs`"),
        _c(
            "engine",
            "string",
            doc="`in-place` (requests read where they lie), `streams` (staging and copies) or "
            "`infer` (any stage)",
        ),
        _c("mode", "string", doc="`closed` (C clients) or `open` (Poisson arrivals)"),
        _c("concurrency", "Int64", doc="closed loop: clients"),
        _c("rate_rps", "float64", "requests/s", "open loop: offered rate"),
        _c("request_items", "int64", doc="items per request (R)"),
        _c("max_batch", "int64", doc="B: items a batch may hold"),
        _c("max_wait_ns", "int64", "ns", "T: how long the oldest request may wait for a batch"),
        _c("streams", "int64", doc="S: lanes the engine used"),
        _c("graphs", "bool", doc="one captured CUDA graph per batch size"),
        _c("duration_ns", "int64", "ns", "the measured window"),
        _c("requests", "int64", doc="requests answered in the window"),
        _c("items_per_s", "float64", "items/s"),
        _c("requests_per_s", "float64", "requests/s"),
        _c("p50_ns", "float64", "ns", "latency percentiles from log buckets (1/128 octave)"),
        _c("p90_ns", "float64", "ns"),
        _c("p99_ns", "float64", "ns"),
        _c("max_ns", "float64", "ns"),
        _c("mean_ns", "float64", "ns"),
        _c("queue_ns", "float64", "ns", "mean: scheduled send to its batch leaving the queue"),
        _c("h2d_ns", "float64", "ns", "mean over requests of their batch's H2D (events)"),
        _c("compute_ns", "float64", "ns", "mean: their batch's compute (events)"),
        _c("d2h_ns", "float64", "ns", "mean: their batch's D2H (events)"),
        _c("overhead_ns", "float64", "ns", "mean: latency - queueing - device span of its batch"),
        _c("overhead_p50_ns", "float64", "ns", "median of the same"),
        _c("issue_ns", "float64", "ns", "mean: host time to stage its batch and issue the work"),
        _c("gpu_busy_pct", "float64", "%", "union of batches' device spans over the window"),
        _c("batch_mean", "float64", doc="achieved batch size, items (mean over batches)"),
        _c("littles_ratio", "float64", doc="closed loop: throughput x mean latency / C"),
        _c("checked", "int64", doc="answers checked against the reference (sampled)"),
        _c("failed", "int64", doc="of those, answers that failed the study's rule"),
        _c("offline_items_per_s", "float64", "items/s", "the stage's infer on full batches"),
        _c("flag", "string", doc="why the point is not good (empty when it is)"),
    ),
)

SERVE_WINDOWS = Table(
    "serve_windows",
    "`profgen serve`: each point's measured window cut in equal parts, the regression gate's "
    "samples.",
    (
        _POINT,
        _c("window", "int64", doc="0-based part"),
        _c("requests", "int64"),
        _c("p99_ns", "float64", "ns", "p99 latency of the requests answered in the part"),
        _c("item_ns", "float64", "ns", "the part's length / items answered in it (1/throughput)"),
    ),
)

SERVE_HISTOGRAM = Table(
    "serve_histogram",
    "`profgen serve`: each point's latency histogram, HdrHistogram-style log buckets.",
    (
        _POINT,
        _c("low_ns", "int64", "ns"),
        _c("high_ns", "int64", "ns"),
        _c("count", "int64"),
    ),
)

TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        GPU_TRACE,
        API_TRACE,
        RANGE_TRACE,
        GPU_ACTIVITIES,
        API_CALLS,
        RANGES,
        STAGES,
        SAMPLES,
        METRICS,
        COUNTERS,
        BATCH_SWEEP,
        LAYERS,
        REGRESSIONS,
        SERVE_POINTS,
        SERVE_WINDOWS,
        SERVE_HISTOGRAM,
    )
}


def table(name: str) -> Table:
    """The table called `name`. Raises: SchemaError naming the known tables."""
    try:
        return TABLES[name]
    except KeyError:
        raise SchemaError(f"unknown table {name!r}; known: {', '.join(TABLES)}") from None


def empty(tbl: Table) -> pd.DataFrame:
    """An empty DataFrame with `tbl`'s columns and dtypes."""
    return pd.DataFrame({c.name: pd.Series(dtype=c.dtype) for c in tbl.columns})


def conform(df: pd.DataFrame, tbl: Table, fill: Iterable[str] = ()) -> pd.DataFrame:
    """Select `tbl`'s columns in order and cast them to its dtypes.

    Columns named in `fill` may be absent and are added as missing values, and so may columns
    marked `added` (they get their default); any other absent column is an error. Extra columns
    are dropped.

    Raises: SchemaError when a column is absent or cannot be cast.
    """
    fill = set(fill)
    out = {}
    for col in tbl.columns:
        if col.name in df.columns:
            series = df[col.name]
        elif col.added and col.default is not None:
            series = pd.Series(col.default, index=df.index, dtype="object")
        elif col.name in fill or col.added:
            series = _missing(col.dtype, df.index)
        else:
            raise SchemaError(f"table {tbl.name}: column {col.name!r} is missing")
        try:
            out[col.name] = _cast(series, col.dtype)
        except (TypeError, ValueError) as exc:
            raise SchemaError(
                f"table {tbl.name}: column {col.name!r} is not {col.dtype}: {exc}"
            ) from exc
    frame = pd.DataFrame(out, index=df.index, copy=False)
    if isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1:
        return frame
    return frame.reset_index(drop=True)


def _missing(dtype: str, index: pd.Index) -> pd.Series:
    """A column of missing values of `dtype`, built in that dtype (casting a million NA
    objects to `string` costs a tenth of a second)."""
    if dtype == "string":
        pool = pd.array([pd.NA], dtype="string")
        return pd.Series(pool.take(np.zeros(len(index), dtype=np.intp)), index=index)
    missing = float("nan") if dtype == "float64" else pd.NA
    return pd.Series(missing, index=index, dtype="object")


def _cast(series: pd.Series, dtype: str) -> pd.Series:
    if str(series.dtype) == dtype:
        return series
    if dtype in ("int64", "Int64") and series.dtype.kind == "f":  # 3.0 -> 3, 3.5 -> error
        nonint = series.notna() & (series != series.round())
        if nonint.any():
            raise ValueError(f"non-integer value {series[nonint].iloc[0]!r}")
        if dtype == "Int64":
            return series.round().astype("Int64")
    return series.astype(pd.api.types.pandas_dtype(dtype))


def validate(df: pd.DataFrame, tbl: Table) -> pd.DataFrame:
    """Check that `df` has exactly `tbl`'s columns, in order, with its dtypes; return `df`.

    Raises: SchemaError naming the first difference.
    """
    if list(df.columns) != tbl.names:
        missing = [n for n in tbl.names if n not in df.columns]
        extra = [n for n in df.columns if n not in tbl.names]
        raise SchemaError(
            f"table {tbl.name}: columns differ (missing {missing}, extra {extra}, or out of order)"
        )
    for col in tbl.columns:
        if str(df[col.name].dtype) != col.dtype:
            raise SchemaError(
                f"table {tbl.name}: column {col.name!r} is {df[col.name].dtype}, not {col.dtype}"
            )
    return df
