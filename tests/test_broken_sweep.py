"""Broken input to `profgen sweep`, `run` and `list`, refused before any stage runs: one line on
stderr, the right exit code, no traceback. And runs that stop half way never look whole."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from clirun import assert_refused, profgen

from profiler import store
from profiler.cli import main

TESTS = Path(__file__).parent
TOY = TESTS / "studies" / "toy_study.py"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def sweep(tmp_path: Path, *extra: str) -> list[str]:
    return [
        "sweep",
        str(TOY),
        "--backend",
        "none",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--out",
        str(tmp_path / "runs"),
        *extra,
    ]


CASES = [
    (["sweep", "nope"], 2, ["unknown study 'nope'", "installed: lenet"]),
    (["sweep", "missing.py"], 2, ["study file missing.py: not found"]),
    (["sweep", str(TOY), "--stages", "ref,nope"], 2, ["unknown stage 'nope'", "ref, wrong"]),
    (["sweep", str(TOY), "--stages", "ref,ref"], 2, ["names a stage twice"]),
    (["sweep", str(TOY), "--items", "0"], 2, ["--items", "positive integer"]),
    (["sweep", str(TOY), "--items", "1e3"], 2, ["--items", "must be an integer"]),
    (["sweep", str(TOY), "--repeat", "-1"], 2, ["--repeat"]),
    (["sweep", str(TOY), "--stage-timeout", "nan"], 2, ["--stage-timeout"]),
    (["sweep", str(TOY), "--backend", "perf"], 2, ["invalid choice: 'perf'"]),
    (["sweep", str(TOY), "--fail-on", "stage:median:5%"], 2, ["--fail-on needs --baseline"]),
    (["sweep", str(TOY), "--data", "x.idx"], 2, ["reads no --data file"]),
    (
        ["run", "lenet", "--stage", "pinned", "--data", "/nonexistent"],
        2,
        ["--data", "no such file"],
    ),
    (
        ["run", "lenet", "--stage", "pinned", "--data", "/dev/null"],
        2,
        ["--data /dev/null", "not a regular file"],
    ),
    (["run", "lenet", "--stage", "x" * 300], 2, ["unknown stage", "of study lenet"]),
    (["run", "lenet"], 2, ["--stage"]),
    (["list", "nope"], 2, ["unknown study 'nope'"]),
]


@pytest.mark.parametrize(("argv", "code", "fragments"), CASES, ids=lambda v: str(v)[:60])
def test_bad_arguments_are_refused_in_one_line(argv, code, fragments, capsys, tmp_path):
    assert_refused(profgen(argv, capsys), code, *fragments)


def test_outputs_that_cannot_be_files_are_refused_before_running(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    assert_refused(
        profgen([*sweep(tmp_path)[:-2], "--out", str(afile)], capsys),
        2,
        f"--out {afile}",
        "not a directory",
    )
    assert_refused(
        profgen(sweep(tmp_path, "--junit", str(tmp_path)), capsys), 2, "--junit", "is a directory"
    )
    base = tmp_path / "base.json"
    base.write_text("{}")
    assert_refused(
        profgen(sweep(tmp_path, "--baseline", str(base), "--summary", str(base)), capsys),
        2,
        "--summary",
        "also an input",
    )
    assert not (tmp_path / "runs").exists()


def test_a_gpu_backend_without_a_gpu_says_what_to_use(tmp_path, capsys, monkeypatch):
    from profiler.collect import env

    monkeypatch.setattr(env, "cuda_state", lambda: {"error": "no driver", "fix": "install it"})
    argv = sweep(tmp_path)
    argv[argv.index("--backend") + 1] = "cupti"
    assert_refused(profgen(argv, capsys), 4, "--backend cupti traces a GPU", "use --backend none")
    assert not (tmp_path / "runs").exists()  # refused before any stage ran


def test_an_interrupted_sweep_leaves_no_run_that_looks_whole(tmp_path, capsys, monkeypatch):
    from profiler.render import html

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(html, "write_report", interrupted)
    assert main(sweep(tmp_path, "--stages", "ref")) == 130
    runs = list((tmp_path / "runs").iterdir())
    assert len(runs) == 1 and runs[0].name.startswith(".toy-") and runs[0].name.endswith(".partial")
    assert (runs[0] / "run.json").is_file()  # nothing collected is lost


def test_runs_finishing_in_the_same_second_get_different_names(tmp_path):
    from datetime import UTC, datetime

    now = datetime(2026, 11, 23, 1, 2, 3, tzinfo=UTC)
    temps = [store.start_run(tmp_path, "toy", now) for _ in range(8)]
    for tmp in temps:
        (tmp / "run.json").write_text("{}")
    done: list[Path] = []
    threads = [threading.Thread(target=lambda t=t: done.append(store.finish_run(t))) for t in temps]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    names = sorted(p.name for p in done)
    assert len(set(names)) == 8 and names[0] == "toy-20261123T010203Z"
    assert all((p / "run.json").is_file() for p in done)
    assert not list(tmp_path.glob(".*.partial"))


def test_a_reserved_name_is_the_one_the_run_gets(tmp_path):
    from datetime import UTC, datetime

    now = datetime(2026, 11, 23, 1, 2, 3, tzinfo=UTC)
    first, second = (store.start_run(tmp_path, "toy", now) for _ in range(2))
    reserved = [store.reserve_name(first), store.reserve_name(second)]
    assert [p.name for p in reserved] == ["toy-20261123T010203Z", "toy-20261123T010203Z-2"]
    # the second finishes first: it still gets the name its report was rendered with
    assert store.finish_run(second, reserved[1]) == reserved[1]
    assert store.finish_run(first, reserved[0]) == reserved[0]
    store.release_name(reserved[0])  # a finished run is not empty: nothing is removed
    assert reserved[0].is_dir() and not list(tmp_path.glob(".*.partial"))


def test_a_failed_render_gives_the_reserved_name_back(tmp_path, capsys, monkeypatch):
    from profiler import sweep_steps
    from profiler.errors import OutputError

    def broken(run, tmp, settings):
        assert run.path.is_dir() and run.path.name.startswith("toy-")  # reserved, empty
        raise OutputError("disk full")

    monkeypatch.setattr(sweep_steps, "render", broken)
    result = profgen(sweep(tmp_path, "--stages", "ref"), capsys)
    assert result.code == 4 and result.err.strip().endswith("disk full"), result.err
    runs = list((tmp_path / "runs").iterdir())
    assert len(runs) == 1 and runs[0].name.endswith(".partial")  # kept, and no empty name left


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["doctor", "--bogus"], "unrecognized arguments: --bogus"),
        (["compare", "only-one"], "the following arguments are required: NEW"),
        (["show", "run"], "--table"),
        (["--version", "x"], None),
    ],
)
def test_every_command_refuses_bad_usage_in_one_line(argv, fragment, capsys):
    result = profgen(argv, capsys)
    if fragment is None:  # --version wins, as argparse has it
        assert result.code == 0 and result.out.startswith("profgen ")
        return
    assert_refused(result, 2, fragment)
