"""`profgen import` of profiler output that a source file keeps in a block comment (`/* ... */`):
a C or CUDA file whose program's output is pasted under its code. The real files are in
tests/data/nvprof/9.x (its README says where each comes from)."""

from __future__ import annotations

import re
from pathlib import Path

from test_import_pasted import imported

from profiler.parse import pasted

NVPROF = Path(__file__).parent / "data" / "nvprof" / "9.x"
PINNED = NVPROF / "pinned-gputrace-in-block-comment.cu"


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


OMP = NVPROF / "omp-offload-events-metrics-star-comment-pt.c"
STARRED_NOTE = (
    "the file has its lines in a block comment with a star down its left side (` * text`: a "
    "program's output kept in a source file's `/* */` comment): read without the stars"
)


def test_nvprof_output_in_a_starred_block_comment_imports(tmp_path, capsys):
    """The event and metric results under ` * ` (the metric one indented further) are read
    without the stars, and the warning says so."""
    run, err = imported(OMP, tmp_path, capsys)
    counters = run.table("counters").set_index("metric")
    assert counters.loc["warps_launched", "value"] == 72
    assert counters.loc["warp_execution_efficiency", "value"] == 86.81
    assert counters.loc["warp_execution_efficiency", "unit"] == "%"
    assert set(counters["name"]) == {"mm$_omp_fn$0"}
    assert counters["invocations"].tolist() == [1, 1]
    assert STARRED_NOTE in err


def test_unstarring_takes_the_star_and_one_space_but_not_a_comments_close():
    data = b"/*\n * ==1== Event result:\n *   Kernel: k\n *\n */\nint x;\n"
    shape = pasted.unstarred(data)
    assert shape is not None
    assert shape.data == b"/*\n==1== Event result:\n  Kernel: k\n\n */\nint x;\n"
    assert pasted.unstarred(b"a\n * one line only\n") is None


VARIANTS = NVPROF / "omp-offload-three-variants-events-metrics-pt.c"
EFFICIENCY = re.compile(r"warp_execution_efficiency +Warp Execution Efficiency +([0-9.]+)%")


def test_each_variants_event_and_metric_results_are_a_run_of_their_own(tmp_path, capsys):
    """Three `Event result:` + `Metric result:` pairs with no `Profiling result:` line between
    them: a run starts where an event (or metric) table comes again, so each variant is a stage
    of its own, not three rows of one kernel in one stage."""
    run, _ = imported(VARIANTS, tmp_path, capsys)
    counters = run.table("counters")
    assert counters["stage"].unique().tolist() == ["s.1", "s.2", "s.3"]
    efficiency = counters[counters["metric"] == "warp_execution_efficiency"]
    expected = [float(v) for v in EFFICIENCY.findall(VARIANTS.read_text())]
    assert expected == [98.32, 100.00, 86.81]
    assert efficiency["value"].tolist() == expected
    launched = counters[counters["metric"] == "warps_launched"]
    assert launched["value"].tolist() == [154224] * 3
    assert set(counters["name"]) == {"mm$_omp_fn$0"}
