"""The staged table: speedups against the three references, spread, failed stages kept."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from runfactory import DATA

from profiler import schema, tablecsv
from profiler.analyze import stages
from profiler.errors import SchemaError


@pytest.fixture
def table() -> pd.DataFrame:
    return tablecsv.read_csv(DATA / "stages.csv", schema.STAGES)


def _row(staged: pd.DataFrame, key: str) -> pd.Series:
    return staged.set_index("stage").loc[key]


def test_speedups_by_hand(table: pd.DataFrame) -> None:
    # stages.csv medians: torch_cpu 187.3 ms, torch_gpu 2.731 ms, cuda_baseline 43.12 ms,
    # overlap_fusion 0.8812 ms (batch_parallel FAILs, conv_opt TIMEOUT, fc_opt SKIPPED).
    st = stages.staged_table(table)
    gpu = _row(st, "torch_gpu")
    assert gpu["speedup_prev"] == pytest.approx(187.3 / 2.731)
    assert gpu["speedup_baseline"] == pytest.approx(43.12 / 2.731)
    assert gpu["speedup_framework"] == pytest.approx(1.0)
    cuda = _row(st, "cuda_baseline")
    assert cuda["speedup_prev"] == pytest.approx(2.731 / 43.12)
    assert cuda["speedup_baseline"] == pytest.approx(1.0)
    last = _row(st, "overlap_fusion")
    assert (
        last["prev_stage"] == "cuda_baseline"
    )  # the failed, timed-out and skipped stages are skipped
    assert last["speedup_prev"] == pytest.approx(43.12 / 0.8812)
    assert last["speedup_baseline"] == pytest.approx(43.12 / 0.8812)
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
            math.isnan(row[c]) for c in ("speedup_prev", "speedup_baseline", "speedup_framework")
        )
    assert _row(st, "batch_parallel")["median_ns"] == 12_150_000  # its time stays visible


def test_spread_and_overhead(table: pd.DataFrame) -> None:
    st = stages.staged_table(table)
    assert _row(st, "cuda_baseline")["spread_pct"] == pytest.approx((44.01 - 42.87) / 43.12 * 100)
    assert _row(st, "overlap_fusion")["overhead_pct"] == pytest.approx(
        (936_000 / 881_200 - 1) * 100
    )
    schema.validate(st, stages.STAGED)


def test_roles_come_from_the_role_column_not_from_keys(table: pd.DataFrame) -> None:
    assert stages.baseline_key(table) == "cuda_baseline"
    assert stages.framework_key(table) == "torch_gpu"  # the faster of the two frameworks
    renamed = table.assign(stage=table["stage"].str.replace("torch_", "ort_"))
    st = stages.staged_table(renamed)
    assert stages.framework_key(renamed) == "ort_gpu"  # any key: the role decides
    assert _row(st, "overlap_fusion")["speedup_framework"] == pytest.approx(2.731 / 0.8812)
    no_baseline = table[table["stage"] != "cuda_baseline"].reset_index(drop=True)
    assert stages.baseline_key(no_baseline) is None
    assert stages.staged_table(no_baseline)["speedup_baseline"].isna().all()
    moved = table.assign(role=table["role"].where(table["stage"] != "overlap_fusion", "baseline"))
    moved.loc[moved["stage"] == "cuda_baseline", "role"] = "step"
    assert stages.baseline_key(moved) == "overlap_fusion"


def test_a_failed_framework_is_no_reference(table: pd.DataFrame) -> None:
    failed = table.assign(status=table["status"].where(table["stage"] != "torch_gpu", "FAIL"))
    assert stages.framework_key(failed) == "torch_cpu"


def test_without_a_framework_stage(table: pd.DataFrame) -> None:
    st = stages.staged_table(table[table["role"] != "framework"].reset_index(drop=True))
    assert st["speedup_framework"].isna().all()
    assert pd.isna(_row(st, "cuda_baseline")["prev_stage"])  # the first stage left


def test_rejects_a_table_of_the_wrong_schema(table: pd.DataFrame) -> None:
    with pytest.raises(SchemaError):
        stages.staged_table(table.drop(columns="median_ns"))


def _imported(rows: list[tuple[str, str | None, int, int | None]]) -> pd.DataFrame:
    """Imported STAGES rows: (key, timing, repeats, median_ns)."""
    frame = pd.DataFrame(
        [
            {"stage": k, "order": i, "title": k, "technique": "", "role": "step", "runtime": "",
             "status": schema.IMPORTED, "reason": "imported", "items": 0, "batch": 0,
             "warmup": 0, "repeats": n, "timing": t, "median_ns": m}
            for i, (k, t, n, m) in enumerate(rows)
        ]
    )  # fmt: skip
    fill = [c for c in schema.STAGES.names if c not in frame]
    return schema.conform(frame, schema.STAGES, fill=fill)


def test_imported_stages_are_set_against_imported_stages_of_the_same_kind() -> None:
    """IMPORTED is no failure: it has speedups, but only against a time of its own kind."""
    st = stages.staged_table(
        _imported(
            [
                ("a", schema.GPU_SPAN, 0, 800),  # whole program, GPU span
                ("b", schema.GPU_SPAN, 0, 200),  # same kind: 4x against a
                ("c", schema.GPU_TIME, 0, 100),  # summed GPU time: not against a span
                ("d", schema.GPU_SPAN, 10, 20),  # per repeat: not against a whole-program total
                ("e", schema.GPU_SPAN, 0, 400),  # against b, the nearest of its kind
                ("f", None, 0, None),  # no time at all
            ]
        )
    )
    assert list(st["basis"]) == ["program", "program", "program", "repeat", "program", "program"]
    assert list(st["prev_stage"].fillna("-")) == ["-", "a", "-", "-", "b", "-"]
    speedups = dict(zip(st["stage"], st["speedup_prev"], strict=True))
    assert speedups["b"] == pytest.approx(4.0) and speedups["e"] == pytest.approx(0.5)
    assert all(math.isnan(speedups[k]) for k in "acdf")


def test_a_measured_stage_is_never_set_against_an_imported_one(table: pd.DataFrame) -> None:
    mixed = pd.concat(
        [table, _imported([("imp", schema.GPU_SPAN, 5, 100)]).assign(order=len(table))],
        ignore_index=True,
    )
    row = _row(stages.staged_table(mixed), "imp")
    assert pd.isna(row["prev_stage"]) and math.isnan(row["speedup_baseline"])
    assert math.isnan(row["speedup_framework"]) and row["basis"] == "repeat"
