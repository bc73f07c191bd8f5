"""Golden tests on the tables the templates receive (not on HTML bytes), for a recorded H100
run (`tests/data/runs/lenet-h100-schema1-cupti`), each golden value checked once more by a second
computation that does not go through profgen's analysis code:

- the staged table, from the workers' own result files (`raw/<stage>/result.json`: every timed
  and profiled repeat's host time) with the statistics module;
- the GPU-activities tables, from the stages' full Chrome traces (`raw/<stage>/trace.json`, all
  five profiled repeats, written before the run was trimmed) read with the json module;
- the Amdahl shares, gains and stage-to-stage predictions, from `gpu_activities.csv`,
  `samples.csv` and `stages.csv` read with plain pandas and the formula written out here.

The fixture-built run (`runfactory.build_run`) keeps covering what the sample lacks (roofline
with hand-set ceilings, batch sweep, regressions, a FAIL and a TIMEOUT stage).

Regenerate the golden files (then check the diff by eye): `python tests/test_render_context.py`.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
import pytest
from runfactory import METRICS_RUN, SAMPLE_RUN, build_run, sample_run

from profiler import store
from profiler.render import html
from profiler.render.context import DEFERRED_TYPE, build_context, records
from profiler.store import Run

GOLDEN = Path(__file__).parent / "data" / "golden"
STAGED_COLUMNS = (
    "stage",
    "status",
    "reason",
    "median_ns",
    "min_ns",
    "max_ns",
    "spread_pct",
    "prev_stage",
    "speedup_prev",
    "speedup_baseline",
    "speedup_framework",
    "profiled_median_ns",
    "overhead_pct",
)
ACTIVITY_COLUMNS = (
    "name",
    "kind",
    "time_pct",
    "total_ns",
    "calls",
    "avg_ns",
    "min_ns",
    "max_ns",
    "bytes",
)
AMDAHL_COLUMNS = ("stage", "name", "share_pct", "total_ns", "gain_s1_15", "gain_s2", "gain_sinf")
TRANSITION_COLUMNS = (
    "prev_stage",
    "stage",
    "prev_gpu_ns",
    "gpu_ns",
    "top_name",
    "top_share_pct",
    "top_speedup",
    "predicted_top",
    "predicted_gpu",
    "measured",
)
STUDY = (
    "torch_cpu",
    "torch_gpu",
    "cuda_baseline",
    "batch_parallel",
    "conv_opt",
    "fc_opt",
    "no_sync",
    "pinned",
    "fc_coalesced",
    "overlap_fusion",
)


def golden_tables(ctx: dict[str, Any]) -> dict[str, Any]:
    """The parts of the context the golden files hold."""

    def pick(rows: list[dict[str, Any]], cols: tuple[str, ...]) -> list[dict[str, Any]]:
        return [{c: r[c] for c in cols} for r in rows]

    return {
        "staged_table": pick(ctx["staged"]["rows"], STAGED_COLUMNS),
        "gpu_activities": {
            s["stage"]: pick(s["activities"], ACTIVITY_COLUMNS)
            for s in ctx["stage_tables"]
            if s["activities"]
        },
        "amdahl": {
            "stages": [r for s in ctx["amdahl"]["stages"] for r in pick(s["rows"], AMDAHL_COLUMNS)],
            "transitions": pick(ctx["amdahl"]["transitions"], TRANSITION_COLUMNS),
        },
    }


def write_golden() -> None:
    for name, value in golden_tables(build_context(sample_run())).items():
        (GOLDEN / f"{name}.json").write_text(json.dumps(value, indent=1) + "\n")


def _load(name: str) -> Any:
    return json.loads((GOLDEN / f"{name}.json").read_text())


def _same(actual: Any, expected: Any, where: str = "") -> None:
    """Equal, floats to 1e-9 relative; fails naming the first difference."""
    if isinstance(expected, dict):
        assert list(actual) == list(expected), where
        for k in expected:
            _same(actual[k], expected[k], f"{where}.{k}")
    elif isinstance(expected, list):
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _same(a, e, f"{where}[{i}]")
    elif isinstance(expected, float) and not math.isinf(expected):
        assert actual == pytest.approx(expected, rel=1e-9), where
    else:
        assert actual == expected, where


@pytest.fixture(scope="module")
def ctx() -> dict[str, Any]:
    return build_context(sample_run())


@pytest.fixture(scope="module")
def fixture_ctx() -> dict[str, Any]:
    return build_context(build_run())


@pytest.mark.parametrize("name", ["staged_table", "gpu_activities", "amdahl"])
def test_context_matches_golden(ctx: dict[str, Any], name: str) -> None:
    _same(golden_tables(ctx)[name], _load(name), name)


def test_golden_files_cover_the_whole_study() -> None:
    assert [r["stage"] for r in _load("staged_table")] == list(STUDY)
    assert list(_load("gpu_activities")) == list(STUDY[1:])  # torch_cpu has no GPU work
    assert [(t["prev_stage"], t["stage"]) for t in _load("amdahl")["transitions"]] == list(
        zip(STUDY[1:], STUDY[2:], strict=False)
    )


# --- the staged table, from the workers' result files ----------------------------------------


def _result(stage: str) -> dict[str, Any]:
    return json.loads((SAMPLE_RUN / "raw" / stage / "result.json").read_text())


def _median_ns(values: list[int]) -> int:
    return round(statistics.median(values))  # 10 repeats: the mean of the 5th and 6th


def test_golden_staged_table_from_the_workers_results() -> None:
    rows = {r["stage"]: r for r in _load("staged_table")}
    medians = {s: _median_ns(_result(s)["timed_ns"]) for s in STUDY}
    for i, stage in enumerate(STUDY):
        result, row = _result(stage), rows[stage]
        timed, profiled = result["timed_ns"], result["profiled_ns"]
        assert len(timed) == 10 and result["status"] == row["status"] == "PASS", stage
        assert row["reason"] in (None, "") and result.get("reason", "") == ""
        assert (row["median_ns"], row["min_ns"], row["max_ns"]) == (
            medians[stage],
            min(timed),
            max(timed),
        )
        assert row["spread_pct"] == pytest.approx(
            (max(timed) - min(timed)) / medians[stage] * 100, rel=1e-12
        )
        assert row["profiled_median_ns"] == _median_ns(profiled)
        assert row["overhead_pct"] == pytest.approx(
            (_median_ns(profiled) / medians[stage] - 1) * 100, rel=1e-12
        )
        prev = STUDY[i - 1] if i else None  # every stage passed: the previous row
        assert row["prev_stage"] == prev
        expected = (
            medians[prev] / medians[stage] if prev else None,
            medians["cuda_baseline"] / medians[stage],
            medians["torch_gpu"] / medians[stage],
        )
        got = (row["speedup_prev"], row["speedup_baseline"], row["speedup_framework"])
        for g, e in zip(got, expected, strict=True):
            assert (g is None) if e is None else g == pytest.approx(e, rel=1e-12), stage


# The staged table as the report prints it (seconds to four significant digits, speedups),
# read off the sample run's report: the numbers a reader quotes.
PRINTED = {  # stage: (time, vs previous, vs CUDA baseline, vs framework GPU)
    "torch_cpu": ("0.1255s", "—", "12.44x", "0.04648x"),
    "torch_gpu": ("0.005836s", "21.51x", "267.6x", "1x"),
    "cuda_baseline": ("1.561s", "0.003737x", "1x", "0.003737x"),
    "batch_parallel": ("0.007168s", "217.8x", "217.8x", "0.8141x"),
    "conv_opt": ("0.006234s", "1.15x", "250.5x", "0.9361x"),
    "fc_opt": ("0.00519s", "1.201x", "300.9x", "1.125x"),
    "no_sync": ("0.003269s", "1.588x", "477.7x", "1.785x"),
    "pinned": ("0.001113s", "2.938x", "1403x", "5.245x"),
    "fc_coalesced": ("0.001068s", "1.041x", "1462x", "5.462x"),
    "overlap_fusion": ("0.0008357s", "1.278x", "1869x", "6.984x"),
}


def test_staged_table_as_printed(ctx: dict[str, Any]) -> None:
    for r in ctx["staged"]["rows"]:
        speedups = (r["speedup_prev"], r["speedup_baseline"], r["speedup_framework"])
        assert (html.seconds(r["median_ns"]), *map(html.speedup, speedups)) == PRINTED[r["stage"]]


# --- GPU activities, from the full Chrome traces ---------------------------------------------

# every stage whose full trace the sample keeps (cuda_baseline's 90,000 operations were dropped)
FULL_TRACES = STUDY[1:2] + STUDY[3:]


def _chrome_summary(stage: str) -> dict[str, dict[str, Any]]:
    """Per kernel or copy name over every profiled repeat of `stage`'s raw/<stage>/trace.json:
    total, calls, min, max (ns) and bytes, with the json module."""
    events = json.loads((SAMPLE_RUN / "raw" / stage / "trace.json").read_text())["traceEvents"]
    out: dict[str, dict[str, Any]] = {}
    for e in events:
        if e.get("cat") not in ("kernel", "memcpy", "memset"):
            continue
        d = round(e["dur"] * 1000)  # microseconds with 3 decimals: exact nanoseconds
        s = out.setdefault(e["name"], {"total": 0, "calls": 0, "min": d, "max": d, "bytes": None})
        s["total"] += d
        s["calls"] += 1
        s["min"], s["max"] = min(s["min"], d), max(s["max"], d)
        if e["cat"] == "memcpy":
            s["bytes"] = (s["bytes"] or 0) + e["args"]["bytes"]
    return out


@pytest.mark.parametrize("stage", FULL_TRACES)
def test_golden_gpu_activities_against_the_full_trace(stage: str) -> None:
    rows = {r["name"]: r for r in _load("gpu_activities")[stage]}
    summary = _chrome_summary(stage)
    assert set(rows) == set(summary)
    grand = sum(s["total"] for s in summary.values())
    for name, s in summary.items():
        r = rows[name]
        assert (r["total_ns"], r["calls"], r["min_ns"], r["max_ns"], r["bytes"]) == (
            s["total"],
            s["calls"],
            s["min"],
            s["max"],
            s["bytes"],
        ), (stage, name)
        assert r["kind"] == ("memcpy" if name.startswith("[CUDA memcpy") else "kernel")
        assert r["avg_ns"] == pytest.approx(s["total"] / s["calls"], rel=1e-12)
        assert r["time_pct"] == pytest.approx(s["total"] / grand * 100, rel=1e-12)
    totals = [r["total_ns"] for r in _load("gpu_activities")[stage]]
    assert totals == sorted(totals, reverse=True)  # nvprof's order


# Two tables as the report prints them (nvprof's columns), read off the sample run's report.
PRINTED_ACTIVITIES = {
    "no_sync": [
        ("89.84%", "18.09ms", "5", "3.619ms", "3.329ms", "3.957ms", "[CUDA memcpy HtoD]"),
        ("2.71%", "545.2us", "5", "109us", "108.8us", "109.3us", "Linear1_ReLu"),
        ("2.16%", "435.2us", "10", "43.52us", "21.5us", "65.83us", "MaxPool"),
        ("2.09%", "420.2us", "5", "84.05us", "83.62us", "84.32us", "Conv2_ReLu"),
        ("1.98%", "399.3us", "5", "79.85us", "79.3us", "80.39us", "Conv1_ReLu"),
        ("0.54%", "108.4us", "5", "21.68us", "21.5us", "21.92us", "Linear2_ReLu"),
        ("0.46%", "92.45us", "5", "18.49us", "18.24us", "18.72us", "Linear3"),
        ("0.22%", "44.93us", "5", "8.986us", "8.896us", "9.152us", "[CUDA memcpy DtoH]"),
    ],
    "overlap_fusion": [
        ("56.17%", "3.154ms", "40", "78.85us", "67.94us", "94.31us", "[CUDA memcpy HtoD]"),
        ("22.04%", "1.238ms", "40", "30.94us", "30.85us", "31.1us", "Linear_ReLu_Fused"),
        ("9.55%", "536.5us", "40", "13.41us", "13.34us", "13.54us", "Conv2_ReLu_Pool2"),
        ("9.18%", "515.5us", "40", "12.89us", "12.35us", "13.19us", "Conv1_ReLu_Pool1"),
        ("3.06%", "171.9us", "40", "4.299us", "2.304us", "8.417us", "[CUDA memcpy DtoH]"),
    ],
}


@pytest.mark.parametrize("stage", list(PRINTED_ACTIVITIES))
def test_gpu_activities_as_printed(ctx: dict[str, Any], stage: str) -> None:
    (table,) = [s["activities"] for s in ctx["stage_tables"] if s["stage"] == stage]
    printed = [
        (
            html.pct(a["time_pct"]),
            *(html.duration(a["total_ns"]),),
            html.count(a["calls"]),
            *(html.duration(a[k]) for k in ("avg_ns", "min_ns", "max_ns")),
            a["name"],
        )
        for a in table
    ]
    assert printed == PRINTED_ACTIVITIES[stage]


def test_golden_gpu_activities_of_the_per_image_stage_by_its_structure() -> None:
    """cuda_baseline (no full trace kept: 90,000 operations) issues, per image, one copy in,
    two Conv_ReLu, two MaxPool, three Linear_ReLu and one copy out: 3,136 bytes in, 40 out."""
    rows = {r["name"]: r for r in _load("gpu_activities")["cuda_baseline"]}
    images = 10_000
    per_image = {
        "[CUDA memcpy HtoD]": 1,
        "Conv_ReLu": 2,
        "MaxPool": 2,
        "Linear_ReLu": 3,
        "[CUDA memcpy DtoH]": 1,
    }
    assert {n: r["calls"] for n, r in rows.items()} == {n: k * images for n, k in per_image.items()}
    assert rows["[CUDA memcpy HtoD]"]["bytes"] == images * 28 * 28 * 4
    assert rows["[CUDA memcpy DtoH]"]["bytes"] == images * 10 * 4
    grand = sum(r["total_ns"] for r in rows.values())
    for r in rows.values():
        assert r["min_ns"] <= r["avg_ns"] <= r["max_ns"]
        assert r["avg_ns"] == pytest.approx(r["total_ns"] / r["calls"], rel=1e-12)
        assert r["time_pct"] == pytest.approx(r["total_ns"] / grand * 100, rel=1e-12)


# --- Amdahl, from the CSV files with plain pandas --------------------------------------------


def _csv(name: str) -> pd.DataFrame:
    return pd.read_csv(SAMPLE_RUN / name)


def _amdahl(p: float, s: float) -> float:
    return 1 / ((1 - p) + (0 if math.isinf(s) else p / s))


def test_golden_amdahl_shares_and_gains_by_formula() -> None:
    acts = _csv("gpu_activities.csv")
    golden = _load("amdahl")["stages"]
    assert len(golden) == len(acts)
    for r in golden:
        mine = acts[acts["stage"] == r["stage"]]
        p = float(mine.loc[mine["name"] == r["name"], "total_ns"].sum() / mine["total_ns"].sum())
        assert r["share_pct"] == pytest.approx(p * 100, rel=1e-12)
        assert r["gain_s1_15"] == pytest.approx(_amdahl(p, 1.15), rel=1e-12)
        assert r["gain_s2"] == pytest.approx(_amdahl(p, 2), rel=1e-12)
        assert r["gain_sinf"] == pytest.approx(_amdahl(p, math.inf), rel=1e-12)


def test_amdahl_of_the_overlap_stage_as_printed(ctx: dict[str, Any]) -> None:
    """overlap_fusion: the input copy is 56% of GPU time; removing it would buy +128%."""
    (stage,) = [s for s in ctx["amdahl"]["stages"] if s["stage"] == "overlap_fusion"]
    printed = [
        (
            html.pct(r["share_pct"], 1),
            *(html.gain(r[k]) for k in ("gain_s1_15", "gain_s2", "gain_sinf")),
            r["name"],
        )
        for r in stage["rows"]
    ]
    assert printed == [
        ("56.2%", "+7.9%", "+39.1%", "+128.1%", "[CUDA memcpy HtoD]"),
        ("22.0%", "+3.0%", "+12.4%", "+28.3%", "Linear_ReLu_Fused"),
        ("9.6%", "+1.3%", "+5.0%", "+10.6%", "Conv2_ReLu_Pool2"),
        ("9.2%", "+1.2%", "+4.8%", "+10.1%", "Conv1_ReLu_Pool1"),
        ("3.1%", "+0.4%", "+1.6%", "+3.2%", "[CUDA memcpy DtoH]"),
    ]


def _per_repeat(stage: str) -> pd.Series:
    """ns per profiled repeat by activity name: totals over the `profiled` samples' count."""
    acts, samples = _csv("gpu_activities.csv"), _csv("samples.csv")
    repeats = ((samples["stage"] == stage) & (samples["pass"] == "profiled")).sum()
    mine = acts[acts["stage"] == stage]
    return mine.groupby("name")["total_ns"].sum() / repeats


