"""Regression checks: grammar, the significance rule, verdicts, exit codes and `profgen compare`.

Hand-made runs (`tiny_run`) carry samples whose answer is known by hand; `regress_factory`
gives LeNet-sized synthetic runs with seeded noise. Tests on runs recorded on the H100 live at
the end and read `tests/data/runs/regress-pair/`.
"""

from __future__ import annotations

import itertools
import math
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from regress_factory import MACHINE, make_run

from profiler import schema, store
from profiler.analyze import regress
from profiler.cli import main
from profiler.errors import UsageError

FC = ("fc_coalesced", "fc1_kernel")


# --- the check grammar ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "metric", "stat", "percent", "absolute_ns"),
    [
        ("stage:median:5%", "stage", "median", 5.0, None),
        ("kernel:total:10%", "kernel", "total", 10.0, None),
        ("stage:min:2.5%", "stage", "min", 2.5, None),
        ("stage:mean:.5%", "stage", "mean", 0.5, None),
        ("stage:median:0.2ms", "stage", "median", None, 200_000.0),
        ("stage:max:150us", "stage", "max", None, 150_000.0),
        ("kernel:total:1s", "kernel", "total", None, 1e9),
        ("kernel:total:500ns", "kernel", "total", None, 500.0),
    ],
)
def test_parse_check_accepts_the_grammar(text, metric, stat, percent, absolute_ns):
    check = regress.parse_check(text)
    assert (check.metric, check.stat, check.percent, check.absolute_ns) == (
        metric,
        stat,
        percent,
        absolute_ns,
    )
    assert check.text == text


@pytest.mark.parametrize(
    "text",
    [
        "median:5%",  # no metric
        "stage:median:5%:x",
        "gpu:median:5%",  # unknown metric
        "stage:p99:5%",  # unknown statistic
        "kernel:median:5%",  # a stage statistic on a kernel
        "stage:median:5",  # a number without % or a unit
        "stage:median:0%",
        "stage:median:-5%",
        "stage:median:fast",
        "stage:median:5 %",
        "stage:median:5min",
        "",
    ],
)
def test_parse_check_refuses_nonsense_naming_the_valid_forms(text):
    with pytest.raises(UsageError) as err:
        regress.parse_check(text)
    message = str(err.value)
    assert repr(text) in message
    for form in ("stage:median", "stage:min", "kernel:total", "5%", "0.2ms"):
        assert form in message


def test_default_checks_are_documented_ones():
    assert [c.text for c in regress.default_checks()] == ["stage:median:100%", "kernel:total:10%"]
    assert regress.resolve_checks([]) == regress.default_checks()
    assert [c.text for c in regress.resolve_checks(["kernel:total:3%"])] == ["kernel:total:3%"]


ROOT = Path(__file__).resolve().parents[1]


def test_compare_help_states_the_default_checks_the_code_uses(capsys, monkeypatch):
    """`compare --help` once said `stage:median:5%` while the code used 100%: the help is now
    written from `DEFAULT_CHECKS`, so changing the constant changes the help."""
    from clirun import profgen

    from profiler.analyze import checks

    def help_text() -> str:
        out = profgen(["compare", "--help"], capsys).out
        return " ".join(out.split())  # argparse wraps lines

    text = help_text()
    assert f"default: {' and '.join(regress.DEFAULT_CHECKS)})" in text
    assert "default: stage:median:5%" not in text
    monkeypatch.setattr(checks, "DEFAULT_CHECKS", ("stage:median:42%",))
    assert "default: stage:median:42%)" in help_text()


def test_the_docs_state_the_default_checks_of_the_code():
    """README, the example CI job and the check grammar's docstrings say what `DEFAULT_CHECKS`
    says: any check named in a sentence about the defaults is one of them."""
    import re

    from profiler.analyze import checks

    readme = " ".join((ROOT / "README.md").read_text().split())
    stated = re.search(r"The default checks are (.+?)\. ", readme)
    assert stated is not None
    assert re.findall(r"`([^`]+)`", stated[1]) == list(regress.DEFAULT_CHECKS)
    job = " ".join((ROOT / ".github" / "workflows" / "gpu-sweep.yml").read_text().split())
    assert f"the default checks, {' and '.join(regress.DEFAULT_CHECKS)}," in job
    check = r"\b(?:stage|kernel):\w+:[\d.]+(?:%|ns|us|ms|s)"
    docs = [checks.__doc__, regress.__doc__, checks.default_checks.__doc__]
    for doc in docs:
        for sentence in re.findall(r"[^.]*\bdefault[^.]*", " ".join(str(doc).split())):
            assert set(re.findall(check, sentence)) <= set(regress.DEFAULT_CHECKS), sentence


