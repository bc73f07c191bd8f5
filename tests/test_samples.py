"""The committed sample runs (reports/sample-*), the public proof of README's numbers: each is
whole, passes, was recorded by the code that reads it (schema 2, a known commit), and its
staged table is what its own raw worker results say, computed a second way here. The
committed baseline was written from the cupti sample's sweep."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from profiler import schema, store
from profiler.baseline import load_reference

ROOT = Path(__file__).resolve().parents[1]
SERVE_SAMPLES = sorted((ROOT / "reports").glob("sample-serve-*"))
SAMPLES = sorted(set((ROOT / "reports").glob("sample-*")) - set(SERVE_SAMPLES))


def test_there_are_samples_for_every_backend_and_the_tutorial():
    names = {p.name for p in SAMPLES}
    assert {
        "sample-lenet-h100-cupti",
        "sample-lenet-h100-nsys",
        "sample-lenet-h100-metrics",
        "sample-softmax-h100-cupti",
        "sample-lenet-h100-batch",
        "sample-mobilenetv2-h100",
        "sample-mobilenetv2-h100-batch",
        "sample-resnet50-h100",
    } <= names
    assert {p.name for p in SERVE_SAMPLES} == {
        "sample-serve-lenet-h100",
        "sample-serve-mobilenetv2-h100",
    }


@pytest.mark.parametrize("path", SERVE_SAMPLES, ids=lambda p: p.name)
def test_a_serving_sample_is_whole_honest_and_checked(path: Path):
    meta = json.loads((path / "run.json").read_text())
    assert meta["schema_version"] == schema.SCHEMA_VERSION
    assert len(meta["git"]["commit"]) == 40 and meta["machine"]["gpu"].startswith("NVIDIA")
    points = store.load_run(path).table(schema.SERVE_POINTS.name)
    assert len(points) >= 3 and points["flag"].isna().all(), list(points["flag"])
    assert (points["checked"] > 0).all() and (points["failed"] == 0).all()
    closed = points[points["mode"] == "closed"]
    assert ((closed["littles_ratio"] - 1).abs() <= 0.05).all()  # Little's law held everywhere
    assert (closed["requests_per_s"] * closed["mean_ns"] / 1e9 / closed["concurrency"]).between(
        0.95, 1.05
    ).all()
    assert (path / "report.html").is_file()


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_a_sample_is_whole_and_its_staged_table_is_its_raw_results(path: Path):
    meta = json.loads((path / "run.json").read_text())
    assert meta["schema_version"] == schema.SCHEMA_VERSION
    assert len(meta["git"]["commit"]) == 40 and meta["machine"]["gpu"].startswith("NVIDIA")
    run = store.load_run(path)
    stages = run.table("stages")
    assert (stages["status"] == schema.PASS).all(), list(stages["reason"])
    for row in stages.to_dict("records"):
        result = json.loads((path / "raw" / row["stage"] / "result.json").read_text())
        timed = np.asarray(result["timed_ns"])
        assert len(timed) == row["repeats"] == meta["settings"]["repeat"]
        assert abs(row["median_ns"] - np.median(timed)) <= 1  # rounded to whole ns
        assert (row["min_ns"], row["max_ns"]) == (timed.min(), timed.max())
        assert row["role"] == result["role"] and row["items"] == meta["settings"]["items"]
    if meta["settings"]["batch_sizes"]:  # one point per stage and batch size, all timed
        sweep = run.table("batch_sweep")
        assert len(sweep) == len(stages) * len(meta["settings"]["batch_sizes"])
        assert set(sweep["stage"]) == set(stages["stage"]) and (sweep["median_ns"] > 0).all()
    if meta.get("trimmed"):  # summaries stay whole: every profiled repeat is in them
        acts = run.table("gpu_activities")
        assert not acts.empty and (acts["calls"] > 0).all()


def test_the_committed_baseline_is_the_cupti_samples_sweep():
    base = load_reference(ROOT / "reports" / "baselines" / "lenet-h100.json")
    sample = store.load_run(ROOT / "reports" / "sample-lenet-h100-cupti")
    b = base.table("stages").set_index("stage")["median_ns"]
    s = sample.table("stages").set_index("stage")["median_ns"]
    assert b.to_dict() == s.to_dict()
    assert base.meta["machine"]["cpu"] == sample.meta["machine"]["cpu"]
