"""nvprof log parsing, on real nvprof output from public repositories (tests/data/nvprof/README.md).

Expected numbers are the files' own values converted by hand (e.g. `188.08ms` is 188,080,000 ns;
nvprof's `39.062500` KB is 40,000 bytes since nvprof's KB is 1024 bytes).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from profiler import schema
from profiler.analyze import activities
from profiler.errors import ParseError
from profiler.parse import nvprof, nvprof_unfinished, reader_notes

NVPROF = Path(__file__).parent / "data" / "nvprof"
TEXT9 = NVPROF / "9.x" / "cuda-stream-summary.txt"
TEXT8 = NVPROF / "8.x" / "affine-summary.txt"
CSV_SUMMARY = NVPROF / "9.x" / "cfd-csv-summary.csv"
CSV_GPU_SUMMARY = NVPROF / "9.x" / "cfd-csv-gpu-summary.csv"
TRACE9 = NVPROF / "9.x" / "cfd-csv-gpu-trace-head.csv"
TRACE8 = NVPROF / "8.x" / "contention-gpu-trace.csv"
TEXT_TRACE = NVPROF / "9.x" / "cuda-stream-text-gpu-trace-head.txt"
TEXT_TRACE_P100 = NVPROF / "9.x" / "cheby-text-gpu-trace.txt"
TEXT_TRACE_CAPTURE = NVPROF / "9.x" / "gaussian-capture-text-gpu-trace.txt"
TEXT_TRACE_UM_ONLY = NVPROF / "9.x" / "bfs-text-gpu-trace-unified-memory-only.txt"
TEXT_TRACE_UM_ROWS = NVPROF / "9.x" / "um-prefetcher-gputrace-in-comment-cut.cu"
OLD_CSV_SUMMARY = NVPROF / "8.x" / "jacobi-csv-summary.csv"
TEXT_GPU_SUMMARY = NVPROF / "9.x" / "cfd-text-gpu-summary.txt"
API_ONLY = NVPROF / "9.x" / "bfs-api-summary-only.txt"
CSV_METRICS = NVPROF / "8.x" / "j3d27pt-csv-metrics.csv"
CSV_EVENTS = NVPROF / "8.x" / "j3d27pt-csv-events.csv"
TEXT_METRICS = NVPROF / "8.x" / "lbp-text-metrics.txt"
TEXT_METRICS_UNMAPPED = NVPROF / "8.x" / "gradient-text-metrics-unmapped.txt"
NO_KERNELS = NVPROF / "8.x" / "jacobi-untiled-no-kernels.txt"
NO_KERNELS_UM = NVPROF / "9.x" / "bfs-gpu-summary-no-kernels.txt"
LENET = NVPROF / "9.x" / "lenet"
BLOG_API_SUMMARY = NVPROF / "9.x" / "jetson-blog-api-summary.md"
README_EVENTS_METRICS = NVPROF / "8.x" / "maxdnn-readme-events-metrics.md"
README_NVTX = NVPROF / "9.x" / "psyclone-readme-nvtx-ranges.md"
PROMPT_CAPTURE = NVPROF / "8.x" / "rgb2gray-readme-capture.md"


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


_GAPPED = """\
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:   60.00%  6.0000ms         1  6.0000ms  6.0000ms  6.0000ms  k(int)

      API calls:  100.00%  2.0000ms         2  1.0000ms  1.0000ms  1.0000ms  cudaFree