def test_golden_amdahl_transitions_by_hand() -> None:
    medians = _csv("stages.csv").set_index("stage")["median_ns"]
    for t in _load("amdahl")["transitions"]:
        before, after = _per_repeat(t["prev_stage"]), _per_repeat(t["stage"])
        change = (before - after.reindex(before.index).fillna(0)).abs()
        top = change.idxmax()
        p = before[top] / before.sum()
        s = before[top] / after[top] if top in after.index else math.inf
        assert (t["top_name"], t["prev_gpu_ns"], t["gpu_ns"]) == (
            top,
            pytest.approx(before.sum(), rel=1e-12),
            pytest.approx(after.sum(), rel=1e-12),
        )
        assert t["top_share_pct"] == pytest.approx(p * 100, rel=1e-12)
        assert t["top_speedup"] == (pytest.approx(s, rel=1e-12) if math.isfinite(s) else s)
        assert t["predicted_top"] == pytest.approx(_amdahl(p, s), rel=1e-12)
        assert t["predicted_gpu"] == pytest.approx(before.sum() / after.sum(), rel=1e-12)
        assert t["measured"] == pytest.approx(
            medians[t["prev_stage"]] / medians[t["stage"]], rel=1e-12
        )


def test_pinning_predicted_against_measured_by_hand() -> None:
    """no_sync -> pinned, from the numbers in gpu_activities.csv and stages.csv: the HtoD copy
    was 89.8% of no_sync's GPU time and got 6.03x faster; Amdahl predicts 3.99x from it alone,
    the GPU time shrinks 3.99x; the host measured 2.94x."""
    (t,) = [m for m in _load("amdahl")["transitions"] if m["stage"] == "pinned"]
    no_sync = 18_093_877 + 545_229 + 435_242 + 420_233 + 399_274 + 108_387 + 92_451 + 44_928
    pinned = 3_002_310 + 545_230 + 433_290 + 422_059 + 400_105 + 108_290 + 92_323 + 47_361
    p, s = 18_093_877 / no_sync, 18_093_877 / 3_002_310
    assert t["top_name"] == "[CUDA memcpy HtoD]"
    assert t["prev_gpu_ns"] == pytest.approx(no_sync / 5) and t["gpu_ns"] == pytest.approx(
        pinned / 5
    )
    assert t["top_share_pct"] == pytest.approx(p * 100) and t["top_speedup"] == pytest.approx(s)
    assert t["predicted_top"] == pytest.approx(1 / ((1 - p) + p / s))
    assert t["predicted_gpu"] == pytest.approx(no_sync / pinned)
    assert t["measured"] == pytest.approx(3_268_938 / 1_112_565)
    assert [html.speedup(t[k]) for k in ("top_speedup", "predicted_top", "measured")] == [
        "6.027x",
        "3.99x",
        "2.938x",
    ]


