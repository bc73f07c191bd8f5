"""nvprof log parsing, on real nvprof output from public repositories (tests/data/nvprof/README.md).

Expected numbers are the files' own values converted by hand (e.g. `188.08ms` is 188,080,000 ns;
nvprof's `39.062500` KB is 40,000 bytes since nvprof's KB is 1024 bytes).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from profiler import schema
from profiler.analyze import activities
from profiler.errors import ParseError
from profiler.parse import nvprof

NVPROF = Path(__file__).parent / "data" / "nvprof"
TEXT9 = NVPROF / "9.x" / "cuda-stream-summary.txt"
TEXT8 = NVPROF / "8.x" / "affine-summary.txt"
CSV_SUMMARY = NVPROF / "9.x" / "cfd-csv-summary.csv"
CSV_GPU_SUMMARY = NVPROF / "9.x" / "cfd-csv-gpu-summary.csv"
TRACE9 = NVPROF / "9.x" / "cfd-csv-gpu-trace-head.csv"
TRACE8 = NVPROF / "8.x" / "contention-gpu-trace.csv"
TEXT_TRACE = NVPROF / "9.x" / "cuda-stream-text-gpu-trace-head.txt"


def test_text_summary_with_type_column():
    tables = nvprof.read_log(TEXT9, "stream")
    gpu = schema.validate(tables["gpu_activities"], schema.GPU_ACTIVITIES)
    assert len(gpu) == 7
    first = gpu.iloc[0]
    assert (first["name"], first["kind"], first["copy_kind"]) == (
        "[CUDA memcpy DtoH]",
        "memcpy",
        "DtoH",
    )
    assert (first["total_ns"], first["calls"], first["min_ns"], first["max_ns"]) == (
        188_080_000,
        103,
        928,
        62_822_000,
    )
    assert first["avg_ns"] == pytest.approx(1_826_000)
    assert first["time_pct"] == pytest.approx(20.21)
    assert gpu["kind"].tolist().count("kernel") == 6
    assert "void dot_kernel<double>(double const *, double const *, double*, unsigned int)" in set(
        gpu["name"]
    )
    api = schema.validate(tables["api_calls"], schema.API_CALLS)
    assert len(api) == 17
    assert api.iloc[0][["name", "total_ns", "calls"]].tolist() == [
        "cudaDeviceSynchronize",
        620_290_000,
        401,
    ]
    last = api[api["name"] == "cudaDriverGetVersion"].iloc[0]
    assert (last["total_ns"], last["min_ns"]) == (445, 445)


def test_old_text_summary_with_separate_api_section():
    tables = nvprof.read_log(TEXT8, "affine")
    gpu = tables["gpu_activities"]
    assert list(gpu["kind"]) == ["memcpy", "memcpy", "kernel", "memset"]
    assert list(gpu["name"][[0, 1, 3]]) == [
        "[CUDA memcpy HtoD]",
        "[CUDA memcpy DtoH]",
        "[CUDA memset]",
    ]
    assert gpu["name"][2].startswith(
        "void thrust::system::cuda::detail::bulk_::detail::launch_by_value"
    )
    assert gpu["name"][2].endswith("(unsigned long=1)")
    assert list(gpu["total_ns"]) == [77_288, 73_959, 57_350, 19_810]
    api = tables["api_calls"]
    assert len(api) == 18 and api.iloc[0]["name"] == "cudaMalloc"
    assert api.iloc[0]["total_ns"] == 161_080_000 and api.iloc[-1]["name"] == "cudaConfigureCall"


def test_csv_summary_units_row():
    tables = nvprof.read_log(CSV_SUMMARY, "cfd")
    gpu = tables["gpu_activities"]
    flux = gpu[gpu["name"] == "cuda_compute_flux(int, int*, float*, float*, float*)"].iloc[0]
    # units row `,%,ms,,us,us,ms,`: Time in ms, Avg and Min in us, Max in ms
    assert flux["total_ns"] == 268_651_053 and flux["calls"] == 6000
    assert (
        flux["avg_ns"] == pytest.approx(44_775)
        and flux["min_ns"] == 42_946
        and flux["max_ns"] == 1_947_660
    )
    assert flux["time_pct"] == pytest.approx(68.838828)
    assert set(gpu["name"]) >= {"[CUDA memcpy DtoD]", "[CUDA memcpy HtoD]", "[CUDA memset]"}
    api = tables["api_calls"]
    assert len(api) == 19  # the Unified Memory section after the table is not read
    assert api.iloc[0][["name", "total_ns", "calls"]].tolist() == [
        "cudaMemcpyToSymbol",
        1_909_044_737,
        5,
    ]


def test_csv_gpu_summary_has_no_api_table():
    tables = nvprof.read_log(CSV_GPU_SUMMARY, "cfd")
    assert set(tables) == {"gpu_activities"}
    assert len(tables["gpu_activities"]) == 7


def test_csv_gpu_trace():
    trace = schema.validate(nvprof.read_log(TRACE9, "cfd")["gpu_trace"], schema.GPU_TRACE)
    # 86 data rows; the Unified Memory fault and migration rows are not GPU activities
    assert len(trace) == 12
    assert trace["kind"].value_counts().to_dict() == {"memcpy": 6, "kernel": 5, "memset": 1}
    first = trace.iloc[0]
    assert (first["start_ns"], first["duration_ns"]) == (1_183_779_000, 992)  # s and ms units
    assert (first["copy_kind"], first["src_kind"], first["dst_kind"]) == (
        "HtoD",
        "pageable",
        "device",
    )
    assert first["bytes"] == 20 and first["correlation_id"] == 105  # 0.000019 MB of 2**20 bytes
    memset = trace[trace["kind"] == "memset"].iloc[0]
    assert (memset["src_kind"], memset["bytes"], memset["name"]) == (
        "managed",
        388_608,
        "[CUDA memset]",
    )
    assert pd_na(memset["dst_kind"]) and pd_na(memset["copy_kind"])
    dtod = trace[trace["copy_kind"] == "DtoD"].iloc[0]
    assert dtod["bytes"] == 1_943_040 and dtod["dst_kind"] == "managed"
    flux = trace.iloc[-1]
    assert (flux["grid_x"], flux["block_x"], flux["registers"], flux["shared_bytes"]) == (
        506,
        192,
        58,
        0,
    )
    assert (
        flux["end_ns"] == 1_802_720_000 + 1_744_070 and flux["stream"] == 7 and flux["device"] == 0
    )


def test_old_csv_gpu_trace_correlation_in_names():
    trace = nvprof.read_log(TRACE8, "contention")["gpu_trace"]
    assert len(trace) == 8
    kernels = trace[trace["kind"] == "kernel"]
    assert set(kernels["name"]) == {
        "kernel_vectorAdd(float const *, float const *, int, int, float*)"
    }
    assert list(kernels["correlation_id"]) == [218, 225]
    copies = trace[trace["kind"] == "memcpy"]
    assert set(copies["bytes"]) == {40_000}  # 39.0625 KB
    assert copies["src_kind"].isna().all()  # this nvprof had no memory-kind columns
    assert list(copies["copy_kind"]) == ["HtoD"] * 4 + ["DtoH"] * 2
    assert trace.iloc[0]["start_ns"] == 215_481_427 and trace.iloc[0]["duration_ns"] == 8_256


def test_trace_summary_groups_copies_by_direction():
    act = activities.gpu_activities(nvprof.read_log(TRACE8, "contention")["gpu_trace"])
    assert list(act["name"]) == [
        "[CUDA memcpy HtoD]",
        "[CUDA memcpy DtoH]",
        "kernel_vectorAdd(float const *, float const *, int, int, float*)",
    ]
    assert list(act["calls"]) == [4, 2, 2]
    assert list(act["total_ns"]) == [8256 + 7968 + 8192 + 7904, 7744 * 2, 2016 + 1696]


def test_text_gpu_trace_asks_for_csv():
    with pytest.raises(ParseError, match="--csv") as exc:
        nvprof.read_log(TEXT_TRACE, "s")
    assert str(TEXT_TRACE) in str(exc.value)


@pytest.mark.parametrize("content", [b"", b"   \n", b"\x00\x00\xffELF" * 64])
def test_empty_or_binary(tmp_path, content):
    path = tmp_path / "log.txt"
    path.write_bytes(content)
    with pytest.raises(ParseError) as exc:
        nvprof.read_log(path, "s")
    assert str(path) in str(exc.value) and "nvprof" in str(exc.value)


def test_output_of_another_tool():
    ncu = Path(__file__).parent / "data" / "ncu" / "2025.3.1" / "raw-metrics.csv"
    with pytest.raises(ParseError, match="no nvprof table header"):
        nvprof.read_log(ncu, "s")


def test_truncated_csv_trace(tmp_path):
    text = TRACE9.read_text()
    path = tmp_path / "t.csv"
    path.write_text(text[: text.index('"cuda_compute_flux(int, int*') + 12])
    with pytest.raises(ParseError) as exc:
        nvprof.read_log(path, "s")
    assert str(path) in str(exc.value)


def test_truncated_text_summary(tmp_path):
    lines = TEXT9.read_text().splitlines()
    path = tmp_path / "t.txt"
    path.write_text("\n".join(lines[:4]) + "\n")  # header, no rows
    with pytest.raises(ParseError, match="no GPU activities rows"):
        nvprof.read_log(path, "s")


def test_bad_time_unit(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text(TEXT9.read_text().replace("188.08ms", "188.08xs"))
    with pytest.raises(ParseError, match="188.08xs"):
        nvprof.read_log(path, "s")


def test_parse_time():
    assert nvprof.parse_time("928ns", Path("x")) == 928
    assert nvprof.parse_time("1.8260ms", Path("x")) == pytest.approx(1_826_000)
    assert nvprof.parse_time("8.56944s", Path("x")) == pytest.approx(8_569_440_000)
    assert nvprof.parse_time("870.17us", Path("x")) == pytest.approx(870_170)


def pd_na(value: object) -> bool:
    import pandas as pd

    return value is pd.NA or value is None


# --- hostile input: refused at once, by line and column, in linear time ----------------------


def test_fifo_is_refused_without_blocking(tmp_path):
    import os

    from test_parse_values import deadline

    fifo = tmp_path / "log.txt"
    os.mkfifo(fifo)
    with deadline(10), pytest.raises(ParseError, match="not a regular file") as exc:
        nvprof.read_log(fifo, "s")
    assert str(fifo) in str(exc.value)


def test_row_with_a_100k_run_of_spaces_in_its_name(tmp_path):
    """The old row pattern (`\\S.*?\\s*$` after `\\s*` runs) was quadratic: this file took it over
    a minute. Fields are now cut with str.split: milliseconds, and the name is capped."""
    from test_parse_values import deadline

    from profiler.parse.values import MAX_NAME

    path = tmp_path / "log.txt"
    path.write_text(TEXT9.read_text().replace("cudaMemcpy\n", "cudaMemcpy" + " " * 100_000 + "x\n"))
    assert path.stat().st_size > 100_000
    with deadline(20):
        api = nvprof.read_log(path, "s")["api_calls"]
    name = api[api["name"].str.startswith("cudaMemcpy ")]["name"].iloc[0]
    assert name.startswith("cudaMemcpy   ") and "100,011 characters" in name
    assert len(name) < MAX_NAME + 80


def test_line_of_100k_spaces_inside_a_table(tmp_path):
    from test_parse_values import deadline

    path = tmp_path / "log.txt"
    text = TEXT9.read_text().replace(" GPU activities:", " " * 100_000 + "x\n GPU activities:")
    path.write_text(text)
    with deadline(20), pytest.raises(ParseError, match="line 5: not a summary row"):
        nvprof.read_log(path, "s")


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("  103  1.8260ms", "  1.2.3  1.8260ms", "line 5, column 'Calls': '1.2.3' is not a number"),
        ("  103  1.8260ms", f"  {'9' * 30}  1.8260ms", "column 'Calls': '999"),
        ("  103  1.8260ms", "  -103  1.8260ms", "column 'Calls': '-103' is negative"),
        ("  188.08ms", "  infms", "line 5, column 'Time': 'infms' is not a finite number"),
        ("  188.08ms", "  nanms", "column 'Time': 'nanms' is not a number"),
        ("  188.08ms", "  188.08", "column 'Time': '188.08' is not a time such as 1.8260ms"),
        ("  188.08ms", "  1e300ms", "line 5, column 'Time': '1e300ms' is out of range"),
        ("  188.08ms", f"  {2**64}ns", "column 'Time': '18446744073709551616ns' is out of range"),
        ("   928ns", "  -928ns", "line 5, column 'Min': '-928ns' is negative"),
        ("20.21%", "...%", "line 5, column 'Time(%)': '...%' is not a number"),
        ("20.21%", "20.21", "line 5, column 'Time(%)': '20.21' is not a percentage"),
    ],
)
def test_bad_number_in_a_text_summary(tmp_path, old, new, message):
    path = tmp_path / "log.txt"
    text = TEXT9.read_text()
    assert old in text.splitlines()[4]
    lines = text.splitlines()
    lines[4] = lines[4].replace(old, new, 1)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError) as exc:
        nvprof.read_log(path, "s")
    assert str(path) in str(exc.value) and message in str(exc.value)


def test_text_summary_cut_mid_row(tmp_path):
    text = TEXT9.read_text()
    cut = text.index("cudaMemcpy\n") - 20  # inside the cudaMemcpy row
    path = tmp_path / "log.txt"
    path.write_text(text[:cut])
    with pytest.raises(ParseError, match="line 13: a summary row has 7 fields .* this one"):
        nvprof.read_log(path, "s")


def test_text_summary_cut_after_whole_rows(tmp_path):
    """Choice: refused, not imported with a warning. A table whose rows stop early would make
    the stage's totals silently too small, and CI compares exactly those totals."""
    lines = TEXT9.read_text().splitlines()
    path = tmp_path / "log.txt"
    path.write_text("\n".join(lines[:8]) + "\n")  # GPU rows up to 13.34%, no API section
    with pytest.raises(ParseError, match="GPU activities rows add up to 73.27% of the time"):
        nvprof.read_log(path, "s")
    path.write_text("\n".join(lines[:14]) + "\n")  # all GPU rows; API rows up to cudaFree
    with pytest.raises(ParseError, match="API calls rows add up to 98.31%"):
        nvprof.read_log(path, "s")


