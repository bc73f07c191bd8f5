"""`profgen sweep` end to end on a machine without a GPU, with a CPU-only study (no profiler):
each stage in its own worker, the run directory written whole, the report rendered, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiler import schema, store
from profiler.cli import main

TESTS = Path(__file__).parent


TOY = str(TESTS / "studies" / "toy_study.py")


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def sweep(tmp_path: Path, *extra: str) -> list[str]:
    return ["sweep", TOY, "--backend", "none", "--items", "24", "--repeat", "3",
            "--warmup", "1", "--out", str(tmp_path), *extra]


def test_failed_stage_is_in_the_run_and_exits_3(toy, tmp_path, capsys):
    assert main(sweep(tmp_path)) == 3
    last = capsys.readouterr().out.strip().splitlines()[-1]
    run = store.load_run(last)
    stages = run.table("stages")
    assert list(stages["stage"]) == ["ref", "wrong"]
    assert list(stages["status"]) == [schema.PASS, schema.FAIL]
    assert "top-1" in stages["reason"].iloc[1]
    assert list(stages["role"]) == ["baseline", "step"] and run.meta["unit"] == "rows"
    assert (run.path / "report.html").stat().st_size > 100_000
    assert not list(tmp_path.glob(".*.partial"))


def test_passing_sweep_exits_0_with_samples_and_meta(toy, tmp_path, capsys):
    assert main(sweep(tmp_path, "--stages", "ref")) == 0
    path = Path(capsys.readouterr().out.strip().splitlines()[-1])
    meta = json.loads((path / "run.json").read_text())
    assert meta["schema_version"] == schema.SCHEMA_VERSION
    assert meta["settings"]["items"] == 24 and meta["stages"] == ["ref"]
    samples = store.load_run(path).table("samples")
    assert len(samples[samples["pass"] == "timed"]) == 3
    assert (samples["wall_ns"] > 0).all()


def test_the_studys_layer_facts_are_kept_once(toy, tmp_path, capsys):
    main(sweep(tmp_path))  # two stages, each worker gives the same facts
    run = store.load_run(capsys.readouterr().out.strip().splitlines()[-1])
    facts = run.table("layers")
    assert list(facts["node"]) == ["tanh"] and int(facts["flops"].iloc[0]) == 8
    assert "layers" in run.meta["tables"]
    assert 'id="layers"' not in (run.path / "report.html").read_text()  # one node: no section


def test_compare_a_run_with_itself_finds_no_regression(toy, tmp_path, capsys):
    assert main(sweep(tmp_path, "--stages", "ref")) == 0
    path = capsys.readouterr().out.strip().splitlines()[-1]
    assert main(["compare", path, path, "--fail-on", "stage:median:5%"]) == 0


def test_fail_on_without_baseline_is_refused_before_running(toy, tmp_path, capsys):
    assert main(sweep(tmp_path, "--fail-on", "stage:median:5%")) == 2
    assert "--baseline" in capsys.readouterr().err
    assert not list(p for p in tmp_path.iterdir() if p.name != "xdg-cache")


def test_run_prints_the_stage_and_its_verdict(toy, capsys):
    assert main(["run", TOY, "--stage", "ref", "--items", "16", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert "Reference on the CPU" in out and "PASS" in out
    assert main(["run", TOY, "--stage", "wrong", "--items", "16", "--repeat", "2"]) == 3
    assert "FAIL" in capsys.readouterr().out


def test_batch_sizes_give_one_curve_point_per_stage_and_size(toy, tmp_path, capsys):
    assert main(sweep(tmp_path, "--stages", "ref", "--batch-sizes", "5,24")) == 0
    run = store.load_run(capsys.readouterr().out.strip().splitlines()[-1])
    curve = run.table("batch_sweep")
    assert list(curve["batch"]) == [5, 24] and set(curve["stage"]) == {"ref"}
    assert (curve["items"] == 24).all() and (curve["repeats"] == 3).all()
    five = curve.iloc[0]
    assert five["batch_median_ns"] == five["median_ns"] // 5  # 24 images in 5 calls of <= 5
    assert "batch" in (run.path / "report.html").read_text().lower()


def test_sweep_against_a_baseline_writes_the_ci_outputs(toy, tmp_path, capsys):
    assert main(sweep(tmp_path / "base", "--stages", "ref")) == 0
    base = capsys.readouterr().out.strip().splitlines()[-1]
    summary, junit = tmp_path / "summary.md", tmp_path / "junit.xml"
    argv = sweep(tmp_path / "new", "--stages", "ref", "--baseline", base, "--fail-on",
                 "stage:median:1000%", "--summary", str(summary), "--junit", str(junit))
    assert main(argv) == 0
    run = store.load_run(capsys.readouterr().out.strip().splitlines()[-1])
    regressions = run.table("regressions")
    assert list(regressions["check"]) == ["stage:median:1000%"]
    assert list(regressions["verdict"]) == ["unchanged"]
    assert "Reference on the CPU" in summary.read_text()
    assert 'tests="1"' in junit.read_text() and 'failures="0"' in junit.read_text()
    assert 'id="regressions"' in (run.path / "report.html").read_text()


def test_a_baseline_of_another_image_count_is_refused_before_running(toy, tmp_path, capsys):
    assert main(sweep(tmp_path / "base", "--stages", "ref")) == 0
    base = capsys.readouterr().out.strip().splitlines()[-1]
    argv = sweep(tmp_path / "new", "--stages", "ref", "--baseline", base)
    argv[argv.index("--items") + 1] = "12"
    assert main(argv) == 2
    assert "item count" in capsys.readouterr().err and not (tmp_path / "new").exists()
    # a gate no timing noise trips: this test is about the item count, not about speed (the
    # default 100% gate failed it on a loaded machine, where 12 items took twice 10's time)
    assert main([*argv, "--allow-mismatch", "--fail-on", "stage:median:100000%"]) == 0
    captured = capsys.readouterr()
    assert "warning: baseline compared anyway: item count" in captured.err