{prose}
"""


@pytest.mark.parametrize(
    "prose", ["API calls: what the program called", "      API calls:  50% of the calls: cudaFree"]
)
def test_typed_rows_below_blank_lines_continue_a_typed_summary_and_prose_does_not(
    tmp_path: Path, prose: str
) -> None:
    """A blank line a paste left (around an elided `...`) does not end a `Type` summary whose
    next line is a typed row; a line of prose after a blank line still does."""
    log = tmp_path / "gapped.txt"
    log.write_text(_GAPPED.format(prose=prose))
    tables = nvprof.read_log(log, "g")
    assert tables["api_calls"][["name", "total_ns", "calls"]].values.tolist() == [
        ["cudaFree", 2_000_000, 2]
    ]
    assert tables["gpu_activities"]["name"].tolist() == ["k(int)"]


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


def test_text_gpu_trace():
    """The head of a `--print-gpu-trace` text capture (TITAN Xp): times with units, grids as
    `(32768 1 1)`, shared memory as `8.0000KB`, correlation ids appended to the names."""
    trace = schema.validate(nvprof.read_log(TEXT_TRACE, "s")["gpu_trace"], schema.GPU_TRACE)
    assert list(trace["kind"]) == ["kernel"] * 6 + ["memcpy"]
    init = trace.iloc[0]  # `308.93ms  1.6803ms  (32768 1 1)  (1024 1 1)  14  0B  0B ...  [128]`
    assert init["name"] == (
        "void init_kernel<double>(double*, double*, double*, double, double, double)"
    )
    assert (init["start_ns"], init["duration_ns"], init["end_ns"]) == (
        308_930_000,
        1_680_300,
        308_930_000 + 1_680_300,
    )
    assert (init["grid_x"], init["grid_y"], init["grid_z"]) == (32768, 1, 1)
    assert (init["block_x"], init["registers"], init["shared_bytes"]) == (1024, 14, 0)
    assert (init["device"], init["stream"], init["correlation_id"]) == (0, 7, 128)
    dot = trace[trace["name"].str.startswith("void dot_kernel")].iloc[0]
    assert (dot["grid_x"], dot["registers"], dot["shared_bytes"], dot["correlation_id"]) == (
        256,
        13,
        8 * 1024,  # 8.0000KB
        167,
    )
    copy = trace.iloc[-1]  # `318.08ms  1.7920us ... 2.0000KB  1.0644GB/s  Device  Pageable ...`
    assert (copy["name"], copy["copy_kind"], copy["src_kind"], copy["dst_kind"]) == (
        "[CUDA memcpy DtoH]",
        "DtoH",
        "device",
        "pageable",
    )
    assert (copy["start_ns"], copy["duration_ns"], copy["bytes"]) == (318_080_000, 1_792, 2048)
    assert pd_na(copy["grid_x"]) and pd_na(copy["registers"]) and pd_na(copy["correlation_id"])


def test_text_gpu_trace_with_cut_device_names():
    """nvprof cuts the device column to its width: `Tesla P100-PCIE` (no ordinal left)."""
    trace = nvprof.read_log(TEXT_TRACE_P100, "cheby")["gpu_trace"]
    assert trace["kind"].tolist() == ["memcpy"] * 4 + ["kernel"] * 2 + ["memcpy"]
    assert trace["device"].isna().all() and set(trace["stream"]) == {7}
    first = trace.iloc[0]  # `326.61ms  29.925ms ...  254.72MB  8.3123GB/s  Pageable  Device`
    assert (first["start_ns"], first["duration_ns"]) == (326_610_000, 29_925_000)
    assert first["bytes"] == round(254.72 * 2**20)  # 267,093,279: nvprof's MB is 2**20 bytes
    assert (first["copy_kind"], first["src_kind"], first["dst_kind"]) == (
        "HtoD",
        "pageable",
        "device",
    )
    kernels = trace[trace["kind"] == "kernel"]
    assert set(kernels["name"]) == {
        "cheby(double, double, double, double, double, double*, double*, double*, double*, "
        "double*, int, int, int, double*)"
    }
    assert list(kernels["correlation_id"]) == [137, 153]
    assert list(kernels["duration_ns"]) == [4_385_000, 4_579_900]  # 4.3850ms, 4.5799ms
    assert list(kernels["grid_x"]) == [12, 12] and list(kernels["grid_y"]) == [27, 27]
    assert list(kernels["block_y"]) == [16, 16] and list(kernels["shared_bytes"]) == [8192, 8192]
    assert trace.iloc[-1]["duration_ns"] == 34_716_000 and trace.iloc[-1]["copy_kind"] == "DtoH"


def test_text_gpu_trace_inside_a_terminal_capture():
    """`set -x` lines, ptxas output and the program's own lines before the trace, its legend after
    it; the device cut to `Quadro GP100 (0` keeps its ordinal."""
    trace = nvprof.read_log(TEXT_TRACE_CAPTURE, "g")["gpu_trace"]
    assert trace["kind"].tolist() == ["memcpy", "kernel", "memcpy"]
    assert set(trace["device"]) == {0}
    kernel = trace.iloc[1]  # `413.66ms  4.1763ms  (74 16 1)  (128 1 1)  32  0B  2.0000KB ... [113]`
    assert (kernel["start_ns"], kernel["duration_ns"], kernel["correlation_id"]) == (
        413_660_000,
        4_176_300,
        113,
    )
    assert (kernel["grid_x"], kernel["grid_y"], kernel["block_x"], kernel["registers"]) == (
        74,
        16,
        128,
        32,
    )
    assert kernel["shared_bytes"] == 2048  # SSMem 0B + DSMem 2.0000KB
    assert list(trace["bytes"].dropna()) == [256 * 2**20] * 2  # 256.00MB each way


def test_text_gpu_trace_of_unified_memory_events_only():
    with pytest.raises(ParseError, match="Unified Memory events only .* no kernel, copy or memset"):
        nvprof.read_log(TEXT_TRACE_UM_ONLY, "s")


def test_text_gpu_trace_row_that_does_not_line_up(tmp_path):
    """A re-spaced row (two spaces lost before a cell) is refused by its line, not read shifted."""
    lines = TEXT_TRACE.read_text().splitlines()
    lines[5] = lines[5].replace("  (1024 1 1)", "(1024 1 1)", 1)
    path = tmp_path / "t.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        ParseError, match="line 6: the row does not line up with the gpu trace header"
    ):
        nvprof.read_log(path, "s")


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("1.6803ms", "1.6803xs", "line 5, column 'Duration': '1.6803xs' is not a number"),
        ("308.93ms", "  -1.0ms", "line 5, column 'Start': '-1.0ms' is negative"),
        ("(32768 1 1)", "  (32768 1)", "line 5, column 'Grid Size': '(32768 1)' is not (x y z)"),
        ("        0B  ", "  9.0000XB  ", "line 5, column 'SSMem*': '9.0000XB' is not a size"),
        ("        14", "  1.2.3456", "line 5, column 'Regs*': '1.2.3456' is not a number"),
    ],
)
def test_bad_cell_in_a_text_gpu_trace(tmp_path, old, new, message):
    lines = TEXT_TRACE.read_text().splitlines()
    assert len(old) == len(new) and old in lines[4]
    lines[4] = lines[4].replace(old, new, 1)
    path = tmp_path / "t.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError) as exc:
        nvprof.read_log(path, "s")
    assert message in str(exc.value)


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
    with pytest.raises(ParseError, match="the summary at line 4 has no rows"):
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

    from profiler.parse.bounded_names import MAX_NAME

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
    """A table of its top rows (what people paste) is read, with a warning per row type that
    says how much of its time the rows cover: its totals understate the stage."""
    lines = TEXT9.read_text().splitlines()
    path = tmp_path / "log.txt"
    path.write_text("\n".join(lines[:8]) + "\n")  # GPU rows up to 13.34%, no API section
    with pytest.warns(
        reader_notes.TrimmedTable, match="GPU activities rows at line 5 cover 73.27%"
    ):
        tables = nvprof.read_log(path, "s")
    assert len(tables["gpu_activities"]) == 4 and "api_calls" not in tables
    path.write_text("\n".join(lines[:14]) + "\n")  # all GPU rows; the top three API rows
    with pytest.warns(reader_notes.TrimmedTable) as said:
        tables = nvprof.read_log(path, "s")
    assert [str(w.message) for w in said] == [
        "the API calls rows at line 12 cover 98.31% of its time: a trimmed table; its totals are "
        "of the rows shown"
    ]
    api = list(tables["api_calls"]["name"])
    assert api == ["cudaDeviceSynchronize", "cudaMemcpy", "cudaMalloc"]


def test_text_summary_shares_above_100_are_refused(tmp_path):
    path = tmp_path / "log.txt"
    path.write_text(TEXT9.read_text().replace("13.34%", "23.34%", 1))
    with pytest.raises(ParseError, match="GPU activities rows add up to 109.99% of the time, more"):
        nvprof.read_log(path, "s")


def test_old_text_summary_api_table_cut(tmp_path):
    lines = TEXT8.read_text().splitlines()
    path = tmp_path / "log.txt"
    path.write_text("\n".join(lines[:12]) + "\n")  # `==7809== API calls:` table: 1 of 18 rows
    with pytest.warns(reader_notes.TrimmedTable, match="API calls rows at line 12 cover 98.87%"):
        assert len(nvprof.read_log(path, "s")["api_calls"]) == 1


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
    with pytest.warns(reader_notes.TrimmedTable, match="API calls rows at line 13 cover 98.17%"):
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


# --- more summary layouts (issue 14) --------------------------------------------------------


def test_old_csv_summary_with_an_api_section():
    """CUDA 8 `--csv`: no Type column; `==2411== API calls:` and a second table with its own units
    row (`%,ms,,ms,ms,ms,`); cells such as `6.945000e-03` (ms)."""
    tables = nvprof.read_log(OLD_CSV_SUMMARY, "jacobi")
    gpu, api = tables["gpu_activities"], tables["api_calls"]
    assert len(gpu) == 8 and len(api) == 17
    htod = gpu.iloc[
        0
    ]  # `34.295896,122.472626,3,40.824208,40.783003,40.858044,"[CUDA memcpy HtoD]"`
    assert (htod["name"], htod["kind"], htod["calls"], htod["total_ns"]) == (
        "[CUDA memcpy HtoD]",
        "memcpy",
        3,
        122_472_626,
    )
    assert (htod["min_ns"], htod["max_ns"]) == (40_783_003, 40_858_044)
    assert htod["avg_ns"] == pytest.approx(40_824_208) and htod["time_pct"] == pytest.approx(
        34.295896
    )
    assert gpu["kind"].tolist().count("kernel") == 6
    launch = api[api["name"] == "cudaLaunch"].iloc[
        0
    ]  # `0.046839,0.213965,18,0.011886,6.945000e-03,...`
    assert (launch["total_ns"], launch["calls"], launch["min_ns"], launch["max_ns"]) == (
        213_965,
        18,
        6_945,
        34_457,
    )
    assert api.iloc[0]["name"] == "cudaMemcpy" and api.iloc[0]["total_ns"] == 357_259_454


def test_text_gpu_summary_before_a_unified_memory_section():
    tables = nvprof.read_log(TEXT_GPU_SUMMARY, "cfd")
    assert set(tables) == {"gpu_activities"}  # --print-gpu-summary: no API rows
    gpu = tables["gpu_activities"]
    flux = gpu.iloc[
        0
    ]  # `70.94%  303.64ms  6000  50.606us  45.410us  1.6543ms  cuda_compute_flux(...)`
    assert flux["name"] == "cuda_compute_flux(int, int*, float*, float*, float*)"
    assert (flux["total_ns"], flux["calls"], flux["min_ns"], flux["max_ns"]) == (
        303_640_000,
        6000,
        45_410,
        1_654_300,
    )
    assert flux["avg_ns"] == pytest.approx(50_606)
    memset = gpu[gpu["kind"] == "memset"].iloc[
        0
    ]  # `0.00%  1.1200us  1  1.1200us ...  [CUDA memset]`
    assert (memset["name"], memset["total_ns"], memset["calls"]) == ("[CUDA memset]", 1_120, 1)
    assert gpu[gpu["copy_kind"] == "DtoD"].iloc[0]["total_ns"] == 20_054_000


def test_api_summary_after_no_kernels_were_profiled():
    """`No kernels were profiled.` and then `API calls:` rows only: the API table is imported."""
    tables = nvprof.read_log(API_ONLY, "bfs")
    assert set(tables) == {"api_calls"}
    api = tables["api_calls"]
    assert len(api) == 11
    first = api.iloc[0]  # `99.73%  972.19ms  7  138.88ms  5.2830us  971.82ms  cudaMallocManaged`
    assert (first["name"], first["total_ns"], first["calls"], first["min_ns"], first["max_ns"]) == (
        "cudaMallocManaged",
        972_190_000,
        7,
        5_283,
        971_820_000,
    )
    assert api.iloc[-1]["name"] == "cuDeviceGet" and api.iloc[-1]["total_ns"] == 803


def test_api_summary_pasted_into_a_blog_post():
    """`nvprof --print-api-summary` on a Jetson Xavier, in a Markdown post between the program's
    output and the next section: the table ends at the code fence."""
    api = nvprof.read_log(BLOG_API_SUMMARY, "hello")["api_calls"]
    assert len(api) == 8 and api["name"].iloc[0] == "cudaLaunchKernel"
    assert api["total_ns"].iloc[0] == 361_690_000  # `99.89%  361.69ms  1  361.69ms ...`
    attr = api[api["name"] == "cuDeviceGetAttribute"].iloc[0]
    # `0.06%  213.18us  97  2.1970us  960ns  58.272us  cuDeviceGetAttribute`
    assert (attr["total_ns"], attr["calls"], attr["min_ns"], attr["max_ns"]) == (
        213_180,
        97,
        960,
        58_272,
    )
    assert attr["avg_ns"] == pytest.approx(2_197)


def test_nvtx_range_summary_in_a_readme():
    """PSyclone's README shows nvprof's `NVTX result:` for one range, indented as a Markdown code
    block among other tools' output: the range's CPU time from its `Range:` row, its GPU time and
    operations summed over its GPU activities."""
    tables = nvprof.read_log(README_NVTX, "psy")
    assert set(tables) == {"ranges"}  # no GPU activities outside the range: not a stage summary
    row = schema.validate(tables["ranges"], schema.RANGES).iloc[0]
    # `Range:  100.00%  758.78us  10  75.878us  43.322us  348.23us  inc_field_mod:inc_field_code`
    assert (row["name"], row["calls"], row["total_ns"], row["min_ns"], row["max_ns"]) == (
        "inc_field_mod:inc_field_code",
        10,
        758_780,
        43_322,
        348_230,
    )
    assert row["avg_ns"] == pytest.approx(75_878)
    assert row["gpu_total_ns"] == 58_911 + 17_920 + 4_192  # 58.911us, 17.920us, 4.1920us
    assert row["gpu_ops"] == 34 + 10 + 3


def test_old_text_summary_after_a_shell_prompt():
    """A Markdown capture: the fence, the prompt and command, then CUDA 8 output."""
    tables = nvprof.read_log(PROMPT_CAPTURE, "rgb2gray")
    gpu, api = tables["gpu_activities"], tables["api_calls"]
    assert gpu["name"].tolist() == [
        "[CUDA memcpy HtoD]",
        "[CUDA memcpy DtoH]",
        "rgb2grayGPU_kernel(uchar3 const *, unsigned char*, int, int)",
        "[CUDA memset]",
    ]
    assert gpu["total_ns"].tolist() == [114_810, 40_799, 32_351, 10_784]
    assert len(api) == 13
    malloc = api.iloc[0]  # ` 99.94%  1.35782s  2  678.91ms  77.472us  1.35774s  cudaMalloc`
    assert (malloc["name"], malloc["total_ns"], malloc["min_ns"], malloc["max_ns"]) == (
        "cudaMalloc",
        1_357_820_000,
        77_472,
        1_357_740_000,
    )


def test_sections_of_a_saved_profile_and_openacc(tmp_path):
    """`nvprof -i saved.nvprof` writes `========` where a run writes `==PID==`; an `OpenACC
    (excl):` table (PGI) is neither GPU activities nor API calls."""
    text = TEXT8.read_text().replace("==7809== ", "======== ")
    path = tmp_path / "imported.txt"
    path.write_text(text)
    tables = nvprof.read_log(path, "s")
    assert len(tables["gpu_activities"]) == 4 and len(tables["api_calls"]) == 18
    path.write_text(text.replace("======== API calls:", "======== OpenACC (excl):"))
    tables = nvprof.read_log(path, "s")
    assert set(tables) == {"gpu_activities"} and len(tables["gpu_activities"]) == 4


def test_old_text_summary_whose_prefixes_were_stripped(tmp_path):
    """The CUDA 8 layout pasted without `==PID==`: its `API calls:` line still starts the API
    table (were it read as GPU rows, the GPU shares would add up to 200%)."""
    text = TEXT8.read_text().replace("==7809== ", "")
    assert "==" not in text and "\nAPI calls:\n" in text
    path = tmp_path / "pasted.txt"
    path.write_text(text)
    tables = nvprof.read_log(path, "affine")
    assert list(tables["gpu_activities"]["total_ns"]) == [77_288, 73_959, 57_350, 19_810]
    assert len(tables["api_calls"]) == 18 and tables["api_calls"].iloc[0]["name"] == "cudaMalloc"


@pytest.mark.parametrize("log", sorted(LENET.glob("*.txt")), ids=lambda p: p.stem)
def test_lenet_logs_are_read(log):
    """Six of the eight logs have no `==PID==` prefixes; all are read (their values are checked
    in test_import_nvprof)."""
    from profiler.parse import detect

    assert detect.detect(log) == detect.NVPROF
    tables = nvprof.read_log(log, log.stem)
    assert set(tables) == {"gpu_activities", "api_calls"}


def test_a_document_with_several_runs_is_refused():
    """The LeNet study's README holds eight logs: each is a stage of its own."""
    with pytest.raises(ParseError, match="output of 8 nvprof runs .* import each run as a stage"):
        nvprof.read_log(LENET / "hyjwpk-LeNet5-README.md", "s")