def test_transitions_use_each_stages_profiled_repeats() -> None:
    """cuda_baseline profiles one repeat, batch_parallel five: GPU time per repeat divides each
    stage's totals by its own count (the trimmed trace holds one repeat of each)."""
    (t,) = [m for m in _load("amdahl")["transitions"] if m["stage"] == "batch_parallel"]
    assert t["prev_gpu_ns"] == 421_366_844  # the whole of cuda_baseline's one repeat
    assert t["gpu_ns"] == pytest.approx(35_413_897 / 5)
    assert html.speedup(t["predicted_gpu"]) == "59.49x"


# --- the rest of the sample run's context ----------------------------------------------------


def test_sample_sections_follow_its_tables(ctx: dict[str, Any]) -> None:
    ids = [s["id"] for s in ctx["sections"]]
    assert ids == [
        "run",
        "staged-table",
        "time-chart",
        "breakdown",
        "stage-tables",
        "timeline",
        "amdahl",
        "phase-amdahl",  # LeNet's stages name their layers: conv_opt changed conv1 and conv2
        "advice",
    ]  # no metrics, batch sweep or baseline in this run
    assert ctx["roofline"] is None and ctx["batch_sweep"] is None and ctx["regressions"] is None


def test_sample_header(ctx: dict[str, Any]) -> None:
    values = {r["label"]: r["value"] for r in ctx["header"]}
    assert values["GPU"] == "NVIDIA H100 80GB HBM3, 81,559 MiB"
    assert values["Driver"] == "580.159.04" and values["CUDA"] == "runtime 13.2, driver 13.0"
    assert values["CuPy"] == "14.2.0" and values["Backend"] == "cupti"
    assert (
        values["Profilers"] == "cupti_python 13.0.1, nvtx 0.2.17, nsys 2025.3.1.0, ncu 2025.3.1.0"
    )
    assert values["Clocks"] == "SM 345 MHz (max 1,980), memory 2,619 MHz (max 2,619)"
    assert "Git commit" not in values  # run.json's git is {}: unknown, so left out
    assert values["Command"] == "profgen sweep lenet --out reports/dev"
    assert ctx["trimmed"].startswith("api_trace: first profiled repeat, at most 3000 rows")


