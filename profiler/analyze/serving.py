"""What a serving point measured, from its per-request and per-batch records: throughput,
latency percentiles from HdrHistogram-style log buckets, the latency split (queueing, H2D,
compute, D2H) and the server's own overhead, GPU busy time, achieved batch size; the honesty
checks (Little's law in closed loop, sampled answers, enough requests, an open loop that keeps
up); and across points the Pareto front of latency against throughput, its knee and the best
point under a latency objective.

Definitions (all host `perf_counter_ns`; device times are CUDA events mapped onto it):

- a request is *measured* when it was answered inside the measured window (after warm-up);
  throughput is measured items (requests) over the window's length;
- latency: answer time minus *scheduled* send time (open loop: the Poisson schedule's, so a
  server that falls behind is charged for it); queueing: scheduled send to the moment its
  batch left the queue; H2D, compute and D2H: its batch's event-timed copy in, kernels and copy
  out; overhead: latency minus queueing minus its batch's device span (first event to last),
  i.e. the time the request spent on the host around the device: its batch's gathering into
  the staging buffer and the call that starts it on the device, then noticing completion (a
  poll, or the driver's wait on the batch's last event) and copying the answers out. The
  loop's work is per batch (`profiler.collect.serve.loop`), so every request of a batch
  carries its batch's whole overhead;
- GPU busy %: the union of the batches' device spans over the window (streams overlap);
- Little's law (closed loop): throughput x mean latency = C, within `LITTLE_TOLERANCE`.

Pure: arrays and dicts in, DataFrames out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from profiler import schema
from profiler.analyze.overlap import union_ns

LITTLE_TOLERANCE = 0.05
MIN_REQUESTS = 100  # below this a p99 is one or two requests: the point is flagged
KEEP_UP = (
    0.95  # open loop: answered fewer than this share of the requests sent = past breaking point
)
WINDOWS = 10  # parts of the window: the regression gate's samples
SUB_BUCKETS = 128  # per power of two: values within 1/128 (0.8%) of their bucket's edges


# --- log buckets --------------------------------------------------------------------------


def bucket_index(values: np.ndarray) -> np.ndarray:
    """HdrHistogram-style bucket of each value (ns, >= 1): SUB_BUCKETS linear sub-buckets per
    power of two, so a bucket spans at most 1/SUB_BUCKETS of its values."""
    v = np.maximum(np.asarray(values, dtype=np.float64), 1.0)
    exp = np.floor(np.log2(v)).astype(np.int64)
    sub = np.floor((v / np.exp2(exp) - 1.0) * SUB_BUCKETS).astype(np.int64)
    return exp * SUB_BUCKETS + np.minimum(sub, SUB_BUCKETS - 1)


def bucket_edges(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[low, high) of buckets `index` in ns."""
    exp, sub = np.divmod(np.asarray(index, dtype=np.int64), SUB_BUCKETS)
    base = np.exp2(exp)
    return base * (1 + sub / SUB_BUCKETS), base * (1 + (sub + 1) / SUB_BUCKETS)


@dataclass(frozen=True)
class Histogram:
    """Counts per log bucket (sorted) and the exact maximum."""

    index: np.ndarray
    count: np.ndarray
    max_ns: float

    @classmethod
    def of(cls, values: np.ndarray) -> Histogram:
        if len(values) == 0:
            return cls(np.array([], np.int64), np.array([], np.int64), math.nan)
        index, count = np.unique(bucket_index(values), return_counts=True)
        return cls(index, count, float(np.max(values)))

    def percentile(self, q: float) -> float:
        """The value at percentile q (0-100): the upper edge of the bucket that holds it (the
        highest value equivalent to it, as HdrHistogram reports), never above the maximum."""
        if len(self.count) == 0:
            return math.nan
        rank = max(1, math.ceil(q / 100.0 * int(self.count.sum())))
        pos = int(np.searchsorted(np.cumsum(self.count), rank))
        _, high = bucket_edges(self.index[pos : pos + 1])
        return float(min(high[0], self.max_ns))

    def frame(self, point: str) -> pd.DataFrame:
        low, high = bucket_edges(self.index)
        df = pd.DataFrame(
            {"point": point, "low_ns": np.floor(low), "high_ns": np.ceil(high), "count": self.count}
        )
        return schema.conform(df, schema.SERVE_HISTOGRAM)