# --- metrics and events (issue 14) ------------------------------------------------------------


def test_csv_metrics():
    """`nvprof --csv --metrics all` (Tesla K20c): every mapped column, from the Avg column."""
    metrics = schema.validate(nvprof.read_log(CSV_METRICS, "j3d27pt")["metrics"], schema.METRICS)
    assert len(metrics) == 1
    row = metrics.iloc[0]
    assert (
        row["name"] == "__kernel___forma_kernel__0__(float*, int, int, int, int, int, int, float*)"
    )
    assert row["kernel_id"] == 0 and row["stage"] == "j3d27pt"
    assert row["fp32_flops"] == 36_134_886_144  # flop_count_sp Avg
    # = 2 x flop_count_sp_fma + flop_count_sp_mul + flop_count_sp_add, as nvprof counts
    assert row["fp32_flops"] == 2 * 16_776_911_424 + 2_581_063_296 + 0
    assert row["dram_read_bytes"] == 32 * 44_206_708  # dram_read_transactions Avg
    assert row["dram_write_bytes"] == 32 * 46_525_913
    assert row["achieved_occupancy_pct"] == pytest.approx(99.4198)  # 0.994198
    assert row["sm_throughput_pct"] == pytest.approx(97.188709)  # sm_efficiency 97.188709%
    assert row["dram_throughput_pct"] == pytest.approx(30.0)  # dram_utilization "Low (3)"
    for missing in ("duration_ns", "registers", "range", "grid", "block"):
        assert pd_na(row[missing])


