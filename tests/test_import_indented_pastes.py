"""`profgen import` of profiler output that source code keeps: a Python docstring's example of
`nvprof -i` (whose lines carry no PID: `======== Profiling result:`), indented eight spaces and
cut with `...`, a C++ file's `#if 0` block of nvprof's `--csv` API and gpu traces, commented
out with `//`, and a C comment's runs indented four spaces, one of which profiled nothing. The
real files are in tests/data/nvprof/9.x (its README says where each comes from)."""

from __future__ import annotations

from pathlib import Path

from test_import_pasted import imported

from profiler.parse import pasted

NVPROF = Path(__file__).parent / "data" / "nvprof" / "9.x"
API_TRACE = NVPROF / "rlscope-api-trace-docstring-elided.py"


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


GPU_SUMMARY = NVPROF / "rlscope-gpu-summary-csv-docstring.py"
RAW_NCU_CSV = Path(__file__).parent / "data" / "ncu" / "2025.3.1" / "raw-metrics.csv"


def test_an_indented_csv_summary_in_a_docstring_imports(tmp_path, capsys):
    """The docstring indents `nvprof --print-gpu-summary --csv` eight spaces: its header, units
    row (`,%,us,,us,us,us,`) and three rows are read with the indent taken off, in microseconds
    as the units row says, and the `...` below them makes the table partial."""
    run, err = imported(GPU_SUMMARY, tmp_path, capsys)
    gpu = run.table("gpu_activities")
    assert gpu["name"].tolist() == [
        "volta_sgemm_128x64_nn",
        "void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>"
        "(cudnn::winograd_nonfused::WinogradDataParams<float, float>)",
        "void cudnn::winograd_nonfused::winogradForwardOutput4x4<float, float>"
        "(cudnn::winograd_nonfused::WinogradOutputParams<float, float>)",
    ]
    assert gpu["time_pct"].tolist() == [29.820746, 8.283205, 7.780943]
    assert gpu["total_ns"].tolist() == [6659683, 1849837, 1737670]  # 6659.683000 us, ...
    assert gpu["calls"].tolist() == [510, 458, 458]
    assert gpu["min_ns"].tolist() == [10944, 3904, 3712]
    assert gpu["max_ns"].tolist() == [22048, 5952, 5504]
    assert "partial" in run.table("stages").iloc[0]["technique"]


def test_unindenting_takes_the_indent_off_csv_blocks_only():
    """From an indented line that starts with two quoted cells down to the first line indented
    otherwise; a docstring's `\"\"\"`, a list's `"x",` (one quoted cell) and the lines indented
    otherwise stay as they are."""
    data = b'def f():\n    """\n    "a","b"\n    1,2\n        "x",\n    text\n'
    shape = pasted.unindented(data)
    assert shape is not None
    assert shape.data == b'def f():\n    """\n"a","b"\n1,2\n        "x",\n    text\n'
    assert shape.file_line(3) == 3
    assert pasted.unindented(b'    "a","b"\n  1,2\n') is None  # a block of one line


def test_ncu_csv_in_a_code_block_indented_by_four_reads_as_the_file_itself(tmp_path, capsys):
    """A README's code block indented by four around a real `ncu --csv` capture: read as the
    capture itself (its counters, value for value), with a warning that the indent was taken
    off."""
    indented = tmp_path / "readme.md"
    text = RAW_NCU_CSV.read_text()
    indented.write_text("Output:\n\n" + "".join(f"    {line}" for line in text.splitlines(True)))
    plain, _ = imported(RAW_NCU_CSV, tmp_path / "plain", capsys)
    shifted, err = imported(indented, tmp_path / "indented", capsys)
    want = plain.table("counters").drop(columns=["stage"])
    got = shifted.table("counters").drop(columns=["stage"])
    assert len(want) > 0
    assert got.equals(want)
    assert "indented" in err


IF0_TRACES = NVPROF / "rlscope-api-and-gpu-trace-csv-in-if0.cc"