def test_fail_on_without_a_baseline_is_an_error():
    with pytest.raises(UsageError, match="--fail-on needs --baseline"):
        regress.validate_regression_args(None, ["stage:median:5%"])
    assert regress.validate_regression_args(None, []) == regress.default_checks()
    assert regress.validate_regression_args(Path("b.json"), ["stage:min:1%"])[0].stat == "min"
    with pytest.raises(UsageError, match="unknown statistic"):
        regress.validate_regression_args(Path("b.json"), ["stage:p50:1%"])


@pytest.mark.parametrize(
    ("text", "base", "new", "expected"),
    [
        ("stage:median:5%", 100.0, 105.5, 1),
        ("stage:median:5%", 100.0, 104.5, 0),
        ("stage:median:5%", 100.0, 94.5, -1),
        ("stage:median:5%", 100.0, 95.5, 0),
        ("stage:median:10ns", 100.0, 111.0, 1),
        ("stage:median:10ns", 100.0, 109.0, 0),
        ("stage:median:10ns", 100.0, 89.0, -1),
    ],
)
def test_check_direction_is_past_the_threshold(text, base, new, expected):
    assert regress.parse_check(text).direction(base, new) == expected


def test_absolute_threshold_as_percent_of_the_baseline():
    assert regress.parse_check("stage:median:0.2ms").threshold_pct(4e6) == pytest.approx(5.0)
    assert regress.parse_check("stage:median:7%").threshold_pct(4e6) == 7.0


# --- significance ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n1", "n2", "can"),
    # 2 / C(n1 + n2, n1) < 0.05  <=>  C(n1 + n2, n1) > 40
    [
        (3, 3, False),
        (3, 4, False),
        (4, 4, True),
        (3, 5, True),
        (2, 7, False),
        (2, 8, True),
        (1, 39, False),
        (1, 40, True),
        (10, 10, True),
        (0, 10, False),
    ],
)
def test_mann_whitney_decides_only_where_it_can_reach_alpha(n1, n2, can):
    assert regress.mann_whitney_can_decide(n1, n2) is can


def exact_two_sided_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Mann-Whitney's exact two-sided p by enumerating every split (no ties), independently."""
    pooled = list(x) + list(y)
    n1 = len(x)

    def u(idx: tuple[int, ...]) -> int:
        a = [pooled[i] for i in idx]
        b = [pooled[i] for i in range(len(pooled)) if i not in idx]
        return sum(1 for p in a for q in b if p > q)

    observed = u(tuple(range(n1)))
    mean = n1 * len(y) / 2
    splits = list(itertools.combinations(range(len(pooled)), n1))
    extreme = sum(1 for s in splits if abs(u(s) - mean) >= abs(observed - mean))
    return extreme / len(splits)


def test_mann_whitney_on_separated_samples():
    sig = regress.significance([1, 2, 3, 4], [5, 6, 7, 8])
    assert sig.method == regress.MANN_WHITNEY
    assert sig.p_value == pytest.approx(2 / math.comb(8, 4))  # 0.0286: the smallest possible
    assert sig.significant


@pytest.mark.parametrize(
    ("x", "y"),
    [
        ([1, 3, 5, 7], [2, 4, 6, 8]),
        ([10, 20, 30, 40, 50], [15, 25, 35, 45, 55]),
        ([1, 2, 3, 4, 6], [5, 7, 8, 9, 10]),
    ],
)
def test_mann_whitney_matches_the_exact_test_by_enumeration(x, y):
    sig = regress.significance(x, y)
    expected = exact_two_sided_p(x, y)
    assert sig.p_value == pytest.approx(expected)
    assert sig.significant is (expected < 0.05)


def test_few_samples_fall_back_to_interval_overlap():
    apart = regress.significance(
        [10, 11, 12], [13, 14, 15]
    )  # exact MW could say no better than p=0.1
    assert (apart.method, apart.significant) == (regress.INTERVAL_OVERLAP, True)
    assert math.isnan(apart.p_value)
    overlap = regress.significance([10, 12, 14], [13, 15, 17])
    assert (overlap.method, overlap.significant) == (regress.INTERVAL_OVERLAP, False)
    assert regress.significance([5.0], [6.0]).significant
    assert not regress.significance([5.0], [5.0]).significant
    with pytest.raises(ValueError):
        regress.significance([], [1.0])