# --- one point ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PointTables:
    row: dict[str, Any]
    windows: pd.DataFrame
    histogram: pd.DataFrame


def config_label(facts: Mapping[str, Any]) -> str:
    """`b32-w200us-s2-graphs`: the engine configuration of a point."""
    graphs = "-graphs" if facts.get("graphs") else ""
    wait = f"{float(facts['max_wait_us']):g}"
    return f"b{facts['max_batch']}-w{wait}us-s{facts.get('lanes', facts['streams'])}{graphs}"


def measured(arrays: Mapping[str, np.ndarray], measure_ns: int, end_ns: int) -> np.ndarray:
    """Mask of the requests answered inside [measure_ns, end_ns)."""
    reply = arrays["request_reply_ns"]
    return (reply >= measure_ns) & (reply < end_ns)


def request_split(arrays: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Per request: latency, queueing, its batch's H2D, compute, D2H, the overhead (ns; NaN
    where the engine gave no device times) and the host time its batch took to be staged and
    issued (part of it overlaps the device span: the GPU starts on the copy while the host
    issues the kernels)."""
    batch = arrays["request_batch"]
    dev = {
        k: arrays[f"batch_{k}_ns"][batch].astype(np.float64)
        for k in ("h2d", "compute", "d2h", "end")
    }
    known = dev["h2d"] >= 0
    for v in dev.values():
        v[~known] = np.nan
    latency = (arrays["request_reply_ns"] - arrays["request_sched_ns"]).astype(np.float64)
    queue = (arrays["request_dispatch_ns"] - arrays["request_sched_ns"]).astype(np.float64)
    span = dev["end"] - dev["h2d"]
    return pd.DataFrame(
        {
            "latency": latency,
            "queue": queue,
            "h2d": dev["compute"] - dev["h2d"],
            "compute": dev["d2h"] - dev["compute"],
            "d2h": dev["end"] - dev["d2h"],
            "overhead": latency - queue - span,
            "issue": (arrays["batch_launched_ns"] - arrays["batch_dispatch_ns"])[batch].astype(
                np.float64
            ),
        }
    )


def gpu_busy_pct(arrays: Mapping[str, np.ndarray], measure_ns: int, end_ns: int) -> float:
    start, end = arrays["batch_h2d_ns"], arrays["batch_end_ns"]
    keep = (start >= 0) & (end > measure_ns) & (start < end_ns)
    if not keep.any():
        return math.nan
    s, e = np.clip(start[keep], measure_ns, end_ns), np.clip(end[keep], measure_ns, end_ns)
    return 100.0 * union_ns(s, e) / (end_ns - measure_ns)


def analyse_point(facts: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> PointTables:
    """The point's `schema.SERVE_POINTS` row (a dict), its windows and its histogram."""
    label = str(facts["label"])
    win = facts["window"]
    m0, m1 = int(win["measure_ns"]), int(win["end_ns"])
    dur = m1 - m0
    mask = measured(arrays, m0, m1)
    split = request_split(arrays)[mask]
    r = int(facts["request_items"])
    n = int(mask.sum())
    hist = Histogram.of(split["latency"].to_numpy())
    bmask = (arrays["batch_done_ns"] >= m0) & (arrays["batch_done_ns"] < m1)
    closed = facts["mode"] == "closed"
    row: dict[str, Any] = {
        "point": label,
        "config": config_label(facts),
        "engine": facts.get("engine", ""),
        "mode": facts["mode"],
        "concurrency": facts.get("concurrency") if closed else None,
        "rate_rps": math.nan if closed else float(facts.get("rate_rps", math.nan)),
        "request_items": r,
        "max_batch": int(facts["max_batch"]),
        "max_wait_ns": int(float(facts["max_wait_us"]) * 1000),
        "streams": int(facts.get("lanes", facts["streams"])),
        "graphs": bool(facts.get("graphs")) and facts.get("engine") in ("streams", "in-place"),
        "duration_ns": dur,
        "requests": n,
        "items_per_s": n * r / dur * 1e9,
        "requests_per_s": n / dur * 1e9,
        "p50_ns": hist.percentile(50),
        "p90_ns": hist.percentile(90),
        "p99_ns": hist.percentile(99),
        "max_ns": hist.max_ns,
        "mean_ns": _mean(split["latency"]),
        **{f"{k}_ns": _mean(split[k]) for k in ("queue", "h2d", "compute", "d2h", "overhead")},
        "overhead_p50_ns": float(split["overhead"].median()) if n else math.nan,
        "issue_ns": _mean(split["issue"]),
        "gpu_busy_pct": gpu_busy_pct(arrays, m0, m1),
        "batch_mean": float(arrays["batch_items"][bmask].mean()) if bmask.any() else math.nan,
        "littles_ratio": math.nan,
        "checked": int(facts.get("checked", 0)),
        "failed": len(facts.get("failures", [])),
        "offline_items_per_s": float(facts.get("offline_items_per_s", math.nan)),
    }
    sched = arrays["request_sched_ns"]
    offered = int(((sched >= m0) & (sched < m1)).sum())
    row["keep_up"] = n / offered if offered else math.nan
    if closed and n:
        row["littles_ratio"] = (
            row["requests_per_s"] * row["mean_ns"] / 1e9 / int(facts["concurrency"])
        )
    row["flag"] = point_flag(row)
    return PointTables(row, _windows(label, arrays, mask, m0, dur, r), hist.frame(label))