def test_csv_events_give_dram_bytes_from_sectors():
    """The same kernel's events: DRAM bytes are 32 x the fb_subp0/1 sectors, as the metrics file's
    transactions are (the two runs differ by under 1%)."""
    row = nvprof.read_log(CSV_EVENTS, "j3d27pt")["metrics"].iloc[0]
    assert row["dram_read_bytes"] == 32 * (21_951_348 + 22_131_006)  # fb_subp0/1_read_sectors Avg
    assert row["dram_write_bytes"] == 32 * (23_294_791 + 23_259_326)
    assert (
        pd_na(row["fp32_flops"]) and row["achieved_occupancy_pct"] != row["achieved_occupancy_pct"]
    )
    from_metrics = nvprof.read_log(CSV_METRICS, "j3d27pt")["metrics"].iloc[0]
    assert row["dram_read_bytes"] == pytest.approx(from_metrics["dram_read_bytes"], rel=0.01)


def test_text_metrics():
    """Text `--metrics` (GTX 1070): `Device "..."` and `Kernel: ...` lines above the rows, values
    such as `7.2244GB/s`, `44.48%`, `0.517002`; the 1,216-character thrust name is capped."""
    metrics = schema.validate(nvprof.read_log(TEXT_METRICS, "lbp")["metrics"], schema.METRICS)
    assert len(metrics) == 1
    row = metrics.iloc[0]
    assert row["achieved_occupancy_pct"] == pytest.approx(51.7002)  # achieved_occupancy 0.517002
    assert row["name"].startswith("void thrust::system::cuda::detail::bulk_::detail::launch_by")
    assert "1,216 characters" in row["name"]
    assert pd_na(row["fp32_flops"]) and pd_na(row["dram_read_bytes"])  # a throughput has no bytes


