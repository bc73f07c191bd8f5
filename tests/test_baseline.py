"""Baseline files: what they hold, that they round-trip, that bad ones are refused, and the
machine/image compatibility rule."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from regress_factory import MACHINE, make_run

from profiler import baseline, schema, store
from profiler.analyze import regress
from profiler.cli import main
from profiler.errors import BaselineMismatch, RunNotFound

FC = ("fc_coalesced", "fc1_kernel")


def test_baseline_file_holds_machine_items_samples_and_per_repeat_kernel_totals(tmp_path):
    run = make_run(1, profiled=3)
    path = baseline.write_baseline(run, tmp_path / "lenet-h100.json")
    data = json.loads(path.read_text())
    assert (data["format"], data["version"], data["schema_version"]) == (
        "profgen-baseline",
        baseline.BASELINE_VERSION,
        schema.SCHEMA_VERSION,
    )
    assert data["machine"] == {
        "gpu": MACHINE["gpu_name"],
        "driver": MACHINE["driver"],
        "cuda": MACHINE["cuda"],
    }
    assert data["items"] == 10_000 and data["unit"] == "images"
    stages = {s["stage"]: s for s in data["stages"]}
    assert list(stages) == list(run.table("stages")["stage"])
    fc = stages["fc_coalesced"]
    assert fc["status"] == "PASS" and len(fc["timed_ns"]) == 10 and len(fc["profiled_ns"]) == 3
    samples = run.table("samples")
    timed = samples[(samples["stage"] == "fc_coalesced") & (samples["pass"] == "timed")]
    assert fc["timed_ns"] == [int(v) for v in timed["wall_ns"]]
    assert fc["trace_repeats"] == [0, 1, 2]
    fc1 = next(a for a in fc["activities"] if a["name"] == "fc1_kernel")
    trace = run.table("gpu_trace")
    per_repeat = trace[(trace["stage"] == "fc_coalesced") & (trace["name"] == "fc1_kernel")]
    assert fc1["repeat_totals_ns"] == [
        int(v) for v in per_repeat.groupby("repeat")["duration_ns"].sum()
    ]
    assert fc1["kind"] == "kernel" and fc1["calls"] == 3 * 4


def test_baseline_size_does_not_grow_with_the_trace(tmp_path):
    small = baseline.write_baseline(make_run(1, launches=2), tmp_path / "a.json").stat().st_size
    large = baseline.write_baseline(make_run(1, launches=400), tmp_path / "b.json").stat().st_size
    assert large < 1.2 * small
    assert large < 64 * 1024  # fit to commit


def test_baseline_round_trips_what_the_comparison_reads(tmp_path):
    run = make_run(1)
    ref = baseline.load_reference(baseline.write_baseline(run, tmp_path / "b.json"))
    pd.testing.assert_frame_equal(ref.table("stages"), run.table("stages"))
    for name in ("samples", "gpu_activities"):
        a = ref.table(name).sort_values(list(ref.table(name).columns[:3])).reset_index(drop=True)
        b = run.table(name).sort_values(list(run.table(name).columns[:3])).reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b)
    assert ref.meta["baseline_file"] == str(tmp_path / "b.json")
    new = make_run(2, kernel_scale={FC: 1.5})
    direct = regress.evaluate(run, new, regress.default_checks())
    via_file = regress.evaluate(ref, new, regress.default_checks())
    pd.testing.assert_frame_equal(direct, via_file)
    assert regress.exit_code(via_file) == 1


def test_baseline_of_a_run_without_trace(tmp_path):
    run = make_run(1, trace=False)
    ref = baseline.load_reference(baseline.write_baseline(run, tmp_path / "b.json"))
    assert not ref.has("gpu_trace")
    out = regress.evaluate(ref, make_run(2, trace=False), regress.default_checks())
    assert set(out["verdict"]) == {"unchanged"}


def test_baseline_keeps_failed_stages(tmp_path):
    run = make_run(1, status={"pinned": "TIMEOUT"})
    ref = baseline.load_reference(baseline.write_baseline(run, tmp_path / "b.json"))
    stages = ref.table("stages").set_index("stage")
    assert stages.loc["pinned", "status"] == "TIMEOUT" and pd.isna(
        stages.loc["pinned", "median_ns"]
    )
    assert regress.exit_code(regress.evaluate(ref, make_run(2), regress.default_checks())) == 3


def test_load_reference_reads_a_run_directory(tmp_path):
    run = make_run(1)
    store.save_run(run, tmp_path)
    ref = baseline.load_reference(tmp_path)
    assert ref.path == tmp_path
    pd.testing.assert_frame_equal(ref.table("gpu_trace"), run.table("gpu_trace"))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such run directory or baseline file"),
        ("{not json", "unreadable baseline file"),
        ('{"hello": 1}', "not a profgen baseline"),
        ('{"format": "profgen-baseline", "version": 99, "schema_version": 1}', "write it again"),
        ('{"format": "profgen-baseline", "version": 1, "schema_version": 1}', "malformed baseline"),
        (
            '{"format": "profgen-baseline", "version": 1, "schema_version": 1, '
            '"stages": [{"stage": "a", "timed_ns": "x"}]}',
            "malformed baseline",
        ),
    ],
)
def test_bad_baseline_files_are_refused_with_the_path(tmp_path, content, message):
    path = tmp_path / "b.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(RunNotFound, match=message) as err:
        baseline.load_reference(path)
    assert str(path) in str(err.value)
    assert err.value.exit_code == 2


def test_run_without_stages_is_refused(tmp_path):
    run = make_run(1)
    del run.tables["stages"]
    with pytest.raises(RunNotFound, match="no stages table"):
        baseline.compare_runs(make_run(2), run, regress.default_checks())


# --- compatibility ---------------------------------------------------------------------------


def test_same_gpu_and_driver_major_is_compatible():
    base = make_run(1, machine=dict(MACHINE, driver="580.95.05"))
    new = make_run(2, machine=dict(MACHINE, driver="580.82.07"))
    assert baseline.check_compatible(base, new) == []


@pytest.mark.parametrize(
    ("change", "what", "values"),
    [
        (
            {"machine": dict(MACHINE, gpu_name="NVIDIA A100-SXM4-40GB")},
            "GPU model",
            ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB"),
        ),
        ({"machine": dict(MACHINE, driver="575.57.08")}, "driver major version", ("580", "575")),
        ({"items": 1000}, "item count", ("10000", "1000")),
    ],
)
def test_mismatch_is_refused_unless_allowed(change, what, values):
    base, new = make_run(1), make_run(2, **change)
    with pytest.raises(BaselineMismatch) as err:
        baseline.check_compatible(base, new)
    message = str(err.value)
    assert what in message and "--allow-mismatch" in message
    assert all(v in message for v in values)
    assert err.value.exit_code == 2
    found = baseline.check_compatible(base, new, allow_mismatch=True)
    assert len(found) == 1 and what in found[0]


def test_unrecorded_machine_fields_are_not_compared():
    base = make_run(1, machine={})
    assert baseline.check_compatible(base, make_run(2)) == []


def test_machine_summary_reads_the_spellings_of_run_json():
    assert baseline.machine_summary(
        {"machine": {"gpu": {"name": "H100"}, "driver_version": "580.1", "cuda_version": "13.0"}}
    ) == {"gpu": "H100", "driver": "580.1", "cuda": "13.0"}
    assert baseline.machine_summary({}) == {"gpu": None, "driver": None, "cuda": None}


def test_mismatch_is_checked_against_a_baseline_file_too(tmp_path):
    ref = baseline.load_reference(baseline.write_baseline(make_run(1), tmp_path / "b.json"))
    with pytest.raises(BaselineMismatch):
        baseline.check_compatible(ref, make_run(2, machine=dict(MACHINE, gpu_name="NVIDIA L4")))


# --- profgen baseline -------------------------------------------------------------------------


def test_profgen_baseline_then_compare(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    store.save_run(make_run(1), run_dir)
    out = tmp_path / "baselines" / "lenet-h100.json"
    out.parent.mkdir()
    assert main(["baseline", str(run_dir), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    slow_dir = tmp_path / "slow"
    slow_dir.mkdir()
    store.save_run(make_run(2, kernel_scale={FC: 1.5}), slow_dir)
    assert main(["compare", str(out), str(slow_dir)]) == 1
    assert main(["compare", str(out), str(run_dir)]) == 0


def test_profgen_baseline_of_a_missing_run_exits_2(tmp_path, capsys):
    assert main(["baseline", str(tmp_path / "nope"), "-o", str(tmp_path / "b.json")]) == 2
    assert "not a profgen run" in capsys.readouterr().err
    assert not Path(tmp_path / "b.json").exists()