# --- evaluate on hand-made runs -------------------------------------------------------------


def tiny_run(
    stages: Mapping[str, Sequence[float]],
    kernels: Mapping[tuple[str, str], Sequence[float]] = {},
    status: Mapping[str, str] = {},
    images: int = 100,
    machine: Mapping[str, str] = MACHINE,
) -> store.Run:
    """A run with the given timed samples per stage and per-repeat kernel totals (one launch per
    repeat; a total of 0 means the kernel did not run in that repeat)."""
    rows, samples, trace = [], [], []
    for order, (stage, walls) in enumerate(stages.items()):
        st = status.get(stage, schema.PASS)
        rows.append(
            {
                "stage": stage,
                "order": order,
                "title": stage,
                "technique": "",
                "status": st,
                "role": "step",
                "items": images,
                "batch": images,
                "warmup": 0,
                "repeats": len(walls),
                "max_rel_err": 0.0,
                "overhead_pct": math.nan,
            }
        )
        samples += [
            {"stage": stage, "pass": "timed", "repeat": i, "wall_ns": w}
            for i, w in enumerate(walls)
        ]
    for (stage, name), totals in kernels.items():
        for rep, total in enumerate(totals):
            if total:
                trace.append(
                    {
                        "stage": stage,
                        "repeat": rep,
                        "kind": "kernel",
                        "name": name,
                        "start_ns": 0,
                        "end_ns": total,
                        "duration_ns": total,
                    }
                )
        trace.append(
            {
                "stage": stage,
                "repeat": len(totals) - 1,
                "kind": "memcpy",
                "name": "[CUDA memcpy HtoD]",
                "start_ns": 0,
                "end_ns": 0,
                "duration_ns": 0,
            }
        )
    fill_stages = [c for c in schema.STAGES.names if c not in rows[0]]
    fill_trace = [
        c
        for c in schema.GPU_TRACE.names
        if c not in ("stage", "repeat", "kind", "name", "start_ns", "end_ns", "duration_ns")
    ]
    tables = {
        "stages": schema.conform(pd.DataFrame(rows), schema.STAGES, fill=fill_stages),
        "samples": schema.conform(pd.DataFrame(samples), schema.SAMPLES),
    }
    if trace:
        tables["gpu_trace"] = schema.conform(pd.DataFrame(trace), schema.GPU_TRACE, fill=fill_trace)
    return store.Run(meta={"model": "tiny", "machine": dict(machine)}, tables=tables)


def one(df: pd.DataFrame, **where) -> dict:
    sel = df
    for k, v in where.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, f"expected one row for {where}, got {len(sel)}"
    return sel.iloc[0].to_dict()


def test_a_significant_change_past_the_threshold_is_a_regression():
    base = tiny_run({"s": [100, 101, 102, 103]})
    new = tiny_run({"s": [110, 111, 112, 113]})
    out = regress.evaluate(base, new, [regress.parse_check("stage:median:5%")])
    schema.validate(out, schema.REGRESSIONS)
    row = one(out, stage="s")
    assert (row["base_ns"], row["new_ns"]) == (101.5, 111.5)
    assert row["ratio"] == pytest.approx(111.5 / 101.5)
    assert row["p_value"] == pytest.approx(2 / 70)
    assert (row["method"], row["significant"], row["verdict"]) == (
        "mann-whitney",
        True,
        "regression",
    )
    assert regress.exit_code(out) == 1
    back = regress.evaluate(new, base, [regress.parse_check("stage:median:5%")])
    assert one(back, stage="s")["verdict"] == "improvement"
    assert regress.exit_code(back) == 0


def test_a_change_past_the_threshold_that_is_not_significant_does_not_fire():
    base = tiny_run({"s": [100, 140, 100, 140]})  # median 120
    new = tiny_run({"s": [100, 160, 100, 160]})  # median 130: +8%, but noise covers it
    row = one(regress.evaluate(base, new, regress.default_checks()), stage="s")
    assert row["ratio"] == pytest.approx(130 / 120)
    assert (row["significant"], row["verdict"]) == (False, "unchanged")


def test_a_significant_change_under_the_threshold_does_not_fire():
    base = tiny_run({"s": [100, 101, 102, 103]})
    new = tiny_run({"s": [103, 104, 105, 106]})  # +3%, every sample above every baseline one
    row = one(regress.evaluate(base, new, regress.default_checks()), stage="s")
    assert (row["significant"], row["verdict"]) == (True, "unchanged")