def test_text_metrics_none_of_which_maps_give_counters_only():
    """Three kernels' efficiencies and `shared_utilization`, none a column of the metrics
    table: no `metrics` table (it was refused, for want of a column), every row a counter."""
    tables = nvprof.read_log(TEXT_METRICS_UNMAPPED, "s")
    assert list(tables) == ["counters"]
    counters = tables["counters"]
    assert len(counters) == 15  # three kernels' five rows
    assert counters["kernel_id"].tolist() == [0] * 5 + [1] * 5 + [2] * 5
    row = counters[(counters["kernel_id"] == 1) & (counters["metric"] == "shared_utilization")]
    assert row[["text", "value", "invocations"]].values.tolist() == [["Low (1)", 1.0, 1000]]
    assert row["unit"].isna().all()  # a level has no unit


def test_events_and_metrics_in_a_readme_none_of_which_maps():
    """maxDNN's README: `--events elapsed_cycles_sm` and nine `--metrics` for one kernel (tab
    before `Kernel:`), all read, none a column of profgen's metrics table: ten counters."""
    counters = nvprof.read_log(README_EVENTS_METRICS, "s")["counters"]
    assert counters["metric"].tolist()[:3] == ["elapsed_cycles_sm", "inst_executed", "inst_fp_32"]
    assert set(counters["name"]) == {"multiconvolution_64"} and len(counters) == 10
    event = counters.iloc[0]
    assert (event["min"], event["max"], event["value"]) == (75288048, 75580076, 75451292)
    hit = counters[counters["metric"] == "tex_cache_hit_rate"].iloc[0]
    assert (hit["min"], hit["max"], hit["value"], hit["unit"]) == (10.36, 10.74, 10.48, "%")


@pytest.mark.parametrize(
    "old, new, message",
    [
        (",0.994028,0.994369,0.994198", ",0.994028,0.994369,inf", "'inf' is not a finite number"),
        (',2,"achieved_occupancy"', ',-2,"achieved_occupancy"', "column 'Invocations': '-2'"),
        (",36134886144\n", ",1e300\n", "'1e300' is out of range"),
        (',"Low (3)"\n', ',"Low (x)"\n', "'Low (x)' is not a number"),
    ],
)
def test_bad_cell_in_csv_metrics(tmp_path, old, new, message):
    text = CSV_METRICS.read_text()
    assert old in text
    path = tmp_path / "m.csv"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ParseError) as exc:
        nvprof.read_log(path, "s")
    line = text[: text.index(old)].count("\n") + 1
    assert f"line {line}, column" in str(exc.value) and message in str(exc.value)


def test_a_metric_listed_twice_for_one_kernel(tmp_path):
    lines = TEXT_METRICS.read_text().splitlines()
    assert "achieved_occupancy" in lines[9]
    path = tmp_path / "m.txt"
    path.write_text("\n".join(lines[:10] + lines[9:]) + "\n")
    with pytest.raises(ParseError, match="line 11: 'achieved_occupancy' again for the same kernel"):
        nvprof.read_log(path, "s")