def test_stage_figures_come_from_the_whole_summaries(ctx: dict[str, Any]) -> None:
    stats = {s["stage"]: s["stats"] for s in ctx["stage_tables"]}
    assert stats["torch_cpu"] is None
    no_sync = stats["no_sync"]
    assert no_sync["repeats"] == 5 and no_sync["ops_per_repeat"] == 9
    assert no_sync["h2d_bytes"] == 31_360_000 and no_sync["d2h_bytes"] == 400_000
    assert no_sync["h2d_bytes_per_s"] == pytest.approx(156_800_000 / 18_093_877e-9)
    ceilings = json.loads((SAMPLE_RUN / "run.json").read_text())["ceilings"]
    assert no_sync["h2d_pct_of_pinned"] == pytest.approx(
        156_800_000 / 18_093_877e-9 / ceilings["h2d_pinned_bytes_per_s"] * 100
    )
    assert no_sync["memcpy_pct"] == pytest.approx(
        (18_093_877 + 44_928)
        / (18_093_877 + 44_928 + 545_229 + 435_242 + 420_233 + 399_274 + 108_387 + 92_451)
        * 100
    )
    assert no_sync["trace_note"] == "1 of the 5 profiled repeats, 9 operations"
    base = stats["cuda_baseline"]
    assert base["repeats"] == 1 and base["ops_per_repeat"] == 90_000
    assert (
        base["trace_note"]
        == "the first 3,000 of the 90,000 operations of 1 of the 1 profiled repeats"
    )