def test_absolute_thresholds():
    base = tiny_run({"s": [100, 101, 102, 103]})
    new = tiny_run({"s": [110, 111, 112, 113]})  # +10 ns
    fired = one(regress.evaluate(base, new, [regress.parse_check("stage:median:5ns")]), stage="s")
    quiet = one(regress.evaluate(base, new, [regress.parse_check("stage:median:20ns")]), stage="s")
    assert fired["verdict"] == "regression" and quiet["verdict"] == "unchanged"
    assert fired["threshold_pct"] == pytest.approx(100 * 5 / 101.5)


def test_kernel_samples_are_per_repeat_totals_with_zero_where_it_did_not_run():
    walls = [100, 100, 100]
    base = tiny_run({"s": walls}, {("s", "k"): [40, 40, 40], ("s", "j"): [60, 60, 60]})
    new = tiny_run({"s": walls}, {("s", "k"): [50, 0, 52], ("s", "j"): [60, 60, 60]})
    out = regress.evaluate(base, new, [regress.parse_check("kernel:total:10%")])
    k = one(out, name="k")
    assert (k["base_ns"], k["new_ns"]) == (40.0, 50.0)  # median of [50, 0, 52]
    assert k["method"] == "interval-overlap" and not k["significant"]  # 0..52 overlaps 40
    assert k["share_pct"] == pytest.approx(100 * 102 / (102 + 180))
    assert one(out, name="j")["share_pct"] == pytest.approx(100 * 180 / 282)


def test_failed_skipped_and_missing_stages():
    base = tiny_run({"a": [1, 2], "b": [1, 2], "c": [1, 2], "d": [1, 2]}, status={"b": "SKIPPED"})
    new = tiny_run({"a": [1, 2], "b": [1, 2], "c": [1, 2], "e": [1, 2]}, status={"c": "TIMEOUT"})
    out = regress.evaluate(base, new, regress.default_checks())
    verdicts = {(r["check"], r["stage"]): r["verdict"] for r in out.to_dict("records")}
    for check in regress.DEFAULT_CHECKS:
        assert verdicts[(check, "b")] == "skipped"
        assert verdicts[(check, "c")] == "failed"
        assert verdicts[(check, "d")] == "missing" and verdicts[(check, "e")] == "missing"
    assert verdicts[("stage:median:100%", "a")] == "unchanged"
    assert regress.exit_code(out) == 3


def test_a_stage_failed_in_the_baseline_is_exit_3_even_with_a_regression():
    base = tiny_run({"a": [1, 2, 3, 4], "b": [1, 2, 3, 4]}, status={"b": "FAIL"})
    new = tiny_run({"a": [10, 20, 30, 40], "b": [1, 2, 3, 4]})
    out = regress.evaluate(base, new, regress.default_checks())
    assert "regression" in set(out["verdict"]) and regress.exit_code(out) == 3


def test_a_kernel_in_one_run_only_is_missing():
    base = tiny_run({"s": [1]}, {("s", "old"): [5]})
    new = tiny_run({"s": [1]}, {("s", "new"): [5]})
    out = regress.evaluate(base, new, [regress.parse_check("kernel:total:10%")])
    assert one(out, name="old")["verdict"] == "missing" and math.isnan(
        one(out, name="old")["new_ns"]
    )
    assert one(out, name="new")["verdict"] == "missing" and math.isnan(
        one(out, name="new")["base_ns"]
    )
    assert regress.exit_code(out) == 0


# --- evaluate on LeNet-sized synthetic runs -------------------------------------------------


@pytest.mark.parametrize("seeds", [(1, 2), (3, 4), (5, 6), (7, 8), (9, 10), (11, 12)])
def test_noise_does_not_fire_at_the_default_checks(seeds):
    out = regress.evaluate(make_run(seeds[0]), make_run(seeds[1]), regress.default_checks())
    assert len(out) == 9 + 9 * 7  # every stage, and every kernel of every stage
    assert set(out["verdict"]) == {"unchanged"}, out[out["verdict"] != "unchanged"]
    assert regress.exit_code(out) == 0


