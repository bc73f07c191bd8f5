"""`profgen import` of `nsys stats` tables written as Markdown pipe tables (a README's or a lab
report's way to show them), and of numbers grouped with apostrophes (a Swiss locale). The files
are in tests/data/nsys/2023.x (its README says where each comes from); every expected value is
read off the file."""

from __future__ import annotations

from pathlib import Path

from test_import_pasted import imported

from profiler.parse import piped_nsys

NSYS = Path(__file__).parent / "data" / "nsys" / "2023.x"
REDUCTIONS = NSYS / "determ-reductions-md-pipe-kern-table-cut.md"
LINREG = NSYS / "linreg-cuda-cublas-md-pipe-tables-captions-cut.md"
SWISS = NSYS / "jetson-lab-fr-pipe-tables-apostrophe-groups-cut.md"


def test_a_readme_kernel_summary_as_a_pipe_table_imports_its_kernels(tmp_path, capsys):
    run, err = imported(REDUCTIONS, tmp_path, capsys)
    kernels = run.table("gpu_activities")
    assert len(kernels) == 8
    first = kernels.iloc[0]
    assert first["name"] == "void reduce_rows_single_for<(int)4, (int)16384>(float *, float *)"
    assert (first["calls"], first["total_ns"]) == (100, 23871201)
    assert (first["min_ns"], first["max_ns"], first["avg_ns"]) == (200840, 749502, 238712.0)
    last = kernels.iloc[-1]
    assert last["name"] == "void reduce_rows_par_256<(int)4, (int)16384>(float *, float *)"
    assert (last["total_ns"], last["min_ns"], last["max_ns"]) == (963570, 9537, 10080)
    assert "Markdown pipe tables" in err
    assert "api_calls" not in run.tables  # the README's own table of row sums is no report


def test_pipe_tables_under_a_heading_and_a_caption_import_both_runs(tmp_path, capsys):
    run, _ = imported(LINREG, tmp_path, capsys)
    api = run.table("api_calls")
    assert api.groupby("stage").size().to_dict() == {"s.1": 7, "s.2": 15}
    malloc = api[(api["stage"] == "s.1") & (api["name"] == "cudaMalloc")].iloc[0]
    assert (malloc["calls"], malloc["total_ns"], malloc["max_ns"]) == (8, 126094891, 125828040)
    capture = api[api["name"] == "cudaStreamGetCaptureInfo_v2_v11030"].iloc[0]
    assert (capture["stage"], capture["calls"], capture["total_ns"]) == ("s.2", 25, 17083)
    gpu = run.table("gpu_activities")
    kinds = gpu.groupby(["stage", "kind"]).size().to_dict()
    assert kinds == {
        ("s.1", "kernel"): 4,
        ("s.1", "memcpy"): 2,
        ("s.1", "memset"): 1,
        ("s.2", "kernel"): 4,
        ("s.2", "memcpy"): 2,
    }
    dot = gpu[gpu["name"].str.startswith("void dot_kernel")].iloc[0]
    assert dot["name"].endswith("cublasGemvT…")  # the name as the README cut it
    assert (dot["calls"], dot["total_ns"], dot["min_ns"]) == (3, 53727, 9216)


def test_numbers_grouped_by_apostrophes_are_read_whole(tmp_path, capsys):
    run, _ = imported(SWISS, tmp_path, capsys)
    api = run.table("api_calls").set_index("name")
    assert api.loc["cudaMalloc", "total_ns"] == 220_092_864  # `220’092’864`
    assert api.loc["cudaMalloc", "avg_ns"] == 73_364_288.0
    assert api.loc["cudaMemcpy", "min_ns"] == 118_752
    assert api.loc["cudaLaunchKernel", "calls"] == 1
    kernel = run.table("gpu_activities").iloc[0]
    assert kernel["name"] == "vectorAdd(const float *, const float *, float *, int)"
    assert (kernel["total_ns"], kernel["max_ns"]) == (25056, 25056)


def test_laying_out_keeps_every_line_and_leaves_other_pipe_tables_alone():
    text = (
        b"| Kernel | Result |\n"
        b"|---|---:|\n"
        b"| a | 1.0 |\n"
        b"\n"
        b"| Time (%) | Total Time (ns) | Instances | Avg (ns) | Min (ns) | Max (ns) | Name |\n"
        b"|---:|---:|---:|---:|---:|---:|:---|\n"
        b"| 100.0 | 1,500 | 3 | 500.0 | 400 | 600 | k(int) |\n"
    )
    shape = piped_nsys.unpiped(text)
    assert shape is not None
    assert shape.data.split(b"\n")[:4] == text.split(b"\n")[:4]
    assert shape.data.split(b"\n")[4:7] == [
        b"Time (%)  Total Time (ns)  Instances  Avg (ns)  Min (ns)  Max (ns)  Name",
        b"--------  ---------------  ---------  --------  --------  --------  ------",
        b"   100.0            1,500          3     500.0       400       600  k(int)",
    ]
    assert list(shape.lines) == list(range(1, 9))
    assert piped_nsys.unpiped(text.split(b"\n\n")[0]) is None


def test_pipe_tables_beside_plain_tables_are_said_to_be_left_out(tmp_path, capsys):
    """A README with both kinds (here two real files one after the other: a plain `nsys
    profile --stats=true` capture, then the pipe kernel table): the plain tables import as
    before, and the pipe table, left out, is named by its line instead of passed over."""
    plain = NSYS / "vector-add-stats-head.md"
    both = tmp_path / "both.md"
    both.write_bytes(plain.read_bytes() + b"\n" + REDUCTIONS.read_bytes())
    alone, _ = imported(plain, tmp_path / "plain", capsys)
    run, err = imported(both, tmp_path / "both", capsys)
    for name in alone.tables:
        assert len(run.table(name)) == len(alone.table(name)), name
    header = REDUCTIONS.read_text().splitlines().index(next(
        line for line in REDUCTIONS.read_text().splitlines() if line.startswith("| Time (%)")
    ))
    line = len(plain.read_bytes().split(b"\n")) + header + 1
    assert f"line(s) {line}: 1 nsys table(s) written as Markdown pipe tables left out" in err