def test_sample_timeline_is_the_overlap_stage(ctx: dict[str, Any]) -> None:
    t = ctx["timeline"]
    assert (t["stage"], t["repeat"], t["repeats"], t["trace_repeats"]) == (
        "overlap_fusion",
        0,
        5,
        1,
    )
    assert (
        t["total"] == t["shown"] == 40 and not t["capped"]
    )  # 8 chunks x (copy in, 3 kernels, copy out)
    trace = _csv("gpu_trace.csv")
    ops = trace[trace["stage"] == "overlap_fusion"]
    assert sorted(ops["stream"].unique()) == [13, 14, 15, 16]
    assert t["span_ns"] == ops["end_ns"].max() - ops["start_ns"].min()
    # overlap: time with a copy and a kernel in flight at once, from the trace by a sweep over
    # the boundaries (a second computation of the union arithmetic)
    assert t["overlap"]["overlap_ns"] == _both_in_flight_ns(ops)
    assert t["overlap"]["overlap_pct"] == pytest.approx(47.3, abs=0.05)


def _both_in_flight_ns(ops: pd.DataFrame) -> int:
    events = sorted(
        [(int(r.start_ns), 1, r.kind) for r in ops.itertuples()]
        + [(int(r.end_ns), -1, r.kind) for r in ops.itertuples()]
    )
    active = {"kernel": 0, "memcpy": 0}
    both, last = 0, None
    for t, step, kind in events:
        if last is not None and active["kernel"] > 0 and active["memcpy"] > 0:
            both += t - last
        active[kind] += step
        last = t
    return both