def test_a_kernel_that_really_grew_fires_and_is_named():
    out = regress.evaluate(
        make_run(1), make_run(2, kernel_scale={FC: 1.5}), regress.default_checks()
    )
    fired = out[out["verdict"] == "regression"]
    kernel = one(fired, metric="kernel")
    assert (kernel["stage"], kernel["name"]) == FC
    assert kernel["ratio"] == pytest.approx(1.5, rel=0.02)
    # fc1 is 0.15 of the kernels' 0.75 of the stage's GPU time; grown 1.5x it is
    # 0.16875 of 1.05625 of the old total
    assert kernel["share_pct"] == pytest.approx(100 * 0.16875 / 1.05625, abs=0.5)
    assert set(fired["stage"]) == {"fc_coalesced"}
    assert regress.exit_code(out) == 1


def test_a_kernel_that_shrank_is_an_improvement():
    out = regress.evaluate(
        make_run(1), make_run(2, kernel_scale={FC: 0.5}), regress.default_checks()
    )
    assert one(out, verdict="improvement", metric="kernel")["name"] == "fc1_kernel"
    assert regress.exit_code(out) == 0


def test_without_traces_kernels_compare_activity_totals():
    base, new = make_run(1, trace=False), make_run(2, trace=False, kernel_scale={FC: 1.5})
    out = regress.evaluate(base, new, [regress.parse_check("kernel:total:10%")])
    assert set(out["method"]) == {"interval-overlap"}
    row = one(out, verdict="regression")
    assert (row["stage"], row["name"]) == FC
    assert row["ratio"] == pytest.approx(1.5, rel=0.02)
    # one run with a trace, one without: the activities decide for both
    mixed = regress.evaluate(make_run(1), new, [regress.parse_check("kernel:total:10%")])
    assert one(mixed, verdict="regression")["name"] == "fc1_kernel"


def test_evaluate_orders_rows_by_check_then_study_order():
    out = regress.evaluate(make_run(1), make_run(2), regress.default_checks())
    stage_rows = out[out["metric"] == "stage"]
    assert list(stage_rows["stage"]) == list(make_run(1).table("stages")["stage"])
    assert list(out["check"].drop_duplicates()) == ["stage:median:100%", "kernel:total:10%"]
    shares = out[(out["metric"] == "kernel") & (out["stage"] == "conv_opt")]["share_pct"]
    assert list(shares) == sorted(shares, reverse=True)


# --- profgen compare ------------------------------------------------------------------------


def saved(run: store.Run, path: Path) -> Path:
    path.mkdir(parents=True)
    store.save_run(run, path)
    return path


def test_compare_exit_codes(tmp_path, capsys):
    base = saved(make_run(1), tmp_path / "base")
    same = saved(make_run(2), tmp_path / "same")
    slow = saved(make_run(3, kernel_scale={FC: 1.5}), tmp_path / "slow")
    failed = saved(make_run(4, status={"pinned": "FAIL"}), tmp_path / "failed")
    assert main(["compare", str(base), str(same)]) == 0
    assert "0 regressions" in capsys.readouterr().out
    assert main(["compare", str(base), str(slow)]) == 1
    out = capsys.readouterr().out
    assert "fc1_kernel" in out and "REGRESSION" in out
    assert main(["compare", str(base), str(failed)]) == 3
    assert "FAILED" in capsys.readouterr().out


def test_compare_a_broken_run_exits_2_with_a_message(tmp_path, capsys):
    base = saved(make_run(1), tmp_path / "base")
    broken = saved(make_run(2), tmp_path / "broken")
    (broken / "samples.csv").write_text("stage,pass\nconv_opt\n")
    assert main(["compare", str(base), str(broken)]) == 2
    assert "samples.csv" in capsys.readouterr().err
    shutil.rmtree(broken)
    broken.mkdir()
    assert main(["compare", str(base), str(broken)]) == 2
    assert "not a profgen run" in capsys.readouterr().err


def test_compare_refuses_another_gpu_unless_allowed(tmp_path, capsys):
    base = saved(make_run(1), tmp_path / "base")
    other = saved(
        make_run(2, machine=dict(MACHINE, gpu_name="NVIDIA A100-SXM4-40GB")), tmp_path / "a100"
    )
    assert main(["compare", str(base), str(other)]) == 2
    err = capsys.readouterr().err
    assert (
        "NVIDIA H100 80GB HBM3" in err
        and "NVIDIA A100-SXM4-40GB" in err
        and "--allow-mismatch" in err
    )
    assert main(["compare", str(base), str(other), "--allow-mismatch"]) == 0
    assert "mismatch" in capsys.readouterr().err


def test_compare_bad_check_is_a_usage_error(tmp_path, capsys):
    base = saved(make_run(1), tmp_path / "base")
    assert main(["compare", str(base), str(base), "--fail-on", "stage:p99:5%"]) == 2
    assert "unknown statistic 'p99'" in capsys.readouterr().err


