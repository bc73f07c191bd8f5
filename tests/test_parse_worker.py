"""profiler.parse.worker on result.json files the runner wrote on an H100, and on bad ones."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import worker as W

DATA = Path(__file__).parent / "data"
CUPTI_RESULT = DATA / "cupti" / "13.0.1" / "lenet-no_sync.result.json"
NSYS_RESULT = DATA / "nsys" / "2025.3.1" / "lenet-no_sync" / "result.json"


def test_stage_row_from_a_cupti_run():
    stages, samples = W.read(CUPTI_RESULT, order=6)
    row = stages.iloc[0]
    # result.json: timed [4277612, 4047664, 3991438], profiled [4642531, 4055650, 4056615]
    assert (row["stage"], row["order"], row["status"], row["reason"]) == ("no_sync", 6, "PASS", "")
    assert row["title"] == "Redundant synchronisation removed" and row["technique"].startswith(
        "The cudaDevice"
    )
    assert (row["items"], row["batch"], row["warmup"], row["repeats"]) == (10000, 10000, 1, 3)
    assert row["role"] == "step"  # a format-1 result: the role its key implied
    assert (row["median_ns"], row["min_ns"], row["max_ns"]) == (4047664, 3991438, 4277612)
    assert row["profiled_median_ns"] == 4056615
    assert row["overhead_pct"] == pytest.approx((4056615 / 4047664 - 1) * 100)
    assert (
        row["max_rel_err"] == pytest.approx(8.967625046557704e-07) and row["topk_mismatches"] == 0
    )
    assert samples["pass"].tolist() == ["timed"] * 3 + ["profiled"] * 3
    assert samples["repeat"].tolist() == [0, 1, 2, 0, 1, 2]
    assert samples["wall_ns"].tolist() == [4277612, 4047664, 3991438, 4642531, 4055650, 4056615]


def test_nsys_run_has_its_profiled_pass_from_the_second_process():
    result = W.read_result(NSYS_RESULT)
    assert result["backend"] == "nsys" and result["trace"]["tracer"] == "profiler-api"
    stages, samples = W.read(NSYS_RESULT, order=6)
    assert stages["overhead_pct"].iloc[0] > 0 and len(samples) == 6
    schema.validate(stages, schema.STAGES)
    schema.validate(samples, schema.SAMPLES)


def test_even_count_median_rounds():
    result = json.loads(CUPTI_RESULT.read_text()) | {"timed_ns": [10, 11], "profiled_ns": []}
    row = W.stage_row(W._upgrade_format_1(result), 0).iloc[0]
    assert row["median_ns"] == 10 or row["median_ns"] == 11  # 10.5 rounds to an integer
    assert pd.isna(row["profiled_median_ns"]) and pd.isna(row["overhead_pct"])


def test_error_stage_without_timings():
    result = {
        "stage": "conv_opt",
        "title": "Convolution",
        "status": "ERROR",
        "reason": "worker was killed by signal SIGSEGV",
        "items": 100,
        "batch": 100,
        "warmup": 2,
        "repeat": 10,
        "timed_ns": [],
        "profiled_ns": [],
    }
    row = W.stage_row(result, 3).iloc[0]
    assert row["status"] == "ERROR" and row["reason"].endswith("SIGSEGV")
    assert pd.isna(row["median_ns"]) and pd.isna(row["max_rel_err"]) and row["repeats"] == 10
    assert W.samples(result).empty


@pytest.mark.parametrize(
    "text, detail",
    [
        ("", "not JSON"),
        ('{"stage": "x"', "not JSON"),
        ("[1, 2]", "a JSON list"),
        ('{"stage": "x", "status": "PASS"}', "missing fields"),
    ],
)
def test_bad_files(tmp_path, text, detail):
    path = tmp_path / "result.json"
    path.write_text(text)
    with pytest.raises(ParseError, match=detail) as err:
        W.read(path, 0)
    assert str(path) in str(err.value) and "result.json" in str(err.value)


def test_unknown_status(tmp_path):
    path = tmp_path / "result.json"
    path.write_text(json.dumps(json.loads(CUPTI_RESULT.read_text()) | {"status": "MAYBE"}))
    with pytest.raises(ParseError, match="status 'MAYBE'"):
        W.read(path, 0)


def test_missing_file(tmp_path):
    with pytest.raises(ParseError, match="no such file"):
        W.read(tmp_path / "result.json", 0)


def test_layers_of_a_result(tmp_path):
    path = tmp_path / "result.json"
    base = json.loads(CUPTI_RESULT.read_text())
    assert W.layers(CUPTI_RESULT) is None  # a study without the hook
    row = {"node": "conv1", "op": "Conv", "kind": "conv", "in_shape": "1x28x28",
           "out_shape": "6x24x24", "flops": 172800, "bytes": 16960, "weight_bytes": 624}
    path.write_text(json.dumps(base | {"layers": [row]}))
    facts = W.layers(path)
    assert facts is not None and list(facts.columns) == schema.LAYERS.names
    assert facts.iloc[0]["flops"] == 172800
    path.write_text(json.dumps(base | {"layers": [row | {"flops": "many"}]}))
    with pytest.raises(ParseError, match="bad layers"):
        W.layers(path)
