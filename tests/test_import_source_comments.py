"""`profgen import` of profiler output that a source file keeps in a block comment (`/* ... */`):
a C or CUDA file whose program's output is pasted under its code. The real files are in
tests/data/nvprof/9.x (its README says where each comes from)."""

from __future__ import annotations

from pathlib import Path

from clirun import profgen

from profiler import store

NVPROF = Path(__file__).parent / "data" / "nvprof" / "9.x"
PINNED = NVPROF / "pinned-gputrace-in-block-comment.cu"


def imported(path: Path, tmp_path: Path, capsys) -> tuple[store.Run, str]:
    """The run `profgen import` makes of `path` as stage `s`, and what it said on stderr."""
    argv = ["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path / "out"]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    return store.load_run(result.out.strip().splitlines()[-1]), result.err


def test_a_gpu_trace_ended_by_the_comments_close_imports(tmp_path, capsys):
    """The trace's last row is followed by ` * ***/` (the comment's close): the table ends
    there, and its five rows are read as nvprof printed them."""
    run, _ = imported(PINNED, tmp_path, capsys)
    trace = run.table("gpu_trace")
    assert trace["duration_ns"].tolist() == [23298, 22914, 23650, 7841, 20738]
    assert trace["start_ns"].tolist() == [212390000, 212420000, 212450000, 212490000, 212500000]
    kernel = trace[trace["kind"] == "kernel"].iloc[0]
    assert kernel["name"] == "vectorAdd(int*, int*, int*, int)"
    assert (kernel["grid_x"], kernel["block_x"], kernel["registers"]) == (64, 1024, 8)
    assert kernel["correlation_id"] == 120
    copies = trace[trace["kind"] == "memcpy"]
    assert copies["bytes"].tolist() == [262144] * 4  # 256.00KB each
    assert copies["copy_kind"].tolist() == ["HtoD", "HtoD", "HtoD", "DtoH"]
