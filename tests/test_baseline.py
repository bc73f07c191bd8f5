"""Baseline files: what they hold, that they round-trip, that bad ones are refused, and the
machine/image compatibility rule."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from clirun import assert_refused, profgen
from regress_factory import MACHINE, make_run

from profiler import baseline, schema, store
from profiler.analyze import regress
from profiler.cli import main
from profiler.errors import BaselineMismatch, DataError, RunNotFound

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
        "cpu": None,  # the factory's machine does not say
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
        ("{not json", "not valid JSON"),
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
    with pytest.raises((RunNotFound, DataError), match=message) as err:
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


def test_a_machine_field_only_one_run_records_is_a_mismatch():
    """The guard once skipped a field only one side recorded: a run without a GPU passed as an
    H100. Recorded by neither run, a field is not a difference."""
    unknown = make_run(1)
    unknown.meta["machine"] = {"driver": MACHINE["driver"]}
    with pytest.raises(BaselineMismatch, match="GPU model: baseline not recorded, this run '"):
        baseline.check_compatible(unknown, make_run(2))
    with pytest.raises(BaselineMismatch, match="GPU model: baseline 'NVIDIA H100.*not recorded"):
        baseline.check_compatible(make_run(2), unknown)
    assert baseline.check_compatible(unknown, unknown) == []


def test_machine_summary_reads_the_spellings_of_run_json():
    assert baseline.machine_summary(
        {
            "machine": {
                "gpu": {"name": "H100"},
                "driver_version": "580.1",
                "cuda_version": "13.0",
                "cpu": "Intel(R) Xeon(R) Processor",
            }
        }
    ) == {"gpu": "H100", "driver": "580.1", "cuda": "13.0", "cpu": "Intel(R) Xeon(R) Processor"}
    assert baseline.machine_summary({}) == {"gpu": None, "driver": None, "cuda": None, "cpu": None}


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


# --- the CPU model, for stages that run on the CPU -------------------------------------------

XEON = "Intel(R) Xeon(R) Processor"
EPYC = "AMD EPYC 9654 96-Core Processor"


def with_cpu_stage(run: store.Run, cpu: str | None, median_ns: float = 125e6) -> store.Run:
    """`run` with a `torch_cpu` stage in front (runtime `cpu`, timed repeats, no GPU activity,
    as LeNet's framework CPU baseline) on a machine whose CPU is `cpu`."""
    stages = run.table("stages").copy()
    row = stages.iloc[[0]].copy()
    walls = [int(median_ns * (1 + 0.001 * i)) for i in range(10)]
    row["stage"], row["order"], row["title"] = "torch_cpu", 0, "Framework CPU baseline"
    row["role"], row["runtime"] = "framework", "cpu"
    row["median_ns"], row["min_ns"], row["max_ns"] = walls[5], min(walls), max(walls)
    stages["order"] += 1
    samples = pd.DataFrame(
        {"stage": "torch_cpu", "pass": "timed", "repeat": range(10), "wall_ns": walls}
    )
    tables = dict(run.tables)
    tables["stages"] = schema.conform(pd.concat([row, stages]), schema.STAGES)
    tables["samples"] = schema.conform(pd.concat([samples, run.table("samples")]), schema.SAMPLES)
    machine = {k: v for k, v in run.meta["machine"].items() if k != "cpu"}
    meta = dict(run.meta, machine=dict(machine, **({"cpu": cpu} if cpu else {})))
    return store.Run(meta=meta, tables=tables)


def cpu_only(cpu: str | None, median_ns: float) -> store.Run:
    """A sweep of `torch_cpu` alone on a machine without a GPU (nothing GPU recorded)."""
    run = with_cpu_stage(make_run(3), cpu, median_ns)
    run.meta["machine"] = {"cpu": cpu} if cpu else {}
    stages = run.table("stages")
    samples = run.table("samples")
    run.tables = {
        "stages": stages[stages["stage"] == "torch_cpu"].reset_index(drop=True),
        "samples": samples[samples["stage"] == "torch_cpu"].reset_index(drop=True),
    }
    return run


def saved(run: store.Run, path: Path) -> Path:
    path.mkdir(parents=True)
    store.save_run(run, path)
    return path


def test_a_cpu_only_sweep_is_not_judged_against_a_gpu_baseline(tmp_path, capsys):
    """The issue's case: a CPU-only sweep against the H100 baseline 'regressed' torch_cpu by
    +690% and exited 1. The GPU model (and driver) it does not record are mismatches: exit 2."""
    base = saved(with_cpu_stage(make_run(1), XEON), tmp_path / "h100")
    slow = saved(cpu_only(XEON, 125e6 * 7.9), tmp_path / "cpu-only")
    result = profgen(["compare", base, slow], capsys)
    assert_refused(result, 2, "GPU model: baseline 'NVIDIA H100 80GB HBM3', this run not recorded")
    assert "--allow-mismatch" in result.err
    forced = profgen(["compare", base, slow, "--allow-mismatch"], capsys)
    assert forced.code == 1 and "torch_cpu" in forced.out and "GPU model" in forced.err


def test_the_cpu_model_counts_when_a_cpu_stage_is_compared():
    h100_xeon, h100_epyc = with_cpu_stage(make_run(1), XEON), with_cpu_stage(make_run(2), EPYC)
    with pytest.raises(BaselineMismatch) as err:
        baseline.check_compatible(h100_xeon, h100_epyc)
    assert "CPU model (stages on the CPU: torch_cpu)" in str(err.value)
    assert XEON in str(err.value) and EPYC in str(err.value)
    # the same GPU runs without a CPU stage: the host CPU is not what they time
    gpu_only_epyc = make_run(2, machine=dict(MACHINE, cpu=EPYC))
    assert (
        baseline.check_compatible(make_run(1, machine=dict(MACHINE, cpu=XEON)), gpu_only_epyc) == []
    )
    assert baseline.check_compatible(h100_xeon, with_cpu_stage(make_run(2), XEON)) == []


def test_without_runtimes_a_stage_without_gpu_activity_is_a_cpu_stage():
    """Schema version 1 recorded no runtime: a stage with no GPU activity counts as a CPU one,
    and a GPU stage stays a GPU stage."""

    def unsaid(run: store.Run) -> store.Run:
        run.tables["stages"] = run.table("stages").assign(runtime=pd.NA)
        run.tables["stages"] = schema.conform(run.tables["stages"], schema.STAGES)
        return run

    xeon, epyc = (
        unsaid(with_cpu_stage(make_run(1), XEON)),
        unsaid(with_cpu_stage(make_run(2), EPYC)),
    )
    assert baseline.cpu_stages(xeon) == {"torch_cpu"}
    with pytest.raises(BaselineMismatch, match="stages on the CPU: torch_cpu"):
        baseline.check_compatible(xeon, epyc)


def test_a_baseline_that_does_not_say_its_cpu_is_a_mismatch_for_cpu_stages(tmp_path):
    """Baselines written before they recorded the CPU (the committed lenet-h100.json is one)
    cannot vouch for a CPU stage's time."""
    path = baseline.write_baseline(with_cpu_stage(make_run(1), XEON), tmp_path / "b.json")
    data = json.loads(path.read_text())
    assert data["machine"]["cpu"] == XEON
    del data["machine"]["cpu"]
    path.write_text(json.dumps(data))
    old = baseline.load_reference(path)
    with pytest.raises(
        BaselineMismatch, match="CPU model .*baseline not recorded, this run 'Intel"
    ):
        baseline.check_compatible(old, with_cpu_stage(make_run(2), XEON))


def test_a_sweep_about_to_run_is_checked_for_its_cpu_stages_too():
    """`sweep --baseline` checks before any stage runs: the new run is only run.json's meta."""
    base = with_cpu_stage(make_run(1), XEON)
    meta = {
        "machine": dict(MACHINE, cpu=EPYC),
        "settings": {"items": 10_000, "stages": ["torch_cpu", "pinned"]},
    }
    with pytest.raises(BaselineMismatch, match="CPU model"):
        baseline.check_compatible(base, store.Run(meta=meta))
    meta["settings"]["stages"] = ["pinned"]  # no CPU stage chosen
    assert baseline.check_compatible(base, store.Run(meta=meta)) == []


# --- writing a baseline -----------------------------------------------------------------------


@pytest.mark.parametrize("target", ["run.json", "stages.csv", "gpu_activities.csv"])
def test_baseline_o_refuses_to_overwrite_a_file_of_the_run(tmp_path, capsys, target):
    run_dir = saved(make_run(1), tmp_path / "run")
    before = (run_dir / target).read_bytes()
    result = profgen(["baseline", run_dir, "-o", run_dir / target], capsys)
    assert_refused(result, 2, str(run_dir / target), "input of this command")
    assert (run_dir / target).read_bytes() == before
    store.load_run(run_dir)  # still whole


def test_baseline_is_written_through_files_write_text(tmp_path, capsys):
    """Atomic and link-safe: the old writer wrote `<name>.tmp` following a planted link."""
    run_dir = saved(make_run(1), tmp_path / "run")
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "b.json.tmp").symlink_to(victim)
    assert profgen(["baseline", run_dir, "-o", tmp_path / "b.json"], capsys).code == 0
    assert victim.read_text() == "precious"
    assert json.loads((tmp_path / "b.json").read_text())["format"] == baseline.FORMAT
    (tmp_path / "link.json").symlink_to(victim)
    result = profgen(["baseline", run_dir, "-o", tmp_path / "link.json"], capsys)
    assert_refused(result, 2, "link.json", "not a regular file")
    assert victim.read_text() == "precious"


