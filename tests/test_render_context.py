"""Golden tests on the tables the templates receive (not on HTML bytes), each golden value checked
once more by a second computation: by hand from the hand-written stage times, from nsys's own
summaries and from the raw trace CSV read with the csv module.

Regenerate the golden files (then check the diff by eye): `python tests/test_render_context.py`.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import jinja2
import pytest
from runfactory import NSYS_DEMO, NSYS_OVERLAP, build_run, sample_run

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
    "speedup_cuda",
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


@pytest.mark.parametrize("name", ["staged_table", "gpu_activities", "amdahl"])
def test_context_matches_golden(ctx: dict[str, Any], name: str) -> None:
    _same(golden_tables(ctx)[name], _load(name), name)


# --- the golden values, checked a second way -------------------------------------------------

# By hand, from tests/data/report/stages.csv: median times in ms.
T = {"torch_cpu": 187.3, "torch_gpu": 2.731, "cuda_baseline": 43.12, "overlap_fusion": 0.8812}
HAND_SPEEDUPS = {  # (vs previous, vs CUDA baseline, vs framework GPU)
    "torch_cpu": (None, T["cuda_baseline"] / T["torch_cpu"], T["torch_gpu"] / T["torch_cpu"]),
    "torch_gpu": (T["torch_cpu"] / T["torch_gpu"], T["cuda_baseline"] / T["torch_gpu"], 1.0),
    "cuda_baseline": (
        T["torch_gpu"] / T["cuda_baseline"],
        1.0,
        T["torch_gpu"] / T["cuda_baseline"],
    ),
    "batch_parallel": (None, None, None),
    "conv_opt": (None, None, None),
    "fc_opt": (None, None, None),
    "overlap_fusion": (
        T["cuda_baseline"] / T["overlap_fusion"],
        T["cuda_baseline"] / T["overlap_fusion"],
        T["torch_gpu"] / T["overlap_fusion"],
    ),
}


def test_golden_staged_table_by_hand() -> None:
    rows = {r["stage"]: r for r in _load("staged_table")}
    assert list(rows) == list(HAND_SPEEDUPS)
    for stage, expected in HAND_SPEEDUPS.items():
        got = (
            rows[stage]["speedup_prev"],
            rows[stage]["speedup_cuda"],
            rows[stage]["speedup_framework"],
        )
        for g, e in zip(got, expected, strict=True):
            assert (g is None) if e is None else g == pytest.approx(e, rel=1e-12), stage
    assert rows["cuda_baseline"]["spread_pct"] == pytest.approx((44.01 - 42.87) / 43.12 * 100)
    assert rows["conv_opt"]["reason"].startswith("stage exceeded the 600 s timeout")


def _trace_summary(folder: Path) -> dict[str, dict[str, int]]:
    """Per name: total, calls, min, max, from the raw cuda_gpu_trace.csv (csv module)."""
    out: dict[str, dict[str, int]] = {}
    with open(folder / "cuda_gpu_trace.csv", newline="") as f:
        for row in csv.DictReader(f):
            name = row["Name"].replace("Host-to-Device", "HtoD").replace("Device-to-Host", "DtoH")
            d = int(row["Duration (ns)"])
            s = out.setdefault(name, {"total": 0, "calls": 0, "min": d, "max": d})
            s["total"] += d
            s["calls"] += 1
            s["min"], s["max"] = min(s["min"], d), max(s["max"], d)
    return out


@pytest.mark.parametrize(
    "stage,folder", [("cuda_baseline", NSYS_DEMO), ("overlap_fusion", NSYS_OVERLAP)]
)
def test_golden_gpu_activities_against_the_raw_trace(stage: str, folder: Path) -> None:
    rows = {r["name"]: r for r in _load("gpu_activities")[stage]}
    summary = _trace_summary(folder)
    assert set(rows) == set(summary)
    grand = sum(s["total"] for s in summary.values())
    for name, s in summary.items():
        r = rows[name]
        assert (r["total_ns"], r["calls"], r["min_ns"], r["max_ns"]) == (
            s["total"],
            s["calls"],
            s["min"],
            s["max"],
        )
        assert r["avg_ns"] == pytest.approx(
            s["total"] / s["calls"], abs=0.0501
        )  # nsys rounds to 0.1 ns
        assert r["time_pct"] == pytest.approx(s["total"] / grand * 100, rel=1e-12)
    totals = [r["total_ns"] for r in _load("gpu_activities")[stage]]
    assert totals == sorted(totals, reverse=True)  # nvprof's order


def test_golden_amdahl_by_formula() -> None:
    golden = _load("amdahl")
    acts = _load("gpu_activities")
    for r in golden["stages"]:
        total = sum(a["total_ns"] for a in acts[r["stage"]])
        p = r["total_ns"] / total
        assert r["share_pct"] == pytest.approx(p * 100, rel=1e-12)
        assert r["gain_s1_15"] == pytest.approx(1 / ((1 - p) + p / 1.15), rel=1e-12)
        assert r["gain_s2"] == pytest.approx(1 / ((1 - p) + p / 2), rel=1e-12)
        assert r["gain_sinf"] == pytest.approx(1 / (1 - p), rel=1e-12)
    (m,) = golden["transitions"]
    demo = 5_568_070 + 319_688 + 33_153  # nsys summaries of the demo: DtoH, HtoD, addone
    assert m["predicted_gpu"] == pytest.approx(demo / (1_325_888 / 2), rel=1e-12)
    assert m["top_speedup"] == pytest.approx(5_568_070 / (633_102 / 2), rel=1e-12)
    assert m["measured"] == pytest.approx(43.12 / 0.8812, rel=1e-12)


# --- the rest of the context -----------------------------------------------------------------


def test_every_section_has_its_data(ctx: dict[str, Any]) -> None:
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


def test_charts_are_deferred_fragments(ctx: dict[str, Any]) -> None:
    fragments = [v for v in ctx["charts"].values()] + [
        ctx[k]["html"] for k in ("timeline", "roofline", "batch_sweep")
    ]
    for fragment in fragments:
        assert fragment.count("<script") == 1 and f'<script type="{DEFERRED_TYPE}"' in fragment
        assert "plotly-graph-div" in fragment and "cdn" not in fragment


def test_missing_metadata_reads_unknown_and_renders() -> None:
    run = Run(meta={"model": "imported", "machine": {"gpu": "NVIDIA H100 80GB HBM3"}})
    ctx = build_context(run)
    values = {r["label"]: r["value"] for r in ctx["header"]}
    assert values["GPU"] == "NVIDIA H100 80GB HBM3"
    assert (
        values["Driver"] == values["Git commit"] == values["Command"] == values["CUDA"] == "unknown"
    )
    assert all(v for v in values.values())
    assert ctx["timeline"] is None and ctx["roofline"] is None and ctx["regressions"] is None
    page = html.render_report(run)
    assert 'id="timeline"' in page and 'id="roofline"' not in page and "unknown" in page


def test_summaries_are_derived_from_traces_when_absent() -> None:
    run = build_run()
    del run.tables["gpu_activities"]
    ctx = build_context(run)
    rows = {
        r["name"]: r
        for s in ctx["stage_tables"]
        if s["stage"] == "overlap_fusion"
        for r in s["activities"]
    }
    golden = {r["name"]: r for r in _load("gpu_activities")["overlap_fusion"]}
    for name, g in golden.items():  # the trace gives what nsys's summaries gave
        assert (rows[name]["total_ns"], rows[name]["calls"]) == (g["total_ns"], g["calls"])


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


def test_report_is_one_self_contained_file(tmp_path: Path) -> None:
    path = html.write_report(sample_run(), tmp_path / "report.html")
    page = path.read_text()
    assert page.count('id="plotly-js-gz"') == 1
    assert "<script src" not in page and "https://" not in page.replace("https://plot.ly", "")
    assert path.stat().st_size < 5_000_000
    for section in ("run", "staged-table", "stage-tables", "amdahl", "advice"):
        assert f'<section id="{section}">' in page
    assert "0.0008812s" in page and "48.93x" in page  # the staged table, readable without JS


def test_a_run_read_back_from_disk_gives_the_same_tables(
    tmp_path: Path, ctx: dict[str, Any]
) -> None:
    store.save_run(sample_run(), tmp_path)
    again = build_context(store.load_run(tmp_path))
    _same(golden_tables(again), golden_tables(ctx))
    assert again["header"][-1]["value"] == str(tmp_path)


if __name__ == "__main__":
    write_golden()
