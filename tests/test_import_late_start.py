"""A file whose profiler output starts past the first 64 KiB that detection reads (a long run
log) is read from the line where it starts (`parse.late_start`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from clirun import assert_refused, profgen

from profiler import import_paste, store
from profiler.errors import ParseError
from profiler.parse import detect

LOG = Path(__file__).parent / "data" / "nvprof" / "9.x" / "atsmith3-m3-1-rai-nvprof-past-64k.log"
LINE = b"step %07d: loss 0.1234 accuracy 0.9123 lr 1e-3 elapsed 12.5 ms\n"
# program output holding words a profiler's output holds too (each line looked at, refused)
DECOY = b"epoch %d Duration: 12.5 s, 98.1 (%%) of the budget, == done, Statistics\n"


def test_nvprof_output_after_the_first_64_kib_is_read(tmp_path, capsys):
    """atsmith3/ece408_final_project's m3.1 log: 92 lines (65 KiB) of RAI's client and the
    mxnet build, then nvprof from line 93 (was refused: none of its lines is profiler output)."""
    assert b"==265==" not in LOG.read_bytes()[:65536]
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"m31={LOG}", "--out", out], capsys)
    assert result.code == 0, result.err
    assert "profiler output from line 93 on only" in result.err
    run = store.load_run(Path(result.out.strip().splitlines()[-1]))
    act, api = run.table("gpu_activities"), run.table("api_calls")
    assert (len(act), len(api)) == (6, 36)
    first = act.iloc[0]
    assert first["name"].startswith("mxnet::op::forward_kernel(float*, float const *, ")
    assert (first["total_ns"], first["calls"], first["time_pct"]) == (497_500_000, 1, 88.82)
    assert act["total_ns"].sum() == 560_091_875
    broken = api[api["name"] == "cudaHostGetDevicePointer"]  # `cudaH` / `ostGetDevicePointer`
    cells = broken[["total_ns", "calls", "min_ns", "max_ns"]].values.tolist()
    assert cells == [[7206, 2, 3581, 3625]]
    assert api["total_ns"].sum() == 172_239_978_839


def big_log(path: Path, size: int, tail: bytes = b"") -> Path:
    """`size` bytes of program output (a decoy line every 1000 lines), then `tail`."""
    block = b"".join(LINE % i for i in range(999)) + DECOY % 999
    data = (block * (size // len(block) + 1))[:size]
    path.write_bytes(data[: data.rfind(b"\n") + 1] + tail)
    return path


def detection(path: Path) -> object:
    """What detection makes of the file: its `Input`, or the `ParseError` it refuses with."""
    try:
        return import_paste.detected(path)
    except ParseError as exc:
        return exc


def test_a_long_log_with_nvprof_at_its_end_is_found(tmp_path):
    """Program output (a decoy line every 1000 lines) then nvprof's output: found from the
    line it starts on (its speed on 100 MB: tests/benchmarks/test_bench_parse.py)."""
    tail = LOG.read_bytes().split(b"\n", 92)[92]  # nvprof's output, from its first line on
    path = big_log(tmp_path / "end.log", 2 << 20, tail)
    lines_before = path.read_bytes().count(b"\n") - tail.count(b"\n")
    found = detection(path)
    assert isinstance(found, import_paste.Input) and found.kind == detect.NVPROF
    assert found.shape is not None and f"from line {lines_before + 1} on only" in found.shape.note


def test_a_long_log_with_no_profiler_output_is_refused_as_before(tmp_path):
    found = detection(big_log(tmp_path / "none.log", 2 << 20))
    assert isinstance(found, ParseError), found
    assert "none of its lines is profiler output" in found.detail


@pytest.mark.parametrize("size", [1000, 70_000])
def test_program_output_alone_is_refused_with_one_line(tmp_path, capsys, size):
    path = big_log(tmp_path / "p.log", size)
    argv = ["import", "--model", "m", "--stage", f"a={path}", "--out", tmp_path / "o"]
    result = profgen(argv, capsys)
    assert_refused(result, 2, "none of its lines is profiler output")