def test_a_value_strict_json_cannot_hold_is_refused_naming_its_table(tmp_path, capsys):
    """Avg = inf (imported): json.dumps raised a ValueError traceback."""
    run_dir = saved(make_run(1), tmp_path / "run")
    acts = pd.read_csv(run_dir / "gpu_activities.csv", dtype=str, keep_default_na=False)
    acts.loc[3, "avg_ns"] = "inf"
    acts.to_csv(run_dir / "gpu_activities.csv", index=False)
    out = tmp_path / "b.json"
    result = profgen(["baseline", run_dir, "-o", out], capsys)
    row = acts.loc[3]
    where = f"stage {row['stage']!r}, {row['kind']} {row['name']!r}: avg_ns is inf"
    assert_refused(result, 2, str(run_dir / "gpu_activities.csv"), where)
    assert not out.exists()


# --- trimmed runs: kernel totals come from the whole summaries, never from a cut trace --------

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "tests" / "data" / "runs"
SAMPLE = RUNS / "lenet-h100-schema1-cupti"  # trimmed: 3,109 of 90,545 GPU operations
COMMITTED = RUNS / "lenet-h100-schema1-baseline.json"  # written from the same sweep


def trim_run():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location("trim_run", ROOT / "scripts" / "trim_run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernel_rows(base: store.Run, new: store.Run) -> pd.DataFrame:
    table = regress.evaluate(base, new, regress.default_checks())
    return table[table["metric"] == "kernel"]


def test_the_committed_baseline_agrees_with_the_trimmed_sample_it_came_from():
    """Both come from one sweep (lenet-20261121T214907Z). Summed from the sample's trimmed trace,
    cuda_baseline's kernels read 3% of their time: -96.7%, three false 'improvements'. From the
    summaries, every kernel of every stage is the same to the nanosecond."""
    base = baseline.load_reference(COMMITTED)
    sample = baseline.load_reference(SAMPLE)
    assert "gpu_trace" not in sample.tables  # left out: trimmed
    rows = kernel_rows(base, sample)
    assert len(rows) == 45 and set(rows["verdict"]) == {"unchanged"}
    assert (rows["ratio"] == 1.0).all(), rows[rows["ratio"] != 1.0]
    cuda = rows[rows["stage"] == "cuda_baseline"].set_index("name")["base_ns"]
    assert cuda["Linear_ReLu"] == 261_401_889  # the summary's total over the one profiled repeat


def test_a_trimmed_copy_of_the_sample_keeps_its_summaries_and_says_it_is_trimmed(tmp_path, capsys):
    out = tmp_path / "trimmed"
    assert trim_run().main([str(SAMPLE), str(out), "--rows", "50"]) == 0
    whole, cut = store.load_run(SAMPLE), store.load_run(out)
    for name in ("samples", "gpu_activities", "api_calls", "ranges"):
        pd.testing.assert_frame_equal(cut.table(name), whole.table(name))
    # the sample is schema 1, read upgraded (runtime ""); the copy is written as schema 2, where
    # an empty cell reads back as <NA>: the same "not recorded"
    unsaid = {"runtime": whole.table("stages")["runtime"].replace("", pd.NA)}
    pd.testing.assert_frame_equal(cut.table("stages"), whole.table("stages").assign(**unsaid))
    assert cut.table("gpu_trace").groupby("stage").size().max() == 50
    assert cut.meta["trimmed"]["gpu_trace"] == {
        "kept": len(cut.table("gpu_trace")),
        "of": 90_545,  # the untrimmed sweep's rows, carried over from the sample's run.json
        "rule": "first profiled repeat, at most 50 rows per stage",
    }
    result = profgen(["compare", SAMPLE, out, "--fail-on", "kernel:total:1%"], capsys)
    assert result.code == 0 and "0 regressions, 45 unchanged" in result.out


def test_a_full_run_trimmed_compares_as_the_full_run(tmp_path, capsys):
    """A synthetic sweep with 400 launches per kernel per repeat, trimmed to 100 rows a stage
    (under a tenth of each repeat) and, to be sure the summaries are computed before the cut,
    saved without its gpu_activities table."""
    full = make_run(1, profiled=3, launches=400)
    del full.tables["gpu_activities"]
    full_dir = saved(full, tmp_path / "full")
    out = tmp_path / "trimmed"
    assert trim_run().main([str(full_dir), str(out), "--rows", "100"]) == 0
    trimmed = store.load_run(out)
    assert store.trimmed_tables(trimmed.meta)["gpu_trace"] == store.Trim(
        900, len(full.table("gpu_trace"))
    )
    reference = baseline.load_reference(full_dir)
    rows = kernel_rows(reference, baseline.load_reference(out))
    assert set(rows["verdict"]) == {"unchanged"} and (rows["ratio"] - 1).abs().max() < 1e-9
    written = json.loads(baseline.write_baseline(trimmed, tmp_path / "b.json").read_text())
    for st in written["stages"]:
        assert st["trace_repeats"] is None and all(
            "repeat_totals_ns" not in a for a in st["activities"]
        )
    fc1 = next(
        a
        for st in written["stages"]
        if st["stage"] == FC[0]
        for a in st["activities"]
        if a["name"] == FC[1]
    )
    trace = full.table("gpu_trace")
    assert (
        fc1["total_ns"]
        == trace[(trace["stage"] == FC[0]) & (trace["name"] == FC[1])]["duration_ns"].sum()
    )


def test_a_trimmed_trace_without_a_summary_of_its_stage_is_refused(tmp_path):
    run = make_run(1)
    acts = run.tables["gpu_activities"]
    run.tables["gpu_activities"] = acts[acts["stage"] != "pinned"].reset_index(drop=True)
    run.meta["trimmed"] = {"gpu_trace": {"kept": 10, "of": 500}}
    run_dir = saved(run, tmp_path / "run")
    with pytest.raises(RunNotFound, match="gpu_trace was trimmed .10 of 500 rows kept.*pinned"):
        baseline.load_reference(run_dir)
    with pytest.raises(RunNotFound, match="pinned"):
        baseline.write_baseline(store.load_run(run_dir), tmp_path / "b.json")