def test_two_kernels_of_one_name(tmp_path):
    """A name's second block of rows is another kernel (nvprof lists a kernel once per table)."""
    lines = TEXT_METRICS.read_text().splitlines()
    assert lines[7].lstrip().startswith("Kernel:") and len(lines) == 15
    path = tmp_path / "m.txt"
    path.write_text("\n".join(lines + lines[7:]) + "\n")
    metrics = nvprof.read_log(path, "s")["metrics"]
    assert metrics["kernel_id"].tolist() == [0, 1] and metrics["name"].nunique() == 1
    assert metrics["achieved_occupancy_pct"].tolist() == pytest.approx([51.7002, 51.7002])


def test_bad_text_metric_row(tmp_path):
    lines = TEXT_METRICS.read_text().splitlines()
    lines[9] = lines[9].replace("0.517002    0.517002    0.517002", "0.517002")
    path = tmp_path / "m.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError) as exc:
        nvprof.read_log(path, "s")
    assert "line 10, column 'Min': 'Achieved' is not a number" in str(exc.value)


# --- nvprof output with nothing to read (issue 14) -------------------------------------------


def test_no_kernels_and_an_error_quote_nvprof():
    with pytest.raises(ParseError) as exc:
        nvprof.read_log(NO_KERNELS, "s")
    assert (
        "nvprof says: 'Error: Application received signal 2' / 'No kernels were profiled.'"
        in str(exc.value)
    )


def test_no_kernels_before_a_unified_memory_section():
    with pytest.raises(ParseError, match="nvprof says: 'No kernels were profiled.'"):
        nvprof.read_log(NO_KERNELS_UM, "s")


def test_warning_page_of_a_recent_gpu(tmp_path):
    """nvprof's page on an Ampere or later GPU, as pasted into READMEs, and nothing else."""
    from profiler.parse import detect

    path = tmp_path / "nvprof.log"
    path.write_text(
        "======== Warning: nvprof is not supported on devices with compute capability 8.0 and "
        "higher.\n                  Use NVIDIA Nsight Systems for GPU tracing and CPU sampling "
        "and NVIDIA Nsight Compute for GPU profiling.\n"
    )
    assert detect.detect(path) == detect.NVPROF
    with pytest.raises(ParseError, match="nvprof says: 'Warning: nvprof is not supported on devic"):
        nvprof.read_log(path, "s")


# --- runs of spaces in the new layouts: refused or read in linear time -----------------------


def test_text_trace_name_with_a_100k_run_of_spaces(tmp_path):
    from test_parse_values import deadline

    text = TEXT_TRACE.read_text().replace(" [135]\n", " " * 100_000 + "x [135]\n", 1)
    path = tmp_path / "t.txt"
    path.write_text(text)
    with deadline(20):
        trace = nvprof.read_log(path, "s")["gpu_trace"]
    name = trace.iloc[1]["name"]
    assert name.startswith("void copy_kernel<double>(double const *, double*)   ")
    assert "[100,056 characters, sha256" in name  # 49 + 100,000 + 7 `x [135]`, capped


def test_text_metrics_with_a_100k_run_of_spaces(tmp_path):
    from test_parse_values import deadline

    lines = TEXT_METRICS.read_text().splitlines()
    lines[9] = lines[9].replace("Achieved Occupancy", "Achieved" + " " * 100_000 + "Occupancy")
    lines[5] = lines[5].replace("Metric Name", " " * 100_000 + "Metric Name")
    path = tmp_path / "m.txt"
    path.write_text("\n".join(lines) + "\n")
    with deadline(20):
        metrics = nvprof.read_log(path, "s")["metrics"]
    assert metrics["achieved_occupancy_pct"].iloc[0] == pytest.approx(51.7002)


def test_trace_header_with_a_100k_run_of_spaces(tmp_path):
    from test_parse_values import deadline

    lines = TEXT_TRACE.read_text().splitlines()
    lines[3] = lines[3].replace("Stream  Name", "Stream" + " " * 100_000 + "Name")
    path = tmp_path / "t.txt"
    path.write_text("\n".join(lines) + "\n")
    with deadline(20), pytest.raises(ParseError, match="line 5, column .Name.: no value"):
        nvprof.read_log(path, "s")


# --- line endings and more of nvprof's own outputs ------------------------------------------


@pytest.mark.parametrize("source", [TEXT9, TEXT_TRACE, CSV_METRICS, OLD_CSV_SUMMARY])
def test_windows_line_endings_give_the_same_tables(tmp_path, source):
    path = tmp_path / source.name
    path.write_bytes(source.read_bytes().replace(b"\n", b"\r\n"))
    crlf, lf = nvprof.read_log(path, "s"), nvprof.read_log(source, "s")
    assert set(crlf) == set(lf)
    for name in lf:
        pd.testing.assert_frame_equal(crlf[name], lf[name])


def test_results_written_to_a_file_are_refused_naming_it(tmp_path):
    """`nvprof -o out.nvprof` prints no table, only where it wrote them."""
    head = "\n".join(TEXT9.read_text().splitlines()[:2])
    path = tmp_path / "log.txt"
    path.write_text(head + "\n==8123== Generated result file: /home/u/stream.nvprof\n")
    with pytest.raises(ParseError, match="nvprof says: 'Generated result file: /home/u/stream"):
        nvprof.read_log(path, "s")
    with pytest.raises(ParseError, match=r"stream.nvprof': import that file itself \(profgen"):
        nvprof.read_log(path, "s")


