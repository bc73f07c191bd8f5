"""Command builders as data, tool discovery with fake executables, and `run_tool`'s errors."""

from __future__ import annotations

import stat
import sys
import time
from pathlib import Path

import pytest

from profiler.collect import ncu, nsys, tools
from profiler.errors import ProfilerRunError, ToolNotFound


def fake_tool(path: Path, script: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


NSYS_VERSION = 'print("NVIDIA Nsight Systems version 2025.3.1.90-253135822126v0")'
NCU_VERSION = (
    'print("NVIDIA (R) Nsight Compute Command Line Profiler\\nCopyright (c) 2018-2025 '
    'NVIDIA Corporation\\nVersion 2025.3.1.0 (build 36398880) (public-release)")'
)


# -- builders ------------------------------------------------------------------------------------
def test_nsys_profile_cmd():
    cmd = nsys.profile_cmd(
        Path("/opt/nsys"), Path("/run/raw/no_sync/no_sync"), ["python3", "-m", "w"]
    )
    assert cmd == [
        "/opt/nsys",
        "profile",
        "--trace=cuda,nvtx",
        "--sample=none",
        "--cpuctxsw=none",
        "--force-overwrite=true",
        "--output=/run/raw/no_sync/no_sync",
        "--capture-range=cudaProfilerApi",
        "--capture-range-end=stop",
        "python3",
        "-m",
        "w",
    ]
    assert "--capture-range=cudaProfilerApi" not in nsys.profile_cmd(
        Path("n"), Path("o"), ["p"], capture_range=False
    )


def test_nsys_stats_cmd_and_outputs():
    cmd = nsys.stats_cmd(Path("/opt/nsys"), Path("/r/s.nsys-rep"), Path("/r/nsys"))
    assert cmd[:2] == ["/opt/nsys", "stats"] and cmd[-1] == "/r/s.nsys-rep"
    opts = dict(zip(cmd[2:-1:2], cmd[3:-1:2], strict=False)) | {}
    assert cmd[cmd.index("--format") + 1] == "csv" and cmd[cmd.index("--timeunit") + 1] == "ns"
    assert "--force-export=true" in cmd and cmd[cmd.index("--output") + 1] == "/r/nsys"
    assert cmd[cmd.index("--report") + 1].split(",") == list(nsys.REPORTS)
    assert {
        "cuda_gpu_trace",
        "cuda_gpu_kern_sum",
        "cuda_gpu_mem_time_sum",
        "cuda_gpu_mem_size_sum",
        "cuda_api_sum",
        "cuda_api_trace",
        "nvtx_sum",
        "nvtx_gpu_proj_trace",
    } <= set(nsys.REPORTS)
    assert nsys.stats_outputs(Path("/r/nsys"), ("cuda_gpu_trace",)) == {
        "cuda_gpu_trace": Path("/r/nsys_cuda_gpu_trace.csv")
    }
    assert opts  # the flags come in pairs


def test_ncu_cmd():
    cmd = ncu.profile_cmd(
        Path("/usr/bin/ncu"), "lenet:no_sync", Path("/r/ncu.csv"), ["python3", "w.py"]
    )
    assert cmd[0] == "/usr/bin/ncu" and cmd[-2:] == ["python3", "w.py"]
    assert cmd[cmd.index("--nvtx-include") + 1] == "profgen@lenet:no_sync/"
    assert cmd[cmd.index("--page") + 1] == "raw" and "--csv" in cmd and "--nvtx" in cmd
    assert cmd[cmd.index("--log-file") + 1] == "/r/ncu.csv"
    assert cmd[cmd.index("--clock-control") + 1] == "none"  # the card's clocks are left alone
    assert cmd[cmd.index("--launch-count") + 1] == str(ncu.LAUNCH_LIMIT)
    unlimited = ncu.profile_cmd(Path("ncu"), "m:s", Path("l"), ["p"], launch_limit=None)
    assert "--launch-count" not in unlimited and unlimited[-1] == "p"
    metrics = cmd[cmd.index("--metrics") + 1].split(",")
    for m in (
        "gpu__time_duration.sum",
        "dram__bytes_read.sum",
        "dram__bytes_write.sum",
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "launch__registers_per_thread",
    ):
        assert m in metrics


# ncu 2025.3.1's `ncu --query-metrics --chips X` (run on an H100 machine for this test) lists
# dram__bytes_read/_write for ga100, gh100 and gb100 (A100 CC 8.0, H100 CC 9.0, B200 CC 10.0),
# dram__bytes_op_read/_op_write for gb202 (CC 12.0, as the gpu-anatomy files in
# tests/data/ncu/2025.x print them), and no dram__ metric for gb10b (CC 11.0) or gb20b (CC 12.1).
@pytest.mark.parametrize("cc", [(8, 0), (9, 0), (10, 0), None])
def test_ncu_metrics_before_cc_12_are_the_list_as_it_is(cc):
    """A100, H100, B200 and a device of unknown CC get the request of today, unchanged."""
    assert ncu.metrics_for(cc) == ncu.METRICS
    default = ncu.profile_cmd(Path("ncu"), "m:s", Path("l"), ["p"])
    assert ncu.profile_cmd(Path("ncu"), "m:s", Path("l"), ["p"], ncu.metrics_for(cc)) == default


def test_ncu_metrics_at_cc_12_0_name_dram_bytes_op():
    """GB20x (CC 12.0) has no dram__bytes_read: its DRAM byte counters are asked for by their
    `_op_` names, in their places; every other metric is the same."""
    metrics = ncu.metrics_for((12, 0))
    assert "dram__bytes_read.sum" not in metrics and "dram__bytes_write.sum" not in metrics
    at = ncu.METRICS.index("dram__bytes_read.sum")
    assert metrics[at : at + 2] == ("dram__bytes_op_read.sum", "dram__bytes_op_write.sum")
    assert metrics[:at] + metrics[at + 2 :] == ncu.METRICS[:at] + ncu.METRICS[at + 2 :]


@pytest.mark.parametrize("cc", [(11, 0), (12, 1)])
def test_ncu_metrics_without_dram_counters(cc):
    """Jetson Thor (CC 11.0) and GB10 (CC 12.1) have no dram__ metric: none is asked for."""
    metrics = ncu.metrics_for(cc)
    assert [m for m in ncu.METRICS if not m.startswith("dram__")] == list(metrics)
    assert "gpu__time_duration.sum" in metrics and len(metrics) == len(ncu.METRICS) - 3


# -- discovery -------------------------------------------------------------------------------------
@pytest.fixture
def no_tools(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    for var in ("NSYS", "NCU"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(
        nsys,
        "_SEARCH",
        (
            str(tmp_path / "opt/nsight-systems/*/bin/nsys"),
            str(tmp_path / "opt/nsight-compute/*/host/target-linux-x64/nsys"),
        ),
    )
    monkeypatch.setattr(ncu, "_SEARCH", (str(tmp_path / "opt/nsight-compute/*/ncu"),))
    return tmp_path


def test_nothing_found_names_the_places(no_tools):
    with pytest.raises(ToolNotFound) as err:
        nsys.find_nsys()
    assert "NSYS=" in str(err.value) and "nsight-compute/*/host/target-linux-x64/nsys" in str(
        err.value
    )
    with pytest.raises(ToolNotFound, match="NCU="):
        ncu.find_ncu()


def test_bundled_copy_inside_nsight_compute(no_tools):
    old = fake_tool(
        no_tools / "opt/nsight-compute/2024.1.0/host/target-linux-x64/nsys", NSYS_VERSION
    )
    new = fake_tool(
        no_tools / "opt/nsight-compute/2025.3.1/host/target-linux-x64/nsys", NSYS_VERSION
    )
    assert nsys.find_nsys() == new != old  # the newest version first
    assert nsys.version(new) == "2025.3.1.90-253135822126v0"


def test_order_env_then_path_then_folders(no_tools, monkeypatch):
    folder = fake_tool(no_tools / "opt/nsight-systems/2025.1/bin/nsys", NSYS_VERSION)
    assert nsys.find_nsys() == folder
    on_path = fake_tool(no_tools / "bin/nsys", NSYS_VERSION)
    assert nsys.find_nsys() == on_path
    env = fake_tool(no_tools / "elsewhere/nsys", NSYS_VERSION)
    monkeypatch.setenv("NSYS", str(env))
    assert nsys.find_nsys() == env
    assert nsys.candidates()[:3] == [str(env), str(on_path), str(folder)]


def test_bad_env_variable_is_reported(no_tools, monkeypatch):
    monkeypatch.setenv("NSYS", str(no_tools / "missing/nsys"))
    with pytest.raises(ToolNotFound, match=r"\$NSYS=.*missing/nsys is not an executable"):
        nsys.find_nsys()


def test_bad_env_variable_is_not_replaced_by_another_tool(no_tools, monkeypatch):
    """The user chose $NSYS / $NCU: a tool found on PATH or in the install folders is not run
    in its place (a test that hides the tools this way must not find the machine's own)."""
    fake_tool(no_tools / "bin/nsys", NSYS_VERSION)
    fake_tool(no_tools / "opt/nsight-systems/2025.1/bin/nsys", NSYS_VERSION)
    fake_tool(no_tools / "opt/nsight-compute/2025.3.1/ncu", NCU_VERSION)
    monkeypatch.setenv("NSYS", str(no_tools / "missing/nsys"))
    monkeypatch.setenv("NCU", str(no_tools / "missing/ncu"))
    with pytest.raises(ToolNotFound, match=r"\$NSYS=.*missing/nsys is not an executable"):
        nsys.find_nsys()
    with pytest.raises(ToolNotFound, match=r"\$NCU=.*missing/ncu is not an executable"):
        ncu.find_ncu()


def test_non_executable_is_skipped(no_tools):
    path = no_tools / "bin" / "ncu"
    path.parent.mkdir(parents=True)
    path.write_text("not a program")
    with pytest.raises(ToolNotFound):
        ncu.find_ncu()


def test_ncu_found_and_versioned(no_tools):
    tool = fake_tool(no_tools / "opt/nsight-compute/2025.3.1/ncu", NCU_VERSION)
    assert ncu.find_ncu() == tool and ncu.version(tool) == "2025.3.1.0"


def test_version_of_a_broken_tool(no_tools):
    tool = fake_tool(no_tools / "bin/nsys", 'print("segmentation fault")')
    with pytest.raises(ToolNotFound, match="printed no version"):
        nsys.version(tool)


def test_importer_found_beside_nsys(tmp_path):
    bundled = fake_tool(tmp_path / "target-linux-x64/nsys", NSYS_VERSION)
    assert nsys.importer(bundled) is None
    imp = fake_tool(tmp_path / "host-linux-x64/QdstrmImporter", "")
    assert nsys.importer(bundled) == imp


# -- run_tool ----------------------------------------------------------------------------------
def test_run_tool_success_logs_output(tmp_path):
    tool = fake_tool(tmp_path / "ok", 'print("all good")')
    done = tools.run_tool([str(tool), "--flag"], tmp_path / "ok.log", timeout=30)
    assert done.returncode == 0
    log = (tmp_path / "ok.log").read_text()
    assert f"$ {tool} --flag" in log and "all good" in log


def test_failure_carries_command_status_and_log_tail(tmp_path):
    script = (
        'import sys\nfor i in range(40): print(f"line {i}")\n'
        "sys.stdout.flush()\n"  # the tool's own buffering decides the order in the log
        'sys.stderr.write("fatal: it broke\\n")\nsys.exit(7)'
    )
    tool = fake_tool(tmp_path / "bad", script)
    with pytest.raises(ProfilerRunError) as err:
        tools.run_tool([str(tool), "stats", "x.nsys-rep"], tmp_path / "bad.log", timeout=30)
    exc = err.value
    assert exc.returncode == 7 and exc.cmd == [str(tool), "stats", "x.nsys-rep"]
    assert (
        "fatal: it broke" in exc.log_tail
        and "line 39" in exc.log_tail
        and "line 5\n" not in exc.log_tail
    )
    assert "exited with status 7" in str(exc) and "fatal: it broke" in str(exc)


def test_failure_with_known_cause_has_a_hint(tmp_path):
    tool = fake_tool(
        tmp_path / "nsys",
        'import sys\nprint("error while loading shared libraries: libdw.so.1: cannot open")\n'
        "sys.exit(127)",
    )
    with pytest.raises(ProfilerRunError) as err:
        tools.run_tool([str(tool)], tmp_path / "n.log", timeout=30)
    assert "libdw1" in err.value.hint and "LD_LIBRARY_PATH" in str(err.value)


def test_timeout_kills_the_tool_and_its_children(tmp_path):
    script = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(tmp_path / 'child.pid')!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)"
    )
    tool = fake_tool(tmp_path / "slow", script)
    t0 = time.monotonic()
    with pytest.raises(ProfilerRunError) as err:
        tools.run_tool([str(tool)], tmp_path / "slow.log", timeout=1.5)
    assert err.value.returncode is None and "timed out" in str(err.value)
    assert time.monotonic() - t0 < 10
    child = int((tmp_path / "child.pid").read_text())
    time.sleep(0.2)
    assert not running(child)


def running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie waiting for its (new) parent to reap it."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat_line.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def test_missing_program_is_tool_not_found(tmp_path):
    with pytest.raises(ToolNotFound, match="cannot be run"):
        tools.run_tool([str(tmp_path / "nope")], tmp_path / "x.log", timeout=5)


def test_tail_of_missing_and_carriage_returns(tmp_path):
    assert tools.tail(tmp_path / "none") == ""
    (tmp_path / "p.log").write_text("a\r[1/1] 50%\r[1/1] 100%\nb\n")
    assert tools.tail(tmp_path / "p.log", 2) == "[1/1] 100%\nb"