def test_sample_advice_fits_the_study(ctx: dict[str, Any]) -> None:
    """Each rule fires where the study's stages have the problem the next stage answers."""
    cards = {c["rule"]: [f["stage"] for f in c["stages"]] for c in ctx["advice"]}
    assert cards == {
        "pageable_copies": [
            "torch_gpu",
            "cuda_baseline",
            "batch_parallel",
            "conv_opt",
            "fc_opt",
            "no_sync",
        ],  # pinned memory arrives with `pinned`
        "serial_copies": [
            "torch_gpu",
            "batch_parallel",
            "conv_opt",
            "fc_opt",
            "no_sync",
            "pinned",
            "fc_coalesced",
        ],  # copies overlap kernels in overlap_fusion
        "short_kernels_with_gaps": ["cuda_baseline"],  # one image per launch
        "sync_dominated": ["cuda_baseline", "batch_parallel", "conv_opt", "fc_opt"],  # no_sync
    }
    (short,) = [c for c in ctx["advice"] if c["rule"] == "short_kernels_with_gaps"]
    assert short["stages"][0]["evidence"].startswith("70,000 kernels per repeat")  # whole run


def test_metrics_run_has_the_roofline_and_a_failed_stage() -> None:
    ctx = build_context(store.load_run(METRICS_RUN))
    assert [s["id"] for s in ctx["sections"]][-1] == "roofline"
    rows = {r["stage"]: r for r in ctx["staged"]["rows"]}
    cpu = rows["torch_cpu"]
    assert cpu["status"] == "ERROR" and "torch_cpu/ncu.csv" in cpu["reason"]
    assert cpu["speedup_prev"] is cpu["speedup_baseline"] is cpu["speedup_framework"] is None
    assert rows["torch_gpu"]["prev_stage"] is None  # the only earlier stage failed
    ceilings = json.loads((METRICS_RUN / "run.json").read_text())["ceilings"]
    roof = ctx["roofline"]
    assert roof["dram_bytes_per_s"] == ceilings["d2d_bytes_per_s"]  # the measured copy
    assert roof["fp32_flops_per_s"] == ceilings["fp32_flops_per_s"]
    assert {r["bound"] for r in roof["rows"]} == {"memory", "compute"}
    fused = next(r for r in roof["rows"] if r["name"] == "Linear_ReLu_Fused")
    metrics = _metrics(METRICS_RUN, "overlap_fusion", "Linear_ReLu_Fused")
    assert fused["launches"] == len(metrics) == 8
    assert fused["intensity"] == pytest.approx(
        sum(float(m["fp32_flops"]) for m in metrics)
        / sum(float(m["dram_read_bytes"]) + float(m["dram_write_bytes"]) for m in metrics)
    )


