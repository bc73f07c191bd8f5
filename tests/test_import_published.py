"""Profiler output as people publish it (issue 14): in Markdown fenced with `~~~`, in a batch
job's log where the profiler aborted after its tables. Each file is a real one from a public
repository (see the README of its folder), checked for the values it yields.
"""

from __future__ import annotations

from pathlib import Path

from clirun import profgen

from profiler import store

DATA = Path(__file__).parent / "data"
TILDE_RUNS = DATA / "captures" / "nvprof-runs-tilde-fences.md"
ABORTED = DATA / "nvprof" / "9.x" / "openacc-nvprof-aborted.err"


def imported(capsys, tmp: Path, path: Path):  # type: ignore[no-untyped-def]
    """The run `profgen import` makes of the one stage `s=path`."""
    argv = ["import", "--model", "pub", "--out", tmp, "--stage", f"s={path}"]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    return store.load_run(result.out.strip().splitlines()[-1])


def test_nvprof_runs_fenced_with_tildes_are_a_stage_each(tmp_path, capsys):
    """Eleven runs, each table closed by a `~~~` fence (line 28 is the first): not a row."""
    run = imported(capsys, tmp_path, TILDE_RUNS)
    assert list(run.table("stages")["stage"]) == [f"s.{k}" for k in range(1, 12)]
    gpu = run.table("gpu_activities").set_index(["stage", "name"])
    # line 8: `80.19%  23.304ms  2  11.652ms  8.6804ms  14.623ms  [CUDA memcpy DtoH]`
    dtoh = gpu.loc[("s.1", "[CUDA memcpy DtoH]")]
    assert dtoh[["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        23_304_000,
        2,
        8_680_400,
        14_623_000,
    ]
    # lines 691-697: the last run's seven rows, above its API calls
    assert len(gpu.loc["s.11"]) == 7
    assert gpu.loc[("s.11", "warmup(float*, float*, float*, int, int)"), "total_ns"] == 47_904
    calls = run.table("api_calls").set_index(["stage", "name"])
    # line 12: `88.83%  566.38ms  2  283.19ms  376.90us  566.01ms  cudaMalloc`
    assert calls.loc[("s.1", "cudaMalloc"), ["total_ns", "min_ns"]].tolist() == [
        566_380_000,
        376_900,
    ]


def test_a_table_nvprof_printed_before_aborting_ends_at_its_message(tmp_path, capsys):
    """Line 36 (`nvprof: /dvs/...: Assertion `start <= end' failed.`) is no API calls row: the
    20 rows above it are the table (no kernels: `No kernels were profiled.`)."""
    run = imported(capsys, tmp_path, ABORTED)
    calls = run.table("api_calls").set_index("name")
    assert len(calls) == 20
    # line 16: `77.33%  200.72ms  1  200.72ms  200.72ms  200.72ms  cuDevicePrimaryCtxRetain`
    assert calls.loc["cuDevicePrimaryCtxRetain", "total_ns"] == 200_720_000
    # line 35: `0.00%  204ns  1  204ns  204ns  204ns  cuDriverGetVersion`
    assert calls.loc["cuDriverGetVersion", ["total_ns", "calls"]].tolist() == [204, 1]
    assert "gpu_activities" not in run.tables
