"""The serving analysis, pure: log-bucket percentiles against exact ones, the latency split and
overhead from hand-made records, Little's law and the other flags, the Pareto front, its knee,
the answer under the objective (never a flagged point), and the regression gate's serve checks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from profiler import schema
from profiler.analyze import regress, serving
from profiler.store import Run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_log_bucket_percentiles_are_within_one_bucket_of_exact(seed: int) -> None:
    values = np.random.default_rng(seed).lognormal(11, 1.2, 20_000)  # ~60 us, long tail
    hist = serving.Histogram.of(values)
    for q in (50, 90, 99, 99.9):
        exact = np.percentile(values, q, method="inverted_cdf")
        got = hist.percentile(q)
        assert exact <= got <= exact * (1 + 1 / serving.SUB_BUCKETS) + 1, (q, exact, got)
    assert hist.percentile(100) == values.max()
    assert int(hist.count.sum()) == len(values)


def test_bucket_edges_hold_their_values() -> None:
    values = np.array([1, 2, 3, 127, 128, 129, 1000, 65_537, 10**9])
    low, high = serving.bucket_edges(serving.bucket_index(values))
    assert (low <= values).all() and (values < high).all()
    assert ((high - low) / low <= 1 / serving.SUB_BUCKETS + 1e-12).all()


def records(latency_us: list[float], queue_us: float = 10, device_us: float = 20) -> dict:
    """One request a batch, requests back to back, each with known parts (us)."""
    n = len(latency_us)
    lat = (np.array(latency_us) * 1000).astype(np.int64)
    sched = np.cumsum(np.r_[0, lat[:-1]]).astype(np.int64) + 1_000_000
    reply = sched + lat
    dispatch = sched + int(queue_us * 1000)
    h2d = dispatch + 2_000
    end = h2d + int(device_us * 1000)
    return {
        "request_client": np.zeros(n, np.int64),
        "request_item": np.zeros(n, np.int64),
        "request_sched_ns": sched,
        "request_arrive_ns": sched,
        "request_dispatch_ns": dispatch,
        "request_reply_ns": reply,
        "request_batch": np.arange(n),
        "batch_lane": np.zeros(n, np.int64),
        "batch_items": np.ones(n, np.int64),
        "batch_requests": np.ones(n, np.int64),
        "batch_dispatch_ns": dispatch,
        "batch_launched_ns": dispatch + 1_000,
        "batch_done_ns": end + 500,
        "batch_h2d_ns": h2d,
        "batch_compute_ns": h2d + 3_000,
        "batch_d2h_ns": end - 2_000,
        "batch_end_ns": end,
    }


def facts(arrays: dict, concurrency: int = 1, **kw) -> dict:
    return {
        "label": kw.get("label", "p"),
        "mode": "closed",
        "concurrency": concurrency,
        "request_items": 1,
        "max_batch": 1,
        "max_wait_us": 0,
        "streams": 1,
        "graphs": False,
        "engine": "streams",
        "checked": 3,
        "failures": kw.get("failures", []),
        "window": {
            "measure_ns": int(arrays["request_sched_ns"][0]),
            "end_ns": int(arrays["request_reply_ns"][-1]) + 1,
        },
    }


def test_split_and_overhead_from_records() -> None:
    arrays = records([50.0] * 200)
    row = serving.analyse_point(facts(arrays), arrays).row
    assert row["queue_ns"] == pytest.approx(10_000)
    assert row["h2d_ns"] == pytest.approx(3_000)
    assert row["compute_ns"] == pytest.approx(15_000)
    assert row["d2h_ns"] == pytest.approx(2_000)
    assert row["overhead_ns"] == pytest.approx(50_000 - 10_000 - 20_000)
    assert row["issue_ns"] == pytest.approx(1_000)
    assert row["p50_ns"] == pytest.approx(50_000, rel=1 / 128)
    assert row["gpu_busy_pct"] == pytest.approx(40, rel=0.02)  # 20 of every 50 us
    assert abs(row["littles_ratio"] - 1) < 0.01 and row["flag"] == ""


def test_littles_law_breaks_when_the_load_was_not_what_it_claims() -> None:
    arrays = records([50.0] * 200)
    row = serving.analyse_point(facts(arrays, concurrency=2), arrays).row  # one client really
    assert row["littles_ratio"] == pytest.approx(0.5, rel=0.01)
    assert "Little's law off by -50" in row["flag"]


def test_wrong_answers_and_few_requests_are_flagged() -> None:
    arrays = records([50.0] * 40)
    row = serving.analyse_point(facts(arrays, failures=["x"]), arrays).row
    assert "1 of 3 checked answers wrong" in row["flag"] and "only 40 requests" in row["flag"]


def table(rows: list[tuple]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["point", "items_per_s", "p99_ns", "flag"])
    df["config"] = df["point"].str.split("@").str[0]
    df["mode"], df["concurrency"], df["rate_rps"] = "closed", 4, math.nan
    return df


POINTS = table(
    [
        ("a@1", 1000, 100_000, ""),
        ("a@2", 3000, 150_000, ""),
        ("a@3", 5000, 300_000, ""),
        ("a@4", 5200, 2_000_000, ""),
        ("b@1", 900, 200_000, ""),  # b@1: dominated by a@1
        ("b@2", 9000, 400_000, "Little's law off by -20.0%"),  # would dominate, but flagged
    ]
)


def test_pareto_front_keeps_only_undominated_good_points() -> None:
    front = POINTS.loc[serving.pareto_front(POINTS), "point"].tolist()
    assert front == ["a@1", "a@2", "a@3", "a@4"]


def test_knee_is_where_latency_turns_up() -> None:
    assert serving.knee(POINTS) == "a@3"


def test_best_under_slo_never_picks_a_flagged_point() -> None:
    assert serving.best_under_slo(POINTS, 1e6) == "a@3"
    assert serving.best_under_slo(POINTS, 5e6) == "a@4"
    assert serving.best_under_slo(POINTS, 50_000) is None
    text = serving.slo_sentence(POINTS, 1e6, "images")
    assert text.startswith("The configuration with the most throughput under 1 ms at p99 is a at")
    assert "5,000 images/s" in text
    assert "No configuration meets" in serving.slo_sentence(POINTS, 1e4, "images")


def serve_run(p99_scale: float, item_scale: float, flag: str = "", seed: int = 0) -> Run:
    rng = np.random.default_rng(seed)
    windows = pd.DataFrame(
        {
            "point": "c4",
            "window": np.arange(10),
            "requests": 1000,
            "p99_ns": 100_000 * p99_scale * rng.uniform(0.98, 1.02, 10),
            "item_ns": 2_000 * item_scale * rng.uniform(0.98, 1.02, 10),
        }
    )
    points = serving.points_table([])
    points = pd.concat([points, pd.DataFrame({"point": ["c4"], "flag": [flag]})], ignore_index=True)
    return Run(
        meta={"source": "serve"},
        tables={
            schema.SERVE_WINDOWS.name: schema.conform(windows, schema.SERVE_WINDOWS),
            schema.SERVE_POINTS.name: points,
        },
    )


def verdicts(base: Run, new: Run) -> dict[str, str]:
    checks = [regress.parse_check(t) for t in ("serve:p99:10%", "serve:throughput:10%")]
    out = regress.evaluate(base, new, checks)
    return dict(zip(out["name"], out["verdict"], strict=True))


def test_serve_gate_finds_a_slower_p99_and_a_lower_throughput() -> None:
    assert verdicts(serve_run(1, 1), serve_run(1.5, 1, seed=1)) == {
        "p99": "regression",
        "throughput": "unchanged",
    }
    assert verdicts(serve_run(1, 1), serve_run(1, 1.3, seed=1))["throughput"] == "regression"
    assert verdicts(serve_run(1, 1), serve_run(0.7, 1, seed=1))["p99"] == "improvement"
    assert verdicts(serve_run(1, 1), serve_run(1.03, 1, seed=1))["p99"] == "unchanged"


def test_serve_gate_fails_a_flagged_point() -> None:
    out = verdicts(serve_run(1, 1), serve_run(1, 1, flag="2 of 9 checked answers wrong"))
    assert out == {"p99": "failed", "throughput": "failed"}
    checks = [regress.parse_check("serve:p99:10%")]
    assert (
        regress.exit_code(regress.evaluate(serve_run(1, 1), serve_run(1.5, 1, seed=2), checks)) == 1
    )