def _metrics(run: Path, stage: str, kernel: str) -> list[dict[str, str]]:
    with open(run / "metrics.csv", newline="") as f:
        return [r for r in csv.DictReader(f) if r["stage"] == stage and r["name"] == kernel]


def test_report_is_one_self_contained_file(tmp_path: Path) -> None:
    path = html.write_report(sample_run(), tmp_path / "report.html")
    page = path.read_text()
    assert page.count('id="plotly-js-gz"') == 1
    assert "<script src" not in page and "https://" not in page.replace("https://plot.ly", "")
    assert path.stat().st_size < 5_000_000
    for section in ("run", "staged-table", "stage-tables", "amdahl", "advice"):
        assert f'<section id="{section}">' in page
    assert "0.0008357s" in page and "1869x" in page  # the staged table, readable without JS
    assert "trimmed for committing" in page


def test_a_run_read_back_from_disk_gives_the_same_tables(
    tmp_path: Path, ctx: dict[str, Any]
) -> None:
    store.save_run(sample_run(), tmp_path)
    again = build_context(store.load_run(tmp_path))
    _same(golden_tables(again), golden_tables(ctx))
    assert again["header"][-1]["value"] == str(tmp_path)


# --- the fixture-built run: every section ----------------------------------------------------


def test_every_section_has_its_data(fixture_ctx: dict[str, Any]) -> None:
    ctx = fixture_ctx
    ids = [s["id"] for s in ctx["sections"]]
    assert ids == [
        "run",
        "staged-table",
        "time-chart",
        "breakdown",
        "stage-tables",
        "timeline",
        "amdahl",
        "advice",
        "roofline",
        "batch-sweep",
        "regressions",
    ]
    assert ctx["timeline"]["stage"] == "overlap_fusion" and ctx["timeline"]["repeat"] == 1
    assert ctx["timeline"]["overlap"]["overlap_pct"] == 0.0
    assert [r["verdict"] for r in ctx["regressions"]["rows"]][:2] == ["regression", "improvement"]
    cards = {c["rule"]: c for c in ctx["advice"]}  # one card per rule, stages in study order
    assert set(cards) == {"pageable_copies", "serial_copies", "low_efficiency"}
    assert [f["stage"] for f in cards["serial_copies"]["stages"]] == [
        "cuda_baseline",
        "overlap_fusion",
    ]
    assert [f["detail"] for f in cards["low_efficiency"]["stages"]] == [
        "scale: low achieved bandwidth",
        "relu: low achieved bandwidth",
    ]
    rows = {r["stage"]: r for r in ctx["staged"]["rows"]}
    assert rows["conv_opt"]["reason"].startswith("stage exceeded the 600 s timeout")
    assert ctx["trimmed"] is None


