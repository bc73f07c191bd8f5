"""nsys stats CSV parsing, checked against the real H100 captures in tests/data/nsys/2025.3.1/.

Expected values are read from the CSV files with the `csv` module in the test itself (or come
from the programs' known shapes: 3 `addone` launches, 8 `scale`/`relu` launches, 16 MiB copies),
not from the parser's output.
"""

from __future__ import annotations

import csv
import re
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import nsys_capture, nsys_csv, nsys_rule, reader_notes

NSYS = Path(__file__).parent / "data" / "nsys" / "2025.3.1"
DEMO, OVERLAP = NSYS / "demo", NSYS / "overlap"


def rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.read_text().splitlines()))


def test_demo_trace_kinds_and_fields():
    trace = nsys_csv.read_stats_dir(DEMO, "demo")["gpu_trace"]
    schema.validate(trace, schema.GPU_TRACE)
    assert list(trace["kind"]) == ["memcpy", "kernel", "kernel", "kernel", "memcpy"]
    assert list(trace["name"]) == [
        "[CUDA memcpy HtoD]",
        "addone",
        "addone",
        "addone",
        "[CUDA memcpy DtoH]",
    ]
    copies = trace[trace["kind"] == "memcpy"]
    assert list(copies["copy_kind"]) == ["HtoD", "DtoH"]
    assert list(copies["src_kind"]) == ["pinned", "device"]
    assert list(copies["dst_kind"]) == ["device", "pageable"]
    # `Bytes (MB)` 16.777 of a 16 MiB copy: MB = 1e6 bytes, to nsys's 3 decimals
    assert list(copies["bytes"]) == [16_777_000, 16_777_000]
    kernels = trace[trace["kind"] == "kernel"]
    assert kernels["bytes"].isna().all() and kernels["copy_kind"].isna().all()
    assert list(kernels["grid_x"]) == [16384] * 3 and list(kernels["block_x"]) == [256] * 3
    assert list(kernels["registers"]) == [16] * 3 and list(kernels["shared_bytes"]) == [0] * 3
    assert copies["grid_x"].isna().all()
    src = rows(DEMO / "cuda_gpu_trace.csv")
    assert list(trace["start_ns"]) == [int(r["Start (ns)"]) for r in src]
    assert list(trace["duration_ns"]) == [int(r["Duration (ns)"]) for r in src]
    assert (trace["end_ns"] - trace["start_ns"]).tolist() == trace["duration_ns"].tolist()
    assert list(trace["correlation_id"]) == [int(r["CorrId"]) for r in src]
    assert set(trace["device"]) == {0} and set(trace["stream"]) == {7}
    assert (trace["repeat"] == -1).all() and trace["range"].isna().all()


def test_trace_kernel_totals_equal_kern_sum():
    for folder in (DEMO, OVERLAP):
        trace = nsys_csv.read_stats_dir(folder, "s")["gpu_trace"]
        kernels = trace[trace["kind"] == "kernel"].groupby("name")["duration_ns"]
        for r in rows(folder / "cuda_gpu_kern_sum.csv"):
            assert kernels.sum()[r["Name"]] == int(r["Total Time (ns)"])
            assert kernels.size()[r["Name"]] == int(r["Instances"])
            assert kernels.min()[r["Name"]] == int(r["Min (ns)"])
            assert kernels.max()[r["Name"]] == int(r["Max (ns)"])


def test_overlap_trace_streams_and_copies():
    trace = nsys_csv.read_stats_dir(OVERLAP, "overlap")["gpu_trace"]
    assert len(trace) == 32
    assert trace["kind"].value_counts().to_dict() == {"memcpy": 16, "kernel": 16}
    assert set(trace["stream"]) == {13, 14}
    copies = trace[trace["kind"] == "memcpy"]
    assert copies["copy_kind"].value_counts().to_dict() == {"HtoD": 8, "DtoH": 8}
    assert set(copies["src_kind"]) | set(copies["dst_kind"]) == {"pinned", "device"}
    assert trace["start_ns"].is_monotonic_increasing


def test_summaries_without_trace_give_gpu_activities(tmp_path):
    for name in ("cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"):
        shutil.copy(OVERLAP / f"{name}.csv", tmp_path / f"overlap_{name}.csv")
    tables = nsys_csv.read_stats_dir(tmp_path, "overlap")
    assert set(tables) == {"gpu_activities"}
    act = schema.validate(tables["gpu_activities"], schema.GPU_ACTIVITIES)
    assert list(act["name"]) == ["[CUDA memcpy DtoH]", "[CUDA memcpy HtoD]", "scale", "relu"]
    assert list(act["kind"]) == ["memcpy", "memcpy", "kernel", "kernel"]
    assert list(act["copy_kind"].fillna("-")) == ["DtoH", "HtoD", "-", "-"]
    assert list(act["total_ns"]) == [633102, 630384, 33696, 28706]
    assert list(act["calls"]) == [8, 8, 8, 8]
    assert list(act["bytes"].fillna(-1)) == [33_554_000, 33_554_000, -1, -1]
    # Time(%) is the share of all GPU activity time, not nsys's per-report share
    total = 633102 + 630384 + 33696 + 28706
    assert act["time_pct"].tolist() == pytest.approx([100 * t / total for t in act["total_ns"]])


def test_api_calls_from_api_sum():
    api = nsys_csv.read_stats_dir(DEMO, "demo")["api_calls"]
    schema.validate(api, schema.API_CALLS)
    src = rows(DEMO / "cuda_api_sum.csv")
    assert list(api["name"]) == [r["Name"] for r in src]  # nsys sorts by time too
    assert list(api["calls"]) == [int(r["Num Calls"]) for r in src]
    assert list(api["total_ns"]) == [int(r["Total Time (ns)"]) for r in src]
    assert list(api["avg_ns"]) == [float(r["Avg (ns)"]) for r in src]
    assert api["time_pct"].sum() == pytest.approx(100)
    assert api["time_pct"].round(1).tolist() == [float(r["Time (%)"]) for r in src]


def test_ranges_strip_domain_and_join_gpu_projection():
    demo = nsys_csv.read_stats_dir(DEMO, "demo")["ranges"]
    assert list(demo["name"]) == ["stage:demo"]
    assert demo.iloc[0][["calls", "total_ns", "gpu_total_ns", "gpu_ops"]].tolist() == [
        1,
        494882583,
        43036074,
        5,
    ]
    ranges = nsys_csv.read_stats_dir(OVERLAP, "overlap")["ranges"].set_index("name")
    proj = {r["Range"].removeprefix("profgen:"): r for r in rows(OVERLAP / "nvtx_gpu_proj_sum.csv")}
    for r in rows(OVERLAP / "nvtx_sum.csv"):
        name = r["Range"].removeprefix("profgen:")
        assert ranges.loc[name, "calls"] == int(r["Instances"])
        assert ranges.loc[name, "min_ns"] == int(r["Min (ns)"])
        assert ranges.loc[name, "gpu_total_ns"] == int(proj[name]["Total Proj Time (ns)"])
        assert ranges.loc[name, "gpu_ops"] == int(proj[name]["Total GPU Ops"])


