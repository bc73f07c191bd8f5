"""The staged table: speedups against the three references, spread, failed stages kept."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from runfactory import DATA

from profiler import schema
from profiler.analyze import stages
from profiler.errors import SchemaError


@pytest.fixture
def table() -> pd.DataFrame:
    return schema.read_csv(DATA / "stages.csv", schema.STAGES)


def _row(staged: pd.DataFrame, key: str) -> pd.Series:
    return staged.set_index("stage").loc[key]


def test_speedups_by_hand(table: pd.DataFrame) -> None:
    # stages.csv medians: torch_cpu 187.3 ms, torch_gpu 2.731 ms, cuda_baseline 43.12 ms,
    # overlap_fusion 0.8812 ms (batch_parallel FAILs, conv_opt TIMEOUT, fc_opt SKIPPED).
    st = stages.staged_table(table)
    gpu = _row(st, "torch_gpu")
    assert gpu["speedup_prev"] == pytest.approx(187.3 / 2.731)
    assert gpu["speedup_cuda"] == pytest.approx(43.12 / 2.731)
    assert gpu["speedup_framework"] == pytest.approx(1.0)
    cuda = _row(st, "cuda_baseline")
    assert cuda["speedup_prev"] == pytest.approx(2.731 / 43.12)
    assert cuda["speedup_cuda"] == pytest.approx(1.0)
    last = _row(st, "overlap_fusion")
    assert (
        last["prev_stage"] == "cuda_baseline"
    )  # the failed, timed-out and skipped stages are skipped
    assert last["speedup_prev"] == pytest.approx(43.12 / 0.8812)
    assert last["speedup_cuda"] == pytest.approx(43.12 / 0.8812)
    assert last["speedup_framework"] == pytest.approx(2.731 / 0.8812)
    assert math.isnan(_row(st, "torch_cpu")["speedup_prev"])


def test_failed_stages_keep_row_and_reason_without_speedups(table: pd.DataFrame) -> None:
    st = stages.staged_table(table)
    assert list(st["stage"]) == list(table.sort_values("order")["stage"])
    for key, status in (("batch_parallel", "FAIL"), ("conv_opt", "TIMEOUT"), ("fc_opt", "SKIPPED")):
        row = _row(st, key)
        assert row["status"] == status
        assert isinstance(row["reason"], str) and row["reason"]
        assert all(
            math.isnan(row[c]) for c in ("speedup_prev", "speedup_cuda", "speedup_framework")
        )
    assert _row(st, "batch_parallel")["median_ns"] == 12_150_000  # its time stays visible


def test_spread_and_overhead(table: pd.DataFrame) -> None:
    st = stages.staged_table(table)
    assert _row(st, "cuda_baseline")["spread_pct"] == pytest.approx((44.01 - 42.87) / 43.12 * 100)
    assert _row(st, "overlap_fusion")["overhead_pct"] == pytest.approx(
        (936_000 / 881_200 - 1) * 100
    )
    schema.validate(st, stages.STAGED)


def test_cuda_baseline_falls_back_to_first_non_framework_stage(table: pd.DataFrame) -> None:
    no_baseline = table[table["stage"] != "cuda_baseline"].reset_index(drop=True)
    assert stages.cuda_baseline_key(no_baseline) == "batch_parallel"
    st = stages.staged_table(no_baseline)
    # batch_parallel FAILed: it is the first CUDA stage but no valid reference, so no speedups.
    assert st["speedup_cuda"].isna().all()
    only_framework = table[table["stage"].str.startswith("torch_")].reset_index(drop=True)
    assert stages.cuda_baseline_key(only_framework) is None


def test_without_framework_gpu_baseline(table: pd.DataFrame) -> None:
    st = stages.staged_table(table[table["stage"] != "torch_gpu"].reset_index(drop=True))
    assert st["speedup_framework"].isna().all()
    assert _row(st, "cuda_baseline")["prev_stage"] == "torch_cpu"


def test_rejects_a_table_of_the_wrong_schema(table: pd.DataFrame) -> None:
    with pytest.raises(SchemaError):
        stages.staged_table(table.drop(columns="median_ns"))