def test_a_csv_api_trace_and_gpu_trace_kept_under_if0_import_as_one_run(tmp_path, capsys):
    """The `--csv` API trace (units `us,us,,`) is read as nvprof's text one is, and the gpu
    trace under it ends at `#endif`, not at a row of one cell; the two are two tables of one run
    (one profile's two exports), not two runs of one kind."""
    run, _ = imported(IF0_TRACES, tmp_path, capsys)
    api = run.table("api_trace")
    assert api["name"].tolist() == ["cuDeviceGetPCIBusId", "cuDeviceGetCount"]
    assert api["start_ns"].tolist() == [0, 35863518]  # 0.000000, 35863.518000 us
    assert api["duration_ns"].tolist() == [2866, 952]  # 2.866000, 0.952000 us
    assert api["correlation_id"].tolist() == [1, 2]
    trace = run.table("gpu_trace")
    assert trace["name"].tolist() == ["[CUDA memset]", "[CUDA memcpy HtoD]"]
    assert trace["start_ns"].tolist() == [0, 4643346]
    assert trace["duration_ns"].tolist() == [1888, 1536]
    assert trace["bytes"].tolist() == [1028, 128]  # 1.003906 KB, 0.125000 KB
    assert trace["stream"].tolist() == [7, 22]
    assert trace["correlation_id"].tolist() == [272, 316]
    assert run.table("stages")["stage"].tolist() == ["s"]


EVENTS_NONE = NVPROF / "omp-cuda-events-metrics-none-profiled-pt.cu"


def test_a_run_that_profiled_no_events_is_said_left_out_in_nvprofs_words(tmp_path, capsys):
    """The comment's second run (`==8528== Profiling result:`, line 38, indented four spaces)
    holds no table, only nvprof's `No events/metrics were profiled.`: the import says it left
    that run out and why, and reads the first run's event and metric."""
    run, err = imported(EVENTS_NONE, tmp_path, capsys)
    counters = run.table("counters").set_index("metric")
    assert counters.loc["warps_launched", "value"] == 72
    assert counters.loc["warp_execution_efficiency", "value"] == 86.81
    assert set(counters["name"]) == {"mm$_omp_fn$0"}
    assert "line 38: nvprof run left out" in err
    assert "'No events/metrics were profiled.'" in err


MANDELBROT = NVPROF / "mandelbrot-five-resolutions-headings.md"


def test_runs_without_a_command_are_titled_by_the_headings_they_are_quoted_under(tmp_path, capsys):
    """Five runs, each after its `==PID== Profiling result:` line and none with a `Profiling
    application:` line: each stage is titled by the resolution heading above its fence."""
    run, _ = imported(MANDELBROT, tmp_path, capsys)
    stages = run.table("stages")
    resolutions = ["**1000:**", "**2000:**", "**4000:**", "**8000:**", "**16000**"]
    assert stages["title"].tolist() == [
        f"s, run {k} of 5: {r}" for k, r in enumerate(resolutions, 1)
    ]
    gpu = run.table("gpu_activities")
    kernels = gpu[gpu["name"] == "mandelbrot_kernel(int*)"]
    # 302.95ms, 624.28ms, 2.03438s, 7.56941s, 29.6919s
    assert kernels["total_ns"].tolist() == [
        302950000,
        624280000,
        2034380000,
        7569410000,
        29691900000,
    ]


COMMENTED_NCU_CSV = RAW_NCU_CSV.parent.parent / "any" / "warp-divergence-csv-in-line-comments.cu"


def _quoted_rows(path: Path) -> list[list[str]]:
    """The `//`-commented rows of the file's quoted ncu CSV block, cut into cells."""
    import csv

    rows = [ln.split("//", 1)[1].strip() for ln in path.read_text().splitlines() if "//" in ln]
    return list(csv.reader(r for r in rows if r.startswith('"')))


def test_an_ncu_csv_kept_in_line_comments_imports_and_the_quote_stripped_copy_is_left_out(
    tmp_path, capsys
):
    """`//   "ID","Process ID",...`: the comment marks and the CSV's indent are taken off, its
    four metric rows read (refused before: the file read as source code without a table), and
    the quote-stripped copy under `// WITHOUT WARP DIVERGENCE` is left out with a note naming
    its line, not read as more rows."""
    run, err = imported(COMMENTED_NCU_CSV, tmp_path, capsys)
    header, *rows = _quoted_rows(COMMENTED_NCU_CSV)
    cells = [dict(zip(header, r, strict=True)) for r in rows]
    counters = run.table("counters")
    assert counters["metric"].tolist() == [c["Metric Name"] for c in cells]
    expected = [float(c["Metric Value"].replace(",", "")) for c in cells]
    assert counters["value"].tolist() == expected == [2816.0, 0.0, 0.38, 1362.2]
    assert set(counters["name"]) == {"branch()"}
    lines = COMMENTED_NCU_CSV.read_text().splitlines()
    left = next(i for i, ln in enumerate(lines, start=1) if "WITHOUT WARP DIVERGENCE" in ln)
    assert f"line {left} on ('WITHOUT WARP DIVERGENCE') left out" in err
