"""The runner on a CPU-only test study (tests/studies/collect_study.py), through real worker
processes: every way a stage can end, progress events, Ctrl-C, the time limit, result.json,
the reference cache and the worker's command line."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from profiler import schema
from profiler.collect import discovery, passes, process, runner, tools
from profiler.collect.runner import collect_stage
from profiler.collect.stagejob import StageJob, worker_cmd
from profiler.errors import ToolNotFound, UsageError
from profiler.parse import worker as parse_worker

STUDY_FILE = Path(__file__).parent / "studies" / "collect_study.py"


@pytest.fixture(scope="module")
def study() -> discovery.StudyInfo:
    return discovery.describe(str(STUDY_FILE))


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def job(study: discovery.StudyInfo, key: str, **kw) -> StageJob:
    args = dict(items=12, repeat=3, warmup=1, backend="none", timeout_s=20, batch=5)
    args.update(kw)
    return StageJob(study=study, stage=study.stage(key), **args)


def test_the_study_is_described_by_a_worker(study):
    assert study.name == "collect" and study.unit == "rows" and study.ref == str(STUDY_FILE)
    assert study.keys[:3] == ("ref", "wrong", "late_wrong")
    ref = study.stage("ref")
    assert ref.title == "Reference on the CPU"
    assert ref.technique == "The float64 reference rounded to float32."
    assert ref.role == "baseline" and ref.runtime == "cpu" and not ref.uses_gpu
    assert study.stage("per_item").ncu_items == 3 and study.stage("per_item").profiled_repeats == 2
    with pytest.raises(UsageError, match="unknown stage 'nope' of study collect; choose from: ref"):
        study.stage("nope")


def test_pass_records_times_and_verdict(study, tmp_path):
    events: list[str] = []
    out = collect_stage(job(study, "ref"), tmp_path, on_event=events.append)
    assert out.status == schema.PASS and out.passed and out.reason == ""
    result = json.loads((tmp_path / "result.json").read_text())
    assert result == out.result
    assert len(result["timed_ns"]) == 3 and all(t > 0 for t in result["timed_ns"])
    assert result["profiled_ns"] == []  # backend none: no profiled pass
    assert result["batch"] == 5 and result["items"] == 12 and result["max_rel_err"] < 1e-6
    assert result["checked_calls"] == 4  # one warm-up and three timed calls, all checked
    assert result["role"] == "baseline" and result["unit"] == "rows"
    assert "allclose rtol=0.0001" in result["comparison"]
    assert events[0] == "loading" and "warm-up 1/1" in events
    assert [e for e in events if e.startswith("timed")] == ["timed 1/3", "timed 2/3", "timed 3/3"]
    assert out.files["log"].is_file() and out.files["result"].is_file()


def test_wrong_outputs_fail(study, tmp_path):
    out = collect_stage(job(study, "wrong"), tmp_path)
    assert out.status == schema.FAIL and not out.passed
    assert "change their top-1" in out.reason and "warm-up 1" in out.reason
    assert "(and 3 more of 4 checked calls)" in out.reason


def test_every_call_is_checked(study, tmp_path):
    out = collect_stage(job(study, "late_wrong", repeat=4, batch=None), tmp_path)
    assert out.status == schema.FAIL
    assert out.reason.startswith("timed call 2:") and "relative error" in out.reason
    assert out.reason.endswith("(and 2 more of 5 checked calls)")


def test_a_stage_rule_overrides_the_study_rule(study, tmp_path):
    assert collect_stage(job(study, "fp16"), tmp_path / "a").status == schema.PASS
    strict = collect_stage(job(study, "fp16_strict"), tmp_path / "b")
    assert strict.status == schema.FAIL and "outside allclose rtol=0.0001" in strict.reason


def test_exception_in_stage_is_an_error_with_its_message_on_one_line(study, tmp_path):
    out = collect_stage(job(study, "crash"), tmp_path)
    assert out.status == schema.ERROR
    assert out.reason == (
        "worker exited with status 1: RuntimeError: illegal memory access in conv1 (simulated)"
    )
    assert "Traceback" in (tmp_path / "worker.log").read_text()


def test_signal_is_named(study, tmp_path):
    out = collect_stage(job(study, "segfault"), tmp_path)
    assert out.status == schema.ERROR and "killed by signal SIGSEGV" in out.reason


def test_exit_status_and_the_last_line(study, tmp_path):
    out = collect_stage(job(study, "exit"), tmp_path)
    assert out.status == schema.ERROR and "\n" not in out.reason
    assert out.reason.startswith("worker exited with status 3: ")
    log = (tmp_path / "worker.log").read_text()
    assert "about to exit" in log and "prepare gave up" in log  # stdout and stderr are logged


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("skip", "needs a unicorn, and this machine has none"),
        ("needs_missing", "no_such_module_profgen is not installed"),
    ],
)
def test_skipped_stage(study, tmp_path, key, reason):
    out = collect_stage(job(study, key), tmp_path)
    assert out.status == schema.SKIPPED and out.reason == reason


def test_hang_times_out_by_the_workers_watchdog(study, tmp_path):
    t0 = time.monotonic()
    out = collect_stage(job(study, "hang", timeout_s=2), tmp_path)
    assert out.status == schema.TIMEOUT and "time limit of 2 s" in out.reason
    assert "collect_study.py" in (tmp_path / "worker.log").read_text()  # where it hung
    assert time.monotonic() - t0 < 15


def test_hang_killed_by_the_runner(study, tmp_path, monkeypatch):
    monkeypatch.setattr(passes, "KILL_MARGIN_S", -8.0)  # the runner acts before the watchdog
    t0 = time.monotonic()
    out = collect_stage(job(study, "hang", timeout_s=10), tmp_path)
    assert out.status == schema.TIMEOUT and time.monotonic() - t0 < 8
    pid = json.loads((tmp_path / "result.json").read_text()).get("pid")
    assert pid is None  # no worker result: the runner wrote the whole result.json


def test_ctrl_c_kills_the_worker_and_propagates(study, tmp_path, monkeypatch):
    started = []
    real_spawn = tools.spawn

    def spy(*a, **kw):
        started.append(real_spawn(*a, **kw))
        return started[-1]

    monkeypatch.setattr(process, "spawn", spy)

    def on_event(event: str) -> None:
        if event.startswith("warm-up"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        collect_stage(job(study, "hang", timeout_s=60), tmp_path, on_event=on_event)
    assert started and started[0].poll() is not None  # the worker is gone
    assert not (tmp_path / "result.json").exists()  # nothing that looks complete


def test_result_json_parses_into_tables(study, tmp_path):
    collect_stage(job(study, "ref"), tmp_path)
    stages, samples = parse_worker.read(tmp_path / "result.json", order=4)
    assert stages["status"].tolist() == [schema.PASS] and stages["order"].tolist() == [4]
    assert stages["title"].tolist() == ["Reference on the CPU"]
    assert stages["role"].tolist() == ["baseline"] and stages["items"].tolist() == [12]
    assert list(samples["pass"]) == ["timed"] * 3


def test_failed_stage_still_has_a_stages_row(study, tmp_path):
    collect_stage(job(study, "crash"), tmp_path)
    stages, samples = parse_worker.read(tmp_path / "result.json", order=0)
    assert stages["status"].tolist() == [schema.ERROR] and stages["median_ns"].isna().all()
    assert samples.empty


def test_the_reference_is_cached_across_runs(study, tmp_path):
    collect_stage(job(study, "ref"), tmp_path / "a")
    cache = tmp_path / "xdg-cache" / "profgen" / "references"
    files = list(cache.iterdir())
    assert len(files) == 1 and files[0].name.startswith("collect-")
    assert "reference: cache miss" in (tmp_path / "a" / "worker.log").read_text()
    out = collect_stage(job(study, "wrong"), tmp_path / "b")
    assert out.status == schema.FAIL and list(cache.iterdir()) == files
    assert f"reference: cache hit {files[0]}" in (tmp_path / "b" / "worker.log").read_text()


def test_worker_cmd_as_data(study, tmp_path):
    j = job(study, "per_item", backend="cupti", batch=16, data=Path("/d/-t10k.idx"), timeout_s=30)
    cmd = worker_cmd(j, tmp_path, ["profiled"], "profiler-api", "w.json")
    assert cmd[:4] == [sys.executable, "-m", "profiler.collect.worker", "run"]
    pairs = dict(arg.split("=", 1) for arg in cmd[4:])
    assert all(arg.startswith("--") for arg in cmd[4:])  # a path never reads as an option
    assert pairs["--study"] == str(STUDY_FILE) and pairs["--stage"] == "per_item"
    assert pairs["--passes"] == "profiled" and pairs["--tracer"] == "profiler-api"
    assert pairs["--result"] == str(tmp_path / "w.json") and pairs["--data"] == "/d/-t10k.idx"
    assert pairs["--batch"] == "16" and pairs["--timeout"] == "30"
    assert "--ncu-items" not in pairs  # only for the metrics pass
    assert worker_cmd(j, tmp_path, ["metrics"], "none", "m.json")[-1] == "--ncu-items=3"


def test_preflight_rejects_unknown_backend():
    with pytest.raises(UsageError, match="unknown backend 'perf'"):
        runner.preflight("perf", False)


def test_preflight_needs_cupti_python(monkeypatch):
    monkeypatch.setattr(runner.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ToolNotFound, match="pip install cupti-python"):
        runner.preflight("cupti", False)


def test_preflight_needs_nsys(study, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("NSYS", raising=False)
    monkeypatch.setattr(runner.nsys_mod, "_SEARCH", (str(tmp_path / "none/*/nsys"),))
    with pytest.raises(ToolNotFound, match="nsys"):
        collect_stage(job(study, "ref", backend="nsys"), tmp_path / "raw")
    assert not (tmp_path / "raw").exists()  # refused before anything ran


def test_metrics_pass_on_the_first_items(study, tmp_path):
    """The worker's metrics pass (what ncu wraps): a stage's `ncu_items` limits it."""
    j = job(study, "per_item", items=12)
    cmd = worker_cmd(j, tmp_path, ["metrics"], "none", "m.json")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "m.json").read_text())
    assert result["items"] == 3 and result["notes"] == ["metrics pass on the first 3 of 12 items"]
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
        "prog = prog[1:] if prog[0] == '--' else prog\n"
        f"open(log, 'w').write({table!r})\nsys.exit(subprocess.run(prog).returncode)\n"
    )
    ncu.chmod(0o755)
    return ncu


@pytest.mark.parametrize("kernels", [0, 1])
def test_metrics_of_a_stage_without_kernels_is_a_note_not_a_file(
    study, tmp_path, monkeypatch, kernels
):
    """A CPU-only stage under ncu: ncu writes only its ==PROF== lines, no table; the outcome
    says so in a note and offers no ncu file to parse. With a kernel row the file is offered."""
    table = "==PROF== Disconnected from process 1\n"
    if kernels:
        table += '"ID","Process ID","Kernel Name"\n"0","1","k"\n'
    monkeypatch.setattr(runner.ncu_mod, "find_ncu", lambda: fake_ncu(tmp_path, table))
    outcome = collect_stage(job(study, "ref", metrics=True), tmp_path / "raw")
    assert outcome.status == schema.PASS, outcome.reason
    assert ("ncu" in outcome.files) == bool(kernels)
    assert ("ncu profiled no kernel in the stage range" in outcome.notes) == (not kernels)


@pytest.mark.parametrize(
    ("cc", "read"), [((9, 0), "dram__bytes_read.sum"), ((12, 0), "dram__bytes_op_read.sum")]
)
def test_metrics_pass_asks_for_the_names_of_the_device(study, tmp_path, monkeypatch, cc, read):
    """The ncu pass asks for the metric list as ncu names it on the device's compute capability:
    H100 (9.0) the list as it is, GB20x (12.0) DRAM's bytes by their `_op_` names."""
    table = '"ID","Process ID","Kernel Name"\n"0","1","k"\n'
    monkeypatch.setattr(runner.ncu_mod, "find_ncu", lambda: fake_ncu(tmp_path, table))
    seen: list[list[str]] = []
    real_child = passes._child
    monkeypatch.setattr(
        passes, "_child", lambda j, cmd, *a: seen.append(cmd) or real_child(j, cmd, *a)
    )
    monkeypatch.setattr(passes.env, "compute_capability", lambda: cc)
    outcome = collect_stage(job(study, "ref", metrics=True), tmp_path / "raw")
    assert outcome.status == schema.PASS, outcome.reason
    [cmd] = [c for c in seen if c[0].endswith("/bin/ncu")]
    asked = cmd[cmd.index("--metrics") + 1].split(",")
    assert read in asked and asked == list(runner.ncu_mod.metrics_for(cc))
