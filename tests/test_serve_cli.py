"""`profgen serve` end to end on the CPU (examples/softmax_cpu.py): the run directory, its
tables, the report's section, the trace, the terminal's table; a stage that answers wrong under
load exits 3; a second run gated against the first with the serve checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import assert_refused, profgen

from profiler import schema, store

ROOT = Path(__file__).resolve().parents[1]
SOFTMAX = ROOT / "examples" / "softmax_cpu.py"
QUICK = ["--duration-s", "0.3", "--warmup-s", "0.05", "--max-batch", "8", "--max-wait-us", "50"]

WRONG = '''
import numpy as np
from profiler.study import Compare, Study

study = Study("wrong", title="Wrong under load", unit="rows", default_items=64,
              inputs=lambda n: np.arange(n * 3, dtype=np.float32).reshape(n, 3),
              reference=lambda x: x * 2, compare=Compare(rtol=1e-6, atol=1e-6))

@study.stage(runtime="cpu")
class Drifts:
    """Right alone, wrong in batches"""
    def infer(self, x):
        return x * 2 + (len(x) > 1)
'''


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("serve")
    from profiler.cli import main

    code = main(
        [
            "serve",
            str(SOFTMAX),
            "--stage",
            "vectorised",
            "--concurrency",
            "1,4",
            "--rate",
            "500",
            "--slo-ms",
            "50",
            "--out",
            str(out),
            *QUICK,
        ]
    )
    assert code == 0
    (run,) = [p for p in out.iterdir() if not p.name.startswith(".")]
    return run


def test_serve_writes_a_whole_run(first_run: Path) -> None:
    run = store.load_run(first_run)
    assert not list((first_run / "raw" / "serve").glob("*.npz"))  # records dropped by default
    assert run.meta["source"] == "serve" and run.meta["settings"]["stage"] == "vectorised"
    points = run.table(schema.SERVE_POINTS.name)
    assert points["point"].tolist() == ["c1-b8-w50us-s1", "c4-b8-w50us-s1", "r500-b8-w50us-s1"]
    assert (points["requests"] > 0).all() and (points["checked"] > 0).all()
    assert (points["failed"] == 0).all()
    assert (points["p50_ns"] <= points["p99_ns"]).all() and (
        points["p99_ns"] <= points["max_ns"]
    ).all()
    assert len(run.table(schema.SERVE_WINDOWS.name)) == 30
    assert run.table(schema.SERVE_HISTOGRAM.name)["count"].sum() == points["requests"].sum()


def test_serve_report_section_and_trace(first_run: Path) -> None:
    html = (first_run / "report.html").read_text()
    assert "Latency against throughput" in html and "Little's law (closed loop)" in html
    assert "at p99 is b8-w50us-s1 at" in html  # the one sentence
    (trace,) = (first_run / "raw" / "serve").glob("trace-*.json")
    assert f'href="raw/serve/{trace.name}"' in html
    events = json.loads(trace.read_text())["traceEvents"]
    assert any(e.get("name", "").startswith("batch of") for e in events)
    assert all(-100 <= e["ts"] <= 1.1e6 for e in events if e.get("ph") == "X")


def test_serve_prints_the_table_and_the_answer(capsys, tmp_path: Path) -> None:
    result = profgen(
        [
            "serve",
            SOFTMAX,
            "--keep-records",
            "--stage",
            "InPlace",
            "--concurrency",
            "2",
            "--streams",
            "2",
            "--graphs",
            "on",
            "--out",
            tmp_path,
            *QUICK,
        ],
        capsys,
    )
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].startswith("| point |") and "c2-b8-w50us-s2-graphs" in result.out
    # (on a busy shared CPU a stall may break the law for real: then it says BROKEN)
    assert "Little's law" in result.out and ("holds" in result.out or "BROKEN" in result.out)
    assert "serves through its infer on one lane, without CUDA graphs" in result.out
    assert len(list((Path(lines[-1]) / "raw" / "serve").glob("*.npz"))) == 1


def test_wrong_answers_under_load_exit_3(capsys, tmp_path: Path) -> None:
    study = tmp_path / "wrong.py"
    study.write_text(WRONG)
    result = profgen(
        [
            "serve",
            study,
            "--stage",
            "Drifts",
            "--concurrency",
            "8",
            "--check-every",
            "1",
            "--out",
            tmp_path,
            *QUICK,
        ],
        capsys,
    )
    assert result.code == 3, result.err
    assert "checked answers wrong" in result.out


def test_gate_against_a_baseline(first_run: Path, capsys, tmp_path: Path) -> None:
    args = [
        "serve",
        SOFTMAX,
        "--stage",
        "vectorised",
        "--concurrency",
        "1,4",
        "--rate",
        "500",
        "--out",
        tmp_path,
        "--baseline",
        first_run,
        *QUICK,
    ]
    loose = profgen(
        [*args, "--fail-on", "serve:p99:100000%", "--fail-on", "serve:throughput:100000%"], capsys
    )
    run = store.load_run(loose.out.splitlines()[-1])
    regressions = run.table(schema.REGRESSIONS.name)
    # a point flagged in either run (a stall on a busy shared CPU) is `failed`, and exits 3
    failed = regressions["verdict"] == "failed"
    assert loose.code == (3 if failed.any() else 0), loose.err
    assert len(regressions) == 6 and set(regressions.loc[~failed, "verdict"]) <= {"unchanged"}


def test_bad_arguments_are_refused(capsys) -> None:
    assert_refused(profgen(["serve", SOFTMAX, "--stage", "nope", *QUICK], capsys), 2, "nope")
    assert_refused(
        profgen(
            ["serve", SOFTMAX, "--stage", "vectorised", "--request-items", "9", *QUICK], capsys
        ),
        2,
        "--request-items",
    )
    assert_refused(
        profgen(["serve", SOFTMAX, "--stage", "vectorised", "--graphs", "maybe"], capsys), 2
    )


def test_report_and_compare_treat_a_serving_run_like_any_other(
    first_run: Path, capsys, tmp_path
) -> None:
    out = tmp_path / "again.html"
    result = profgen(["report", first_run, "--output", out], capsys)
    assert result.code == 0, result.err
    assert "at p99 is b8-w50us-s1 at" in out.read_text()
    result = profgen(["compare", first_run, first_run], capsys)
    flagged = int((store.load_run(first_run).table("serve_points")["flag"].fillna("") != "").sum())
    assert result.code == (3 if flagged else 0), result.err  # a flagged point is `failed`
    assert "serve:p99:10%" in result.out and "serve:throughput:10%" in result.out
    assert "c4-b8-w50us-s1" in result.out and "0 regressions" in result.out
    assert f"{6 - 2 * flagged} unchanged" in result.out
