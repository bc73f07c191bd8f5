"""`profgen import` of `nsys stats` rows of CUDA API calls pasted without their header line
(`profiler.parse.pasted.api_headed`): the header of nsys's CUDA API summary of that many
columns is put back above them; and of nvprof summary rows of CUDA API calls pasted without
header or row type: nvprof's header and `API calls:` go back above them. The real files are in
tests/data/nsys and tests/data/nvprof (their READMEs say where each comes from); the other
pastes here are real tables of tests/data cut as the test says."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from test_import_pasted import imported
from test_import_refusals import refusal, unrecognised

from profiler.parse import bare_rows, pasted

NSYS = Path(__file__).parent / "data" / "nsys"
IKLLAMA = NSYS / "any" / "ikllama-1700-headless-api-rows.txt"
MINIQMC = NSYS / "any" / "miniqmc-265-headless-api-rows.txt"
MXNET = Path(__file__).parent / "data" / "nvprof" / "9.x" / "mxnet-14684-untyped-api-rows.txt"
MINIWEATHER = NSYS / "2021.2.4" / "ncar-miniweather-stats.ipynb"
DERIVATIVE = NSYS / "2023.2.3" / "derivative-stats.txt"
COLUMNS = ["name", "calls", "total_ns", "avg_ns", "min_ns", "max_ns"]
HEADERS = {
    7: "Time(%), Total Time (ns), Num Calls, Average, Minimum, Maximum, Name",
    8: "Time(%), Total Time (ns), Num Calls, Average, Minimum, Maximum, StdDev, Name",
    9: "Time (%), Total Time (ns), Num Calls, Avg (ns), Med (ns), Min (ns), Max (ns), "
    "StdDev (ns), Name",
}


def api_note(line: int, columns: int) -> str:
    """The warning of a paste of API summary rows of `columns` columns from file line `line`."""
    return (
        "the file has `nsys stats` rows of CUDA API calls with no header line above them (from "
        f"line {line}): read under the header nsys prints above its {columns}-column CUDA API "
        f"summary ({HEADERS[columns]})"
    )


def api_calls(path: Path, tmp_path: Path, capsys) -> tuple[pd.DataFrame, str]:
    """The API calls `profgen import` reads from `path` (the printed columns), and its stderr."""
    run, err = imported(path, tmp_path, capsys)
    return run.table("api_calls")[COLUMNS].reset_index(drop=True), err


def test_nine_column_rows_import_as_api_calls(tmp_path, capsys):
    """ik_llama.cpp#1700: 8 rows of a 2021.3+ `cuda_api_sum` (was refused: "8 rows of an `nsys
    stats` table ... with no header line"); every row to the ns, the `_vNNNNN` names kept."""
    calls, err = api_calls(IKLLAMA, tmp_path, capsys)
    assert err.strip().splitlines() == [
        f"profgen: warning: stage s: {IKLLAMA}: {api_note(1, 9)}",
        f"profgen: warning: stage s: {IKLLAMA}: {ALL_ZERO.format(line=1)}",
    ]
    assert calls.values.tolist() == IKLLAMA_CALLS


IKLLAMA_CALLS = [
    ["cudaGraphExecDestroy_v10000", 886, 29_190_202, 32_946.1, 5_380, 186_469],
    ["cudaGraphExecUpdate_v10020", 2_618, 23_409_602, 8_941.8, 682, 157_774],
    ["cudaStreamBeginCapture_v10000", 2_618, 9_087_966, 3_471.3, 1_413, 45_457],
    ["cuMemCreate", 151, 7_770_997, 51_463.6, 18_666, 243_389],
    ["cudaStreamEndCapture_v10000", 2_618, 3_301_508, 1_261.1, 411, 7_875],
    ["cudaMemset", 450, 1_953_121, 4_340.3, 2_866, 21_772],
    ["cuMemAddressReserve", 90, 1_098_841, 12_209.3, 5_220, 40_839],
    ["cudaMemsetAsync", 80, 1_015_674, 12_695.9, 5_922, 56_549],
]  # fmt: skip
ALL_ZERO = (
    "the cuda_api_sum rows at line {line} cover 0.00% of its time: a trimmed table; its totals "
    "are of the rows shown"
)
IKLLAMA_HEADER = (  # nsys 2021.3+'s header and rule, its columns as wide as the rows'
    " Time (%)  Total Time (ns)  Num Calls       Avg (ns)     Med (ns)   Min (ns)     Max (ns)  "
    "  StdDev (ns)  Name\n --------  ---------------  ---------  -------------  -----------  "
    "---------  -----------  -------------  ------------------------------------------\n"
)


def test_rows_that_all_show_no_share_are_a_trimmed_table_with_or_without_a_header(
    tmp_path, capsys
):
    """ik_llama.cpp#1700's rows all show 0.0 % (the tail of a long `cuda_api_sum`): a trimmed
    table (it was said whole), under the header put back as above and under the header typed
    above them (the same rows with nsys's header and rule added)."""
    headed = tmp_path / "headed.txt"
    headed.write_text(IKLLAMA_HEADER + IKLLAMA.read_text())
    calls, err = api_calls(headed, tmp_path, capsys)
    assert err.strip() == f"profgen: warning: stage s: {headed}: {ALL_ZERO.format(line=3)}"
    assert calls.values.tolist() == IKLLAMA_CALLS


def test_seven_column_rows_import_as_api_calls(tmp_path, capsys):
    """miniqmc#265: 8 rows of a 2020.x `CUDA API Statistics` table, numbers without commas (was
    refused as headless); every row to the ns, and the trimmed table said at the first row."""
    calls, err = api_calls(MINIQMC, tmp_path, capsys)
    assert err.strip().splitlines() == [
        f"profgen: warning: stage s: {MINIQMC}: {api_note(1, 7)}",
        f"profgen: warning: stage s: {MINIQMC}: the cuda_api_sum rows at line 1 cover 45.00% of "
        "its time: a trimmed table; its totals are of the rows shown",
    ]
    assert calls.values.tolist() == [
        ["cuLaunchKernel", 16_143, 468_552_759, 29_025.1, 3_616, 1_104_918],
        ["cuDevicePrimaryCtxRelease_v2", 1, 88_230_624, 88_230_624.0, 88_230_624, 88_230_624],
        ["cuStreamSynchronize", 16_145, 25_986_898, 1_609.6, 1_321, 353_888],
        ["cuMemcpyHtoDAsync_v2", 5, 20_427_582, 4_085_516.4, 5_597, 20_365_701],
        ["cuModuleLoadDataEx", 1, 12_969_278, 12_969_278.0, 12_969_278, 12_969_278],
        ["cuModuleUnload", 1, 1_558_823, 1_558_823.0, 1_558_823, 1_558_823],
        ["cuMemAlloc_v2", 10, 625_521, 62_552.1, 2_801, 276_792],
        ["cuStreamCreate", 32, 234_806, 7_337.7, 1_085, 93_189],
    ]  # fmt: skip


def test_eight_column_rows_read_as_under_their_own_header(tmp_path, capsys):
    """The 2021.2.4 notebook's `cudaapisum` (8 columns, StdDev added) below prose, without its
    header and rule: the same API calls as the table with its own header, the warning at the
    file line of the first row."""
    output = [line for cell in json.loads(MINIWEATHER.read_text())["cells"] for out in
              cell.get("outputs", []) for line in out.get("text", [])]  # fmt: skip
    head = next(i for i, line in enumerate(output) if "Num Calls" in line)
    table = output[head : output.index("\n", head)]
    rows, whole = tmp_path / "rows.txt", tmp_path / "whole.txt"
    rows.write_text("The API summary:\n\n" + "".join(table[2:]))
    whole.write_text("".join(table))
    calls, err = api_calls(rows, tmp_path / "r", capsys)
    assert err.strip() == f"profgen: warning: stage s: {rows}: {api_note(3, 8)}"
    original, _ = api_calls(whole, tmp_path / "w", capsys)
    pd.testing.assert_frame_equal(calls, original)
    assert calls.values.tolist()[0] == [
        "cuStreamSynchronize", 829_502, 311_045_408_877, 374_978.5, 480, 4_110_831
    ]  # fmt: skip


def test_kernel_rows_without_their_header_stay_refused(tmp_path, capsys):
    """derivative-stats.txt's `cuda_gpu_kern_sum` rows alone: no API names, so nothing says
    which report they are rows of; refused, saying so."""
    rows = tmp_path / "rows.txt"
    rows.write_text("".join(DERIVATIVE.read_text().splitlines(True)[62:71]))
    assert refusal(rows, tmp_path, capsys) == unrecognised(
        rows,
        "9 rows of an `nsys stats` table (Time (%), Total Time (ns), a count, per-call times in "
        "ns) from line 1 on, with no header line or report name above them, so nothing says "
        "which report (kernels, memory operations, ...) they are rows of (rows named all as "
        "CUDA API calls are read as the API summary's): a paste that left the header out; "
        "profgen reads a table from its header line, which says what its columns (and, for "
        "nsys, its rows) are",
    )


def test_the_header_goes_above_each_run_of_api_rows_only():
    """Above each run's first row, located there; none when a row is not an API call (a kernel,
    `poll`), or the rows have different widths."""
    api = b"  90.0  900  3  300.0  200  400  cudaMalloc\n"
    more = b"  10.0  100  1  100.0  100  100  cuMemAlloc_v2\n"
    shaped = pasted.api_headed(b"prose\n" + api + more + b"\n" + more)
    assert shaped is not None
    head = bare_rows.API_HEADERS[7]
    assert shaped.data == b"prose\n" + head + api + more + b"\n" + head + more
    assert shaped.lines.tolist() == [1, 2, 2, 2, 3, 4, 5, 5, 5, 6]
    assert pasted.api_headed(api + b"  10.0  100  1  100.0  100  100  poll\n") is None
    assert pasted.api_headed(api + b"  10.0  100  1  100.0  100  100  cudnnFoo\n") is None
    assert pasted.api_headed(api + b"  1.0  1  1  1.0  1.0  1  1  1.0  cudaFree\n") is None
    assert pasted.api_headed(b"prose only\n") is None


def test_untyped_nvprof_api_rows_import_as_api_calls(tmp_path, capsys):
    """apache/mxnet#14684: 14 nvprof `API calls` rows from inside the table (no header, no row
    type; was refused as a paste that left the header out); every row to the ns, said trimmed."""
    calls, err = api_calls(MXNET, tmp_path, capsys)
    assert err.strip().splitlines() == [
        f"profgen: warning: stage s: {MXNET}: the file has nvprof summary rows of CUDA API calls "
        "with neither a header line nor a row type above them (from line 2): read as nvprof's "
        "`API calls:` rows, under the header nvprof prints",
        f"profgen: warning: stage s: {MXNET}: the API calls rows at line 2 cover 0.03% of its "
        "time: a trimmed table; its totals are of the rows shown",
    ]
    assert len(calls) == 14
    assert calls.values.tolist()[:2] == [
        ["cudaDeviceGetAttribute", 5_640, 4_287_400, 760.0, 280, 202_700],
        ["cudaGetDeviceProperties", 4, 3_059_200, 764_790.0, 438_020, 1_036_000],
    ]  # fmt: skip
    assert calls.values.tolist()[-1] == ["cudaEventDestroy", 182, 291_000, 1_598.0, 510, 2_885]


def test_nvprof_header_and_type_go_above_each_run_of_untyped_api_rows_only():
    """Above each run's first row, the type joined to that row, located there; none when a row
    is typed, names no API call (a kernel), or nsys rows are there too."""
    api = b"          0.10%  1.0000ms  2  500.00us  400.00us  600.00us  cudaMalloc\n"
    more = b"          0.01%  100.00us  1  100.00us  100.00us  100.00us  cuMemAlloc_v2\n"
    shaped = pasted.api_headed(b"prose\n" + api + more + b"\n" + more)
    assert shaped is not None
    head = pasted.NVPROF_HEADER + b"API calls:"
    assert shaped.data == b"prose\n" + head + api + more + b"\n" + head + more
    assert shaped.lines.tolist() == [1, 2, 2, 3, 4, 5, 5, 6]
    kernel = b"          0.01%  100.00us  1  100.00us  100.00us  100.00us  volta_sgemm\n"
    typed = b" API calls:  0.10%  1.0000ms  2  500.00us  400.00us  600.00us  cudaMalloc\n"
    nsys = b"  90.0  900  3  300.0  200  400  cudaMalloc\n"
    for rows in (api + kernel, typed + more, api + nsys):
        assert pasted.api_headed(rows) is None
