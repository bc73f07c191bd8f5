"""`profgen import` of pastes whose shape hides a profiler's output (`profiler.import_paste`):
a reply sent by email (a blank line after every line), a reply that quotes output with `>`, and
a source file that keeps its program's output in `//` comments. The real files are in
tests/data/nvprof/9.x, tests/data/ncu/any and tests/data/nsys/2023.x (their READMEs say where each
comes from); the other pastes here are real files of tests/data reshaped as the test says."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from clirun import profgen
from test_import_refusals import refusal

from profiler import store
from profiler.parse import nvprof, nvprof_metrics, pasted

DATA = Path(__file__).parent / "data"
NVPROF = DATA / "nvprof"
BML = NVPROF / "9.x" / "bml-478-double-spaced-reply.txt"
AFFINE = NVPROF / "8.x" / "affine-summary.txt"
STREAM = NVPROF / "9.x" / "cuda-stream-summary.txt"
DOUBLE_SPACED_NOTE = (
    "the file has a blank line after each of its lines (as an email reply pastes output): read "
    "as single-spaced, those blank lines skipped"
)
QUOTED_NOTE = (
    "the file has its lines quoted with `>` (a reply quoting a comment): read without the quote "
    "marks"
)
COMMENTED_NOTE = (
    "the file has its lines commented out with `//` (a program's output kept in a source file's "
    "comments): read without the comment marks"
)
HASHED_NOTE = (
    "the file has its lines commented out with `#` (a program's output kept in a script's "
    "comments): read without the comment marks"
)
SUMMARY = ["gpu_activities", "api_calls"]
COLUMNS = ["name", "time_pct", "calls", "total_ns", "min_ns", "max_ns", "avg_ns"]


def imported(path: Path, tmp_path: Path, capsys) -> tuple[store.Run, str]:
    """The run `profgen import` makes of `path` as stage `s`, and what it said on stderr."""
    argv = ["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path / "out"]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    return store.load_run(result.out.strip().splitlines()[-1]), result.err


def tables(run: store.Run) -> dict[str, pd.DataFrame]:
    """The run's summary tables, the columns read from the printed rows."""
    return {
        name: run.table(name)[COLUMNS].reset_index(drop=True)
        for name in SUMMARY
        if name in run.tables
    }