def test_old_text_summary_api_table_cut(tmp_path):
    lines = TEXT8.read_text().splitlines()
    path = tmp_path / "log.txt"
    path.write_text("\n".join(lines[:12]) + "\n")  # `==7809== API calls:` table: 1 of 18 rows
    with pytest.raises(ParseError, match="API calls rows add up to 98.87%"):
        nvprof.read_log(path, "s")


@pytest.mark.parametrize(
    "old, new, message",
    [
        (",44.775000,", ",inf,", "line 6, column 'Avg': 'inf' is not a finite number"),
        (",44.775000,", ",nan,", "line 6, column 'Avg': 'nan' is not a number"),
        (",6000,44.775000", ",6000.5,44.775000", "column 'Calls': '6000.5' is not a whole"),
        (",6000,44.775000", ",-6000,44.775000", "column 'Calls': '-6000' is negative"),
        ("68.838828,", "1.2.3,", "line 6, column 'Time(%)': '1.2.3' is not a number"),
    ],
)
def test_bad_number_in_a_csv_summary(tmp_path, old, new, message):
    path = tmp_path / "s.csv"
    path.write_text(CSV_SUMMARY.read_text().replace(old, new, 1))
    with pytest.raises(ParseError) as exc:
        nvprof.read_log(path, "s")
    assert message in str(exc.value)