def _mean(values: pd.Series) -> float:
    return float(values.mean()) if len(values) and values.notna().any() else math.nan


def point_flag(row: Mapping[str, Any]) -> str:
    """Why a point is not good ('' when it is): wrong answers, too few requests, Little's law
    broken (closed loop), an open loop that did not keep up with its offered rate."""
    flags = []
    if row["failed"]:
        flags.append(f"{row['failed']} of {row['checked']} checked answers wrong")
    if row["requests"] < MIN_REQUESTS:
        flags.append(f"only {row['requests']} requests measured (< {MIN_REQUESTS})")
    ratio = row["littles_ratio"]
    if row["mode"] == "closed" and not (abs(ratio - 1.0) <= LITTLE_TOLERANCE):
        flags.append(f"Little's law off by {100 * (ratio - 1):+.1f}% (throughput x latency / C)")
    keep_up = row.get("keep_up", math.nan)
    if row["mode"] == "open" and not keep_up >= KEEP_UP:
        flags.append(
            f"past the breaking point: answered {100 * keep_up:.0f}% as many requests as were "
            "sent in the window"
        )
    return "; ".join(flags)


def _windows(
    label: str, arrays: Mapping[str, np.ndarray], mask: np.ndarray, m0: int, dur: int, r: int
) -> pd.DataFrame:
    reply = arrays["request_reply_ns"][mask]
    latency = (reply - arrays["request_sched_ns"][mask]).astype(np.float64)
    part = np.minimum(((reply - m0) * WINDOWS) // dur, WINDOWS - 1)
    rows = []
    for w in range(WINDOWS):
        lat = latency[part == w]
        rows.append(
            {
                "point": label,
                "window": w,
                "requests": len(lat),
                "p99_ns": Histogram.of(lat).percentile(99),
                "item_ns": dur / WINDOWS / (len(lat) * r) if len(lat) else math.nan,
            }
        )
    return schema.conform(pd.DataFrame(rows), schema.SERVE_WINDOWS)


def points_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows of `analyse_point` as a `schema.SERVE_POINTS` frame."""
    if not rows:
        return schema.empty(schema.SERVE_POINTS)
    return schema.validate(
        schema.conform(pd.DataFrame(rows), schema.SERVE_POINTS), schema.SERVE_POINTS
    )


# --- across points --------------------------------------------------------------------------


def good(points: pd.DataFrame) -> pd.Series:
    """Points with no flag: the only ones a front, knee or recommendation may use."""
    return points["flag"].fillna("") == ""


def pareto_front(points: pd.DataFrame) -> pd.Series:
    """Mask of the good points no other good point beats on both throughput (items/s, higher
    is better) and p99 latency (lower is better)."""
    ok = good(points)
    thr, p99 = points["items_per_s"].to_numpy(), points["p99_ns"].to_numpy()
    front = np.zeros(len(points), dtype=bool)
    for i in np.flatnonzero(ok.to_numpy()):
        others = ok.to_numpy() & (np.arange(len(points)) != i)
        dominated = others & (thr >= thr[i]) & (p99 <= p99[i]) & ((thr > thr[i]) | (p99 < p99[i]))
        front[i] = not dominated.any()
    return pd.Series(front, index=points.index)


def knee(points: pd.DataFrame) -> str | None:
    """The knee of the front: the front point farthest from the chord between its two ends,
    throughput and p99 each scaled to 0..1 (past it, p99 grows faster than throughput)."""
    front = points[pareto_front(points)].sort_values("items_per_s")
    if len(front) < 3:
        return None
    x = front["items_per_s"].to_numpy(dtype=np.float64)
    y = front["p99_ns"].to_numpy(dtype=np.float64)
    x = (x - x[0]) / (x[-1] - x[0]) if x[-1] > x[0] else np.zeros_like(x)
    y = (y - y.min()) / (y.max() - y.min()) if y.max() > y.min() else np.zeros_like(y)
    dx, dy = x[-1] - x[0], y[-1] - y[0]
    dist = np.abs(dy * (x - x[0]) - dx * (y - y[0])) / max(math.hypot(dx, dy), 1e-12)
    return str(front["point"].iloc[int(np.argmax(dist))])


def best_under_slo(points: pd.DataFrame, slo_ns: float) -> str | None:
    """The good point with the most throughput whose p99 is within `slo_ns`."""
    ok = points[good(points) & (points["p99_ns"] <= slo_ns)]
    if ok.empty:
        return None
    return str(ok.sort_values(["items_per_s", "p99_ns"], ascending=[False, True])["point"].iloc[0])


def slo_sentence(points: pd.DataFrame, slo_ns: float, unit: str) -> str:
    """The report's one sentence on the best configuration under the latency objective."""
    best = best_under_slo(points, slo_ns)
    slo = f"{slo_ns / 1e6:g} ms"
    if best is None:
        return f"No configuration meets a p99 of {slo} (among points that passed every check)."
    row = points[points["point"] == best].iloc[0]
    return (
        f"The configuration with the most throughput under {slo} at p99 is {row['config']} at "
        f"{_load(row)}: {row['items_per_s']:,.0f} {unit}/s, p99 {row['p99_ns'] / 1e3:,.1f} us."
    )


def _load(row: pd.Series) -> str:
    if row["mode"] == "closed":
        return f"concurrency {int(row['concurrency'])}"
    return f"{row['rate_rps']:,.0f} requests/s offered"


def littles_table(points: pd.DataFrame) -> pd.DataFrame:
    """Closed-loop points: C, throughput, mean latency, their product and the verdict."""
    closed = points[points["mode"] == "closed"]
    return pd.DataFrame(
        {
            "point": closed["point"],
            "concurrency": closed["concurrency"],
            "requests_per_s": closed["requests_per_s"],
            "mean_ns": closed["mean_ns"],
            "product": closed["requests_per_s"] * closed["mean_ns"] / 1e9,
            "ratio": closed["littles_ratio"],
            "holds": (closed["littles_ratio"] - 1.0).abs() <= LITTLE_TOLERANCE,
        }
    )


def overhead_share(points: pd.DataFrame) -> pd.DataFrame:
    """Closed-loop points at concurrency 1: the server's overhead (median) against the median
    latency, the share the issue's target bounds (<= 10% for single-item requests)."""
    one = points[(points["mode"] == "closed") & (points["concurrency"] == 1)]
    return pd.DataFrame(
        {
            "point": one["point"],
            "overhead_p50_ns": one["overhead_p50_ns"],
            "p50_ns": one["p50_ns"],
            "share_pct": 100 * one["overhead_p50_ns"] / one["p50_ns"],
        }
    )


def offline_ratio(points: pd.DataFrame, point: str) -> float:
    """Offline throughput at the point's batch size over the point's served throughput."""
    row = points[points["point"] == point].iloc[0]
    return (
        float(row["offline_items_per_s"] / row["items_per_s"]) if row["items_per_s"] else math.nan
    )