def test_stdout_capture_equals_csv_files():
    from_stdout = nsys_capture.read_stats_stdout(DEMO / "nsys-stats-stdout.txt", "demo")
    from_files = nsys_csv.read_stats_dir(DEMO, "demo")
    assert set(from_stdout) == set(from_files) == {"gpu_trace", "api_calls", "ranges"}
    for name, df in from_files.items():
        pd.testing.assert_frame_equal(from_stdout[name], df)


def test_stdout_with_banners_and_old_report_names(tmp_path):
    text = (DEMO / "nsys-stats-stdout.txt").read_text()
    text = text.replace(
        "with [/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/reports/"
        "cuda_gpu_trace.py]",
        "with [/opt/nvidia/nsight-systems/2020.3/reports/gputrace.py]",
    )
    banner = text.replace(
        "Processing [/tmp/rep3.sqlite] with [/opt/nvidia/nsight-compute/2025.3.1/host/"
        "target-linux-x64/reports/cuda_api_sum.py]... ",
        " ** CUDA API Summary (cuda_api_sum):",
    )
    path = tmp_path / "stdout.txt"
    path.write_text(banner)
    tables = nsys_capture.read_stats_stdout(path, "demo")
    assert len(tables["gpu_trace"]) == 5 and len(tables["api_calls"]) == 15


def test_prefixed_and_old_file_names(tmp_path):
    for f in OVERLAP.glob("*.csv"):
        shutil.copy(f, tmp_path / f"overlap_{f.name}")
    prefixed = nsys_csv.read_stats_dir(tmp_path, "o")
    plain = nsys_csv.read_stats_dir(OVERLAP, "o")
    for name in plain:
        pd.testing.assert_frame_equal(prefixed[name], plain[name])
    old = tmp_path / "old"
    old.mkdir()
    shutil.copy(OVERLAP / "cuda_gpu_kern_sum.csv", old / "report_gpukernsum.csv")
    shutil.copy(OVERLAP / "cuda_gpu_mem_time_sum.csv", old / "report_gpumemtimesum.csv")
    act = nsys_csv.read_stats_dir(old, "o")["gpu_activities"]
    assert list(act["total_ns"]) == [633102, 630384, 33696, 28706]


def test_old_header_spellings(tmp_path):
    # nsys before 2021.2: `Time(%)`, `Average`/`Minimum`/`Maximum` without units, `Operations`
    kern = (
        (OVERLAP / "cuda_gpu_kern_sum.csv")
        .read_text()
        .replace(
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),"
            "StdDev (ns),Name",
            "Time(%),Total Time (ns),Instances,Average,Median,Minimum,Maximum,StdDev,Name",
        )
    )
    mem = (
        (OVERLAP / "cuda_gpu_mem_time_sum.csv")
        .read_text()
        .replace("Time (%),Total Time (ns),Count,Avg (ns)", "Time(%),Total Time,Operations,Average")
    )
    (tmp_path / "gpukernsum.csv").write_text(kern)
    (tmp_path / "gpumemtimesum.csv").write_text(mem)
    act = nsys_csv.read_stats_dir(tmp_path, "o")["gpu_activities"]
    assert list(act["min_ns"]) == [77282, 78402, 3840, 3553]
    assert list(act["calls"]) == [8, 8, 8, 8]


def test_header_units_are_converted(tmp_path):
    src = rows(DEMO / "cuda_gpu_trace.csv")
    lines = [
        "Start (us),Duration (us),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (KB),"
        "DymSMem (KB),Bytes (KB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name"
    ]
    for r in src:
        kb = "" if not r["Bytes (MB)"] else f"{float(r['Bytes (MB)']) * 1000:.3f}"
        lines.append(
            ",".join(
                [
                    f"{int(r['Start (ns)']) / 1000:.3f}",
                    f"{int(r['Duration (ns)']) / 1000:.3f}",
                    r["CorrId"],
                    *[r[k] for k in ("GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ", "Reg/Trd")],
                    "",
                    "",
                    kb,
                    "",
                    r["SrcMemKd"],
                    r["DstMemKd"],
                    f'"{r["Device"]}"',
                    r["Ctx"],
                    "",
                    r["Strm"],
                    r["Name"],
                ]
            )
        )
    (tmp_path / "cuda_gpu_trace.csv").write_text("\n".join(lines) + "\n")
    trace = nsys_csv.read_stats_dir(tmp_path, "demo")["gpu_trace"]
    assert list(trace["start_ns"]) == [int(r["Start (ns)"]) for r in src]
    assert list(trace["duration_ns"]) == [int(r["Duration (ns)"]) for r in src]
    assert list(trace["bytes"].dropna()) == [16_777_000, 16_777_000]


def test_quoted_names_with_commas_and_thousands_separators(tmp_path):
    text = (DEMO / "cuda_gpu_trace.csv").read_text()
    text = text.replace(",addone", ',"void foo<int, float>(T1 *, int)"')
    text = text.replace("1009266599,11168,154,16384", '1009266599,"11,168",154,"16,384"')
    (tmp_path / "cuda_gpu_trace.csv").write_text(text)
    trace = nsys_csv.read_stats_dir(tmp_path, "demo")["gpu_trace"]
    kernels = trace[trace["kind"] == "kernel"]
    assert set(kernels["name"]) == {"void foo<int, float>(T1 *, int)"}
    assert kernels["duration_ns"].iloc[0] == 11168 and kernels["grid_x"].iloc[0] == 16384


def test_read_gpu_trace_single_file():
    trace = nsys_csv.read_gpu_trace(OVERLAP / "cuda_gpu_trace.csv", "overlap")
    assert len(trace) == 32 and list(trace.columns) == schema.GPU_TRACE.names


# --- corrupt input: a ParseError naming the file and what was expected, nothing else ----------


def corrupt_dir(tmp_path: Path, content: bytes, name: str = "cuda_gpu_trace.csv") -> Path:
    (tmp_path / name).write_bytes(content)
    return tmp_path


def assert_parse_error(exc: pytest.ExceptionInfo[ParseError], path: Path) -> None:
    assert str(path) in str(exc.value)
    assert "expected" in str(exc.value)


@pytest.mark.parametrize("cut", ["mid_row", "in_quotes"])
def test_truncated_trace(tmp_path, cut):
    text = (DEMO / "cuda_gpu_trace.csv").read_text()
    text = text.replace(",addone", ',"void foo<int, float>(T1 *, int)"')
    end = text.index("16384,1,1,256") + 5 if cut == "mid_row" else text.index("void foo<int,") + 8
    folder = corrupt_dir(tmp_path, text[:end].encode())
    with pytest.raises(ParseError) as exc:
        nsys_csv.read_stats_dir(folder, "s")
    assert_parse_error(exc, folder / "cuda_gpu_trace.csv")


@pytest.mark.parametrize(
    "content", [b"\n\n", b"\x00\x01binary\x00" * 50, b"\xff\xfe\xfa not utf-8"]
)
def test_empty_or_binary_report(tmp_path, content):
    folder = corrupt_dir(tmp_path, content, "cuda_gpu_kern_sum.csv")
    with pytest.raises(ParseError) as exc:
        nsys_csv.read_stats_dir(folder, "s")
    assert_parse_error(exc, folder / "cuda_gpu_kern_sum.csv")


def test_report_from_the_wrong_tool(tmp_path):
    ncu = Path(__file__).parent / "data" / "ncu" / "2025.3.1" / "raw-metrics.csv"
    folder = corrupt_dir(tmp_path, ncu.read_bytes())
    with pytest.raises(ParseError) as exc:
        nsys_csv.read_stats_dir(folder, "s")
    assert_parse_error(exc, folder / "cuda_gpu_trace.csv")