def test_csv_trace_with_a_repeated_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(TRACE8.read_text().replace('"Stream","Name"', '"Name","Name"', 1))
    with pytest.raises(ParseError, match="column 'Name' appears twice in the header"):
        nvprof.read_log(path, "s")


def test_csv_summary_cut_mid_row_or_after_whole_rows(tmp_path):
    text = CSV_SUMMARY.read_text()
    path = tmp_path / "s.csv"
    cut = text.index('"API calls",0.855419')
    path.write_text(text[: cut + 30])
    with pytest.raises(ParseError, match="the last row has fewer than the header's 8 cells"):
        nvprof.read_log(path, "s")
    path.write_text(text[:cut])
    with pytest.raises(ParseError, match="API calls rows add up to 98.17%"):
        nvprof.read_log(path, "s")


@pytest.mark.parametrize(
    "column, cell, message",
    [
        ("Duration", "-0.000992", "line 5, column 'Duration': '-0.000992' is negative"),
        ("Duration", "inf", "not a finite number"),
        ("Start", "1e300", "line 5, column 'Start': '1e300' is out of range"),
        ("Grid X", "1.5", "not a whole number"),
    ],
)
def test_bad_number_in_a_csv_trace(tmp_path, column, cell, message):
    lines = TRACE9.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith('"Start"'))
    header = next(csv.reader([lines[start]]))
    row = next(csv.reader([lines[start + 2]]))
    if column == "Grid X":  # a kernel row
        at = next(i for i, ln in enumerate(lines) if "cuda_compute_flux" in ln)
        row, start = next(csv.reader([lines[at]])), at - 2
    row[header.index(column)] = cell
    lines[start + 2] = ",".join(f'"{c}"' for c in row)
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError) as exc:
        nvprof.read_log(path, "s")
    assert message.replace("line 5", f"line {start + 3}") in str(exc.value)


def test_start_that_is_no_nvprof_output_is_refused_early(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("x\n" * 100_000 + TEXT9.read_text())
    with pytest.raises(ParseError, match="no nvprof table header nor ==PID== line at its start"):
        nvprof.read_log(path, "s")
