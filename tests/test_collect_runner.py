"""The runner on CPU-only test stages (tests/collect_stages.py, loaded by the worker with
`--stage-ref`): every way a stage can end, progress events, Ctrl-C, the time limit, result.json."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from profiler import schema
from profiler.collect import runner, tools
from profiler.collect.runner import StageJob, collect_stage, worker_cmd
from profiler.errors import ToolNotFound, UsageError
from profiler.parse import worker as parse_worker

TESTS = Path(__file__).parent


@pytest.fixture(autouse=True)
def stages_on_path(monkeypatch):
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", str(TESTS) + (os.pathsep + path if path else ""))


def job(cls: str, **kw) -> StageJob:
    args = dict(
        model="lenet",
        stage=cls.lower(),
        images=12,
        repeat=3,
        warmup=1,
        backend="none",
        stage_ref=f"collect_stages:{cls}",
        timeout_s=20,
        batch=5,
    )
    args.update(kw)
    return StageJob(**args)


def test_pass_records_times_and_verdict(tmp_path):
    events: list[str] = []
    out = collect_stage(job("RefStage"), tmp_path, on_event=events.append)
    assert out.status == schema.PASS and out.passed and out.reason == ""
    result = json.loads((tmp_path / "result.json").read_text())
    assert result == out.result
    assert len(result["timed_ns"]) == 3 and all(t > 0 for t in result["timed_ns"])
    assert result["profiled_ns"] == []  # backend none: no profiled pass
    assert result["batch"] == 5 and result["images"] == 12 and result["max_rel_err"] < 1e-6
    assert result["checked_calls"] == 4  # one warm-up and three timed calls, all checked
    assert events[0] == "loading" and "warm-up 1/1" in events
    assert [e for e in events if e.startswith("timed")] == ["timed 1/3", "timed 2/3", "timed 3/3"]
    assert out.files["log"].is_file() and out.files["result"].is_file()


def test_wrong_logits_fail(tmp_path):
    out = collect_stage(job("WrongStage"), tmp_path)
    assert out.status == schema.FAIL and not out.passed
    assert "change their top-1 class" in out.reason and "warm-up 1" in out.reason
    assert "(and 3 more of 4 checked calls)" in out.reason


def test_every_call_is_checked(tmp_path):
    out = collect_stage(job("LateWrongStage", repeat=4, batch=None), tmp_path)
    assert out.status == schema.FAIL
    assert out.reason.startswith("timed call 2:") and "relative error" in out.reason
    assert out.reason.endswith("(and 2 more of 5 checked calls)")


def test_exception_in_stage_is_an_error_with_its_message(tmp_path):
    out = collect_stage(job("CrashStage"), tmp_path)
    assert out.status == schema.ERROR
    assert out.reason.startswith("worker exited with status 1")
    assert "RuntimeError: illegal memory access in conv1 (simulated)" in out.reason
    assert "RuntimeError" in (tmp_path / "worker.log").read_text()


def test_signal_is_named(tmp_path):
    out = collect_stage(job("SegfaultStage"), tmp_path)
    assert out.status == schema.ERROR and "killed by signal SIGSEGV" in out.reason


def test_exit_status_and_stderr_tail(tmp_path):
    out = collect_stage(job("ExitStage"), tmp_path)
    assert out.status == schema.ERROR
    assert "exited with status 3" in out.reason and "prepare gave up" in out.reason
    assert "about to exit" in (tmp_path / "worker.log").read_text()  # plain stdout is logged


def test_skipped_stage(tmp_path):
    out = collect_stage(job("SkipStage"), tmp_path)
    assert (
        out.status == schema.SKIPPED and out.reason == "needs a unicorn, and this machine has none"
    )


def test_hang_times_out_by_the_workers_watchdog(tmp_path):
    t0 = time.monotonic()
    out = collect_stage(job("HangStage", timeout_s=2), tmp_path)
    assert out.status == schema.TIMEOUT and "time limit of 2 s" in out.reason
    assert "collect_stages.py" in out.reason  # the watchdog's stack dump says where it hung
    assert time.monotonic() - t0 < 15


def test_hang_killed_by_the_runner(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "KILL_MARGIN_S", -8.0)  # the runner acts before the watchdog
    t0 = time.monotonic()
    out = collect_stage(job("HangStage", timeout_s=10), tmp_path)
    assert out.status == schema.TIMEOUT and time.monotonic() - t0 < 8
    pid = json.loads((tmp_path / "result.json").read_text()).get("pid")
    assert pid is None  # no worker result: the runner wrote the whole result.json


def test_ctrl_c_kills_the_worker_and_propagates(tmp_path, monkeypatch):
    started = []
    real_spawn = tools.spawn

    def spy(*a, **kw):
        started.append(real_spawn(*a, **kw))
        return started[-1]

    monkeypatch.setattr(runner, "spawn", spy)

    def on_event(event: str) -> None:
        if event.startswith("warm-up"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        collect_stage(job("HangStage", timeout_s=60), tmp_path, on_event=on_event)
    assert started and started[0].poll() is not None  # the worker is gone
    assert not (tmp_path / "result.json").exists()  # nothing that looks complete


def test_result_json_parses_into_tables(tmp_path):
    collect_stage(job("RefStage"), tmp_path)
    stages, samples = parse_worker.read(tmp_path / "result.json", order=4)
    assert stages["status"].tolist() == [schema.PASS] and stages["order"].tolist() == [4]
    assert stages["title"].tolist() == ["Reference on the CPU"]
    assert list(samples["pass"]) == ["timed"] * 3


def test_failed_stage_still_has_a_stages_row(tmp_path):
    collect_stage(job("CrashStage"), tmp_path)
    stages, samples = parse_worker.read(tmp_path / "result.json", order=0)
    assert stages["status"].tolist() == [schema.ERROR] and stages["median_ns"].isna().all()
    assert stages["title"].tolist() == ["Reference on the CPU"] and samples.empty


def test_reference_cache_is_shared(tmp_path):
    cache = tmp_path / "cache"
    collect_stage(job("RefStage", cache_dir=cache), tmp_path / "a")
    files = list(cache.iterdir())
    assert len(files) == 1 and files[0].name.startswith("lenet-12-")
    out = collect_stage(job("RefStage", cache_dir=cache), tmp_path / "b")
    assert out.status == schema.PASS and list(cache.iterdir()) == files


def test_worker_cmd_as_data(tmp_path):
    j = StageJob(
        "lenet",
        "no_sync",
        100,
        5,
        2,
        "cupti",
        batch=16,
        data=Path("/d/t10k.idx"),
        timeout_s=30,
        metrics_images=8,
        cache_dir=Path("/c"),
    )
    cmd = worker_cmd(j, tmp_path, ["profiled"], "profiler-api", "w.json")
    assert cmd[:3] == [sys.executable, "-m", "profiler.collect.worker"]
    pairs = dict(zip(cmd[3::2], cmd[4::2], strict=False))
    assert pairs["--stage"] == "no_sync" and pairs["--passes"] == "profiled"
    assert pairs["--tracer"] == "profiler-api" and pairs["--result"] == str(tmp_path / "w.json")
    assert (
        pairs["--batch"] == "16" and pairs["--data"] == "/d/t10k.idx" and pairs["--timeout"] == "30"
    )
    assert "--metrics-images" not in pairs  # only for the metrics pass
    assert worker_cmd(j, tmp_path, ["metrics"], "none", "m.json")[-2:] == ["--metrics-images", "8"]


def test_preflight_rejects_unknown_backend():
    with pytest.raises(UsageError, match="unknown backend 'perf'"):
        runner.preflight(job("RefStage", backend="perf"))


def test_preflight_needs_cupti_python(monkeypatch):
    monkeypatch.setattr(runner.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ToolNotFound, match="pip install cupti-python"):
        runner.preflight(job("RefStage", backend="cupti"))


def test_preflight_needs_nsys(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("NSYS", raising=False)
    monkeypatch.setattr(runner.nsys_mod, "_SEARCH", (str(tmp_path / "none/*/nsys"),))
    with pytest.raises(ToolNotFound, match="nsys"):
        collect_stage(job("RefStage", backend="nsys"), tmp_path / "raw")
    assert not (tmp_path / "raw").exists()  # refused before anything ran


def test_metrics_pass_on_the_first_images(tmp_path):
    """The worker's metrics pass (what ncu wraps): a stage's `metrics_images` limits it."""
    import subprocess

    j = job("PerImageStage", images=12)
    cmd = worker_cmd(j, tmp_path, ["metrics"], "none", "m.json")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "m.json").read_text())
    assert result["images"] == 3 and result["notes"] == ["metrics pass on the first 3 of 12 images"]
    assert result["status"] == schema.PASS and result["checked_calls"] == 2  # warm-up + the call
    events = [ln for ln in done.stdout.splitlines() if ln.startswith("@@profgen ")]
    assert '@@profgen {"event": "metrics"}' in events


def fake_ncu(tmp_path: Path, table: str) -> Path:
    """An `ncu` that runs the program it wraps and writes `table` to its --log-file."""
    ncu = tmp_path / "bin" / "ncu"
    ncu.parent.mkdir()
    ncu.write_text(
        "#!/usr/bin/env python3\nimport subprocess, sys\n"
        "args = sys.argv[1:]; log = args[args.index('--log-file') + 1]\n"
        "prog = args[args.index('--launch-count') + 2:]\n"
        f"open(log, 'w').write({table!r})\nsys.exit(subprocess.run(prog).returncode)\n"
    )
    ncu.chmod(0o755)
    return ncu


@pytest.mark.parametrize("kernels", [0, 1])
def test_metrics_of_a_stage_without_kernels_is_a_note_not_a_file(tmp_path, monkeypatch, kernels):
    """A CPU-only stage under ncu: ncu writes only its ==PROF== lines, no table; the outcome
    says so in a note and offers no ncu file to parse. With a kernel row the file is offered."""
    table = "==PROF== Disconnected from process 1\n"
    if kernels:
        table += '"ID","Process ID","Kernel Name"\n"0","1","k"\n'
    monkeypatch.setattr(runner.ncu_mod, "find_ncu", lambda: fake_ncu(tmp_path, table))
    outcome = collect_stage(job("RefStage", metrics=True), tmp_path / "raw")
    assert outcome.status == schema.PASS, outcome.reason
    assert ("ncu" in outcome.files) == bool(kernels)
    assert ("ncu profiled no kernel in the stage range" in outcome.notes) == (not kernels)
