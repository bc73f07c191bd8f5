"""Terminal captures (issue 14): prompts, commands, program output and several tools' output in
one file. The tables are found and read by the ordinary parsers, section by section; the rest
is passed over. Every file in tests/data/captures/ (see its README) is checked for the values
it yields, worked out from the file itself or from its sources in this corpus.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from clirun import assert_refused, profgen

from profiler import import_capture, schema, store
from profiler.errors import ParseError
from profiler.parse import capture, detect, nsys_capture, nsys_text, nvprof
from profiler.parse.table_origin import Origin

DATA = Path(__file__).parent / "data"
CAPTURES = DATA / "captures"
RUNS_MD = CAPTURES / "nvprof-runs-in-markdown.md"
ZSH_NSYS = CAPTURES / "nsys-csv-zsh-prompts.md"
STATS_TRUE = CAPTURES / "nsys-stats-true-prompts.md"
SUMMARY_TRACE = CAPTURES / "assembled-nvprof-summary-then-gpu-trace.csv"
NSYS_THEN_NCU_CSV = CAPTURES / "vernier-nsys-csv-then-ncu-csv-elided-cut.md"
NVPROF_NSYS = CAPTURES / "assembled-nvprof-then-nsys.txt"
PADDED_NSYS = CAPTURES / "assembled-nvprof-then-padded-nsys.txt"
CUDA_STREAM = DATA / "nvprof" / "9.x" / "cuda-stream-summary.txt"
CFD_SUMMARY = DATA / "nvprof" / "9.x" / "cfd-csv-summary.csv"
CFD_TRACE = DATA / "nvprof" / "9.x" / "cfd-csv-gpu-trace-head.csv"
DEMO_STDOUT = DATA / "nsys" / "2025.3.1" / "demo" / "nsys-stats-stdout.txt"
TRACES = CAPTURES / "nvprof-text-gpu-traces-elided.md"
HUGEPAGES = DATA / "nsys" / "2023.x" / "nsys-nvprof-gpu-trace-hugepages.md"


def imported(capsys, tmp: Path, *stages: str, code: int = 0):  # type: ignore[no-untyped-def]
    argv = ["import", "--model", "cap", "--out", tmp]
    result = profgen([*argv, *(a for s in stages for a in ("--stage", s))], capsys)
    assert result.code == code, result.err
    return result, store.load_run(result.out.strip().splitlines()[-1]) if code == 0 else None


def rows(run: store.Run, table: str) -> pd.DataFrame:
    return run.table(table).drop(columns="stage").reset_index(drop=True)


# --- cutting ----------------------------------------------------------------------------------


def test_several_tools_or_an_elided_paste_make_a_capture_one_tool_alone_does_not() -> None:
    """Several tools' output (or a paste that elides rows, or nsys runs that each name one
    report) is a capture; one tool's output, with prompts, Markdown and program output around
    it, is left to that tool's parser, which finds its tables there and applies its own rule to
    several runs."""
    for path in (ZSH_NSYS, NVPROF_NSYS, STATS_TRUE, HUGEPAGES):
        assert detect.detect(path) == detect.CAPTURE, path
    for path in (RUNS_MD, SUMMARY_TRACE, CUDA_STREAM, CFD_SUMMARY, CFD_TRACE):
        assert detect.detect(path) == detect.NVPROF, path
    assert detect.detect(DEMO_STDOUT) == detect.NSYS_TEXT


def test_runs_are_cut_apart_by_their_pids() -> None:
    sections = [s for s in capture.split(RUNS_MD.read_text()) if s.tool]
    assert [s.first_line for s in sections] == [3, 37, 72, 108, 143, 176, 210, 248, 275, 305, 337]
    assert {s.tool for s in sections} == {capture.NVPROF} and not any(s.command for s in sections)
    firsts = [s.text.split("\n", 1)[0] for s in sections]
    assert firsts[0] == "==1049== NVPROF is profiling process 1049, command: ./sumArrayZerocpy"
    assert firsts[-1].startswith("==985== ")


def test_a_padded_nsys_step_line_starts_nsys_output() -> None:
    """`[ 5/11] Executing 'cuda_api_sum' stats report` (nsys pads its step counter when it runs
    ten reports or more) starts nsys's section: its tables are not left in nvprof's above."""
    sections = [s for s in capture.split(PADDED_NSYS.read_text()) if s.tool]
    assert [(s.first_line, s.tool) for s in sections] == [(1, capture.NVPROF), (29, capture.NSYS)]
    assert sections[1].text.startswith("[ 5/11] Executing 'cuda_api_sum' stats report\n")


def test_prompts_name_the_command_of_each_section() -> None:
    """Line 266: an indented prompt; line 346: nsys's output starting again with no prompt
    above it (`Generating '/tmp/nsys-report-7b1c.qdstrm'`)."""
    sections = [s for s in capture.split(STATS_TRUE.read_text()) if s.tool]
    assert [s.first_line for s in sections] == [12, 96, 182, 266, 346]
    outputs = [str(s.command).rsplit("-o ", 1)[1] for s in sections[:4]]
    assert outputs == [
        "vector_add_profile_v3   ./bench_a100",
        "vector_add_profile_v4   ./bench_a100",
        "vector_add_profile_v5_N50M   ./bench_a100",
        "vector_add_profile_serial   ./bench_a100",
    ]
    assert all(s.command.startswith("sudo $(which nsys) profile") for s in sections[:4])  # type: ignore[union-attr]
    assert sections[4].command is None
    assert all(s.reports.count("nvtx_sum") == 1 for s in sections)


def test_an_elision_ends_a_section_and_is_recorded() -> None:
    (nsys,) = [s for s in capture.split(ZSH_NSYS.read_text()) if s.tool]
    assert (
        nsys.command
        == "nsys stats --format csv --output - --report cuda_api_trace report1.nsys-rep"
    )
    assert (nsys.first_line, nsys.elided) == (62, (70,))
    assert nsys.text.splitlines()[-1] == "637060753,367537,cudaMemcpy,0,122,811552,811552,20,saxpy"


@pytest.mark.parametrize(
    "line, command",
    [
        ("$ nvprof ./a.out", "nvprof ./a.out"),
        ("    $ nvprof ./a.out", "nvprof ./a.out"),
        ("% sudo nvprof --print-gpu-trace ./vadd", "sudo nvprof --print-gpu-trace ./vadd"),
        ("-bash-4.1$ nvprof ./a", "nvprof ./a"),
        ("[zzb@Workstation-4 bin]$ nvprof ./aes_test -m ENC", "nvprof ./aes_test -m ENC"),
        ("ady@skr-compute1:/tmp/x$ nvprof ./c.out", "nvprof ./c.out"),
        ("(base) root@9f2c:/workspace# nsys stats r.nsys-rep", "nsys stats r.nsys-rep"),
        ("k2/build$ nsys nvprof ./bin/test", None),  # no user@host: not a prompt profgen knows
        (r"PS C:\work> ncu --csv .\a.exe", r"ncu --csv .\a.exe"),
        ("# nvprof 性能分析", None),  # a Markdown heading
        ("> Compute 6.1 CUDA device: [GeForce GTX 1070]", None),  # what CUDA's samples print
        ("100.00%  463.25ms         1  463.25ms  463.25ms  463.25ms  add(int)", None),
        (" GPU activities:   33.33%  3.5200us         1  3.5200us  sumArrays(float*)", None),
        ("456173024,2155,cuModuleGetLoadingMode,0,1,811552,811552,20,saxpy", None),
    ],
)  # fmt: skip
def test_what_is_a_prompt(line: str, command: str | None) -> None:
    assert capture._prompt(line) == command


@pytest.mark.parametrize(
    "line, tool",
    [
        ("==8123== Profiling application: ./cuda-stream", (capture.NVPROF, "8123")),
        ("==PROF== Connected to process 3300 (/usr/bin/python3.10)", (capture.NCU, None)),
        ("[3/8] Executing 'nvtx_sum' stats report", (capture.NSYS, None)),
        ("[1/8] [========================100%] vector_add_v3.nsys-rep", (capture.NSYS, None)),
        ("Generating '/tmp/nsys-report-2ee6.qdstrm'", (capture.NSYS, None)),
        ("[1/10] epoch 1, loss 0.31", (None, None)),  # a program's progress, not nsys's
        ("======== Warning: No CUDA application was profiled, exiting", (capture.NVPROF, None)),
        ("========", (None, None)),  # a Markdown heading's underline
        ("======== ", (None, None)),
        ("Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.291555", (None, None)),
    ],
)  # fmt: skip
def test_whose_output_a_line_is(line: str, tool: tuple[str | None, str | None]) -> None:
    assert capture._signature(line, paragraph_start=False) == tool


def capture_with_blank_runs(n: int) -> str:
    """A capture of `n` rows of a real trace, then a 1,000,000-space prompt line and a
    1,000,000-character `=` line."""
    rows = CFD_TRACE.read_text().split("\n", 5)[5].splitlines()  # data rows of the trace
    text = "$ nvprof --csv --print-gpu-trace ./cfd\n" + CFD_TRACE.read_text()
    text += "\n".join(rows[i % len(rows)] for i in range(n)) + "\n"
    return text + "$ " + " " * 1_000_000 + "x\n" + "=" * 1_000_000 + "\n"


def test_a_capture_with_long_runs_of_blanks_is_cut_in_two() -> None:
    """Trace rows, then the long lines: two sections (how long 400,000 rows take:
    tests/benchmarks/test_bench_parse.py)."""
    assert len(capture.split(capture_with_blank_runs(4_000))) == 2


# --- importing ----------------------------------------------------------------------------------


def test_several_nvprof_runs_are_a_stage_each(tmp_path, capsys):
    """Eleven runs of different programs in one README: each run is a stage of its own, titled
    with the program it profiled and giving that run's rows."""
    result, run = imported(capsys, tmp_path, f"s={RUNS_MD}")
    assert result.err == ""
    stages = run.table("stages")
    assert list(stages["stage"]) == [f"s.{n}" for n in range(1, 12)]
    assert stages["title"].iloc[0] == "s, run 1 of 11: ./sumArrayZerocpy"
    assert stages["title"].iloc[10] == "s, run 11 of 11: ./readSegmentUnroll"
    firsts = [s.first_line for s in capture.split(RUNS_MD.read_text()) if s.tool]
    tables = [n + 4 for n in firsts]  # each run's table starts 4 lines below its first line
    assert list(stages["technique"]) == [
        f"imported from nvprof output: run {n} of 11, its tables from line {line}"
        for n, line in enumerate(tables, 1)
    ]
    gpu = run.table("gpu_activities").set_index(["stage", "name"])
    # line 8: `33.33%  3.5200us  1  3.5200us  3.5200us  3.5200us  sumArraysZeroCopy(...)`
    zero_copy = gpu.loc[("s.1", "sumArraysZeroCopy(float*, float*, float*, int)")]
    assert zero_copy[["total_ns", "calls", "min_ns"]].tolist() == [3_520, 1, 3_520]
    assert len(gpu.loc["s.1"]) == 4  # lines 8-11
    # line 342: `64.13%  2.0672ms  3  689.07us  470.56us  864.49us  [CUDA memcpy DtoH]`
    dtoh = gpu.loc[("s.11", "[CUDA memcpy DtoH]")]
    assert dtoh[["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        2_067_200,
        3,
        470_560,
        864_490,
    ]
    assert len(gpu.loc["s.11"]) == 7  # lines 342-348
    assert gpu.loc[("s.11", "[CUDA memset]"), "total_ns"] == 62_593  # line 344: 62.593us


def test_two_nvprof_runs_around_another_tools_output_are_two_stages(tmp_path, capsys):
    """In a capture of several tools, two nvprof runs giving one table are two stages: the
    first with the nsys output that follows it (the same program's), the second on its own."""
    again = CUDA_STREAM.read_text().replace("==8123==", "==8124==")
    again = again.replace("620.29ms", "620.31ms", 1)  # (run again: a time its own, not a quote)
    path = tmp_path / "log.txt"
    path.write_text(NVPROF_NSYS.read_text() + "$ nvprof ./cuda-stream\n" + again)
    result, run = imported(capsys, tmp_path / "o", f"s={path}")
    stages = run.table("stages")
    assert list(stages["stage"]) == ["s.1", "s.2"]
    assert list(stages["title"]) == [f"s, run {n} of 2: nvprof ./cuda-stream" for n in (1, 2)]
    second = len(NVPROF_NSYS.read_text().splitlines()) + 2
    said = "imported from a terminal capture: nvprof output at line "
    assert stages["technique"].iloc[0].startswith(f"{said}2, `nvprof ./cuda-stream` (api_calls")
    assert "nsys stats output at line 31" in stages["technique"].iloc[0]
    assert stages["technique"].iloc[1] == (
        f"{said}{second}, `nvprof ./cuda-stream` (api_calls, gpu_activities)"
    )
    gpu = run.table("gpu_activities")
    two = gpu[gpu["stage"] == "s.2"].set_index("name")
    # `20.21%  188.08ms  103  1.8260ms  928ns  62.822ms  [CUDA memcpy DtoH]`
    assert two.loc["[CUDA memcpy DtoH]", ["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        188_080_000,
        103,
        928,
        62_822_000,
    ]
    assert len(two) == 7 and two["calls"].sum() == 103 + 5 * 100 + 1
    assert set(run.table("gpu_trace")["stage"]) == {"s.1"}  # nsys's trace, of the first run


def test_typed_nvprof_runs_without_pids_are_told_apart(tmp_path):
    """Five `nvprof --print-gpu-trace` runs of different programs in a README, the PIDs and
    `Profiling result:` lines cut by the paste (`[...]`, and `[...warmup...]` right under the
    header): the prompts (and fences) tell the runs apart, the elision marks are left out of
    each run's table, and each trace gives the rows the file prints."""
    sections = [s for s in capture.split(TRACES.read_text()) if "Start  Duration" in s.text]
    assert [s.first_line for s in sections] == [31, 50, 64, 78, 92]
    assert [s.elided for s in sections] == [(32, 34), (49, 51), (63, 65), (77, 79), (91, 93)]
    assert [s.tool for s in sections] == [None] + [capture.NVPROF] * 4  # the first has no `$`
    assert sections[0].file_line(3) == 35  # its first row, below two left-out marks
    traces = []
    for s in sections:
        file = tmp_path / f"{s.first_line}.txt"
        file.write_text(s.text)
        traces.append(nvprof.read_log(file, "s")["gpu_trace"])
    # `461.73ms  72.703us ... [CUDA memcpy HtoD]` ... `465.48ms  72.032us ... [CUDA memcpy DtoH]`
    assert list(traces[0]["start_ns"]) == [461_730_000, 461_830_000, 463_070_000, 465_480_000]
    assert list(traces[0]["duration_ns"]) == [72_703, 1_226_700, 2_385_100, 72_032]
    assert list(traces[3]["duration_ns"]) == [1_084_100, 20_323_000, 25_289_000, 1_097_700]
    assert list(traces[4]["duration_ns"]) == [68_671, 16_297_000, 602_750]
    assert list(traces[4]["kind"]) == [schema.MEMSET, schema.KERNEL, schema.KERNEL]


def test_typed_nvprof_runs_are_a_stage_each(tmp_path, capsys):
    """The five runs told apart by their prompts: five stages, each with its own run's trace
    (the rows the file prints, as `test_typed_nvprof_runs_without_pids_are_told_apart` reads
    them), titled with the command typed when there is one, else with the Markdown heading
    the run is under."""
    result, run = imported(capsys, tmp_path, f"s={TRACES}")
    stages = run.table("stages")
    assert list(stages["stage"]) == [f"s.{n}" for n in range(1, 6)]
    # typed without a prompt: titled by its heading (line 22), in no fence
    heading = "PGI OpenACC Implementation 256x256 (talpha=0.0)"
    assert stages["title"].iloc[0] == f"s, run 1 of 5: {heading}"
    assert stages["title"].iloc[4] == (
        "s, run 5 of 5: nvprof --print-gpu-trace ../release_cuda/popcorn2d_cuda testc 0.1 0 1 "
        "1024 1024 1"
    )
    trace = run.table("gpu_trace")
    one = trace[trace["stage"] == "s.1"]
    assert list(one["start_ns"]) == [461_730_000, 461_830_000, 463_070_000, 465_480_000]
    assert list(one["duration_ns"]) == [72_703, 1_226_700, 2_385_100, 72_032]
    four = trace[trace["stage"] == "s.4"]
    assert list(four["duration_ns"]) == [1_084_100, 20_323_000, 25_289_000, 1_097_700]
    five = trace[trace["stage"] == "s.5"]
    assert list(five["duration_ns"]) == [68_671, 16_297_000, 602_750]
    assert list(five["kind"]) == [schema.MEMSET, schema.KERNEL, schema.KERNEL]
    assert "line 92: rows elided at line 91, 93: tables partial" in result.err


def test_one_typed_run_whose_rows_a_paste_elided_imports_as_partial(tmp_path, capsys):
    """Lines 47-55 of the README alone: one run, its header and rows around `[...warmup...]`."""
    path = tmp_path / "one.md"
    path.write_text("".join(TRACES.read_text().splitlines(keepends=True)[46:55]))
    assert detect.detect(path) == detect.CAPTURE
    result, run = imported(capsys, tmp_path / "out", f"s={path}")
    trace = rows(run, "gpu_trace")
    assert list(trace["start_ns"]) == [444_670_000, 444_690_000, 445_760_000]
    assert list(trace["duration_ns"]) == [11_872, 1_045_700, 39_295]
    stage = run.table("stages").iloc[0]
    assert stage["timing"] == schema.GPU_SPAN
    assert stage["median_ns"] == 445_760_000 + 39_295 - 444_670_000  # first start to last end
    assert "one.md: line 4: rows elided at line 3, 5: tables partial" in result.err  # the header
    said = "nvprof output at line 4, `nvprof --print-gpu-trace popcorn2d_cuda testc"
    assert stage["technique"].startswith(f"imported from a terminal capture: {said}")


def test_nsys_csv_after_prompts_and_an_elision(tmp_path, capsys):
    result, run = imported(capsys, tmp_path, f"s={ZSH_NSYS}")
    trace = rows(run, "api_trace")
    assert list(trace["name"]) == [
        "cuModuleGetLoadingMode",
        "cudaMalloc",
        "cudaMalloc",
        "cudaMemcpy",
    ]
    assert list(trace["start_ns"]) == [456173024, 459348415, 630087558, 637060753]
    assert list(trace["duration_ns"]) == [2155, 170736162, 1270617, 367537]
    assert list(trace["correlation_id"]) == [1, 118, 120, 122]
    calls = rows(run, "api_calls").set_index("name")
    assert calls.loc["cudaMalloc", "calls"] == 2
    assert calls.loc["cudaMalloc", "total_ns"] == 170736162 + 1270617
    stage = run.table("stages").iloc[0]
    assert pd.isna(stage["timing"]) and pd.isna(stage["median_ns"])  # no GPU data at all
    assert "rows elided at line 70: tables partial" in result.err
    assert "`nsys stats --format csv --output - --report cuda_api_trace" in stage["technique"]
    assert "partial: the paste elides rows" in stage["technique"]
    assert not run.has("gpu_activities")


def test_nsys_csv_then_an_ncu_csv_are_both_tools_output(tmp_path, capsys):
    """An ncu CSV header opening a paragraph starts ncu's output: the nsys CSV above it is
    not left out for the ncu table, whose `...` lines are elisions, not a cut-short row."""
    result, run = imported(capsys, tmp_path, f"s={NSYS_THEN_NCU_CSV}")
    kernels = rows(run, "gpu_activities")
    saxpy = (
        "vernier::bench::demo::<unnamed>::saxpyKernel(float, const float *, float *, unsigned long)"
    )
    assert list(kernels["name"]) == [saxpy]
    assert list(kernels["total_ns"]) == [179106560] and list(kernels["calls"]) == [61]
    assert list(kernels["max_ns"]) == [3829824]
    counters = rows(run, "counters")
    assert list(counters["metric"]) == ["Theoretical Occupancy", "Achieved Occupancy"] * 2
    assert list(counters["value"]) == [100.0, 74.92, 50.0, 28.52]
    assert list(counters["min"]) == [100.0, 73.56, 50.0, 27.46]
    assert "rows elided at line 26, 29, 32: tables partial" in result.err


def test_a_summary_and_a_gpu_trace_are_imported_as_both(tmp_path, capsys):
    _, run = imported(capsys, tmp_path, f"s={SUMMARY_TRACE}")
    summary = nvprof.read_log(CFD_SUMMARY, "s")
    trace = nvprof.read_log(CFD_TRACE, "s")["gpu_trace"]
    pd.testing.assert_frame_equal(run.table("gpu_activities"), summary["gpu_activities"])
    pd.testing.assert_frame_equal(run.table("api_calls"), summary["api_calls"])
    got = run.table("gpu_trace")
    assert len(got) == len(trace) and list(got["name"]) == list(trace["name"])
    assert list(got["duration_ns"]) == list(trace["duration_ns"])
    stage = run.table("stages").iloc[0]  # the printed summary is whole: it is what is kept
    assert stage["timing"] == schema.GPU_SPAN
    assert stage["median_ns"] == int(trace["end_ns"].max() - trace["start_ns"].min())
    assert stage["technique"] == "imported from nvprof output"  # nvprof's parser reads both


def test_nvprof_and_nsys_output_in_one_terminal(tmp_path, capsys):
    result, run = imported(capsys, tmp_path, f"s={NVPROF_NSYS}")
    printed = nvprof.read_log(CUDA_STREAM, "s")
    nsys = nsys_capture.read_stats_stdout(DEMO_STDOUT, "s")
    pd.testing.assert_frame_equal(run.table("gpu_activities"), printed["gpu_activities"])
    pd.testing.assert_frame_equal(run.table("api_calls"), printed["api_calls"])  # the first's
    got = run.table("gpu_trace")
    assert list(got["name"]) == list(nsys["gpu_trace"]["name"])
    assert list(got["duration_ns"]) == list(nsys["gpu_trace"]["duration_ns"])
    pd.testing.assert_frame_equal(
        run.table("ranges").drop(columns=["gpu_total_ns", "gpu_ops"]),
        nsys["ranges"].drop(columns=["gpu_total_ns", "gpu_ops"]),
    )
    sections = run.meta["inputs"][0]["sections"]
    assert [(s["line"], s["kind"], s["command"].split()[0]) for s in sections] == [
        (2, detect.NVPROF, "nvprof"),
        (31, detect.NSYS_TEXT, "nsys"),
    ]
    assert "line 31: nsys-text output's api_calls left out" in result.err
    technique = run.table("stages")["technique"].iloc[0]
    assert technique.startswith("imported from a terminal capture: nvprof output at line 2, ")


def test_nsys_text_runs_after_prompts_are_a_stage_each(tmp_path, capsys):
    """nsys's default column-format tables of five `--stats=true` runs (four after
    `user@host:~/dir$ ...` prompts, the fifth under Markdown headings only): a stage each, none
    left out (the first run's alone were read, and the rest dropped unsaid)."""
    result, run = imported(capsys, tmp_path, f"s={STATS_TRUE}")
    assert "warning" not in result.err
    acts = run.table("gpu_activities")
    assert sorted(set(acts["stage"])) == [f"s.{n}" for n in range(1, 6)]
    first = acts[acts["stage"] == "s.1"]
    assert list(first["name"]) == [
        "vectorAdd(const float *, const float *, float *, int)",
        "[CUDA memcpy HtoD]",
        "[CUDA memcpy DtoH]",
    ]
    assert list(first["total_ns"]) == [1_831_281, 2_432, 2_336]
    assert list(first["calls"]) == [1_010, 2, 1]
    last = acts[acts["stage"] == "s.5"]
    assert list(last["name"])[:2] == ["[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]"]
    assert list(last["total_ns"]) == [2_122_685_654, 1_180_787_472, 14_835_396]
    assert list(last["calls"]) == [802, 400, 410]
    ranges = run.table("ranges").set_index(["stage", "name"])["total_ns"]
    assert ranges[("s.1", "Profile_Loop")] == 3_481_709
    assert ranges[("s.1", "Warmup")] == 182_472
    assert ranges[("s.4", "Serial_Bottleneck_Loop")] == 4_031_222_183
    assert ranges[("s.5", "Streamed_Loop")] == 2_119_060_716
    stages = run.table("stages").set_index("stage")
    assert stages.loc["s.1", "title"].startswith("s, run 1 of 5: sudo $(which nsys) profile")
    assert stages.loc["s.5", "title"] == "s, run 5 of 5"
    assert stages.loc["s.5", "technique"] == (
        "imported from a terminal capture: nsys stats output at line 346 "
        "(api_calls, gpu_activities, ranges)"
    )


def test_every_section_goes_through_the_readers_it_is_given(tmp_path):
    """The cutting knows no format: each section is detected, then read by the reader passed in
    (the importer's dispatch, which other formats join)."""
    from profiler import importer

    offered = []

    def reader(kind, file, stage, raw):  # type: ignore[no-untyped-def]
        offered.append((kind, bytes(file.view()).decode().split("\n", 1)[0][:24]))
        return importer._read_stage(kind, file, stage, raw)

    (found,) = import_capture.read_capture(NVPROF_NSYS, "s", tmp_path, reader)
    assert offered == [
        ("nvprof", "==8123== NVPROF is profi"),
        ("nsys-text", "Generating SQLite file /"),
    ]
    assert [s["line"] for s in found.sections] == [2, 31]


def test_a_broken_table_in_one_section_is_left_out_naming_its_line(tmp_path, capsys):
    text = NVPROF_NSYS.read_text()
    assert " GPU activities:   20.21%" in text
    broken = tmp_path / "broken.txt"
    broken.write_text(text.replace(" GPU activities:   20.21%", " GPU activities:   ...%", 1))
    result, run = imported(capsys, tmp_path / "out", f"s={broken}")
    # line 6 of the capture (line 5 of the summary file, after the prompt line)
    assert (
        "line 2: nvprof output left out: line 6, column 'Time(%)': '...%' is not a number"
        in result.err
    )
    assert not run.table("api_calls").empty and set(run.table("gpu_trace")["stage"]) == {"s"}


def test_a_capture_without_a_readable_table_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "log.txt"
    path.write_text("$ ls\nmain.cu\n$ nvprof ./a\n==41== NVPROF is profiling process 41\n"
                    "==41== Error: no CUDA-capable device is detected\n"
                    "$ ncu ./a\n==PROF== Connected to process 42 (/tmp/a)\n"
                    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n")  # fmt: skip
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--out", out, "--stage", f"s={path}"], capsys)
    assert_refused(
        result, 2, str(path), "a terminal capture, but none of its sections holds a table"
    )
    # each section's own problem, at its line, in its tool's words
    assert "nvprof output at line 4 (refused: nvprof output with no table" in result.err
    assert "no CUDA-capable device is detected" in result.err
    assert "ncu-text output at line 7 (refused: ncu profiled no kernel" in result.err
    assert "ERR_NVGPUCTRPERM" in result.err
    assert not out.exists() or not any(out.iterdir())


def test_sections_refused_at_lines_of_their_own_say_each_line_once(tmp_path, capsys):
    """Two `nvprof --metrics` runs pasted without their Kernel: lines (Kobzol's README): each
    section's reason names the line it was refused at; the refusal says where the section starts
    and where it was refused, once each, not "line 2: line 3: ...", and a repeated reason once."""
    path = CAPTURES / "kobzol-metrics-runs-without-kernel-lines.txt"
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--out", out, "--stage", f"s={path}"], capsys)
    assert_refused(
        result,
        2,
        "none of its sections holds a table profgen reads: nvprof output at line 2 (refused at "
        "line 3: a metric row with no `Kernel:` line above it (",
        "trimmed output?)), nvprof output at line 6 (refused at line 7: the same reason))",
    )
    assert "line 2: line" not in result.err and result.err.count("a metric row") == 1


# --- ECE408 handouts (whole files from the corpus; see tests/data/captures/README.md) ------------

HANDOUT_2017 = CAPTURES / "ece408-2017-nvprof-handout.md"
HANDOUT_2019 = CAPTURES / "ece408-2019-nvprof-handout-elided.md"
HAND_ALIGNED = CAPTURES / "ece408-nsys-handout-hand-aligned.md"
DOTS = CAPTURES / "ece408-sp25-nsys-handout-dots.md"


@pytest.mark.parametrize(
    "line", ["......", "     ......   ", "    ... < snip > ...", "[ snip ]", "…", "[...warmup...]"]
)
def test_more_elision_marks(line: str) -> None:
    assert capture._ELISION.fullmatch(line)


@pytest.mark.parametrize("line", [". . .", "....a", "1...", "... snip", "<snip> text"])
def test_no_elision_marks(line: str) -> None:
    assert not capture._ELISION.fullmatch(line)


def test_indented_nvprof_runs_of_one_pid_are_two_stages(tmp_path, capsys):
    """Two nvprof examples in code blocks indented four spaces, both `==308==`, rows cut by
    `... < snip > ...`: a stage each, with the rows shown."""
    result, run = imported(capsys, tmp_path, f"s={HANDOUT_2017}")
    assert list(run.table("stages")["stage"]) == ["s.1", "s.2"]
    gpu = run.table("gpu_activities").set_index(["stage", "name"])
    # line 222: `30.77%  8.7488ms  1  8.7488ms  8.7488ms  8.7488ms  sgemm_128x128x8_NT_vec`
    assert gpu.loc[("s.1", "sgemm_128x128x8_NT_vec"), "total_ns"] == 8_748_800
    # line 223: `24.47%  6.9571ms  13  535.16us  480ns  5.8152ms  [CUDA memcpy HtoD]`
    htod = gpu.loc[("s.1", "[CUDA memcpy HtoD]")]
    assert htod[["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        6_957_100,
        13,
        480,
        5_815_200,
    ]
    assert len(gpu.loc["s.1"]) == 3 and len(gpu.loc["s.2"]) == 1  # lines 222-224; line 342
    assert gpu.loc["s.2", "total_ns"].tolist() == [14_895_200_000]  # 14.8952s
    calls = rows(run, "api_calls").set_index("name")  # lines 229-231, run 1 only
    free = calls.loc["cudaFree"]  # line 229: `52.04%  4.08135s  10  408.14ms  1.1290us ...`
    assert free[["total_ns", "calls", "min_ns"]].tolist() == [4_081_350_000, 10, 1_129]
    assert len(calls) == 3
    assert "line 335" in result.err and "tables partial" in result.err


def test_typed_api_rows_below_an_elisions_blank_lines_stay_in_the_table(tmp_path, capsys):
    """The 2019 handout elides rows with `...` between blank lines (lines 151-153): the
    `API calls:` rows below (lines 154-158) are the same table's, read with it (was: the table
    ended at the blank line and the five API rows were left out without a word)."""
    result, run = imported(capsys, tmp_path, f"s={HANDOUT_2019}")
    gpu = rows(run, "gpu_activities").set_index("name")
    # line 147: `GPU activities:  39.80%  16.602ms  20  830.11us  1.1200us  16.092ms  [CUDA ...]`
    htod = gpu.loc["[CUDA memcpy HtoD]"]
    assert htod[["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        16_602_000,
        20,
        1_120,
        16_092_000,
    ]
    assert len(gpu) == 4
    calls = rows(run, "api_calls").set_index("name")
    # line 154: `API calls:  42.14%  3.03300s  22  137.86ms  13.006us  1.56281s  cudaStream...`
    first = calls.loc["cudaStreamCreateWithFlags"]
    assert first[["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        3_033_000_000,
        22,
        13_006,
        1_562_810_000,
    ]
    assert calls["calls"].tolist() == [22, 24, 19, 912, 9]  # lines 154-158
    assert "the API calls rows at line 154 cover 99.18%" in result.err


def test_hand_aligned_nsys_rows_are_read_by_words(tmp_path, capsys):
    """Rows retyped off the rule's columns (lines 269-272, 280, 287): numbers, then the name."""
    result, run = imported(capsys, tmp_path, f"s={HAND_ALIGNED}")
    calls = rows(run, "api_calls")
    assert list(calls["name"]) == ["cudaMalloc", "cudaMemcpy", "cudaLaunchKernel", "cudaFree"]
    assert list(calls["total_ns"]) == [1_135_967_766, 314_422_592, 12_295_294, 1_467_989]
    assert list(calls["calls"]) == [20, 20, 10, 20]
    assert list(calls["min_ns"]) == [31_424, 2_526, 24_025, 3_062]
    gpu = rows(run, "gpu_activities").set_index("name")
    kernel = gpu.loc["conv_forward_kernel"]
    assert kernel[["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        83_786_531,
        6,
        7_552,
        66_107_333,
    ]
    htod = gpu.loc["[CUDA memcpy HtoD]"]
    assert htod[["total_ns", "calls"]].tolist() == [1_047_959_246, 6]
    assert htod["bytes"] == 1_765_296_128  # line 294: 1723922.0 KiB


def test_a_table_read_by_words_needs_one_word_per_cell_before_the_name() -> None:
    """A row with fewer words than columns (an empty cell) is not read by words."""
    origin = Origin(Path("t.txt"), "nsys", "")
    table = (
        "Time(%)  Total Time  Calls      Average   Minimum    Maximum  Name\n"
        "-------  ----------  -----  -----------  --------  ---------  ------\n"
        "    73.2   1135967766    20  56798388.3    31424   610607324  cudaMalloc\n"
        "    20.3   314422592    20   15721129.0   2526  cudaMemcpy\n"
    )
    with pytest.raises(ParseError, match="outside its column"):
        nsys_text.read_table(table, "cuda_api_sum", origin)


def test_a_table_whose_report_line_was_cut_is_not_taken_for_a_named_report(tmp_path, capsys):
    """osrt_sum rows (poll, ioctl) under cuda_api_sum's header, their `Executing` line cut: the
    capture names cuda_api_sum further on (its rows all `......`), so nothing is CUDA API."""
    result = profgen(["import", "--model", "m", "--stage", f"s={DOTS}", "--out", tmp_path], capsys)
    assert result.code != 0 and "poll" not in result.err
    assert "nsys-text output at line 125 (refused: its reports have a header but no rows)" in (
        result.err
    )


def test_nsys_nvprof_gpu_traces_of_three_runs_are_a_stage_each(tmp_path, capsys):
    """Three `nsys nvprof --print-gpu-trace` runs in one Markdown file (4 KB, 2 MB and 1 GB
    pages), after a bare command, a `]$` and a `$` prompt: each run's `cuda_gpu_trace` is a
    stage of its own (only the first was read, the rest dropped unsaid). The paste cut the
    third's last row after its `CorrId`: its three whole rows are kept (the whole table was
    left out), the cut row is left out, and both are said."""
    result, run = imported(capsys, tmp_path, f"s={HUGEPAGES}")
    assert result.err == (
        f"profgen: warning: stage s: {HUGEPAGES}: line 85: nsys-text output's last row left out, "
        "cut short by the paste (line 103, column 'Name': the cell is empty (truncated file?)): "
        "tables partial\n"
    )
    trace = run.table("gpu_trace")
    assert sorted(set(trace["stage"])) == ["s.1", "s.2", "s.3"]
    by = {k: t.reset_index(drop=True) for k, t in trace.groupby("stage")}
    kernel = "vectorAdd(const double *, const double *, double *, unsigned long long)"
    for got in by.values():
        assert list(got["name"])[:3] == ["[CUDA memcpy HtoD]", "[CUDA memcpy HtoD]", kernel]
    for got in (by["s.1"], by["s.2"]):
        assert got["name"][3] == "[CUDA memcpy DtoH]"
        assert list(got["correlation_id"]) == [122, 123, 124, 126]
    s1, s2, s3 = by["s.1"], by["s.2"], by["s.3"]
    assert list(s1["start_ns"]) == [61_984_034_576, 64_924_944_882, 67_787_961_762, 67_815_531_814]
    assert list(s1["duration_ns"]) == [2_940_588_676, 2_862_997_200, 27_567_396, 5_689_044_986]
    assert list(s2["start_ns"]) == [60_220_323_051, 61_536_793_230, 62_853_129_100, 62_881_398_861]
    assert list(s2["duration_ns"]) == [1_316_361_188, 1_316_311_326, 28_260_258, 5_190_804_908]
    assert list(s3["start_ns"]) == [64_683_872_355, 65_925_884_636, 67_166_952_938]
    assert list(s3["duration_ns"]) == [1_241_911_002, 1_241_057_262, 28_251_136]
    assert list(s3["correlation_id"]) == [122, 123, 124]
    assert list(s2["bytes"])[:2] == list(s3["bytes"])[:2] == [12_800_000_000, 12_800_000_000]
    stages = run.table("stages").set_index("stage")
    # its prompt ran `cat`, not nsys: titled by its heading (line 30: `## 2 MB`), as is the
    # first (typed without a prompt, line 3: `## 4 KB`)
    assert stages.loc["s.1", "title"] == "s, run 1 of 3: 4 KB"
    assert stages.loc["s.2", "title"] == "s, run 2 of 3: 2 MB"
    assert stages.loc["s.3", "technique"].endswith(
        "(gpu_trace; partial: its last row cut short by the paste)"
    )
    sections = run.meta["inputs"][0]["sections"]
    cut = [s.get("cut_row") for s in sections]
    assert cut == [None, None, "line 103, column 'Name': the cell is empty (truncated file?)"]


def test_a_cut_row_of_a_double_spaced_paste_is_named_by_the_files_own_line(tmp_path, capsys):
    """The hugepages file double-spaced (as an email reply pastes it): read as single-spaced,
    the cut row, line 103 of the single-spaced text, is line 205 of the file in the warning and
    in run.json."""
    double = tmp_path / "double.md"
    double.write_text("".join(f"{line}\n\n" for line in HUGEPAGES.read_text().splitlines()))
    result, run = imported(capsys, tmp_path / "out", f"s={double}")
    why = "line 205, column 'Name': the cell is empty (truncated file?)"
    assert f"{double}: line 169: nsys-text output's last row left out, cut short by the paste " in (
        result.err
    )
    assert f"({why}): tables partial" in result.err
    assert [s.get("cut_row") for s in run.meta["inputs"][0]["sections"]][-1] == why
    trace = run.table("gpu_trace")
    assert list(trace[trace["stage"] == "s.3"]["correlation_id"]) == [122, 123, 124]


def test_two_nsys_stats_outputs_one_under_the_other_are_two_stages(tmp_path, capsys):
    """The demo's `nsys stats` output pasted twice with nothing between: the second run's
    `Processing [...] with [.../cuda_gpu_kern_sum.py]` names a report again, so it is a run of
    its own (the second was dropped unsaid)."""
    text = DEMO_STDOUT.read_text()
    twice = tmp_path / "twice.txt"
    twice.write_text(text + text)
    result, run = imported(capsys, tmp_path / "out", f"s={twice}")
    assert "warning" not in result.err
    acts = run.table("gpu_activities")
    kernels = acts[acts["name"] == "addone"].set_index("stage")
    assert dict(kernels["total_ns"]) == {"s.1": 33_153, "s.2": 33_153}
    assert dict(kernels["calls"]) == {"s.1": 3, "s.2": 3}
    sections = [s for s in capture.split(twice.read_text()) if s.tool]
    assert [s.first_line for s in sections] == [1, len(text.splitlines()) + 2]


def test_tables_of_a_report_read_already_are_left_out_and_said_so(tmp_path, capsys):
    """The demo's CSV tables without nsys's `Processing [...]` lines, twice: nothing tells the
    runs apart, so the first table of each report is read and the later ones are left out with
    a warning naming their lines (they were dropped unsaid)."""
    lines = DEMO_STDOUT.read_text().splitlines(True)
    kept = [line for line in lines if not line.startswith("Processing")]
    twice = tmp_path / "twice.txt"
    twice.write_text("".join(kept * 2))
    result, run = imported(capsys, tmp_path / "out", f"s={twice}")
    second = len(kept) + 2  # the second copy's first header
    assert f"twice.txt: line {second}: 7 more tables of reports read above left out" in result.err
    named = "cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, ..."
    assert f"({named} at line {second}, " in result.err
    acts = rows(run, "gpu_activities").set_index("name")
    assert acts.loc["addone", "total_ns"] == 33_153 and acts.loc["addone", "calls"] == 3
    assert set(run.table("stages")["stage"]) == {"s"}


YISHENG = DATA / "nsys" / "2023.x" / "yisheng-nsys-nvprof-runs-readme.md"


def test_later_runs_typed_without_prompts_are_left_out_and_said_so(tmp_path, capsys):
    """A README: one `nsys nvprof` run after a prompt, then three `sudo nsys nvprof bin/...`
    typed bare in one fenced block, each above a `cuda_gpu_kern_sum` table (the third with no
    blank line between: read below that line). Nothing tells them apart as runs: the first
    run's tables are read, the three later tables are left out and said so, by their lines
    (they were dropped unsaid)."""
    result, run = imported(capsys, tmp_path, f"s={YISHENG}")
    assert result.err.strip() == (
        f"profgen: warning: stage s: {YISHENG}: line 91: 3 more tables of reports read above "
        "left out (cuda_gpu_kern_sum at line 91, 97, 102): profgen reads the first table of "
        "each report (another run? give it a file of its own)"
    )
    acts = rows(run, "gpu_activities")
    assert list(acts["name"]) == [
        "vector_add(float *, float *, float *, long)",
        "[CUDA memcpy DtoH]",
        "[CUDA memcpy HtoD]",
    ]
    assert list(acts["total_ns"]) == [58_750_178_103, 1_318_189_266, 1_035_506_596]
    assert list(acts["calls"]) == [1, 1, 2]
    api = rows(run, "api_calls").set_index("name")
    assert api.loc["cudaMemcpy", "total_ns"] == 61_104_470_031
    assert api.loc["cuModuleGetLoadingMode", "total_ns"] == 893


NCU_RUNS = DATA / "ncu" / "2024.x" / "hyuckhan-lab08-ncu-runs-after-prompts.txt"
NCU_2022 = DATA / "ncu" / "2022.x"


def test_ncu_runs_after_prompts_are_a_stage_each(tmp_path, capsys):
    """A lab's sample output: five `$ ncu ...` runs of `./matmul`, each after a prompt between
    `====` rules (four of one kernel's three metrics, one `--set basic` of four launches): each
    run is a stage of its own titled with its command (the first run's metrics were read and
    the four later runs' left out, with a warning each)."""
    result, run = imported(capsys, tmp_path, f"s={NCU_RUNS}")
    assert "warning" not in result.err
    stages = run.table("stages").set_index("stage")
    assert list(stages.index) == ["s.1", "s.2", "s.3", "s.4", "s.5"]
    assert stages.loc["s.2", "title"] == (
        "s, run 2 of 5: ncu --metrics <세 지표> --kernel-name mm_tiled_kernel --launch-count 1 "
        "./matmul 1024 16"
    )
    assert stages.loc["s.5", "title"] == "s, run 5 of 5: ncu --set basic ./matmul 1024 16"
    got = run.table("metrics")
    one = got[got["stage"] != "s.5"].set_index("stage")
    tiled = "void mm_tiled_kernel<(unsigned int)16>(float *, float *, float *, unsigned int)"
    plain = "mm_kernel(float *, float *, float *, unsigned int)"
    assert list(one["name"]) == [plain, tiled, plain, tiled]
    # lines 29-31, 53-55, 76-78 and 99-101: dram, sm, occupancy of each run's one launch
    assert list(one["dram_throughput_pct"]) == [1.76, 3.60, 44.31, 68.34]
    assert list(one["sm_throughput_pct"]) == [93.25, 96.27, 75.67, 88.47]
    assert list(one["achieved_occupancy_pct"]) == [98.10, 98.01, 99.87, 99.87]
    assert list(one["grid"]) == ["(64, 64, 1)", "(64, 64, 1)", "(256, 256, 1)", "(256, 256, 1)"]
    basic = got[got["stage"] == "s.5"]
    assert list(basic["kernel_id"]) == [0, 1, 2, 3]
    # lines 132-133, 201-202, 270-271, 339-340: `DRAM Throughput` and `Duration`
    assert list(basic["duration_ns"]) == [1_840_000, 1_840_000, 1_340_000, 1_340_000]
    assert list(basic["dram_throughput_pct"]) == [6.10, 1.63, 2.25, 4.40]


def test_ncu_output_of_two_runs_one_under_the_other_is_two_stages(tmp_path, capsys):
    """Two real ncu outputs of one course (an RTX 3070, 2022) one under the other, no prompt
    between: the second `==PROF== Connected to process 6082` comes after process 5341
    disconnected, so it starts a run (both were read as one run of five launches, launch IDs 0
    and 1 twice)."""
    first = (NCU_2022 / "matrix_sums.profile1-simple.output").read_text()
    second = (NCU_2022 / "nsight-profile.1.reductions-b-160K.output").read_text()
    both = tmp_path / "both.txt"
    both.write_text(first + second)
    result, run = imported(capsys, tmp_path / "out", f"s={both}")
    assert "warning" not in result.err
    got = run.table("metrics")
    assert list(got["stage"]) == ["s.1", "s.1", "s.2", "s.2", "s.2"]
    assert list(got["kernel_id"]) == [0, 1, 0, 1, 2]
    assert list(got["name"].str.split("(").str[0]) == [
        "row_sums", "column_sums", "atomic_red", "reduce_a", "reduce_ws"
    ]  # fmt: skip
    assert got["duration_ns"].iloc[0] == 11_970_000  # line 16: `Duration  msecond  11.97`
    sections = run.meta["inputs"][0]["sections"]
    assert [s["line"] for s in sections] == [1, len(first.splitlines()) + 1]


def test_ncu_processes_of_one_run_are_not_cut_apart() -> None:
    """ncu connects to each process of a run (`--target-processes all`) before the first
    disconnects: a `Connected to process` while one is connected starts no run; one after all
    disconnected does."""
    one = [
        "==PROF== Connected to process 100 (/usr/bin/python3)",
        "==PROF== Connected to process 101 (/usr/bin/python3)",
        "==PROF== Disconnected from process 101",
        "==PROF== Connected to process 102 (/usr/bin/python3)",
        "==PROF== Disconnected from process 102",
        "==PROF== Disconnected from process 100",
    ]
    text = "\n".join([*one, "[100] python3@127.0.0.1", *one]) + "\n"
    sections = capture.split(text)
    assert [(s.first_line, s.tool, s.marked) for s in sections] == [
        (1, capture.NCU, False),
        (8, capture.NCU, False),
    ]
    assert capture.is_capture(text) and not capture.is_capture("\n".join(one) + "\n")


def test_nsys_profile_output_of_two_runs_one_under_the_other_is_two_stages(tmp_path, capsys):
    """A real `nsys profile --stats=true` capture of 2021 (2020.4.3's layout: `CUDA API
    Statistics:`, no report names) twice: the `> nsys profile` line of the second copy (line
    118, the author's prompt) starts a run there, as its `Collecting data...`, which nsys prints
    once a run, would (both were read as one, the second's five tables left out with a
    warning); each section starts under its prompt."""
    text = (DATA / "nsys" / "2020.4.3" / "omp-offload-stats.txt").read_text()
    twice = tmp_path / "twice.txt"
    twice.write_text(text + text)
    result, run = imported(capsys, tmp_path / "out", f"s={twice}")
    assert "warning" not in result.err
    sections = run.meta["inputs"][0]["sections"]
    assert [s["line"] for s in sections] == [3, len(text.splitlines()) + 3]
    api = run.table("api_calls").set_index(["stage", "name"])
    for stage in ("s.1", "s.2"):  # line 23: `73.3  52,866,564  1 ... cuDevicePrimaryCtxRelease_v2`
        got = api.loc[(stage, "cuDevicePrimaryCtxRelease_v2")]
        assert (got["total_ns"], got["calls"]) == (52_866_564, 1)
        assert api.loc[(stage, "cuMemAlloc_v2"), "calls"] == 8
    trace = run.table("gpu_trace")  # its trace: one kernel (line 112), 4 copies each way
    assert trace.groupby("stage").size().to_dict() == {"s.1": 9, "s.2": 9}
    kernel = trace[trace["name"] == "__omp_offloading_30_736b0b47_main_l20"]
    assert list(kernel["stage"]) == ["s.1", "s.2"]
    assert list(kernel["start_ns"]) == [364_801_000, 364_801_000]
    assert list(kernel["duration_ns"]) == [222_080, 222_080]


def test_nsys_profile_output_of_two_runs_each_in_its_own_fence_is_two_stages(tmp_path, capsys):
    """The real 2020.4.3 capture above twice, each copy in a Markdown fence of its own under a
    heading: the fence cuts the second copy from the first, and its `> nsys profile` prompt (and
    its `Collecting data...`, which the first printed already) starts a run again, so each copy
    is a stage titled by its command (both were read as one run, the
    second's five tables left out with a warning). Sections of nsys output that print no such
    line (reports pasted a fence each, before and after a change, interleaved) are no capture:
    not cut into runs."""
    text = (DATA / "nsys" / "2020.4.3" / "omp-offload-stats.txt").read_text()
    fenced = tmp_path / "twice.md"
    fenced.write_text(f"## Before\n```\n{text}```\n\n## After\n```\n{text}```\n")
    result, run = imported(capsys, tmp_path / "out", f"s={fenced}")
    assert "warning" not in result.err
    stages = run.table("stages")
    assert list(stages["stage"]) == ["s.1", "s.2"]
    command = "nsys profile -s cpu --stats=true  ./main.x"
    assert list(stages["title"]) == [f"s, run 1 of 2: {command}", f"s, run 2 of 2: {command}"]
    api = run.table("api_calls").set_index(["stage", "name"])
    for stage in ("s.1", "s.2"):  # line 23: `73.3  52,866,564  1 ... cuDevicePrimaryCtxRelease_v2`
        got = api.loc[(stage, "cuDevicePrimaryCtxRelease_v2")]
        assert (got["total_ns"], got["calls"]) == (52_866_564, 1)
    kernel = run.table("gpu_trace").query("name == '__omp_offloading_30_736b0b47_main_l20'")
    assert list(kernel["stage"]) == ["s.1", "s.2"]
    assert list(kernel["duration_ns"]) == [222_080, 222_080]
    interleaved = (DATA / "nsys" / "2020.x" / "nsys-before-after-fenced.md").read_text()
    assert capture.is_capture(fenced.read_text()) and not capture.is_capture(interleaved)


def test_nsys_profile_output_of_two_runs_after_prompts_is_two_stages(tmp_path, capsys):
    """The same capture twice, each copy after a `$` prompt that types its command (its own
    `> nsys profile` line cut off): the prompt cuts the second copy
    from the first and its `Collecting data...` starts a run again, as in a fence (both were
    read as one run, with a warning): two stages, titled by their commands."""
    lines = (DATA / "nsys" / "2020.4.3" / "omp-offload-stats.txt").read_text().splitlines(True)
    typed = "$ nsys profile -s cpu --stats=true  ./main.x\n" + "".join(lines[2:])
    path = tmp_path / "typed.txt"
    path.write_text(typed + typed)
    result, run = imported(capsys, tmp_path / "out", f"s={path}")
    assert "warning" not in result.err
    command = "nsys profile -s cpu --stats=true  ./main.x"
    titles = [f"s, run 1 of 2: {command}", f"s, run 2 of 2: {command}"]
    assert list(run.table("stages")["title"]) == titles
    api = run.table("api_calls").set_index(["stage", "name"])
    assert [api.loc[(s, "cuMemAlloc_v2"), "calls"] for s in ("s.1", "s.2")] == [8, 8]


VINAATTY = DATA / "nsys" / "2023.x" / "vinaatty-mnist-nsys-ko.md"


def test_a_prompt_far_above_a_tools_output_is_not_its_command(tmp_path, capsys):
    """A Korean README: `$ ./mnistCUDNN` at line 26, the program's output and the author's notes,
    then at line 239 (its `Generating '...'` and `[1/8]` lines cut by the paste) an `nsys
    profile --stats=true` run, and a second one at line 403. The prompt ran the program, not
    nsys, 200 lines above: the first run's section starts at its own first line and is not
    said to be `./mnistCUDNN`'s (was: "nsys stats output at line 27, `./mnistCUDNN`")."""
    lines = VINAATTY.read_text(encoding="utf-8").splitlines()
    assert lines[25].endswith("$ ./mnistCUDNN") and lines[238].startswith("[2/8] [===")
    assert lines[402].startswith("Generating '/tmp/nsys-report-99ad.qdstrm'")
    result, run = imported(capsys, tmp_path, f"s={VINAATTY}")
    stages = run.table("stages")
    assert list(stages["title"]) == ["s, run 1 of 2", "s, run 2 of 2"]
    techniques = list(stages["technique"])
    assert "nsys stats output at line 239 (api_calls" in techniques[0]
    assert "nsys stats output at line 403 (api_calls" in techniques[1]
    assert not any("mnistCUDNN" in t for t in techniques)
    api = run.table("api_calls").set_index(["stage", "name"])
    first, second = api.loc[("s.1", "cudaFree")], api.loc[("s.2", "cudaFree")]  # lines 281, 446
    assert (first["total_ns"], first["calls"], first["max_ns"]) == (806_463_976, 448, 600_477_901)
    assert (second["total_ns"], second["calls"], second["min_ns"]) == (824_993_640, 448, 516)


def test_a_prompt_within_reach_of_a_tools_first_line_stays_its_command():
    """A command that runs nsys through a script prints build lines first: within
    `capture.PROMPT_REACH` lines the tool's output is still the prompt's."""
    chatter = [f"make: building step {n}" for n in range(capture.PROMPT_REACH - 2)]
    text = "\n".join(["$ ./profile.sh", *chatter, "Collecting data...", "done"]) + "\n"
    sections = [s for s in capture.split(text) if s.tool == capture.NSYS]
    assert [s.command for s in sections] == ["./profile.sh"]
    far = text.replace("Collecting", "\n".join(["x"] * 10) + "\nCollecting")
    sections = [s for s in capture.split(far) if s.tool == capture.NSYS]
    assert [s.command for s in sections] == [None]