def test_one_summary_per_device_is_refused(tmp_path):
    lines = TEXT9.read_text().splitlines()
    device = lines[3:11]  # the header and the GPU rows, as a second device's table
    path = tmp_path / "log.txt"
    path.write_text("\n".join(lines[:11] + ["", '==8123== Device "TITAN Xp (1)"', *device]) + "\n")
    with pytest.raises(ParseError, match="one run with 2 GPU activity summaries .lines 4, 14"):
        nvprof.read_log(path, "s")


def test_summaries_per_device_without_result_lines_are_one_run(tmp_path):
    """Two summaries of one run, one per device, pasted without nvprof's `Profiling result:`
    line: the `Device "..."` line above the second keeps them one run (refused by the summary
    reader), not two runs as a README's step-by-step summaries are."""
    lines = [line.split("== ", 1)[-1] for line in TEXT9.read_text().splitlines()]
    device = lines[3:11]  # the header and the GPU rows, as a second device's table
    kept = [line for line in lines[:11] if "Profiling result:" not in line]
    path = tmp_path / "log.txt"
    path.write_text("\n".join([*kept, "", 'Device "TITAN Xp (1)"', *device]) + "\n")
    with pytest.raises(ParseError, match="one run with 2 GPU activity summaries"):
        nvprof.read_runs(path, "s")
    path.write_text("\n".join([*kept, "", *device]) + "\n")  # no Device line: two runs
    runs = nvprof.read_runs(path, "s")
    assert [len(run.tables["gpu_activities"]) for run in runs.kept] == [7, 7]


def test_a_gpu_trace_cut_to_an_api_traces_columns_is_refused(tmp_path):
    """nvprof's `--csv` API trace is read (tests/test_import_indented_pastes.py); a gpu trace
    cut down to its Start, Duration and Name columns is none: its rows are copies and kernels,
    no CUDA calls."""
    rows = list(csv.reader(TRACE8.read_text().splitlines()[3:]))
    keep = [rows[0].index(c) for c in ("Start", "Duration", "Name")]
    path = tmp_path / "api.csv"
    path.write_text("\n".join(",".join(f'"{r[i]}"' for i in keep) for r in rows) + "\n")
    with pytest.raises(ParseError, match=r"line 3: a table with an API trace's columns .*\[CUDA"):
        nvprof.read_log(path, "s")


def test_a_summary_run_and_a_trace_run_are_read_as_both(tmp_path):
    """A README showing `nvprof ./app` and then `nvprof --print-gpu-trace ./app`: two runs, one
    table kind each, so both tables are read (two summaries or two traces are refused)."""
    path = tmp_path / "notes.md"
    path.write_text(TEXT9.read_text() + "\n" + TEXT_TRACE.read_text())
    tables = nvprof.read_log(path, "s")
    assert set(tables) == {"gpu_activities", "api_calls", "gpu_trace"}
    assert (
        len(tables["gpu_trace"]) == 7
        and tables["gpu_activities"]["total_ns"].iloc[0] == 188_080_000
    )
    path.write_text(TEXT9.read_text() + "\n" + TEXT9.read_text())
    with pytest.raises(ParseError, match="the output of 2 nvprof runs .tables from lines 4, 33"):
        nvprof.read_log(path, "s")


@pytest.mark.parametrize("column", ["Min", "Max", "Avg"])
def test_csv_metric_with_an_empty_cell_is_refused_not_a_crash(tmp_path, column):
    """A CSV metrics row whose Min, Max or Avg cell is empty (the reader keeps it as missing)
    is refused naming the line and column, not a TypeError quoting the missing cell."""
    row = '"achieved_occupancy","Achieved Occupancy",0.994028,0.994369,0.994198'
    cells = dict(zip(["Min", "Max", "Avg"], ["0.994028", "0.994369", "0.994198"], strict=True))
    text = CSV_METRICS.read_text()
    assert row in text
    cut = row.replace(f",{cells[column]}", ",", 1)
    path = tmp_path / "metrics.csv"
    path.write_text(text.replace(row, cut, 1))
    with pytest.raises(ParseError, match=rf"line \d+, column '?{column}'?: '' is not a number"):
        nvprof.read_log(path, "s")


def test_shell_prompt_right_under_a_table_ends_it(tmp_path):
    """A terminal capture whose shell prompt (`🍺 :code`) follows the last metric row with no
    blank line between them (GeForce GT 650M, 100 invocations): the prompt ends the table. The
    same prompt under a summary ends it too; a cut row under a summary is still refused."""
    path = NVPROF / "8.x" / "gameoflife-text-metrics-prompt.txt"
    assert path.read_text().endswith("B/s\n🍺 :code \n")
    m = schema.validate(nvprof.read_log(path, "gol")["metrics"], schema.METRICS)
    assert list(m["name"]) == ["changeCellState(char*, char*, int, int)"]
    assert m["achieved_occupancy_pct"].iloc[0] == pytest.approx(91.1838)  # 0.911838
    assert m["dram_read_bytes"].iloc[0] == 11474 * 32  # dram_read_transactions, Avg 11474
    prompted = tmp_path / "summary.txt"
    prompted.write_text(TEXT9.read_text() + "user@box:~/src$ ")
    tables = nvprof.read_log(prompted, "s")
    assert tables["gpu_activities"].equals(nvprof.read_log(TEXT9, "s")["gpu_activities"])
    prompted.write_text(TEXT9.read_text() + "                    0.00%  1.48")
    with pytest.raises(ParseError, match="truncated file"):
        nvprof.read_log(prompted, "s")