def test_charts_are_deferred_fragments(fixture_ctx: dict[str, Any]) -> None:
    fragments = [v for v in fixture_ctx["charts"].values()] + [
        fixture_ctx[k]["html"] for k in ("timeline", "roofline", "batch_sweep")
    ]
    for fragment in fragments:
        assert fragment.count("<script") == 1 and f'<script type="{DEFERRED_TYPE}"' in fragment
        assert "plotly-graph-div" in fragment and "cdn" not in fragment


def test_missing_metadata_is_left_out_and_renders() -> None:
    """A header row whose value is unknown is left out, never printed as `unknown`."""
    run = Run(meta={"model": "imported", "machine": {"gpu": "NVIDIA H100 80GB HBM3"}})
    ctx = build_context(run)
    values = {r["label"]: r["value"] for r in ctx["header"]}
    assert values["GPU"] == "NVIDIA H100 80GB HBM3" and values["Model"] == "imported"
    assert not {"Driver", "Git commit", "Command", "CUDA", "Clocks", "Items"} & set(values)
    assert all(v and "unknown" not in v for v in values.values())
    assert ctx["timeline"] is None and ctx["roofline"] is None and ctx["regressions"] is None
    page = html.render_report(run)
    assert 'id="timeline"' in page and 'id="roofline"' not in page
    assert "unknown" not in page.split('id="run"')[1].split("</section>")[0]


def test_summaries_are_derived_from_traces_when_absent() -> None:
    run = build_run()
    nsys = {  # nsys's own summaries of the fixture programs
        (r["stage"], r["name"]): (r["total_ns"], r["calls"])
        for r in records(run.table("gpu_activities"))
    }
    del run.tables["gpu_activities"]
    ctx = build_context(run)
    derived = {
        (s["stage"], r["name"]): (r["total_ns"], r["calls"])
        for s in ctx["stage_tables"]
        for r in s["activities"]
    }
    assert derived == nsys  # the trace gives what nsys's summaries gave


def test_templates_fail_on_a_missing_key() -> None:
    with pytest.raises(jinja2.UndefinedError):
        html.environment().get_template("_header.html.j2").render(title="x")


def test_timeline_is_capped_on_a_large_trace() -> None:
    ctx = build_context(build_run(tile=300))
    t = ctx["timeline"]
    assert t["capped"] and t["shown"] == t["limit"] == 2000 and t["total"] == 16 * 300


def test_records_are_plain_python() -> None:
    rows = records(build_run().table("stages"))
    conv = next(r for r in rows if r["stage"] == "conv_opt")
    assert conv["median_ns"] is None and conv["max_rel_err"] is None
    assert type(rows[0]["order"]) is int and type(rows[0]["max_rel_err"]) is float


def test_filters_format_units() -> None:
    assert html.seconds(13_700_000) == "0.0137s" and html.seconds(13_724_000) == "0.01372s"
    assert html.duration(78_786) == "78.79us" and html.duration(5_568_070) == "5.568ms"
    assert html.duration(362) == "362ns" and html.duration(None) == html.MISSING
    assert html.gain(1 / (0.9 + 0.1 / 1.146)) == "+1.3%" and html.gain(math.inf) == "+∞"
    assert html.speedup(48.9327) == "48.93x" and html.nbytes(16_777_000) == "16.78 MB"
    assert html.rate(53.2e9) == "53.2 GB/s" and html.count(10000) == "10,000"
    assert html.pct(float("nan")) == html.MISSING


if __name__ == "__main__":
    write_golden()


def test_a_trimmed_run_says_what_was_cut_in_words() -> None:
    from profiler.render.context import trimmed_note

    meta = {"trimmed": {"gpu_trace": {"kept": 3109, "of": 90545, "rule": "first repeat"}}}
    assert trimmed_note(meta) == "gpu_trace: 3,109 of 90,545 rows kept, first repeat"
    assert trimmed_note({"trimmed": {"api_trace": "first repeat (10 -> 5)"}}) == (
        "api_trace: first repeat (10 -> 5)"
    )
    assert trimmed_note({}) is None
