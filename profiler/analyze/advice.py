"""Advice: plain rules over the run's tables, each finding with its evidence and its technique.

Every rule is a function from tables to a DataFrame with `FINDINGS` columns (empty when it finds
nothing); `findings` runs them all. Thresholds are module constants, named and documented, so a
reader can see why a rule fired. A rule never guesses: without the table it needs, it is silent.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from profiler import schema
from profiler.analyze.overlap import ceiling_value
from profiler.schema import Column

#: a stage that synchronises at least this often per kernel launch: about once after every launch
#: (a stage that synchronises once per call, at the end, has a few syncs for many launches; the
#: host's wait for the GPU may then fill its API time, but no synchronisation is redundant) ...
SYNCS_PER_LAUNCH = 0.5
#: ... and whose synchronisation calls take at least this share of its runtime API time (under
#: nsys a blocking pageable cudaMemcpy can take most of it: LeNet's fc_opt syncs after each of
#: its 7 launches, 12% of its API time, behind the 31 MB input copy)
SYNC_SHARE_PCT = 10.0
#: many short kernels: at least this many per profiled repeat ...
MANY_KERNELS = 100
#: ... with a median duration under this ...
SHORT_KERNEL_NS = 20_000
#: ... while the GPU idles at least this share of the repeat's span
IDLE_PCT = 30.0
#: copies that matter: at least this share of GPU time ...
COPY_SHARE_PCT = 10.0
#: ... and hide less than this share of the shorter of copy and kernel time (overlap can hide at
#: most the shorter of the two: copies that are 95% of GPU time can overlap kernels at most 5%)
HIDDEN_PCT = 5.0
#: a kernel that matters (share of its stage's profiled kernel time) ...
KERNEL_SHARE_PCT = 5.0
#: ... reaching less than this share of the ceiling of the resource that bounds it; when its
#: achieved occupancy (ncu) is also under this, too few warps are resident to hide latency and the
#: answer is more parallel work per launch, not a different access pattern
EFFICIENCY_PCT = 30.0
LOW_OCCUPANCY_PCT = 20.0

#: each rule's problem, in a few words (a finding may say more, e.g. name the kernel)
RULE_TITLES = {
    "pageable_copies": "Copies from pageable host memory",
    "sync_dominated": "API time dominated by synchronisation",
    "short_kernels_with_gaps": "Many short kernels with gaps between them",
    "serial_copies": "Copies never overlap kernels",
    "low_efficiency": "Low achieved bandwidth or FLOP rate against the ceilings",
}

FINDINGS = schema.Table(
    "findings",
    "One row per finding of an advice rule.",
    (
        Column("stage", "string"),
        Column("rule", "string", doc="the rule's function name"),
        Column("finding", "string", doc="what is wrong, in a few words"),
        Column("evidence", "string", doc="the numbers that show it"),
        Column("technique", "string", doc="what answers it"),
        Column("weight_pct", "float64", "%", "share of the stage's time (GPU or API) concerned"),
    ),
)

_SYNC_CALLS = ("Synchronize",)  # cudaDeviceSynchronize, cudaStreamSynchronize, cuCtxSynchronize...
_LAUNCH_CALLS = ("LaunchKernel", "LaunchCooperativeKernel", "GraphLaunch")  # cuLaunchKernel, ...


def _frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    out = pd.DataFrame(rows, columns=FINDINGS.names) if rows else schema.empty(FINDINGS)
    return schema.validate(schema.conform(out, FINDINGS), FINDINGS)


def pageable_copies(
    gpu_trace: pd.DataFrame, ceilings: Mapping[str, object] | None = None
) -> pd.DataFrame:
    """Copies to or from pageable host memory: the driver stages them through a pinned buffer.

    Returns: DataFrame with `FINDINGS` columns, one row per stage that has such copies.
    """
    copies = gpu_trace[gpu_trace["kind"] == schema.MEMCPY]
    pageable = (copies["src_kind"] == "pageable") | (copies["dst_kind"] == "pageable")
    copies = copies.assign(pageable=pageable.fillna(False).astype(bool))
    gpu_ns = gpu_trace.groupby("stage")["duration_ns"].sum()
    rows = []
    for stage, g in copies.groupby("stage", sort=False):
        bad = g[g["pageable"]]
        if bad.empty:
            continue
        rows.append(
            {
                "stage": stage,
                "rule": "pageable_copies",
                "finding": "copies from pageable host memory",
                "evidence": (
                    f"{len(bad)} of {len(g)} copies in the trace "
                    f"({bad['bytes'].fillna(0).sum() / 1e6:.1f} MB) use pageable host memory: "
                )
                + "; ".join(_rates(bad, ceilings)),
                "technique": (
                    "pin the host buffers (page-locked memory: cudaHostAlloc, "
                    "cupy.cuda.alloc_pinned_memory) so copies go straight to the device "
                    "and can be asynchronous"
                ),
                "weight_pct": bad["duration_ns"].sum() / gpu_ns[stage] * 100.0,
            }
        )
    return _frame(rows)


def _rates(copies: pd.DataFrame, ceilings: Mapping[str, object] | None) -> list[str]:
    """`HtoD at 3.0 GB/s (6% of the pinned 53.2 GB/s)` for each copy direction."""
    out = []
    for kind, g in copies.groupby("copy_kind", sort=True):
        rate = g["bytes"].fillna(0).sum() / g["duration_ns"].sum() * 1e9
        text = f"{kind} at {_rate_text(rate)}"
        label = {"HtoD": "h2d", "DtoH": "d2h"}.get(str(kind))
        pinned = ceiling_value(ceilings, f"{label}_pinned_bytes_per_s") if label else float("nan")
        if pinned == pinned:
            text += f" ({rate / pinned * 100:.0f}% of the pinned {pinned / 1e9:.1f} GB/s)"
        out.append(text)
    return out


def _rate_text(bytes_per_s: float) -> str:
    """`3.0 GB/s`, `27.6 MB/s`: one decimal, in the largest unit that keeps it >= 1."""
    for scale, unit in ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")):
        if bytes_per_s >= scale:
            return f"{bytes_per_s / scale:.1f} {unit}"
    return f"{bytes_per_s:.0f} B/s"


def sync_dominated(api_calls: pd.DataFrame) -> pd.DataFrame:
    """Stages whose runtime API time is mostly spent in synchronisation calls issued about as
    often as kernels are launched: synchronisations a single one at the end would replace.

    Returns: DataFrame with `FINDINGS` columns, one row per stage over `SYNC_SHARE_PCT` and
    `SYNCS_PER_LAUNCH`.
    """
    rows: list[dict[str, object]] = []
    for stage, g in api_calls.groupby("stage", sort=False):
        total = g["total_ns"].sum()
        sync = g[g["name"].str.contains("|".join(_SYNC_CALLS), regex=True)]
        launches = int(g.loc[g["name"].str.contains("|".join(_LAUNCH_CALLS)), "calls"].sum())
        syncs = int(sync["calls"].sum())
        share = sync["total_ns"].sum() / total * 100.0 if total else 0.0
        if share < SYNC_SHARE_PCT or syncs < SYNCS_PER_LAUNCH * launches:
            continue
        names = ", ".join(sorted(set(sync["name"])))
        rows.append(
            {
                "stage": stage,
                "rule": "sync_dominated",
                "finding": "API time dominated by synchronisation",
                "evidence": (
                    f"{syncs:,} synchronisation calls ({names}) for {launches:,} kernel "
                    f"launches take {share:.0f}% of the runtime API time"
                ),
                "technique": (
                    "remove redundant synchronisations: one sync after the last copy back, "
                    "not one after every launch"
                ),
                "weight_pct": share,
            }
        )
    return _frame(rows)


def short_kernels_with_gaps(
    overlap: pd.DataFrame, kernels_per_repeat: Mapping[str, float] | None = None
) -> pd.DataFrame:
    """Many short kernels with the GPU idle between them: launch overhead dominates.

    Args:
        overlap: DataFrame with `profiler.analyze.overlap.OVERLAP` columns.
        kernels_per_repeat: kernel launches per profiled repeat by stage, from the whole run's
            summaries, for a trace that keeps only part of the repeats (a trimmed sample run);
            default: counted in the trace (`overlap`).

    Returns: DataFrame with `FINDINGS` columns.
    """
    rows = []
    for r in overlap.to_dict("records"):
        per_repeat = (kernels_per_repeat or {}).get(r["stage"], r["kernels"] / max(r["repeats"], 1))
        idle_pct = 100.0 - r["busy_pct"] if r["busy_pct"] == r["busy_pct"] else 0.0
        if (
            per_repeat < MANY_KERNELS
            or not r["kernel_median_ns"] < SHORT_KERNEL_NS
            or idle_pct < IDLE_PCT
        ):
            continue
        rows.append(
            {
                "stage": r["stage"],
                "rule": "short_kernels_with_gaps",
                "finding": "many short kernels with gaps between them",
                "evidence": (
                    f"{per_repeat:,.0f} kernels per repeat, "
                    f"median {r['kernel_median_ns'] / 1e3:.1f} us; "
                    f"the GPU is idle {idle_pct:.0f}% of the traced span, in {r['gaps']:,} gaps"
                ),
                "technique": (
                    "batch the work (more images per launch), fuse consecutive kernels, "
                    "or capture the launch sequence in a CUDA graph"
                ),
                "weight_pct": idle_pct,
            }
        )
    return _frame(rows)


def serial_copies(overlap: pd.DataFrame) -> pd.DataFrame:
    """Copies that take a real share of GPU time and (almost) never overlap a kernel.

    Args:
        overlap: DataFrame with `profiler.analyze.overlap.OVERLAP` columns.

    Returns: DataFrame with `FINDINGS` columns.
    """
    rows = []
    for r in overlap.to_dict("records"):
        if not (
            r["memcpy_pct"] >= COPY_SHARE_PCT and r["kernels"] > 0 and r["hidden_pct"] < HIDDEN_PCT
        ):
            continue
        rows.append(
            {
                "stage": r["stage"],
                "rule": "serial_copies",
                "finding": "copies never overlap kernels",
                "evidence": (
                    f"copies are {r['memcpy_pct']:.0f}% of GPU time; a kernel runs during "
                    f"{r['overlap_pct']:.1f}% of the copy time, hiding "
                    f"{r['hidden_pct']:.1f}% of what overlap could hide"
                ),
                "technique": (
                    "split the batch into chunks on several streams (pinned memory, "
                    "cudaMemcpyAsync) so one chunk's copy runs while another computes"
                ),
                "weight_pct": r["memcpy_pct"],
            }
        )
    return _frame(rows)


def low_efficiency(roofline: pd.DataFrame) -> pd.DataFrame:
    """Kernels that matter and reach a small share of the ceiling that bounds them (ncu metrics).

    Args:
        roofline: DataFrame with `profiler.analyze.roofline.ROOFLINE` columns.

    Returns: DataFrame with `FINDINGS` columns, one row per such kernel.
    """
    bad = roofline[
        (roofline["share_pct"] >= KERNEL_SHARE_PCT) & (roofline["efficiency_pct"] < EFFICIENCY_PCT)
    ]
    rows = []
    for r in bad.to_dict("records"):
        memory = r["bound"] == "memory"
        what = (
            f"{r['bandwidth_pct']:.2g}% of peak DRAM bandwidth"
            if memory
            else f"{r['flops_pct']:.1f}% of peak FP32 rate"
        )
        evidence = (
            f"{r['name']} ({r['share_pct']:.0f}% of profiled kernel time, "
            f"{r['bound']}-bound at {r['intensity']:.2f} FLOP/byte) reaches {what}"
        )
        finding = f"{r['name']}: low achieved {'bandwidth' if memory else 'FLOP rate'}"
        technique = (
            "coalesce global memory accesses (consecutive threads, consecutive addresses)"
            if memory
            else "tile through shared memory and registers to reuse loaded data"
        )
        occupancy = r.get("occupancy_pct", float("nan"))
        if occupancy == occupancy and occupancy < LOW_OCCUPANCY_PCT:
            finding = f"{r['name']}: low occupancy"
            evidence += f", with {occupancy:.0f}% achieved occupancy"
            technique = (
                "give each launch more parallel work (more images per launch, more threads "
                "per output) so that enough warps are resident to hide latency"
            )
        rows.append(
            {
                "stage": r["stage"],
                "rule": "low_efficiency",
                "finding": finding,
                "evidence": evidence,
                "technique": technique,
                "weight_pct": r["share_pct"],
            }
        )
    return _frame(rows)


def findings(
    gpu_trace: pd.DataFrame,
    api_calls: pd.DataFrame,
    overlap: pd.DataFrame,
    roofline: pd.DataFrame,
    ceilings: Mapping[str, object] | None = None,
    order: list[str] | None = None,
    kernels_per_repeat: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Every rule's findings, by stage (in `order`, the study's) and decreasing weight.

    Args:
        gpu_trace: DataFrame with `schema.GPU_TRACE` columns.
        api_calls: DataFrame with `schema.API_CALLS` columns.
        overlap: DataFrame with `profiler.analyze.overlap.OVERLAP` columns.
        roofline: DataFrame with `profiler.analyze.roofline.ROOFLINE` columns (may be empty).
        ceilings: the run's `meta["ceilings"]`.
        order: stage keys in study order; stages not in it come last.
        kernels_per_repeat: see `short_kernels_with_gaps`.

    Returns: DataFrame with `FINDINGS` columns.
    """
    parts = [
        pageable_copies(gpu_trace, ceilings),
        sync_dominated(api_calls),
        short_kernels_with_gaps(overlap, kernels_per_repeat),
        serial_copies(overlap),
        low_efficiency(roofline),
    ]
    parts = [p for p in parts if not p.empty]
    if not parts:
        return schema.empty(FINDINGS)
    out = pd.concat(parts, ignore_index=True)
    position = {k: i for i, k in enumerate(order or [])}
    out["_pos"] = out["stage"].map(lambda k: position.get(k, len(position)))
    out = out.sort_values(["_pos", "weight_pct"], ascending=[True, False], kind="stable")
    return schema.validate(schema.conform(out, FINDINGS), FINDINGS)
