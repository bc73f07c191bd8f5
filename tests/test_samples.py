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
SAMPLES = sorted((ROOT / "reports").glob("sample-*"))


def test_there_are_samples_for_every_backend_and_the_tutorial():
    names = {p.name for p in SAMPLES}
    assert {
        "sample-lenet-h100-cupti",
        "sample-lenet-h100-nsys",
        "sample-lenet-h100-metrics",
        "sample-softmax-h100-cupti",
    } <= names


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
    if "trimmed" in meta:  # summaries stay whole: every profiled repeat is in them
        acts = run.table("gpu_activities")
        assert not acts.empty and (acts["calls"] > 0).all()


def test_the_committed_baseline_is_the_cupti_samples_sweep():
    base = load_reference(ROOT / "reports" / "baselines" / "lenet-h100.json")
    sample = store.load_run(ROOT / "reports" / "sample-lenet-h100-cupti")
    b = base.table("stages").set_index("stage")["median_ns"]
    s = sample.table("stages").set_index("stage")["median_ns"]
    assert b.to_dict() == s.to_dict()
    assert base.meta["machine"]["cpu"] == sample.meta["machine"]["cpu"]