@pytest.mark.parametrize(
    "name",
    [
        "9.x/cfd-csv-summary.csv",
        "9.x/cfd-csv-gpu-summary.csv",
        "8.x/jacobi-csv-summary.csv",
        "8.x/j3d27pt-csv-metrics.csv",
        "8.x/j3d27pt-csv-events.csv",
    ],
)
def test_a_csv_header_pasted_with_trailing_blanks_reads_the_same(tmp_path, name):
    """Blanks after the last quoted header cell (`"Max","Name"   `, as an editor or a paste
    leaves them) named the column `Name   ` and crashed the reader with a KeyError."""
    source = Path(__file__).parent / "data" / "nvprof" / name
    text = source.read_text(encoding="utf-8")
    lines = text.split("\n")
    header = next(i for i, line in enumerate(lines) if line.startswith('"'))
    lines[header] += "   \t"
    padded = tmp_path / source.name
    padded.write_text("\n".join(lines), encoding="utf-8")
    got, want = nvprof.read_log(padded, "s"), nvprof.read_log(source, "s")
    assert got.keys() == want.keys() and any(len(t) for t in want.values())
    for key in want:
        pd.testing.assert_frame_equal(got[key], want[key])


@pytest.mark.parametrize(
    "name", ["8.x/gradient-text-metrics-unmapped.txt", "8.x/lbp-text-metrics.txt"]
)
def test_a_metrics_log_cut_right_after_its_table_header_is_refused(tmp_path, name):
    """The header as the file's last line, with no newline after it: no rows, a refusal (the
    row reader once crashed on it with a ValueError from zip)."""
    text = (Path(__file__).parent / "data" / "nvprof" / name).read_text(encoding="utf-8")
    cut = text[: text.index("\n", text.index("Invocations"))]
    path = tmp_path / "cut.txt"
    path.write_text(cut, encoding="utf-8")
    with pytest.raises(ParseError):
        nvprof.read_log(path, "s")


def test_text_api_trace_gives_the_api_trace():
    """`nvprof --print-api-trace`: every call with its times, a launch's name without the
    kernel and correlation id nvprof appends (the same run's summary says 90 cudaMallocAsync
    calls, 25.227ms: nvprof_output.txt of the same repository)."""
    path = NVPROF / "9.x" / "vector-add-text-api-trace.txt"
    tables = nvprof.read_log(path, "s")
    assert set(tables) == {"api_trace"}
    trace = schema.validate(tables["api_trace"], schema.API_TRACE)
    assert len(trace) == 341 and trace["start_ns"].iloc[0] == 0
    assert trace["duration_ns"].iloc[0] == 4_187  # 4.1870us
    launches = trace[trace["name"] == "cudaLaunchKernel"]
    assert len(launches) == 30 and list(launches["correlation_id"])[:3] == [129, 136, 143]
    first = launches.iloc[0]
    assert (first["start_ns"], first["duration_ns"]) == (1_521_100_000, 29_396)  # 1.52110s
    malloc = trace[trace["name"] == "cudaMallocAsync"]
    assert len(malloc) == 90 and malloc["duration_ns"].sum() == 25_227_512
    assert trace["correlation_id"].notna().sum() == 30


def test_runs_started_and_never_finished_are_told_by_their_pid():
    """Synthetic: nvprof profiles processes 1 and 2 at once (their lines interleave), and 3,
    whose process ends in nvprof's error: only 3 is unfinished, with its own lines; a paste
    whose result line has no `==PID==` prefix cannot be told run by run (none is)."""
    text = (
        "==1== NVPROF is profiling process 1, command: ./a\n"
        "==2== NVPROF is profiling process 2, command: ./b\n"
        "==2== Profiling result:\n"
        "==3== NVPROF is profiling process 3, command: ./c\n"
        "==1== Profiling result:\n"
        "==3== Error: Internal profiling error 1749:999.\n"
    )

    def starts_of(marker: str, text: str = text) -> list[int]:
        return [text.index(line) for line in text.splitlines() if marker in line]

    results = starts_of("Profiling result:")
    assert nvprof_unfinished.unfinished(text, results, starts_of) == [
        (text.index("==3=="), "==3== NVPROF is profiling process 3, command: ./c\n"
                              "==3== Error: Internal profiling error 1749:999.")
    ]  # fmt: skip
    bare = text.replace("==1== Profiling", "Profiling")
    assert nvprof_unfinished.unfinished(bare, starts_of("Profiling result:", bare), starts_of) == []


def test_unified_memory_rows_of_a_gpu_trace_are_left_out_with_a_count():
    # a text trace (in a C comment) and a --csv one: each Name cell of `[Unified Memory ...]`
    for path, line in ((TEXT_TRACE_UM_ROWS, 20), (TRACE9, 4)):
        name = '"[Unified Memory' if path.suffix == ".csv" else "  [Unified Memory"
        unified = sum(name in line for line in path.read_text().splitlines())
        with pytest.warns(reader_notes.ReadNote) as said:
            trace = nvprof.read_log(path, "s")["gpu_trace"]
        notes = [str(w.message) for w in said if "Unified Memory row" in str(w.message)]
        assert notes == [
            f"line {line}: nvprof's gpu trace: {unified} Unified Memory rows (page faults and "
            "migrations, no kernel, copy or memset) left out: profgen has no table for them"
        ]
        assert not trace["name"].str.startswith("[Unified").any()
    kernels = nvprof.read_log(TEXT_TRACE_UM_ROWS, "s")["gpu_trace"]
    assert list(kernels["name"]) == ["getHWPrefetch(int, char*, int)"]
    assert kernels["duration_ns"].tolist() == [540_280]  # 540.28us
