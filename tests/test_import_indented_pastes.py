"""`profgen import` of profiler output that a paste indents: a Python docstring's example of
`nvprof -i` (whose lines carry no PID: `======== Profiling result:`), indented eight spaces and
cut with `...`. The real files are in tests/data/nvprof/9.x (its README says where each comes
from)."""

from __future__ import annotations

from pathlib import Path

from clirun import profgen

from profiler import store

NVPROF = Path(__file__).parent / "data" / "nvprof" / "9.x"
API_TRACE = NVPROF / "rlscope-api-trace-docstring-elided.py"


def imported(path: Path, tmp_path: Path, capsys) -> tuple[store.Run, str]:
    """The run `profgen import` makes of `path` as stage `s`, and what it said on stderr."""
    argv = ["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path / "out"]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    return store.load_run(result.out.strip().splitlines()[-1]), result.err


def test_a_pid_less_api_trace_cut_with_dots_imports_as_partial(tmp_path, capsys):
    """`nvprof -i` prints `======== Profiling result:` (no PID) above the trace; the docstring's
    `...` (line 19) is where it cut rows, not a row whose start is no time: the eight rows above
    it are read, and the run is said to be partial."""
    run, err = imported(API_TRACE, tmp_path, capsys)
    trace = run.table("api_trace")
    assert trace["name"].tolist() == [
        "cuDeviceGetPCIBusId",
        "cuDeviceGetCount",
        "cuDeviceGetCount",
        "cuDeviceGet",
        "cuDeviceGetAttribute",
        "cuDeviceGetAttribute",
        "cuDeviceGetAttribute",
        "cuDeviceGetCount",
    ]
    # 0ns, 38.829ms, 38.833ms, 39.293ms, 39.295ms, 39.303ms, 39.303ms, 39.317ms
    starts = [0, 38829000, 38833000, 39293000, 39295000, 39303000, 39303000, 39317000]
    assert trace["start_ns"].tolist() == starts
    # 2.4150us, 2.4050us, 180ns, 621ns, 912ns, 241ns, 521ns, 441ns
    assert trace["duration_ns"].tolist() == [2415, 2405, 180, 621, 912, 241, 521, 441]
    assert "rows elided at line 19" in err
    assert "partial" in run.table("stages").iloc[0]["technique"]

