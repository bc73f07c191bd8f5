"""nvprof log parsing, on real nvprof output from public repositories (tests/data/nvprof/README.md).

Expected numbers are the files' own values converted by hand (e.g. `188.08ms` is 188,080,000 ns;
nvprof's `39.062500` KB is 40,000 bytes since nvprof's KB is 1024 bytes).
"""

from __future__ import annotations

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