def test_compare_formats_and_ci_outputs(tmp_path, capsys):
    base = saved(make_run(1), tmp_path / "base")
    slow = saved(make_run(3, kernel_scale={FC: 1.5}), tmp_path / "slow")
    summary, junit = tmp_path / "summary.md", tmp_path / "junit.xml"
    code = main(
        [
            "compare",
            str(base),
            str(slow),
            "--format",
            "csv",
            "--fail-on",
            "kernel:total:10%",
            "--summary",
            str(summary),
            "--junit",
            str(junit),
        ]
    )
    assert code == 1
    from io import StringIO

    table = pd.read_csv(StringIO(capsys.readouterr().out))
    assert list(table.columns) == schema.REGRESSIONS.names
    assert set(table["check"]) == {"kernel:total:10%"}
    assert (table["verdict"] == "regression").sum() == 1
    assert "fc1_kernel" in summary.read_text() and 'failures="1"' in junit.read_text()
    assert main(["compare", str(base), str(slow), "--format", "json"]) == 1
    import json

    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 72 and {r["verdict"] for r in rows} >= {"regression"}


# --- runs recorded on the H100 --------------------------------------------------------------

PAIR = Path(__file__).parent / "data" / "runs" / "regress-pair"


def recorded(name: str) -> Path:
    """`regress-pair/<name>` as a run directory or `<name>.json` baseline file."""
    for path in (PAIR / name, PAIR / f"{name}.json"):
        if path.exists():
            return path
    pytest.skip(
        f"no recorded run {PAIR / name}[.json]: see {PAIR / 'README.md'} for how to record it"
    )


def test_recorded_pair_with_no_change_does_not_fire(capsys):
    """Two unchanged sweeps: no kernel moves by 5%, and the default checks stay quiet."""
    base, same = recorded("base"), recorded("same")
    assert main(["compare", str(base), str(same), "--fail-on", "kernel:total:5%"]) == 0
    assert "REGRESSION" not in capsys.readouterr().out
    assert main(["compare", str(base), str(same)]) == 0
    assert "REGRESSION" not in capsys.readouterr().out


def test_recorded_pair_stage_times_show_the_hosts_noise(capsys):
    """What the default stage threshold is calibrated on: between these two unchanged sweeps
    a pageable-copy stage's median moved by more than 5% (and significantly), so a 5% stage
    gate would have cried wolf; the pinned-memory stages moved by under 10%."""
    from profiler.baseline import load_reference

    base, same = load_reference(recorded("base")), load_reference(recorded("same"))
    table = regress.evaluate(base, same, [regress.parse_check("stage:median:5%")])
    ratio = table.set_index("stage")["ratio"]
    assert (ratio.drop(["pinned", "fc_coalesced", "overlap_fusion"]).sub(1).abs() > 0.05).any()
    assert (ratio[["pinned", "fc_coalesced", "overlap_fusion"]].sub(1).abs() < 0.10).all()


def test_recorded_pair_with_a_slower_kernel_fires_and_names_it(capsys):
    from profiler.baseline import load_reference

    base, slow = recorded("base"), recorded("slow")
    assert main(["compare", str(base), str(slow)]) == 1
    out = capsys.readouterr().out
    table = regress.evaluate(load_reference(base), load_reference(slow), regress.default_checks())
    fired = table[table["verdict"] == "regression"]
    kernels = fired[fired["metric"] == "kernel"]
    assert set(fired["stage"]) == {"fc_coalesced"}, fired
    assert not kernels.empty
    for name in kernels["name"]:
        assert str(name)[:40] in out


def test_recorded_broken_run_exits_2(tmp_path, capsys):
    base = recorded("base")
    if base.is_dir():
        broken = tmp_path / "broken"
        shutil.copytree(base, broken)
        (broken / "stages.csv").write_text("stage\n")
    else:
        broken = tmp_path / "broken.json"
        broken.write_text(base.read_text()[: len(base.read_text()) // 2])
    assert main(["compare", str(base), str(broken)]) == 2
    assert "broken" in capsys.readouterr().err


def test_one_profiled_repeat_per_run_falls_back_to_interval_overlap():
    out = regress.evaluate(
        make_run(1, profiled=1), make_run(2, profiled=1), regress.default_checks()
    )
    assert out["significant"].dtype == np.dtype(bool)
    assert set(out.loc[out["metric"] == "kernel", "method"]) == {"interval-overlap"}