def test_wrong_report_under_a_report_name(tmp_path):
    folder = corrupt_dir(
        tmp_path, (DEMO / "cuda_api_sum.csv").read_bytes(), "cuda_gpu_kern_sum.csv"
    )
    with pytest.raises(ParseError, match="cuda_api_sum"):
        nsys_csv.read_stats_dir(folder, "s")


def test_header_that_matches_nothing(tmp_path):
    folder = corrupt_dir(tmp_path, b"alpha,beta,gamma\n1,2,3\n")
    with pytest.raises(ParseError) as exc:
        nsys_csv.read_stats_dir(folder, "s")
    assert_parse_error(exc, folder / "cuda_gpu_trace.csv")


def test_not_a_number(tmp_path):
    text = (DEMO / "cuda_gpu_kern_sum.csv").read_text().replace("33153", "lots")
    folder = corrupt_dir(tmp_path, text.encode(), "cuda_gpu_kern_sum.csv")
    with pytest.raises(ParseError, match="lots"):
        nsys_csv.read_stats_dir(folder, "s")


def test_folder_without_reports(tmp_path):
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ParseError) as exc:
        nsys_csv.read_stats_dir(tmp_path, "s")
    assert_parse_error(exc, tmp_path)


def test_stdout_without_reports(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text(
        "Generating SQLite file /tmp/x.sqlite from /tmp/x.nsys-rep\nSKIPPED: no CUDA data\n"
    )
    with pytest.raises(ParseError) as exc:
        nsys_capture.read_stats_stdout(path, "s")
    assert_parse_error(exc, path)


def test_canonical_report_names():
    assert nsys_csv.canonical_report("overlap_cuda_gpu_kern_sum") == "cuda_gpu_kern_sum"
    assert nsys_csv.canonical_report("nsys_nvtx_sum") == "nvtx_sum"
    assert nsys_csv.canonical_report("nvtx_gpu_proj_sum") == "nvtx_gpu_proj_sum"
    assert nsys_csv.canonical_report("x_gputrace") == "cuda_gpu_trace"
    assert nsys_csv.canonical_report("overlap_nvtx_kern_sum") is None
    assert nsys_csv.canonical_report("osrt_sum") is None


# --- nested/: api trace, range projection trace, memsets, a template name, a second thread ------

NESTED = NSYS / "nested"


def test_nested_tables():
    tables = nsys_csv.read_stats_dir(NESTED, "nested")
    assert set(tables) == {"gpu_trace", "api_trace", "range_trace", "ranges"}
    trace = tables["gpu_trace"]
    memsets = trace[trace["kind"] == "memset"]
    # memsets: bytes and one memory kind (`Device`, no destination) in nsys's fields
    assert len(memsets) == 6 and set(memsets["name"]) == {"[CUDA memset]"}
    assert set(memsets["src_kind"]) == {"device"} and memsets["dst_kind"].isna().all()
    assert memsets["copy_kind"].isna().all() and set(memsets["bytes"]) == {4_194_000}
    assert "void scale<float>(T1 *, T1, int)" in set(trace["name"])
    gemm = trace[trace["grid_z"] == 4].iloc[0]
    assert (gemm["grid_x"], gemm["grid_y"], gemm["block_x"], gemm["registers"]) == (8, 8, 64, 80)
    assert gemm["shared_bytes"] == 7_000  # `DymSMem (MB)` 0.007
    copies = trace[trace["kind"] == "memcpy"]
    assert copies["copy_kind"].value_counts().to_dict() == {"HtoD": 6, "DtoH": 6}


def test_nested_api_trace():
    api = schema.validate(nsys_csv.read_stats_dir(NESTED, "n")["api_trace"], schema.API_TRACE)
    src = rows(NESTED / "nsys_cuda_api_trace.csv")
    assert len(api) == len(src) == 82
    assert list(api["name"]) == [r["Name"] for r in src]
    assert list(api["correlation_id"]) == [int(r["CorrID"]) for r in src]
    assert list(api["thread"]) == [int(r["Tid"]) for r in src]
    assert list(api["end_ns"]) == [int(r["Start (ns)"]) + int(r["Duration (ns)"]) for r in src]


def test_nested_range_trace():
    ranges = schema.validate(
        nsys_csv.read_stats_dir(NESTED, "n")["range_trace"], schema.RANGE_TRACE
    )
    src = rows(NESTED / "nsys_nvtx_gpu_proj_trace.csv")
    assert list(ranges["name"]) == [r["Name"].removeprefix("profgen:") for r in src]
    assert list(ranges["level"]) == [int(r["Lvl"]) for r in src]
    assert list(ranges["start_ns"]) == [int(r["Orig Start (ns)"]) for r in src]
    assert list(ranges["duration_ns"]) == [int(r["Orig Duration (ns)"]) for r in src]
    assert list(ranges["gpu_start_ns"]) == [int(r["Projected Start (ns)"]) for r in src]
    assert list(ranges["gpu_end_ns"]) == [
        int(r["Projected Start (ns)"]) + int(r["Projected Duration (ns)"]) for r in src
    ]
    assert list(ranges["gpu_ops"]) == [int(r["NumGPUOps"]) for r in src]
    assert set(ranges.loc[ranges["name"] == "thread", "thread"]) == {594}


def test_stdout_with_processing_to_lines(tmp_path):
    """`Processing [...] with [...] to [...]... PROCESSED` lines, as nsys writes with --output."""
    parts = []
    for line in (NESTED / "nsys_stats.log").read_text().splitlines():
        parts.append(line)
        if line.startswith("Processing ["):
            report = line.split("/reports/")[1].split(".py]")[0]
            parts.append((NESTED / f"nsys_{report}.csv").read_text())
    path = tmp_path / "stdout.txt"
    path.write_text("\n".join(parts))
    from_stdout = nsys_capture.read_stats_stdout(path, "n")
    from_files = nsys_csv.read_stats_dir(NESTED, "n")
    assert set(from_stdout) == set(from_files)
    for name, df in from_files.items():
        pd.testing.assert_frame_equal(from_stdout[name], df)


def test_zero_byte_reports_are_reports_without_data(tmp_path):
    """nsys stats writes a zero-byte file for a report with no rows ("PROCESSED (EMPTY
    RESULTS)", see torch_cpu-nsys-stats.log: a CPU-only stage): no data, not an error."""
    log = (NSYS / "torch_cpu-nsys-stats.log").read_text()
    assert "nsys_cuda_gpu_trace.csv]... PROCESSED (EMPTY RESULTS)" in log
    folder = tmp_path / "cpu_stage"
    shutil.copytree(NSYS / "lenet-no_sync", folder)
    for report in ("gpu_trace", "gpu_kern_sum", "gpu_mem_time_sum", "gpu_mem_size_sum"):
        (folder / f"nsys_cuda_{report}.csv").write_bytes(b"")
    tables = nsys_csv.read_stats_dir(folder, "cpu_stage")
    assert "gpu_trace" not in tables and "gpu_activities" not in tables
    assert len(tables["api_trace"]) == len(rows(folder / "nsys_cuda_api_trace.csv"))


# --- hostile input: refused at once, by line and column, in linear time ----------------------


def test_fifo_or_directory_is_refused_without_blocking(tmp_path):
    import os

    from test_parse_values import deadline

    fifo = tmp_path / "cuda_gpu_trace.csv"
    os.mkfifo(fifo)
    with deadline(10):
        with pytest.raises(ParseError, match="not a regular file") as exc:
            nsys_csv.read_gpu_trace(fifo, "s")
        assert str(fifo) in str(exc.value)
        with pytest.raises(ParseError, match="not a regular file"):
            nsys_capture.read_stats_stdout(fifo, "s")
        with pytest.raises(ParseError, match="directory"):
            nsys_capture.read_stats_stdout(tmp_path, "s")
        # in a folder, a FIFO named like a report is no report file: never opened
        assert nsys_csv.report_files(tmp_path) == {}


def test_symlink_in_a_folder_is_not_read(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$secret:19000:0:99999:7:::\n")
    folder = tmp_path / "stage"
    shutil.copytree(DEMO, folder)
    (folder / "x_cuda_api_trace.csv").symlink_to(secret)
    assert "cuda_api_trace" not in nsys_csv.report_files(folder)
    tables = nsys_csv.read_stats_dir(folder, "s")  # the link would not parse: it was skipped
    assert "api_trace" not in tables and "api_calls" in tables


def test_two_files_for_one_report_are_refused(tmp_path):
    shutil.copy(DEMO / "cuda_gpu_kern_sum.csv", tmp_path / "a_cuda_gpu_kern_sum.csv")
    shutil.copy(OVERLAP / "cuda_gpu_kern_sum.csv", tmp_path / "b_cuda_gpu_kern_sum.csv")
    with pytest.raises(ParseError, match="a_cuda_gpu_kern_sum.csv and b_cuda_gpu_kern_sum.csv"):
        nsys_csv.read_stats_dir(tmp_path, "s")


KERN = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"


@pytest.mark.parametrize(
    "column, cell, message",
    [
        ("Instances", "1.2.3", "'1.2.3' is not a number"),
        ("Instances", "-3", "is negative"),
        ("Instances", "1" * 30, "out of range"),
        ("Instances", "2.5", "not a whole number"),
        ("Instances", "nan", "'nan' is not a number"),
        ("Total Time (ns)", "inf", "not a finite number"),
        ("Total Time (ns)", "1e300", "out of range"),
        ("Total Time (ns)", str(2**63), "out of range"),
        ("Total Time (ns)", str(2**63 - 1), "out of range"),
        ("Total Time (ns)", str(2**64), "out of range"),
        ("Total Time (ns)", "-33153", "is negative"),
        ("Avg (ns)", "inf", "not a finite number"),
        ("Min (ns)", "...%", "is not a number"),
        ("Time (%)", "inf", "not a finite number"),
    ],
)
def test_bad_number_in_a_summary(tmp_path, column, cell, message):
    header = KERN.strip().split(",")
    good = "54.0,33696,8,4212.0,4224.0,3840,4704,289.7,scale".split(",")
    bad = "46.0,28706,8,3588.3,3584.0,3553,3616,20.2,relu".split(",")
    bad[header.index(column)] = cell
    path = tmp_path / "cuda_gpu_kern_sum.csv"
    path.write_text(KERN + ",".join(good) + "\n" + ",".join(bad) + "\n")
    with pytest.raises(ParseError) as exc:
        nsys_csv.read_stats_dir(tmp_path, "s")
    assert f"{path}: expected nsys cuda_gpu_kern_sum CSV (line 3, column {column!r}: " in str(
        exc.value
    )
    assert message in str(exc.value)


@pytest.mark.parametrize(
    "column, cell, message",
    [
        ("Duration (ns)", "-5", "is negative"),
        ("Duration (ns)", "inf", "not a finite number"),
        ("Duration (ns)", "nan", "'nan' is not a number"),
        ("Duration (ns)", str(2**63), "out of range"),
        ("Start (ns)", str(2**64 + 5), "out of range"),
        ("GrdX", "1e300", "out of range"),
        ("GrdX", "inf", "not a finite number"),
        ("GrdX", "1.5", "not a whole number"),
        ("Bytes (MB)", "-16.777", "is negative"),
        ("Strm", "nan", "'nan' is not a number"),
    ],
)
def test_bad_number_in_a_trace(tmp_path, column, cell, message):
    """Both readers: the fast one (dtypes in pandas' C reader) and the string one it falls back
    to; either way the cell is named."""
    lines = (DEMO / "cuda_gpu_trace.csv").read_text().splitlines()
    header = next(csv.reader([lines[0]]))
    row = next(csv.reader([lines[2]]))  # a kernel: it has a grid
    if column == "Bytes (MB)":
        row = next(csv.reader([lines[1]]))  # a copy: it has bytes
    row[header.index(column)] = cell
    lines[3] = ",".join(f'"{c}"' if "," in c else c for c in row)
    path = tmp_path / "cuda_gpu_trace.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError) as exc:
        nsys_csv.read_gpu_trace(path, "s")
    assert f"(line 4, column {column!r}: " in str(exc.value) and message in str(exc.value)


def test_durations_that_overflow_when_added_up(tmp_path):
    lines = (DEMO / "cuda_gpu_trace.csv").read_text().splitlines()
    header = lines[0].split(",")
    i = header.index("Duration (ns)")
    out = [lines[0]]
    for line in lines[1:]:
        cells = next(csv.reader([line]))
        cells[i] = str(2**61)
        out.append(",".join(f'"{c}"' if "," in c else c for c in cells))
    path = tmp_path / "cuda_gpu_trace.csv"
    path.write_text("\n".join(out) + "\n")
    with pytest.raises(ParseError, match="column 'Duration \\(ns\\)': the values add up"):
        nsys_csv.read_gpu_trace(path, "s")


@pytest.mark.parametrize(
    "header, message",
    [
        (KERN.replace("StdDev (ns),Name", "Name,Name"), "column 'Name' appears twice"),
        (KERN.replace("Med (ns)", "Count"), "columns 'Instances' and 'Count' both give"),
    ],
)
def test_repeated_column_is_refused(tmp_path, header, message):
    path = tmp_path / "cuda_gpu_kern_sum.csv"
    path.write_text(header + "54.0,33696,8,4212.0,4224.0,3840,4704,scale,scale\n")
    with pytest.raises(ParseError, match=message):
        nsys_csv.read_stats_dir(tmp_path, "s")


def test_row_with_more_cells_than_the_header_does_not_shift_columns(tmp_path):
    """pandas would take the extra first cell as an index and shift every column left."""
    path = tmp_path / "cuda_gpu_kern_sum.csv"
    path.write_text(KERN + "99,54.0,33696,8,4212.0,4224.0,3840,4704,289.7,scale\n")
    with pytest.raises(ParseError, match="more cells than the header"):
        nsys_csv.read_stats_dir(tmp_path, "s")


def test_summary_cut_mid_row_or_after_whole_rows(tmp_path):
    text = (OVERLAP / "cuda_api_sum.csv").read_text()
    lines = text.splitlines()
    path = tmp_path / "cuda_api_sum.csv"
    path.write_text("\n".join(lines[:4]) + "\n" + lines[4][: lines[4].index(",", 10)])
    with pytest.raises(ParseError, match="line 5: the last row has fewer than the header's 9"):
        nsys_csv.read_stats_dir(tmp_path, "s")
    path.write_text("\n".join(lines[:3]) + "\n")  # the biggest rows only: shares short of 100
    with pytest.warns(
        reader_notes.TrimmedTable, match="cuda_api_sum rows at line 2 cover .*% of its"
    ):
        assert len(nsys_csv.read_stats_dir(tmp_path, "s")["api_calls"]) == 2


def test_header_only_reports_give_no_tables(tmp_path):
    (tmp_path / "cuda_gpu_kern_sum.csv").write_text(KERN)
    shutil.copy(DEMO / "cuda_api_sum.csv", tmp_path / "cuda_api_sum.csv")
    assert set(nsys_csv.read_stats_dir(tmp_path, "s")) == {"api_calls"}
    only = tmp_path / "only.csv"
    only.write_text(KERN + "\n" * 1000)
    with pytest.raises(ParseError, match="header but no rows"):
        nsys_capture.read_stats_stdout(only, "s")


def test_long_kernel_name_is_capped(tmp_path):
    from profiler.parse.bounded_names import MAX_NAME

    text = (OVERLAP / "cuda_gpu_trace.csv").read_text()
    huge, other = "k" * 3_000_000 + "_a", "k" * 3_000_000 + "_b"
    path = tmp_path / "cuda_gpu_trace.csv"
    path.write_text(text.replace(",scale\n", f",{huge}\n", 1).replace(",relu\n", f",{other}\n", 1))
    trace = nsys_csv.read_gpu_trace(path, "s")
    long = trace[trace["name"].str.startswith("kkk")]["name"]
    assert len(long) == 2 and long.nunique() == 2
    assert long.str.len().max() < MAX_NAME + 80 and long.str.contains("3,000,002 characters").all()


def test_stdout_with_long_blank_and_space_runs_is_linear(tmp_path):
    """Runs that took the old patterns minutes (`^\\s*\\*\\*` over newlines, `.*?\\s*\\(` in a
    header cell, a lazy name before trailing spaces) parse in milliseconds."""
    from test_parse_values import deadline

    text = (DEMO / "nsys-stats-stdout.txt").read_text()
    path = tmp_path / "stdout.txt"
    path.write_text(text + "\n" * 300_000 + " " * 300_000 + "\n" + "** " + " " * 300_000 + "x\n")
    with deadline(20):
        tables = nsys_capture.read_stats_stdout(path, "demo")
    assert len(tables["gpu_trace"]) == 5
    wide = tmp_path / "cuda_gpu_kern_sum.csv"
    wide.write_text(KERN.replace("Total Time (ns)", "Total Time" + " " * 200_000 + "x"))
    with deadline(20), pytest.raises(ParseError):
        nsys_csv.read_stats_dir(tmp_path, "s")


def test_stdout_line_numbers_count_dropped_and_blank_lines(tmp_path):
    text = (DEMO / "nsys-stats-stdout.txt").read_text()
    text = text.replace("127401475,1,127401475.0", "127401475,x,127401475.0")
    path = tmp_path / "stdout.txt"
    path.write_text(text)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ",x," in ln)
    with pytest.raises(ParseError, match=f"line {line}, column 'Num Calls': 'x' is not a number"):
        nsys_capture.read_stats_stdout(path, "s")


def test_stdout_that_starts_with_no_nsys_line_is_refused_early(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("x\n" * 100_000 + (DEMO / "nsys-stats-stdout.txt").read_text())
    with pytest.raises(ParseError, match="its start has no nsys report header"):
        nsys_capture.read_stats_stdout(path, "s")


# --- the default column text of `nsys stats` / `nsys profile --stats=true`, 2019.x-2023.x -------
# Real captures copied from public repositories (tests/data/nsys/README.md says where from).
# Expected values come from the files themselves through `text_rows`, which cuts rows at runs
# of two or more blanks (not at the columns of the rule, as the parser does).

DATA = NSYS.parent


def text_rows(path: Path, after: str, nth: int = 1) -> list[list[str]]:
    """The rows of the `nth` column-text table below the first line holding `after`."""
    lines = path.read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if after in ln)
    for _ in range(nth):
        at = next(i for i in range(at + 1, len(lines)) if nsys_rule.is_rule(lines[i]))
    out = []
    for line in lines[at + 1 :]:
        if not line.strip():
            break
        out.append(re.split(r"\s{2,}", line.strip()))
    return out


def num(cell: str) -> float:
    return float(cell.replace(",", ""))


def reports(path: Path) -> dict[str, pd.DataFrame]:
    return {name: frame for name, (frame, _) in nsys_capture.read_stdout_reports(path).items()}


def assert_summary(frame: pd.DataFrame, rows: list[list[str]], size: float = 1.0) -> None:
    """A summary's fields equal the oracle's rows: name last, total first after Time (%)."""
    assert list(frame["name"]) == [r[-1] for r in rows]
    assert list(frame["total"]) == [round(num(r[1]) * size) for r in rows]
    assert list(frame["calls"]) == [int(num(r[2])) for r in rows]


def test_2019_5_2_statistics_headings_in_nanoseconds_and_kib():
    """nsys 2019.5.2 `--stats=true`: `Generating CUDA API Statistics...` then a heading `CUDA
    API Statistics (nanoseconds)`, headers without units (`Total Time`, `Calls`), memory
    operations named `Name`, sizes in a table headed `(KiB)`; the OS runtime table, whose
    header passes for an API summary, is left out."""
    path = DATA / "2019.5.2" / "conv-kernel-stats.md"
    got = reports(path)
    assert set(got) == {
        "cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
    }  # fmt: skip
    api = text_rows(path, "CUDA API Statistics (nanoseconds)")
    assert_summary(got["cuda_api_sum"], api)
    assert list(got["cuda_api_sum"]["max"]) == [int(r[5]) for r in api]
    assert list(got["cuda_api_sum"]["avg"]) == [float(r[3]) for r in api]
    kern = text_rows(path, "CUDA Kernel Statistics (nanoseconds)")
    assert_summary(got["cuda_gpu_kern_sum"], kern)
    assert got["cuda_gpu_kern_sum"]["name"].iloc[0] == "conv_forward_kernel"
    assert_summary(got["cuda_gpu_mem_time_sum"], text_rows(path, "Statistics (nanoseconds)", 3))
    size = text_rows(path, "CUDA Memory Operation Statistics (KiB)")
    assert list(got["cuda_gpu_mem_size_sum"]["total"]) == [round(num(r[0]) * 1024) for r in size]
    tables = nsys_capture.read_stats_stdout(path, "s")
    assert "sem_timedwait" not in set(tables["api_calls"]["name"])
    act = tables["gpu_activities"].set_index("name")
    assert act.loc["[CUDA memcpy DtoH]", "bytes"] == 1_723_922 * 1024


def test_2020_4_3_headings_and_gpu_trace_text_with_blank_cells():
    """nsys 2020.4.3 (a terminal capture with prompts): headings `CUDA Kernel Statistics:`,
    `CUDA Memory Operation Statistics (by time):` / `(by size in KiB):`, then `nsys stats
    --report gputrace` as text: `Start(sec)`, `Duration(nsec)`, blank grid cells for copies."""
    path = DATA / "2020.4.3" / "omp-offload-stats.txt"
    got = reports(path)
    assert_summary(got["cuda_api_sum"], text_rows(path, "CUDA API Statistics:"))
    assert_summary(got["cuda_gpu_kern_sum"], text_rows(path, "CUDA Kernel Statistics:"))
    assert_summary(got["cuda_gpu_mem_time_sum"], text_rows(path, "(by time):"))
    size = text_rows(path, "(by size in KiB):")
    assert list(got["cuda_gpu_mem_size_sum"]["total"]) == [round(num(r[0]) * 1024) for r in size]
    trace = nsys_capture.read_stats_stdout(path, "s")["gpu_trace"]
    rows = text_rows(path, "gputrace.py report1.sqlite")
    assert len(trace) == len(rows) == 9
    assert list(trace["start_ns"]) == [round(float(r[0]) * 1e9) for r in rows]
    assert list(trace["duration_ns"]) == [int(num(r[1])) for r in rows]
    assert list(trace["correlation_id"]) == [int(r[2]) for r in rows]
    kernel = trace[trace["kind"] == "kernel"].iloc[0]
    line = next(r for r in rows if r[-1].startswith("__omp"))  # 1 1 1 33 1 1 36 1,134 0
    assert kernel["name"] == line[-1] == "__omp_offloading_30_736b0b47_main_l20"
    grid = [kernel[c] for c in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")]
    assert grid == [int(c) for c in line[3:9]] == [1, 1, 1, 33, 1, 1]
    assert (kernel["registers"], kernel["shared_bytes"]) == (36, 1134)
    copies = trace[trace["kind"] == "memcpy"]
    assert copies["grid_x"].isna().all() and copies["registers"].isna().all()
    assert list(copies["bytes"]) == [int(num(r[3])) for r in rows if r[-1].startswith("[CUDA")]
    assert list(copies["copy_kind"])[:2] == ["DtoH", "HtoD"]
    assert set(copies["src_kind"]) == {"device", "pageable"} and set(trace["stream"]) == {7, 13}


def test_2022_executing_markers_headings_and_progress_bars():
    """nsys 2022.x `--stats=true`: `[5/8] Executing 'cudaapisum' stats report` and a heading
    `CUDA API Statistics:` under it; progress bars rewritten with carriage returns; sizes in
    `Total (MB)`; `'osrtsum'` skipped."""
    path = DATA / "2022.x" / "array_inc_a.output"
    assert path.read_bytes().count(b"\r") == 108  # the progress bars, as captured
    got = reports(path)
    assert_summary(got["cuda_api_sum"], text_rows(path, "CUDA API Statistics:"))
    assert_summary(got["cuda_gpu_kern_sum"], text_rows(path, "CUDA Kernel Statistics:"))
    assert_summary(got["cuda_gpu_mem_time_sum"], text_rows(path, "(by time):"))
    assert list(got["cuda_gpu_mem_size_sum"]["total"]) == [134_218_000, 134_218_000]
    tables = nsys_capture.read_stats_stdout(path, "s")
    assert list(tables["api_calls"]["name"])[:2] == ["cudaMemcpy", "cudaMalloc"]
    kernel = tables["gpu_activities"].set_index("name").loc["inc(int *, unsigned long)"]
    assert (kernel["total_ns"], kernel["calls"], kernel["min_ns"]) == (883_936, 1, 883_936)


def test_2023_stats_capture_with_shell_prompt_and_notes():
    """A README that is a terminal capture of `nsys profile --stats=true` (2023.x, `[3/8]
    Executing 'nvtx_sum'`), the prompt and the author's notes around it."""
    path = DATA / "2023.x" / "vector-add-stats-head.md"
    got = reports(path)
    assert set(got) == {
        "nvtx_sum", "cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum",
        "cuda_gpu_mem_size_sum",
    }  # fmt: skip
    nvtx = text_rows(path, "Executing 'nvtx_sum'")
    assert list(got["nvtx_sum"]["name"]) == ["Profile_Loop", "Warmup"] == [r[-1] for r in nvtx]
    assert list(got["nvtx_sum"]["total"]) == [int(num(r[1])) for r in nvtx]
    assert_summary(got["cuda_api_sum"], text_rows(path, "Executing 'cuda_api_sum'"))
    assert list(got["cuda_api_sum"]["min"]) == [4697, 0, 2925, 6098, 0, 2512]
    assert_summary(got["cuda_gpu_kern_sum"], text_rows(path, "Executing 'cuda_gpu_kern_sum'"))
    ranges = nsys_capture.read_stats_stdout(path, "s")["ranges"]
    assert list(ranges["total_ns"]) == [3_481_709, 182_472]


def test_blank_lines_a_paste_put_under_headers_and_between_rows_are_closed_up():
    """A 2020-era capture copied from a terminal that wrapped its full-width lines: a blank line
    between the CUDA API header and its rule, memory-operation rows double-spaced. The tables
    are read whole (they were passed over: no API calls, the HtoD copies lost)."""
    path = DATA / "2020.x" / "meanpaper-m2-blank-lines-in-tables.txt"
    tables = nsys_capture.read_stats_stdout(path, "s")
    api = tables["api_calls"].set_index("name")
    assert list(api.index) == [
        "cudaMemcpy", "cudaMalloc", "cudaDeviceSynchronize", "cudaLaunchKernel", "cudaFree"
    ]  # fmt: skip
    assert api.loc["cudaMemcpy", "total_ns"] == 1_031_016_980
    assert api.loc["cudaFree", "min_ns"] == 73_420
    copies = tables["gpu_activities"].set_index("copy_kind")
    htod = copies.loc["HtoD"]
    assert (htod["total_ns"], htod["calls"], htod["max_ns"]) == (74_104_646, 6, 38_715_717)
    assert copies.loc["HtoD", "bytes"] == 538_919 * 1024
    assert copies.loc["DtoH", "total_ns"] == 951_550_648


def test_step_counter_padded_for_ten_reports_or_more_names_the_tables():
    """With eleven reports nsys pads its step counter (`[ 4/11] Executing 'osrt_sum' stats
    report`): the OS runtime table under it is skipped and the CUDA API summary read, not
    poll/ioctl taken for CUDA calls and the real cuda_api_sum left out as a second table."""
    path = DATA / "2023.x" / "seungjae-arrinc-a-padded-steps.txt"
    tables = nsys_capture.read_stats_stdout(path, "s")
    api = tables["api_calls"].set_index("name")
    assert list(api.index) == [
        "cudaMalloc", "cudaLaunchKernel", "cudaMemcpy", "cuModuleGetLoadingMode"
    ]  # fmt: skip
    assert api.loc["cudaMalloc", "total_ns"] == 73_029_223
    assert (api.loc["cudaMemcpy", "calls"], api.loc["cudaMemcpy", "max_ns"]) == (2, 16_205_718)
    gpu = tables["gpu_activities"].set_index("name")
    assert gpu.loc["inc(int *, unsigned long)", "total_ns"] == 353_377
    assert list(gpu.loc[gpu["kind"] == schema.MEMCPY, "total_ns"]) == [16_006_192, 15_650_063]


def test_2023_2_3_nvtx_gpu_projection_with_none_cells():
    """`nsys stats --report nvtx_gpu_proj_trace` as text under a `Processing [...]` line and a
    ` ** NVTX GPU Projection Trace (nvtx_gpu_proj_trace):` banner: `None` is no value, and the
    row of GPU work outside every range (`None` start and duration) is left out."""
    path = DATA / "2023.2.3" / "derivative-nvtx-gpu-proj-trace.txt"
    rows = text_rows(path, "NVTX GPU Projection Trace")
    assert rows[0][0] == "None" and rows[0][3:5] == ["None", "None"]
    ranges = nsys_capture.read_stats_stdout(path, "s")["range_trace"]
    kept = rows[1:]
    assert len(ranges) == len(kept) == 9
    by_start = sorted(kept, key=lambda r: num(r[3]))
    assert list(ranges["name"]) == [r[0] for r in by_start]
    assert list(ranges["start_ns"]) == [int(num(r[3])) for r in by_start]
    assert list(ranges["duration_ns"]) == [int(num(r[4])) for r in by_start]
    assert list(ranges["gpu_start_ns"]) == [int(num(r[1])) for r in by_start]
    assert list(ranges["gpu_end_ns"]) == [int(num(r[1])) + int(num(r[2])) for r in by_start]
    assert set(ranges["thread"]) == {101_690} and set(ranges["gpu_ops"]) == {1}
    assert set(ranges["level"]) == {0}


def test_2023_2_3_stats_capture_matches_its_projection():
    path = DATA / "2023.2.3" / "derivative-stats.txt"
    tables = nsys_capture.read_stats_stdout(path, "s")
    assert set(tables) == {"gpu_activities", "api_calls", "ranges"}
    kern = text_rows(path, "Executing 'cuda_gpu_kern_sum'")
    act = tables["gpu_activities"]
    kernels = act[act["kind"] == "kernel"].set_index("name")
    assert {n: kernels.loc[n, "total_ns"] for n in kernels.index} == {
        r[-1]: int(num(r[1])) for r in kern
    }
    ranges = tables["ranges"].set_index("name")
    trace = nsys_capture.read_stats_stdout(
        DATA / "2023.2.3" / "derivative-nvtx-gpu-proj-trace.txt", "s"
    )["range_trace"]
    for _, r in trace.iterrows():  # the two captures of one run agree
        assert ranges.loc[r["name"], "total_ns"] == r["duration_ns"]


def ptbr_rows(path: Path, report: str) -> list[list[str]]:
    """The cells of `report`'s table in an nsys column-text capture, cut at its rule's dash
    runs, read here without the parser."""
    lines = path.read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if f"'{report}'" in ln) + 3  # the rule
    edges = [m.span() for m in re.finditer(r"-+", lines[at])]
    starts = [a for a, _ in edges] + [None]
    out = []
    for line in lines[at + 1 :]:
        if not line.strip():
            return out
        out.append([line[a:b].strip() for a, b in zip(starts, starts[1:], strict=False)])
    return out


def comma_int(cell: str) -> int:
    return int(cell.replace(".", ""))  # `33.916.556.517`


def comma_float(cell: str) -> float:
    return float(cell.replace(".", "").replace(",", "."))  # `770.760,0`


PTBR = DATA / "2023.x" / "adi-gpu-profile-allgpu-ptbr.txt"


def test_decimal_comma_numbers_are_read_to_the_ns():
    """A capture printed in a pt_BR locale (`81,0`, `33.916.556.517`, `770.760,0`): every row
    of its API and kernel tables as the file shows it, counts and ns exact, said by a note
    per table; the `SKIPPED:` line and the shell prompts before it are no error."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tables = nsys_capture.read_stats_stdout(PTBR, "s")
    notes = [str(w.message) for w in caught if isinstance(w.message, reader_notes.ReadNote)]
    said = "line 26: the cuda_api_sum table's numbers are read with a decimal comma ('81,0')"
    assert len(notes) == 4 and said in notes[0]
    want = {
        "api_calls": ptbr_rows(PTBR, "cuda_api_sum"),
        "gpu_activities": ptbr_rows(PTBR, "cuda_gpu_kern_sum"),
    }
    assert [len(r) for r in want.values()] == [6, 3]
    for table, rows_ in want.items():
        got = tables[table].set_index("name")
        for _, total, calls, avg, _, least, most, _, name in rows_:
            row = got.loc[name]
            assert (row["total_ns"], row["calls"]) == (comma_int(total), comma_int(calls))
            assert (row["min_ns"], row["max_ns"]) == (comma_int(least), comma_int(most))
            assert row["avg_ns"] == comma_float(avg)
    api = tables["api_calls"].set_index("name")
    assert api.loc["cudaDeviceSynchronize", "total_ns"] == 33_916_556_517
    assert api.loc["cudaDeviceSynchronize", "avg_ns"] == 770_760.0
    copies = tables["gpu_activities"].set_index("name")
    assert copies.loc["[CUDA memcpy DtoH]", "bytes"] == 51_859_821_000  # `51859,821` MB
    assert copies.loc["[CUDA memcpy HtoD]", "calls"] == 5


def test_decimal_comma_table_that_does_not_decide_is_refused_with_the_hint(tmp_path):
    """A synthetic cut: the pt_BR capture's cuda_gpu_mem_size_sum table with its one row
    edited so that no cell tells a decimal comma (`2.002` could be 2002 or 2.002, `32,032`
    32032 or 32.032): refused at the count, saying to print with LC_ALL=C."""
    lines = PTBR.read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if "'cuda_gpu_mem_size_sum'" in ln)
    cells = "64,128      2.002  32,032    32,032    32,032    32,032    1,250"
    row = f" {cells}        [CUDA memcpy DtoH]"
    path = tmp_path / "undecided.txt"
    path.write_text("\n".join([*lines[at : at + 4], row]) + "\n")
    with pytest.raises(ParseError) as exc:
        nsys_capture.read_stats_stdout(path, "s")
    message = str(exc.value)
    assert "line 5, column 'Count': '2.002' is not a whole number" in message
    assert "no cell tells which: print the numbers with LC_ALL=C" in message


def test_text_table_with_a_cell_outside_its_column(tmp_path):
    text = (DATA / "2022.x" / "array_inc_a.output").read_text()
    bad = text.replace("  883,936.0  883,936.0", " 883,936.0X 883,936.0", 1)
    path = tmp_path / "out.txt"
    path.write_text(bad)
    line = next(i for i, ln in enumerate(bad.splitlines(), 1) if "936.0X" in ln)
    with pytest.raises(ParseError, match=f"line {line}: a cell runs outside its column"):
        nsys_capture.read_stats_stdout(path, "s")


def test_text_table_bad_number_names_line_and_column(tmp_path):
    text = (DATA / "2019.5.2" / "conv-kernel-stats.md").read_text()
    bad = text.replace(" 104424277", "-104424277", 1)
    path = tmp_path / "out.md"
    path.write_text(bad)
    line = next(i for i, ln in enumerate(bad.splitlines(), 1) if "-104424277" in ln)
    with pytest.raises(ParseError, match=f"line {line}, column 'Total Time': .* is negative"):
        nsys_capture.read_stats_stdout(path, "s")


def test_non_ascii_text_before_the_last_column(tmp_path):
    """A device name with non-ASCII text (before the last column) sends the rows through the
    Python cutter: the same values as numpy's."""
    src = DATA / "2020.4.3" / "omp-offload-stats.txt"
    plain = nsys_capture.read_stats_stdout(src, "s")["gpu_trace"]
    text = src.read_text().replace("A100-PCIE-40GB (0)", "A100-PCIE-40Gé (0)")
    path = tmp_path / "out.txt"
    path.write_text(text)
    accented = nsys_capture.read_stats_stdout(path, "s")["gpu_trace"]
    pd.testing.assert_frame_equal(plain, accented)


def test_csv_report_file_with_processing_lines_above_its_header(tmp_path):
    """`nsys stats --format csv --report cuda_gpu_kern_sum x.nsys-rep > kern.csv`: the file
    starts with nsys's `Generating SQLite file` and `Processing [...]` lines."""
    stdout = (DEMO / "nsys-stats-stdout.txt").read_text()
    (tmp_path / "cuda_gpu_kern_sum.csv").write_text(stdout)
    (tmp_path / "cuda_api_sum.csv").write_text(stdout)
    tables = nsys_csv.read_stats_dir(tmp_path, "demo")
    plain = nsys_csv.read_stats_dir(DEMO, "demo")
    pd.testing.assert_frame_equal(tables["api_calls"], plain["api_calls"])
    act = tables["gpu_activities"]
    assert list(act["name"]) == ["addone"] and list(act["total_ns"]) == [33153]


def test_hostile_text_tables_stay_linear(tmp_path):
    """A rule of 100,000 columns or with a 100,000-blank gap is no table (the cutter's work is
    per column and per blank between columns); a 3 MB kernel name is capped; a row of 100,000
    blanks and a letter inside a table is an empty row, refused by line."""
    from test_parse_values import deadline

    from profiler.parse.bounded_names import MAX_NAME

    src = DATA / "2022.x" / "array_inc_a.output"
    text = src.read_text()
    many = "Time (%)  Total Time (ns)  Instances\n" + "- " * 100_000 + "\n" + "1 " * 100_000
    wide = " Time (%)\n --------" + " " * 100_000 + "----\n  100.0\n"
    for i, junk in enumerate((many, wide)):
        path = tmp_path / f"junk{i}.txt"
        path.write_text(text + "\n" + junk + "\n")
        with deadline(20):
            assert len(nsys_capture.read_stats_stdout(path, "s")["api_calls"]) == 4
    name = "k" * 3_000_000
    path = tmp_path / "name.txt"
    path.write_text(text.replace("inc(int *, unsigned long)", name))
    with deadline(20):
        act = nsys_capture.read_stats_stdout(path, "s")["gpu_activities"]
    long = act[act["name"].str.startswith("kkk")]["name"].iloc[0]
    assert len(long) < MAX_NAME + 80 and "3,000,000 characters" in long
    row = "\n    100.0          883,936"
    bad = text.replace(row, "\n" + " " * 100_000 + "x" + row)
    path.write_text(bad)
    line = next(i for i, ln in enumerate(bad.splitlines(), 1) if ln.endswith(" x"))
    with deadline(20), pytest.raises(ParseError, match=f"line {line}, column .*empty"):
        nsys_capture.read_stats_stdout(path, "s")


def test_none_cells_in_csv_reports(tmp_path):
    """`None` is nsys's "no value" in CSV too (as 2023.x writes nvtx_gpu_proj_trace): the row of
    GPU work outside every range (`None` name, start and duration) is left out, a `None` level
    or parent is missing; a summary's `None` minimum is refused by line (profgen's summaries
    need it)."""
    src = NESTED / "nsys_nvtx_gpu_proj_trace.csv"
    lines = src.read_text().splitlines()
    header = next(csv.reader([lines[0]]))
    first = next(csv.reader([lines[1]]))
    first[header.index("Lvl")] = "None"
    unranged = ["None", "16846708", "100", "None", "None", "None", "556", "556", "1"]
    unranged += ["None", "0", "None", "None", "None"]
    folder = tmp_path / "stage"
    shutil.copytree(NESTED, folder)
    body = [lines[0], ",".join(unranged), ",".join(first), *lines[2:]]
    (folder / "nsys_nvtx_gpu_proj_trace.csv").write_text("\n".join(body) + "\n")
    got = nsys_csv.read_stats_dir(folder, "n")["range_trace"]
    plain = nsys_csv.read_stats_dir(NESTED, "n")["range_trace"]
    pd.testing.assert_frame_equal(got, plain)  # Lvl None -> 0, as an empty level is
    api = (folder / "nsys_cuda_api_sum.csv").read_text().splitlines()
    cells = next(csv.reader([api[1]]))
    cells[next(csv.reader([api[0]])).index("Min (ns)")] = "None"
    (folder / "nsys_cuda_api_sum.csv").write_text("\n".join([api[0], ",".join(cells), *api[2:]]))
    (folder / "nsys_cuda_api_trace.csv").unlink()
    with pytest.raises(ParseError, match="line 2, column 'Min \\(ns\\)': the cell is empty"):
        nsys_csv.read_stats_dir(folder, "n")


def test_header_pasted_flush_left_of_its_rule_keeps_its_cells():
    # a paste that lost the header's leading blank (tests/data/nsys/2023.x/fmha-...)
    rule = " --------  ---------------  ---------"
    for header in ("Time (%)  Total Time (ns)  Instances", " Time (%)  Total Time (ns)  Instances"):
        cells = nsys_rule.header_cells(header, nsys_rule.spans(rule))
        assert cells == ["Time (%)", "Total Time (ns)", "Instances"]


def test_code_fence_right_under_the_last_row_ends_the_table():
    """A Markdown code fence on the line after a table's last row ends the table (mojo-gpu-puzzles'
    B200 output, nsys 2026.2.1): before, the fence was read as one more row and refused."""
    path = Path(__file__).parent / "data" / "nsys" / "2026.2.1" / "mojo-matmul-stats-fenced.md"
    tables = nsys_capture.read_stats_stdout(path, "s")
    api = tables["api_calls"].set_index("name")
    assert list(api.index) == [
        "cuMemAllocHost_v2",
        "cuStreamCreate",
        "cuModuleLoadDataEx",
        "cuLaunchKernelEx",
    ]
    assert api.loc["cuMemAllocHost_v2", "total_ns"] == 402_987_325
    gpu = tables["gpu_activities"].set_index("name")
    assert len(gpu) == 4
    kernel = gpu.loc["p16_naive_matmul_SIMD_DType6A6AcB6A6AcB6A6A_91c578bced6e1d94"]
    assert (kernel["kind"], kernel["total_ns"], kernel["calls"]) == (schema.KERNEL, 2_176, 1)
    memset = gpu[gpu["kind"] == schema.MEMSET].iloc[0]
    assert (memset["total_ns"], memset["calls"], memset["max_ns"]) == (6_688, 4, 2_240)
    d2h = gpu[gpu["copy_kind"] == "DtoH"].iloc[0]
    assert (d2h["total_ns"], d2h["calls"], d2h["min_ns"]) == (12_768, 3, 3_808)


def test_a_summary_pasted_without_its_min_and_max_columns_is_refused_naming_them():
    """Eppie/learn-cuda's README pastes `cuda_api_sum` cut after its `Med (ns)` column (no Min,
    Max, StdDev): refused naming the columns, not a crash building the table without them."""
    path = DATA.parent / "ncu" / "2024.x" / "eppie-learn-cuda-readme-edited-kernel-lines.md"
    missing = r"cuda_api_sum report \(line [0-9]+: no column for min, max, which nsys prints"
    with pytest.raises(ParseError, match=missing):
        nsys_capture.read_stats_stdout(path, "s")
