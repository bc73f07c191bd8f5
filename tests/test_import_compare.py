"""Comparing imported runs (`profgen compare`, `profgen baseline`): IMPORTED is no failure.

An imported stage is compared like a PASS stage when both runs' numbers are of one kind (the same
span, both per repeat or both whole-program), and is `incomparable` otherwise: never `failed`,
never exit 3. JUnit shows it as a skipped case with the reason, never as an error.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from clirun import profgen

from profiler import baseline, schema, store
from profiler.analyze import regress

DATA = Path(__file__).parent / "data"
NSYS = DATA / "nsys" / "2025.3.1"
DEMO, OVERLAP = NSYS / "demo", NSYS / "overlap"
SAMPLE = Path(__file__).resolve().parents[1] / "reports" / "sample-lenet-h100-cupti"


def import_dir(capsys, out: Path, *argv: str) -> Path:  # type: ignore[no-untyped-def]
    result = profgen(["import", "--model", "m", "--out", out, *argv], capsys)
    assert result.code == 0, result.err
    return Path(result.out.strip().splitlines()[-1])


def verdicts(reg) -> dict[tuple[str, object], str]:  # type: ignore[no-untyped-def]
    return {(r["metric"], r["name"] if isinstance(r["name"], str) else None): r["verdict"]
            for r in reg.to_dict("records")}  # fmt: skip


def test_the_same_import_twice_is_unchanged_and_exits_0(tmp_path, capsys):
    a = import_dir(capsys, tmp_path, "--stage", f"s={DEMO}", "--repeats", "3")
    b = import_dir(capsys, tmp_path, "--stage", f"s={DEMO}", "--repeats", "3")
    result = profgen(["compare", a, b, "--junit", tmp_path / "j.xml"], capsys)
    assert result.code == 0, result.err
    reg = baseline.compare_runs(store.load_run(a), store.load_run(b), regress.default_checks())[0]
    assert set(reg["verdict"]) == {regress.UNCHANGED}
    assert verdicts(reg)[("kernel", "addone")] == regress.UNCHANGED
    kernel = reg[reg["name"] == "addone"].iloc[0]
    assert kernel["base_ns"] == pytest.approx(33153 / 3)  # nsys kern_sum: 33,153 ns in all


def test_a_slower_import_of_the_same_kind_is_a_regression(tmp_path, capsys):
    """demo's GPU span is 43 ms, overlap's far shorter: as one stage, overlap -> demo regressed."""
    a = import_dir(capsys, tmp_path, "--stage", f"s={OVERLAP}")
    b = import_dir(capsys, tmp_path, "--stage", f"s={DEMO}")
    result = profgen(["compare", a, b], capsys)
    assert result.code == 1 and "REGRESSION" in result.out
    reg = baseline.compare_runs(store.load_run(a), store.load_run(b), regress.default_checks())[0]
    assert verdicts(reg)[("stage", None)] == regress.REGRESSION


def test_repeats_given_on_one_side_only_are_incomparable_not_failed(tmp_path, capsys):
    a = import_dir(capsys, tmp_path, "--stage", f"s={DEMO}", "--repeats", "3")
    b = import_dir(capsys, tmp_path, "--stage", f"s={DEMO}")
    junit = tmp_path / "j.xml"
    result = profgen(["compare", a, b, "--junit", junit, "--summary", tmp_path / "s.md"], capsys)
    assert result.code == 0, result.err
    assert "incomparable" in result.out and "FAILED" not in result.out
    reg = baseline.compare_runs(store.load_run(a), store.load_run(b), regress.default_checks())[0]
    assert set(reg["verdict"]) == {regress.INCOMPARABLE}
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("errors") == "0" and suite.get("failures") == "0"
    skipped = [c.find("skipped") for c in suite.iter("testcase")]
    assert skipped and all(s is not None and "measured differently" in s.get("message", "")
                           for s in skipped)  # fmt: skip
    summary = (tmp_path / "s.md").read_text()
    assert "0 regressions, 2 incomparable" in summary and "Failed stages" not in summary


def test_an_import_against_a_sweep_is_incomparable_and_never_exits_3(tmp_path, capsys):
    sweep = store.load_run(SAMPLE)
    key = str(sweep.table("stages")["stage"].iloc[-1])
    path = import_dir(capsys, tmp_path, "--stage", f"{key}={DEMO}")
    result = profgen(["compare", SAMPLE, path, "--allow-mismatch"], capsys)
    assert result.code == 0, result.err
    reg = baseline.compare_runs(sweep, store.load_run(path), regress.default_checks(), True)[0]
    mine = reg[reg["stage"] == key]
    assert set(mine["verdict"]) == {regress.INCOMPARABLE}
    assert regress.exit_code(reg) == 0


def test_a_baseline_of_an_import_round_trips(tmp_path, capsys):
    path = import_dir(capsys, tmp_path, "--stage", f"s={DEMO}", "--repeats", "3")
    file = tmp_path / "base.json"
    assert profgen(["baseline", path, "-o", file], capsys).code == 0
    back = baseline.load_reference(file)
    row = back.table("stages").iloc[0]
    assert row["status"] == schema.IMPORTED and row["timing"] == schema.GPU_SPAN
    assert row["repeats"] == 3
    result = profgen(["compare", file, path], capsys)
    assert result.code == 0, result.err
    reg = baseline.compare_runs(back, store.load_run(path), regress.default_checks())[0]
    assert set(reg["verdict"]) == {regress.UNCHANGED}