def same_summary(
    run: store.Run, original: store.Run
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """The summary tables of `run` and of `original` (`tables`), checked equal: both summary
    tables there, the same rows and cells."""
    got, want = tables(run), tables(original)
    assert set(got) == set(want) == set(SUMMARY)
    for name in SUMMARY:
        pd.testing.assert_frame_equal(got[name], want[name])
    return got, want


def test_an_email_reply_that_doubles_every_line_end_imports(tmp_path, capsys):
    """lanl/bml#478: the GPU activities table, every line of it followed by a blank one (it was
    refused, "the summary at line 15 has no rows (truncated?)"); six rows, to the ns."""
    run, err = imported(BML, tmp_path, capsys)
    assert err.strip() == f"profgen: warning: stage s: {BML}: {DOUBLE_SPACED_NOTE}"
    gpu = run.table("gpu_activities").set_index("name")
    assert list(gpu.index) == [
        "bml_multiply_AB_ellpack_single_real$_omp_fn$0",
        "[CUDA memcpy DtoH]",
        "[CUDA memcpy HtoD]",
        "bml_add_ellpack_single_real$_omp_fn$0",
        "bml_zero_matrix_ellpack_single_real$_omp_fn$2",
        "bml_zero_matrix_ellpack_single_real$_omp_fn$0",
    ]
    # line 23: `1.20%  4.5357ms  15  302.38us  1.6640us  490.08us  [CUDA memcpy DtoH]`
    dtoh = gpu.loc["[CUDA memcpy DtoH]"]
    assert [dtoh["total_ns"], dtoh["calls"], dtoh["min_ns"], dtoh["max_ns"]] == [
        4_535_700, 15, 1_664, 490_080
    ]  # fmt: skip
    assert list(gpu["calls"]) == [1, 15, 20, 1, 3, 3]
    assert list(gpu["total_ns"]) == [364_960_000, 4_535_700, 3_569_000, 1_809_200, 1_682_700,
                                     997_400]  # fmt: skip
    assert "api_calls" not in run.tables or run.table("api_calls").empty
    assert run.meta["inputs"][0]["raw"] == [f"raw/s/{BML.name}"]  # the file itself is kept


def test_a_double_spaced_log_gives_the_tables_of_the_log(tmp_path, capsys):
    """A real log of two tables (a summary, a blank line, then `==7809== API calls:`) with a
    blank line after every line: the same two tables as the log itself; the log's own blank
    line (three in a row once doubled) still ends the first table."""
    doubled = tmp_path / "affine-doubled.txt"
    doubled.write_bytes(AFFINE.read_bytes().replace(b"\n", b"\n\n"))
    run, _ = imported(doubled, tmp_path / "a", capsys)
    original, _ = imported(AFFINE, tmp_path / "b", capsys)
    _, want = same_summary(run, original)
    assert len(want["gpu_activities"]) == 4 and len(want["api_calls"]) == 18


def test_a_double_spaced_refusal_names_the_files_own_lines(tmp_path, capsys):
    """A cell that is no number, in a doubled real summary: the refusal names the line the cell
    is on in the file (2n - 1 for line n of the log), and says what was undone."""
    log = STREAM.read_text().splitlines(keepends=True)
    row = 7  # line 8: `13.34%  124.15ms  100  1.2415ms ... mul_kernel<double>(...)`
    log[row] = log[row].replace(" 100 ", " 1x0 ", 1)
    single, double = tmp_path / "single.txt", tmp_path / "double.txt"
    single.write_text("".join(log))
    double.write_text("".join(line + "\n" for line in log))
    said = refusal(single, tmp_path / "s", capsys)
    assert f"line {row + 1}" in said
    want = said.replace(str(single), str(double)).replace(f"line {row + 1}", f"line {2 * row + 1}")
    assert refusal(double, tmp_path / "d", capsys) == want[:-1] + f"; {DOUBLE_SPACED_NOTE})"


def test_a_quoted_nvprof_summary_imports_as_the_summary(tmp_path, capsys):
    """A real text summary (tests/data/nvprof/9.x/cuda-stream-summary.txt) with every line
    prefixed by `> `, as a GitHub reply quotes it: the tables of the summary itself (it was
    refused, recognised as nothing)."""
    quoted = tmp_path / "quoted.txt"
    quoted.write_text("".join("> " + line for line in STREAM.read_text().splitlines(True)))
    run, err = imported(quoted, tmp_path / "q", capsys)
    assert err.strip() == f"profgen: warning: stage s: {quoted}: {QUOTED_NOTE}"
    original, _ = imported(STREAM, tmp_path / "o", capsys)
    got, _ = same_summary(run, original)
    htod = got["gpu_activities"].set_index("name").loc["[CUDA memcpy DtoH]"]
    # `GPU activities:   20.21%  188.08ms  103  1.8260ms  928ns  62.822ms  [CUDA memcpy DtoH]`
    assert [htod["total_ns"], htod["calls"], htod["min_ns"], htod["max_ns"]] == [
        188_080_000, 103, 928, 62_822_000
    ]  # fmt: skip


def test_a_reply_quoting_an_ncu_error_is_refused_with_ncus_error(tmp_path, capsys):
    """NVIDIA/PyProf#142: prose, then ncu's output quoted with `> ` (it profiled nothing), then
    prose: refused as ncu output quoting ncu's `==ERROR==` line (it was refused as starting
    'Hi, again.')."""
    path = DATA / "ncu" / "any" / "pyprof-142-quoted-error-reply.txt"
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected Nsight Compute output (ncu's per-kernel `Section:` "
        "tables, or ncu --csv) (ncu profiled no kernel; it said '==ERROR== Error: Failed to "
        f"prepare kernel for profiling'; {QUOTED_NOTE})"
    )


def test_a_file_with_two_lines_in_a_row_is_not_double_spaced():
    """Every table has its header right above a row: no file that imports as it is is read as
    double-spaced (nor is the real log of two tables, one blank line between them)."""
    assert pasted.double_spaced(AFFINE.read_bytes()) is None
    assert not pasted.double_spaced_head(AFFINE.read_text())
    assert pasted.double_spaced(b"a\n\nb\n\nc\n") is None  # too few lines to tell
    shaped = pasted.double_spaced(b"a\n\nb\n\nc\n\n\n\nd\n\ne\n")
    assert shaped is not None
    assert shaped.data == b"a\nb\nc\n\nd\ne\n"
    assert shaped.lines.tolist() == [1, 3, 5, 6, 9, 11, 12]
    assert shaped.located("line 4: x; line 5") == "line 6: x; line 9"


def test_unquoting_takes_one_quote_mark_and_one_space():
    shaped = pasted.unquoted(b"hi\n> a  b\n>\n   >c\n    > d\n")
    assert shaped is not None and shaped.data == b"hi\na  b\n\nc\n    > d\n"
    assert pasted.unquoted(b"> one quoted line\nplain\n") is None


def test_nsys_output_in_a_cuda_files_line_comments_imports(tmp_path, capsys):
    """Strider221B/CudaExploration keeps `nsys profile --stats=true` output under its code in
    `//` comments: read without the comment marks (it was refused, recognised as nothing), the
    values those comments print."""
    path = DATA / "nsys" / "2023.x" / "cudaexploration-naive-matmul-commented.cu"
    run, err = imported(path, tmp_path, capsys)
    assert err.strip() == f"profgen: warning: stage s: {path}: {COMMENTED_NOTE}"
    kernel = run.table("gpu_activities").set_index("name")
    assert list(kernel.index) == ["matrixMultiply(float *, float *, float *, int, int, int)"]
    assert kernel.iloc[0][["calls", "total_ns", "min_ns"]].tolist() == [1, 11_431_056, 11_431_056]
    api = run.table("api_calls").set_index("name")
    # `//      27.6        211510369          3   70503456.3     720355.0     621565  210168449`
    assert api.loc["cudaMalloc", ["calls", "total_ns", "min_ns", "max_ns"]].tolist() == [
        3, 211_510_369, 621_565, 210_168_449
    ]  # fmt: skip
    assert len(api) == 5


def test_nsys_stats_in_a_batch_scripts_hash_comments_imports(tmp_path, capsys):
    """A DTU course's LSF job script keeps `nsys stats --timeunit ms` output (nsys 2022.4.2:
    osrtsum, cudaapisum, gpukernsum with GridXYZ and BlockXYZ columns, the two memory
    summaries) in `#` comments under the commands: read without the comment marks (it was
    refused, recognised as nothing), its milliseconds made nanoseconds."""
    path = DATA / "nsys" / "2022.4.2" / "dtu-02613-jobscript-stats-in-comments.sh"
    run, err = imported(path, tmp_path, capsys)
    assert err.strip() == f"profgen: warning: stage s: {path}: {HASHED_NOTE}"
    gpu = run.table("gpu_activities")
    assert len(gpu) == 10 and list(gpu["kind"]).count("kernel") == 8
    # `#      84.2           0.2009          1    0.2009 ...`: 0.2009 ms
    reduce = "cudapy::__main__::reduce_kernel[abi:v1,cw51cXTLSUwv1sCUt9Uw11Ew0NRRQPKzLTg4gaGKFsG2oMQGEYakJSQB1PQB…"  # noqa: E501
    assert gpu.iloc[:2][["name", "total_ns", "calls"]].values.tolist() == [
        ["[CUDA memcpy HtoD]", 3_323_400, 1],
        [reduce, 200_900, 1],
    ]
    api = run.table("api_calls").set_index("name")
    assert len(api) == 15
    assert api.loc["cuGetProcAddress", ["calls", "total_ns", "min_ns", "max_ns"]].tolist() == [
        384, 96_800, 100, 3_100
    ]  # fmt: skip


def test_nvprof_row_types_alone_on_their_lines_are_joined_to_their_rows(tmp_path, capsys):
    """Notes on a paper (CRLF line ends) hold nvprof's summary edited by hand: a blank line under
    the header, `GPU activities:` and `API calls:` alone on their lines, the first row of each
    type under them. Read with each type joined to its row (it was refused: a header without
    rows), the warning naming the first type's line."""
    path = NVPROF / "9.x" / "join-paper-notes-types-alone.txt"
    run, err = imported(path, tmp_path, capsys)
    note = pasted.RETYPED.format(line=53)
    assert err.strip() == f"profgen: warning: stage s: {path}: the file has {note}"
    gpu = run.table("gpu_activities").set_index("name")
    assert gpu.loc[:, ["calls", "total_ns"]].values.tolist() == [
        [4, 1_512_280_000],  # `       80.18%  1.51228s         4  ...  [CUDA memcpy HtoD]`
        [3, 311_030_000],
        [3, 61_664_000],
        [6, 1_021_500],
    ]
    api = run.table("api_calls").set_index("name")
    assert len(api) == 26
    assert api.loc["cudaMemcpy", ["calls", "total_ns", "min_ns", "max_ns"]].tolist() == [
        4, 1_511_720_000, 43_603_000, 712_020_000
    ]  # fmt: skip
    assert api.loc["cuModuleGetLoadingMode", "total_ns"] == 349


def test_retyping_joins_a_lone_type_to_the_row_under_it_only():
    row = b"80.00%  1.0ms  1  1.0ms  1.0ms  1.0ms  k\n"
    shaped = pasted.retyped(b"  Type  Time(%)  Time\n\n GPU activities:\n  " + row)
    assert shaped is not None
    assert shaped.data == b"  Type  Time(%)  Time\n GPU activities:  " + row
    assert shaped.lines.tolist() == [1, 3, 5]
    assert pasted.retyped(b"GPU activities:\nsome prose\n") is None  # no summary row under it


def test_unhashing_takes_the_hash_and_one_space():
    shaped = pasted.unhashed(b"#!/bin/sh\nrun # x\n#  b\n#\n   #c\n")
    assert shaped is not None and shaped.data == b"!/bin/sh\nrun # x\n b\n\nc\n"
    assert shaped.note == pasted.HASHED
    assert pasted.unhashed(b"# one commented line\nplain\n") is None


def test_uncommenting_takes_the_slashes_and_one_space():
    shaped = pasted.uncommented(b"int a; // x\n//  b\n//\n   //c\n/ d\n")
    assert shaped is not None and shaped.data == b"int a; // x\n b\n\nc\n/ d\n"
    assert shaped.note == pasted.COMMENTED
    assert pasted.uncommented(b"// one commented line\nplain\n") is None
    assert pasted.uncommented(b"/\n/ /\n") is None


LBP = NVPROF / "8.x" / "lbp-text-metrics.txt"
MESHMODE = NVPROF / "9.x" / "meshmode-103-kernel-above-header-metrics.txt"


def test_metrics_pasted_with_the_kernel_line_above_the_header_read_as_nvprof_printed(tmp_path):
    """A real `--metrics` table (lbp-text-metrics.txt: header, `Device`, `Kernel:`, 7 rows) with
    its `Device` and `Kernel:` lines moved above the header, as inducer/meshmode#103 pastes it:
    the same metrics row as the file itself (it was refused, "a metric row with no `Kernel:`
    line above it")."""
    lines = LBP.read_text().splitlines(keepends=True)
    header = next(i for i, line in enumerate(lines) if line.startswith("Invocations"))
    assert lines[header + 1].startswith("Device") and "Kernel:" in lines[header + 2]
    moved = tmp_path / "moved.txt"
    moved.write_text("".join(lines[header + 1 : header + 3] + lines[header : header + 1]
                             + lines[header + 3 :]))  # fmt: skip
    got, want = nvprof.read_log(moved, "s")["metrics"], nvprof.read_log(LBP, "s")["metrics"]
    pd.testing.assert_frame_equal(got, want)
    assert len(got) == 1 and got["name"].iloc[0].startswith("void thrust::system::cuda::")
    assert got["achieved_occupancy_pct"].iloc[0] == pytest.approx(51.7002)  # 0.517002


def test_the_meshmode_paste_is_read_and_imported_as_counters(tmp_path, capsys):
    """inducer/meshmode#103: `Kernel: resample_by_picking` above the header, then six rows: read
    as that kernel's rows (it was refused: "the rows had no `Kernel:` line"); none of its
    metrics is one the metrics table holds, so the run has its six counters and no metrics."""
    text, tables, _ = nvprof._found(MESHMODE)
    rows = nvprof_metrics.text_rows(tables[0].origin, tables[0].raw, tables[0].breaks,
                                    tables[0].above)  # fmt: skip
    assert rows.kernels == ["resample_by_picking"] and list(rows.kernel) == [0] * 6
    assert rows.metrics == [
        "inst_per_warp",
        "branch_efficiency",
        "warp_execution_efficiency",
        "warp_nonpred_execution_efficiency",
        "inst_replay_overhead",
        "shared_load_transactions_per_request",
    ]
    every = np.arange(6)
    assert rows.cells["invocations"].pick(every) == ["2", "2", "2", "2", "1", "2"]
    assert rows.cells["avg"].pick(every)[:2] == ["274.000000", "80.00%"]
    run, _ = imported(MESHMODE, tmp_path, capsys)
    counters = run.table("counters")
    assert counters["metric"].tolist() == rows.metrics
    assert set(counters["name"]) == {"resample_by_picking"}
    assert counters["value"].tolist()[:2] == [274.0, 80.0] and counters["unit"].iloc[1] == "%"
    assert not run.has("metrics")


MESHMODE_ROWS = NVPROF / "9.x" / "meshmode-103-summary-rows-without-header.txt"


def headed_note(line: int) -> str:
    """The warning of a paste of nvprof summary rows without their header (from `line`)."""
    return (
        f"the file has nvprof summary rows with no header line above them (from line {line}): "
        "read under the one header nvprof prints above rows that start with their type (Type "
        "Time(%) Time Calls Avg Min Max Name)"
    )


def test_summary_rows_pasted_from_gpu_activities_down_import(tmp_path, capsys):
    """inducer/meshmode#103: 17 rows pasted from ` GPU activities:` down, no header line above
    them (it was refused: "a paste that left the header out"); the rows to the ns."""
    run, err = imported(MESHMODE_ROWS, tmp_path, capsys)
    assert err.strip() == f"profgen: warning: stage s: {MESHMODE_ROWS}: {headed_note(1)}"
    gpu = run.table("gpu_activities").set_index("name")
    assert len(gpu) == 17 and gpu["calls"].sum() == 133_840
    # line 1: `GPU activities: 15.95% 1.72898s 28160 61.398us 3.4240us 133.22us resample_by_picking`
    # line 17: `0.00%  359.81us  6  59.967us  5.0880us  115.14us  divide`
    picked, divide = gpu.loc["resample_by_picking"], gpu.loc["divide"]
    assert [picked["total_ns"], picked["calls"], picked["min_ns"], picked["max_ns"]] == [
        1_728_980_000, 28_160, 3_424, 133_220
    ]  # fmt: skip
    assert [divide["total_ns"], divide["calls"], divide["min_ns"], divide["max_ns"]] == [
        359_810, 6, 5_088, 115_140
    ]  # fmt: skip
    assert gpu.loc["[CUDA memcpy DtoH]", "total_ns"] == 233_960_000
    assert "api_calls" not in run.tables or run.table("api_calls").empty


def test_rows_below_prose_are_located_at_their_file_line(tmp_path, capsys):
    """The meshmode rows under the issue's own prose (as its page shows them): the same table,
    and the warning names the file line of the first row."""
    prose = "Here's an example from a run (mirgecom wave-eager, nel_1d = 24, 3D, order 3):\n\n"
    page = tmp_path / "page.txt"
    page.write_text(prose + MESHMODE_ROWS.read_text())
    run, err = imported(page, tmp_path / "p", capsys)
    assert err.strip() == f"profgen: warning: stage s: {page}: {headed_note(3)}"
    alone, _ = imported(MESHMODE_ROWS, tmp_path / "a", capsys)
    pd.testing.assert_frame_equal(tables(run)["gpu_activities"], tables(alone)["gpu_activities"])


def test_a_summary_without_its_header_line_gives_the_summarys_tables(tmp_path, capsys):
    """A real summary's rows (cuda-stream-summary.txt without its `==PID==` lines and header):
    its GPU activities and API calls tables exactly, the API calls rows read under the same
    header (nvprof prints one above both types)."""
    rows = tmp_path / "rows.txt"
    rows.write_text("".join(STREAM.read_text().splitlines(True)[4:]))
    run, err = imported(rows, tmp_path / "r", capsys)
    assert err.strip() == f"profgen: warning: stage s: {rows}: {headed_note(1)}"
    original, _ = imported(STREAM, tmp_path / "o", capsys)
    same_summary(run, original)


def test_a_header_goes_above_each_run_of_typed_rows():
    """Above a run's first row when it carries its type and no summary row is above it: a
    type that follows a row (API calls after GPU activities) continues the table."""
    gpu = b" GPU activities:   60.00%  6.0000ms  1  6.0000ms  6.0000ms  6.0000ms  k\n"
    more = b"                   40.00%  4.0000ms  1  4.0000ms  4.0000ms  4.0000ms  j\n"
    api = b"      API calls:  100.00%  1.0000ms  1  1.0000ms  1.0000ms  1.0000ms  cudaFree\n"
    shaped = pasted.headed(b"prose\n" + gpu + more + b"\n" + api)
    assert shaped is not None
    head = pasted.NVPROF_HEADER
    assert shaped.data == b"prose\n" + head + gpu + more + b"\n" + head + api
    assert shaped.lines.tolist() == [1, 2, 2, 3, 4, 5, 5, 6]
    assert shaped.located("line 3; line 7") == "line 2; line 5"
    joined = pasted.headed(gpu + api)
    assert joined is not None and joined.data == head + gpu + api
    assert pasted.headed(more + api.replace(b"API calls:", b"          ")) is None  # no type
    assert pasted.headed(b" GPU activities: 60% of the time\n") is None  # no row


OCEANANIGANS = NVPROF / "9.x" / "oceananigans-1912-untyped-rows-then-api.md"


def test_untyped_rows_above_the_first_row_type_are_said_not_read(tmp_path, capsys):
    """CliMA/Oceananigans.jl#1912: two summary rows with neither header nor row type (another
    run's GPU activities tail), prose, then `API calls:` rows. The API calls import under nvprof's
    header; the two rows cannot be typed, and the warning says they are not read (they were
    dropped without a word)."""
    run, err = imported(OCEANANIGANS, tmp_path, capsys)
    left = (
        "; 2 summary rows with no header or row type above them (lines 2-3) are not read: nothing "
        "says if they are GPU activities or API calls"
    )
    said = run.meta["inputs"][0]["warnings"]  # the whole text: a terminal line is clipped
    assert said[0] == f"{OCEANANIGANS}: {headed_note(7)}{left}" and "(lines 2-3)" in err
    api = run.table("api_calls").set_index("name")
    # line 7: `API calls: 70.92% 702.12ms 468805 1.4970us 1.2730us 101.02us cuStreamQuery`
    # line 12: `0.03% 344.38us 20 17.218us 12.297us 22.727us cuMemAlloc`
    assert api.index.tolist()[0] == "cuStreamQuery" and len(api) == 6
    assert api.loc["cuStreamQuery", ["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        702_120_000, 468_805, 1_273, 101_020
    ]  # fmt: skip
    assert api.loc["cuMemAlloc", ["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        344_380, 20, 12_297, 22_727
    ]  # fmt: skip
    assert not run.has("gpu_activities")


def test_only_rows_that_no_typed_row_is_above_are_said_left():
    """Rows under a typed row (right under it or under rows under it) are read; an untyped run
    before the first type, or after a blank line, is said left out with its lines."""
    gpu = b" GPU activities:   60.00%  6.0000ms  1  6.0000ms  6.0000ms  6.0000ms  k\n"
    more = b"                   40.00%  4.0000ms  1  4.0000ms  4.0000ms  4.0000ms  j\n"
    whole = pasted.headed(gpu + more + more)
    assert whole is not None and whole.note == pasted.HEADED.format(line=1)
    cut = pasted.headed(more + b"\n" + gpu + more + b"\n" + more + more)
    assert cut is not None
    assert cut.note == pasted.HEADED.format(line=3) + pasted.UNTYPED_LEFT.format(
        rows=3, first=1, last=7
    )


def test_an_nvprof_summary_laid_out_as_a_markdown_pipe_table_imports(tmp_path, capsys):
    """A Spanish exam report (carlosmx45/Programacion_Paralela_CJFM, its first two reports, CRLF
    line ends) rewrites each nvprof summary as a Markdown pipe table under its `==PID==` lines:
    read as nvprof's text summary, a stage per run (it was refused: no nvprof table header)."""
    path = NVPROF / "9.x" / "cjfm-exam-pipe-tables-head.md"
    run, err = imported(path, tmp_path, capsys)
    assert err.strip() == f"profgen: warning: stage s: {path}: the file has {pasted.PIPED}"
    stages = run.table("stages")
    titles = ["s, run 1 of 2: ./memTransfer", "s, run 2 of 2: ./pinMemTransfer"]
    assert list(stages["title"]) == titles
    assert stages["technique"].iloc[1].endswith("its tables from line 117")  # the file's own
    gpu = run.table("gpu_activities").set_index(["stage", "name"])
    # line 12: `| GPU activities: |  51.53% | 4.4243ms  |  1 | 4.4243ms | ... | [CUDA memcpy DtoH]|`
    assert gpu.loc[("s.1", "[CUDA memcpy DtoH]"), ["total_ns", "calls"]].tolist() == [4_424_300, 1]
    assert gpu.loc[("s.2", "[CUDA memcpy HtoD]"), "total_ns"] == 2_945_800  # line 120
    api = run.table("api_calls").set_index(["stage", "name"])
    assert [len(api.loc["s.1"]), len(api.loc["s.2"])] == [13, 15]  # lines 14-26, 121-135
    # line 19: `|  |  0.00% | 22.965us  |  101 |  227ns |  130ns | 1.1720us | cuDeviceGetAttribute|`
    attr = api.loc[("s.1", "cuDeviceGetAttribute")]
    assert attr[["total_ns", "calls", "avg_ns", "min_ns", "max_ns"]].tolist() == [
        22_965, 101, 227, 130, 1_172
    ]  # fmt: skip
    assert api.loc[("s.2", "cudaHostAlloc"), "total_ns"] == 692_700_000  # line 121


def test_an_nvprof_summary_rebuilt_as_a_pipe_table_without_min_max_says_they_are_missing(
    tmp_path, capsys
):
    """Synthetic, written from a README's layout (its repository is unknown, so it is not in
    tests/data): an nvprof summary rebuilt by hand as a Markdown pipe table, the type a bold
    cell on a row of its own, kernel names in backticks and no Min or Max column. The bars are
    made spaces, but no nvprof header is found: the refusal says which columns nvprof prints
    that the header lacks (it said only that the bars were made spaces)."""
    path = tmp_path / "steps.md"
    path.write_text(
        "# Optimisation\n\nFrom the profiling summary:\n\n"
        "| Type            | Time(%) | Time      | Calls | Avg      | Name                 |\n"
        "|-----------------|---------|-----------|-------|----------|----------------------|\n"
        "| **GPU activities:**  |    |           |       |          |                      |\n"
        "|                 | 61.20%  | 5.1200us  | 1     | 5.1200us | `scan_kernel(int*)`  |\n"
        "|                 | 38.80%  | 3.2460us  | 2     | 1.6230us | [CUDA memcpy HtoD]   |\n"
    )
    assert refusal(path, tmp_path, capsys).endswith(
        f"the file has {pasted.PIPED}, but its nvprof summary header (line 5) lacks columns "
        "nvprof prints: Min, Max)"
    )


def test_unpiping_makes_inner_bars_spaces_and_drops_the_rule():
    shaped = pasted.unpiped(b"text | a\n| Type | Time(%) |\r\n|:---:|---|\r\n| GPU | 1% |\nend\n")
    assert shaped is not None and shaped.note == pasted.PIPED
    assert shaped.data == b"text | a\n  Type    Time(%) \r\n  GPU    1% \nend\n"
    assert shaped.lines.tolist() == [1, 2, 4, 5, 6]
    assert pasted.unpiped(b"| one row |\nplain\n") is None
