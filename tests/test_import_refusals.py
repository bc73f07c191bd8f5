"""Real public files that `profgen import` cannot use, refused with one line that says what the
file is and why (issue 14: "The rest are refused with one line that says what the file is and
why profgen can't use it"). tests/data/ncu/README.md, tests/data/nsys/README.md,
tests/data/nvprof/README.md and tests/data/other/README.md say where each file comes from."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from clirun import assert_refused, profgen

from profiler.parse import (
    detect,
    nvprof_export,
    nvprof_tables,
    published,
    unusable,
    unusable_foreign,
)

DATA = Path(__file__).parent / "data"
NSYS, NCU = DATA / "nsys", DATA / "ncu"


def refusal(path: Path, tmp_path: Path, capsys) -> str:
    """The one line `profgen import` refuses `path` with (exit 2, nothing written)."""
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", out], capsys)
    assert_refused(result, 2, str(path))
    assert not out.exists() or not any(out.iterdir())
    return result.err.strip()


def test_ncu_log_of_a_run_with_a_report_file_names_the_report(tmp_path, capsys):
    path = NCU / "any" / "dphpc-report-only.log"
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected Nsight Compute output (ncu's per-kernel `Section:` "
        "tables, or ncu --csv) (ncu wrote its results only to the report "
        "'/home/nwadekar/dphpc/dphpc-gemm/ncu_analysis.ncu-rep' (`==PROF== Report:`), not "
        "here: import that .ncu-rep instead)"
    )


@pytest.mark.parametrize(
    "name", ["gh200-mig-slurm-clock-lock-error-cut.md", "wsl2-zh-notes-library-not-loaded.md"]
)
def test_ncu_error_in_two_lines_is_quoted_with_its_second_line(name, tmp_path, capsys):
    """ncu writes some errors as a lead-in (`==ERROR== An error was reported by the driver`,
    `... by the counter measurement library:`) and the error itself on the next `==ERROR==`
    line (after a blank line on the GH200): the refusal quotes both, not the lead-in alone."""
    path = NCU / "any" / name
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    lead = next(i for i, line in enumerate(lines) if line.startswith("==ERROR=="))
    detail = lines[lead + 1].removeprefix("==ERROR== ")
    assert lines[lead].startswith("==ERROR== An error was reported by the ")
    said = f"{lines[lead].rstrip(':')}: {detail}"
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected Nsight Compute output (ncu's per-kernel `Section:` "
        f"tables, or ncu --csv) (ncu profiled no kernel; it said {said!r})"
    )


def test_nvprof_run_that_wrote_a_profile_says_to_import_it(tmp_path, capsys):
    """IBM's tutorial runs `nvprof -f -o profile.nvvp ...` (line 1) and the paste is cut before
    nvprof's `Generated result file:` line: no table, and the line says which file nvprof wrote
    and to import it (it said only that no section holds a table before)."""
    path = DATA / "nvprof" / "9.x" / "openacc-tutorial-export-cut-before-result-file.txt"
    words = path.read_text().splitlines()[0].split()
    written = words[words.index("-o") + 1]
    assert written == "profile.nvvp" and "NVPROF is profiling process" in path.read_text()
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected {detect.EXPECTED} (a terminal capture, but none of its "
        "sections holds a table profgen reads: it is nvprof's console output of a run that wrote "
        f"its results to a file (line 1: {written!r}), not a table: import that file itself "
        "(profgen reads nvprof's .nvprof and .nvvp profiles))"
    )


def test_nvprof_export_names_the_file_of_each_spelling():
    """The file of `Generated result file:` first, else the operand of `-o`, `--export-profile`
    or `--export-profile=` after the word that runs nvprof; nothing without nvprof's
    `NVPROF is profiling process` line (a README listing commands is no run's output)."""
    started = "==7== NVPROF is profiling process 7, command: ./a"
    for command, file in (
        ("$ nvprof -o run.nvvp ./a", "run.nvvp"),
        ("$ /usr/local/cuda/bin/nvprof --export-profile run.nvprof ./a", "run.nvprof"),
        ("$ nvprof --export-profile=run.nvprof ./a", "run.nvprof"),
        ("$ nvprof -i old.nvprof -o new.nvvp", "new.nvvp"),
    ):
        said = nvprof_export.described([command, started])
        assert said is not None and f"(line 1: {file!r})" in said, command
    assert nvprof_export.described(["$ nvprof -o run.nvvp ./a"]) is None
    assert nvprof_export.described(["$ nvprof ./a", started]) is None
    generated = [started, "==7== Generated result file: /home/u/run.nvvp"]
    assert "(line 2: '/home/u/run.nvvp')" in (nvprof_export.described(generated) or "")


def unrecognised(path: Path, what: str) -> str:
    """The line of a file detection recognises as none of the kinds profgen reads."""
    return f"profgen: error: {path}: expected {detect.EXPECTED} (recognised none of them: {what})"


def test_ncu_metric_name_list_is_refused_as_one(tmp_path, capsys):
    path = NCU / "any" / "lisennlp-query-metrics-head.log"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it is a list of Nsight Compute metric names with their descriptions, as "
        "`ncu --query-metrics` prints it: no measurements to import",
    )


def test_nsys_expert_rules_output_is_refused_as_one(tmp_path, capsys):
    path = NSYS / "2023.1.2" / "abc-analyze-rules.txt"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it is the output of Nsight Systems' expert-system rules (`nsys analyze`: "
        "cuda_memcpy_async, cuda_memcpy_sync, cuda_memset_sync, cuda_api_sync, gpu_gaps): "
        "advice with at most 50 example rows per rule, no stats report; import "
        "'report1.sqlite' itself",
    )


def test_nsys_profile_output_without_its_tables_quotes_the_first_error(tmp_path, capsys):
    path = NSYS / "2022.x" / "jetson-profile-no-report.txt"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it is the console output of `nsys profile` that ends at "
        "\"Generating '/tmp/nsys-report-f458.qdstrm'\": nsys printed no stats table after it "
        "(did the program or nsys fail?); the first error in it: '[01/16/2023-21:24:40] [TRT] "
        "[E] 1: [defaultAllocator.cpp::deallocate::42] Error Code 1: Cuda Runtime (invalid "
        "argument)'",
    )


def test_gprof_profile_is_refused_as_one(tmp_path, capsys):
    path = DATA / "other" / "gprof-cpu-calc.profile"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it is a gprof profile ('Each sample counts as 0.01 seconds.'): CPU time per function; "
        "profgen imports nvprof, Nsight Systems and Nsight Compute output",
    )


def test_python_cprofile_listing_is_refused_as_one(tmp_path, capsys):
    path = tmp_path / "prof.txt"
    path.write_text(
        "         214 function calls (207 primitive calls) in 0.002 seconds\n\n"
        "   Ordered by: cumulative time\n\n"
        "   ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n"
        "        1    0.000    0.000    0.002    0.002 {built-in method builtins.exec}\n"
    )
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it is a Python cProfile/pstats listing (`ncalls tottime percall cumtime percall "
        "filename:lineno(function)`): CPU time per Python function; profgen imports nvprof, "
        "Nsight Systems and Nsight Compute output",
    )


def test_program_output_without_a_profiler_line_is_refused_as_such(tmp_path, capsys):
    path = tmp_path / "run.log"
    path.write_text("\nGpuUtilTest is running!\nCUDA-capable device count: 2\nTimings: 00:00:12\n")
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "none of its lines is profiler output (no `==PID==` or `==PROF==` line, no nvprof, nsys "
        "or ncu table): it looks like a program's own output, starting 'GpuUtilTest is "
        "running!'; profgen imports nvprof, Nsight Systems and Nsight Compute output",
    )


def test_a_file_with_a_profiler_line_is_not_called_program_output():
    """A line of a profiler's (its PID prefix, a table's column, the tool's name) keeps the
    generic refusal: detection did not recognise it, but it is no program's plain output."""
    for line in ("==41== Some nvprof line", "Time(%),Time,Calls,Avg", "$ ncu ./a", "Kernel: k"):
        assert unusable.program_output(["hello", line]) is None, line
    assert unusable.program_output(["", "  "]) is None
    assert unusable.program_output(["==x== hello"]) is not None


def test_profgen_cupti_trace_says_what_it_is_and_where_its_tables_are(tmp_path, capsys):
    """The cupti backend's record file (tests/data/cupti/13.0.1, a real H100 capture) is no
    profiler output to import: its run directory holds its tables."""
    path = DATA / "cupti" / "13.0.1" / "lenet-pinned.npz"
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected {detect.EXPECTED} (it is profgen's own CUPTI trace "
        "(the `cupti.npz` that `profgen sweep --backend cupti` writes into a run directory's "
        "raw/<stage>/ folder), not a profiler's output to import: the run directory it came "
        "from holds its tables; `profgen report RUN` renders that run's report again, `profgen "
        "show RUN --table gpu_trace` prints its GPU trace)"
    )
    other = tmp_path / "weights.npz"  # another numpy archive is only a binary file
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("kernel.npy", b"\x93NUMPY\x01\x00")
    assert refusal(other, tmp_path, capsys).endswith("(it is a binary file (byte 5))")


def test_near_misses_are_not_described_as_those_kinds():
    """Each description needs its whole sign: three metric rows (or the header), a rules
    script, a `Generating` line last; blanks and long lines cost no more than their length."""
    metric = "sm__cycles_elapsed.avg   Counter   cycle   # of cycles elapsed on SM"
    assert unusable.describe([metric, metric]) is None
    assert unusable.describe([metric] * 3) is not None
    reports = "Processing [r.sqlite] with [/opt/nsys/host-linux-x64/reports/cuda_api_sum.py]..."
    assert unusable.describe([reports, "Processing [r.sqlite] with [", "Processing ["]) is None
    generating = "Generating '/tmp/nsys-report-f458.qdstrm'"
    assert unusable.describe([generating, "[1/8] [====100%] report1.nsys-rep"]) is None
    assert unusable.describe(["", " " * 65_536, "x" * 65_536, "__ Ratio"]) is None


def test_nsys_stats_log_of_reports_written_to_files_names_their_folder(tmp_path, capsys):
    """The team's own log of `nsys stats --output` (tests/data/nsys/2025.3.1/README.md)."""
    path = NSYS / "2025.3.1" / "nested" / "nsys_stats.log"
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected nsys stats output (cuda_gpu_trace, cuda_gpu_kern_sum, "
        "cuda_api_sum, ...) (it is the log of `nsys stats --output`: the reports went to files "
        "such as '/tmp/t/nsys_cuda_gpu_trace.csv', not here; import their folder '/tmp/t' "
        "instead)"
    )


def test_nsys_stats_csv_whose_cuda_reports_were_all_skipped_says_so(tmp_path, capsys):
    path = NSYS / "2025.1.1" / "mineru-no-cuda-stats.csv"
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected nsys stats output (cuda_gpu_trace, cuda_gpu_kern_sum, "
        "cuda_api_sum, ...) (nsys skipped the reports profgen reads: the profile holds no 'CUDA "
        "trace data nor CUDA kernel data' (recorded without `-t cuda`?), and the tables it "
        "printed hold no GPU work)"
    )


def test_nsys_stats_capture_whose_cuda_reports_printed_nothing_says_so(tmp_path, capsys):
    """nsys 2023.x+ prints only the banner of a report with no rows: an OpenMP-offload build
    that ran on the CPU leaves the four CUDA banners empty and one osrt_sum table."""
    path = NSYS / "2023.x" / "paracodex-microxor-no-cuda.log"
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected nsys stats output (cuda_gpu_trace, cuda_gpu_kern_sum, "
        "cuda_api_sum, ...) (nsys ran the reports profgen reads (cuda_api_sum, cuda_gpu_kern_sum, "
        "cuda_gpu_mem_time_sum, ...) and printed no table under any: the profile holds no CUDA "
        "API calls, kernels or memory copies (did the program run on the GPU?))"
    )


def test_nvprof_summary_rows_pasted_without_their_header_say_so(tmp_path, capsys):
    path = DATA / "nvprof" / "9.x" / "apex-666-headless-summary-rows.txt"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "5 rows of an nvprof summary (Time(%) Time Calls Avg Min Max Name) from line 1 on, "
        "pasted without nvprof's header line and without the row type (`GPU activities:` or "
        "`API calls:`) on the first, so nothing says whether they are GPU activities or API "
        "calls: profgen reads such rows only when all of them name CUDA API calls (as nvprof's "
        "API calls), and these do not",
    )


def test_an_nvprof_run_that_wrote_its_profile_to_a_file_names_that_file(tmp_path, capsys):
    """gunrock#580: `nvprof -f -o run.nvvp ...` then the program's output, no table (was: "a
    Markdown document in which no profiler table was found"): the line says where the data is."""
    path = DATA / "nvprof" / "9.x" / "gunrock-580-nvprof-o-no-tables.md"
    command = (
        "$ nvprof -f -o run.nvvp --log-file-verbose nv.log ../../../build/bin/bfs market "
        "hollywood-2009.mtx"
    )
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        f"it shows an nvprof run that wrote its profile to a file (line 4: '{command}'), and no "
        "nvprof table: import that file ('run.nvvp': profgen reads .nvprof and .nvvp profiles), "
        "or nvprof's printed summary",
    )


def test_only_an_nvprof_command_with_an_export_flag_is_said_to_have_written_one():
    """`--export-profile` too, after nvprof's path; a flag before `nvprof` or without its file
    (the line's last word) is not one."""
    said = unusable.describe(["/usr/local/cuda/bin/nvprof --export-profile a.nvprof ./app"])
    assert said is not None and "('a.nvprof':" in said and "(line 1:" in said
    assert unusable.describe(["time -o log nvprof ./app"]) is None
    assert unusable.describe(["nvprof ./app -o"]) is None
    assert unusable.describe(["nvprofx -o a ./app"]) is None
    assert unusable.describe(["$ nsys nvprof -o profile-output ./main"]) is None  # an nsys report


def test_nvprof_gpu_trace_rows_pasted_without_their_header_say_so(tmp_path, capsys):
    """manifold#120's Unified Memory rows of a gpu trace, under a fence and no header (was: "it
    looks like a program's own output, starting '```'")."""
    path = DATA / "nvprof" / "9.x" / "manifold-120-gputrace-um-rows-headless.txt"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "5 rows of an nvprof gpu trace (`--print-gpu-trace`: Start, Duration, ..., Name) from "
        "line 2 on, pasted without the header line that names their columns: a paste that left "
        "the header out; profgen reads a table from its header line, which says what its "
        "columns (and, for nsys, its rows) are",
    )


def test_nvprof_api_trace_rows_pasted_without_their_header_say_so(tmp_path, capsys):
    """dynet#176's `--print-api-trace` rows (a start, a duration, a CUDA call) in two fences and
    no header (was: "a Markdown document in which no profiler table was found")."""
    path = DATA / "nvprof" / "8.x" / "dynet-176-api-trace-rows-headless.md"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "10 rows of an nvprof API trace (`--print-api-trace`: Start, Duration, Name) from line 8 "
        "on, pasted without the header line that names their columns: a paste that left the "
        "header out; profgen reads a table from its header line, which says what its columns "
        "(and, for nsys, its rows) are",
    )


def test_nvprof_csv_gpu_traces_a_script_remade_say_so(tmp_path, capsys):
    """marcosamaris/gpuperfpredict's logs: the matrix size put before every line of nvprof's
    `--csv` gpu trace, and kernel rows kept without their header (was: "it starts '131072,
    "Start",...'" and "it looks like a program's own output")."""
    path = DATA / "nvprof" / "8.x" / "gpuperfpredict-prefixed-csv-trace-head.csv"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it is nvprof `--csv --print-gpu-trace` output (its header at line 1) with a column put "
        "before nvprof's own ('131072,' on each line): not the CSV nvprof writes, whose lines "
        'start at `"Start","Duration"`: made by a script, which profgen does not guess at; cut '
        "that column off, or import nvprof's own output",
    )
    rows = DATA / "nvprof" / "8.x" / "gpuperfpredict-headless-csv-kernel-rows.csv"
    assert refusal(rows, tmp_path / "2", capsys) == unrecognised(
        rows,
        "32 rows of a gpu trace in CSV (as `nvprof --csv --print-gpu-trace` writes them: Start, "
        "Duration, ..., Device, Context, Stream, Name) from line 1 on, without the header line "
        "and units row above them: a paste that left the header out; profgen reads a table from "
        "its header line, which says what its columns (and, for nsys, its rows) are",
    )


def test_nvprof_gpu_trace_a_page_ran_together_says_so(tmp_path, capsys):
    """Two mirrors of one Stack Overflow question's gpu trace: one ran its lines into one (was:
    "no nvprof table header found"), the other its columns one space apart (was: "line 14: a
    gpu trace header ends with Name"). Each says it is a gpu trace whose alignment was lost."""
    expected = (
        "expected nvprof output: a summary (text or --csv), a gpu trace (--print-gpu-trace, text "
        "or --csv), an API trace (--print-api-trace, text or --csv), or --metrics/--events "
        "output (text or --csv)"
    )
    one_line = DATA / "nvprof" / "8.x" / "coderoad-51886311-gputrace-one-line.txt"
    assert refusal(one_line, tmp_path, capsys) == (
        f"profgen: error: {one_line}: {expected} (an nvprof gpu trace whose line breaks and "
        "column alignment the page it was copied from lost (its header `Start Duration Grid "
        "Size ... Name` and rows run together, one space apart, in one line with the text "
        "around them): its rows and cells cannot be told apart)"
    )
    spaced = DATA / "nvprof" / "8.x" / "thinbug-51886311-gputrace-single-spaced.txt"
    assert refusal(spaced, tmp_path / "2", capsys) == (
        f"profgen: error: {spaced}: {expected} (line 14: an nvprof gpu trace whose column "
        "alignment the page it was copied from lost (`Start Duration Grid Size ... Name`, "
        "cells one space apart): its cells (a grid size `(20 10 1)`, a device name) cannot be "
        "told apart)"
    )


def test_an_nvprof_summary_joined_by_commas_says_it_is_no_nvprof_csv(tmp_path, capsys):
    """epic-flow-cuda's nvprof.csv (was: "recognised none of them; it starts 'Time(%),Time,..."):
    the printed summary's cells joined by commas, units in each; nvprof --csv writes another."""
    path = DATA / "nvprof" / "8.x" / "epicflow-comma-joined-summary.csv"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it is an nvprof summary's text table (from line 1) with its columns joined by commas, "
        "the unit in each cell ('542.36ms'): not the CSV `nvprof --csv` writes, which quotes its "
        "header and names and puts the units in a row of their own (`%,ms,,us,us,us,`) above "
        "bare numbers: made from the printed summary by hand or by a script, which profgen does "
        "not guess at; import nvprof's own output (its log, or what `nvprof --csv` printed)",
    )


def test_a_comma_joined_header_needs_a_row_with_units_below_it():
    """The header alone, over bare numbers (a units row), or `Type` first: only a header over a
    row whose cells carry their units is described."""
    header, row = "Time(%),Time,Calls,Avg,Min,Max,Name", "47.79%,542.36ms,45,12.0ms,1ms,13ms,k"
    assert unusable.describe([header]) is None
    assert unusable.describe([header, "%,ms,,ms,ms,ms,"]) is None
    assert unusable.describe([header, "47.79,542.36,45,12.0,1,13,k"]) is None
    assert unusable.describe([header, row]) is not None
    assert unusable.describe(["Type," + header, "GPU activities," + row]) is not None


def test_headless_rows_need_three_rows_of_one_kind():
    """Two rows, or rows of the two tools mixed, are not described as a headless table."""
    nvprof = " 3.23%  309.42ms  3  103.14ms  102.48ms  104.10ms  volta_cgemm_32x64_tn"
    nsys = "  0.0  1,953,121  450  4,340.3  3,246.0  2,866  21,772  2,444.6  cudaMemset"
    assert unusable.describe([nvprof, nvprof]) is None
    assert unusable.describe([nvprof, nsys, nvprof, nsys]) is None
    assert unusable.describe(["prose", nsys, nsys, nsys]) is not None
    assert unusable.describe([" 3.23%  0ns  3  0ns  0ns  0ns  k"] * 3) is not None


def test_a_markdown_document_without_profiler_tables_is_refused_as_one(tmp_path, capsys):
    """ndtrung81/cuda-profiling's README (was: "recognised none of them; it starts '# CUDA
    Profiling Tutorial'"): says it is a Markdown document in which no table was found."""
    path = DATA / "other" / "ndtrung81-cuda-profiling-README.md"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it is a Markdown document in which no profiler table was found (it starts '# CUDA "
        f"Profiling Tutorial'); {unusable_foreign.READS}",
    )


def test_a_notebook_whose_output_starts_late_quotes_its_first_printed_line(tmp_path, capsys):
    """Savit10's matmul notebook (cut: two plot images left out), whose cells printed no
    profiler output but name ncu (was: "it starts ''", the blank line that stands for the
    notebook's first JSON line): quotes the first line a cell printed, at its file line."""
    path = NCU / "2025.1.1" / "savit10-matmul-notebook-cut.ipynb"
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected {detect.EXPECTED} (recognised none of them; its "
        "text starts at line 365: '<Figure size 1600x500 with 3 Axes>'; the file has "
        f"{published.NOTEBOOK})"
    )


def test_a_notebook_that_printed_only_rich_outputs_is_refused_saying_so(tmp_path, capsys):
    """A DLI course notebook kept without its runs' output (was: "it looks like a program's own
    output, starting '<IPython.core.display.HTML object>'"): its two outputs are pages shown
    by name, no text."""
    path = DATA / "other" / "dli-ac-um-nvprof-display-only.ipynb"
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected {detect.EXPECTED} (it is a Jupyter notebook in which "
        "no profiler table was found (its cells printed no text, only rich outputs (pictures, "
        "widgets, pages) shown by name, such as '<IPython.core.display.HTML object>'))"
    )


def test_an_html_page_without_profiler_tables_is_refused_as_one(tmp_path, capsys):
    path = tmp_path / "page.html"
    path.write_text("<!DOCTYPE html>\n<html><body><p>Run nvprof ./a.out</p></body></html>\n")
    assert "it is an HTML page in which no profiler table was found" in refusal(
        path, tmp_path, capsys
    )


def test_ncu_section_tables_pasted_without_their_kernel_line_say_so(tmp_path, capsys):
    """SwayamInSync/SGEMM-Worklog's README pastes ncu's tables from their `Section:` line: no
    line names a kernel (was: "no kernel results in it")."""
    path = NCU / "any" / "swayam-sgemm-readme-sections-without-kernel-lines.md"
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected Nsight Compute output (ncu's per-kernel `Section:` "
        "tables, or ncu --csv) (its 9 `Section:` table(s), the first at line 57, have no kernel "
        "line above them as ncu writes one (`<kernel> (grid)x(block), Context N, Stream N`; left "
        "out of this paste): no launch to give their values to)"
    )


def test_ncu_usage_text_is_refused_as_one(tmp_path, capsys):
    path = NCU / "any" / "coalda-ncu-usage.log"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it is ncu's usage text (`ncu --help`: 'usage: ncu [options] [program] "
        "[program-arguments]'), the options it takes: no measurements to import",
    )


def test_legacy_cuda_profiler_log_is_refused_as_one(tmp_path, capsys):
    path = DATA / "other" / "opticks-cuda-profiling.rst"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it holds 41 records of the CUDA command-line profiler that came before nvprof "
        "(`CUDA_PROFILE=1`/`COMPUTE_PROFILE=1`, from line 52: '1285 method=[ memcpyHtoD ] "
        "gputime=[ 1.312 ] cputime=[ 2.020 ]'): the format nvprof (CUDA 5 on) replaced, which "
        "profgen does not read; profgen imports nvprof, Nsight Systems and Nsight Compute output",
    )


def test_thapi_iprof_summary_is_refused_as_one(tmp_path, capsys):
    """ALCF's iprof page (was: "a Markdown document in which no profiler table was found"):
    says it is THAPI iprof's summary, from the line of its first table header."""
    path = DATA / "other" / "alcf-aurora-iprof.md"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it is the summary of THAPI's iprof (its table header `Name | Time | Time(%) | Calls | "
        "Average | Min | Max` at line 92): per-backend tables of the MPI, Level Zero, "
        "OpenCL or CUDA calls a tracer other than NVIDIA's recorded, which profgen does not "
        f"read; {unusable_foreign.READS}",
    )


def test_iprof_header_needs_all_its_cells_in_order():
    assert unusable.describe(["Name | Time | Calls | Average | Min | Max |"]) is None
    assert unusable.describe(["Name  Time  Time(%)  Calls  Average  Min  Max"]) is None
    assert unusable.describe(["| Name | Time | Time(%) | Calls | Average | Min | Max |"]) is None


def test_usage_and_legacy_logs_need_their_own_lines():
    assert unusable.describe(["Usage: make [options]", "x"]) is None
    assert unusable.describe(["see usage: ncu --help below"]) is None
    record = "method=[ k ] gputime=[ 1.0 ] cputime=[ 2.0 ]"
    assert unusable.describe(["prose", record, record]) is None


def test_nsys_nvprof_console_output_ending_at_the_saved_report_names_it(tmp_path, capsys):
    """k2's pull request quotes `nsys nvprof` (2020) up to `Saved report file to "...qdrep"`:
    no stats table (was: "recognised none of them; it starts 'The output of'")."""
    path = NSYS / "2020.x" / "k2-413-nsys-nvprof-no-tables.txt"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it is the console output of `nsys profile` (or `nsys nvprof`) that ends where nsys "
        "saved its report ('/tmp/nsys-report-6869-a100-a89f-853f.qdrep'), with no stats table "
        "in it: import that report, or what `nsys stats` prints for it",
    )


def test_nsys_console_output_cut_in_the_program_output_says_so(tmp_path, capsys):
    """miniWeather's issue quotes `nsys nvprof` up to the program's own output (was:
    "recognised none of them; it starts '```'")."""
    path = NSYS / "any" / "miniweather-12-nsys-nvprof-cut.txt"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it is the console output of `nsys profile` (or `nsys nvprof`) from line 10 "
        "('WARNING: simple_yakl_tests and any of its children processes will be profiled.') "
        "with no stats table in it: the program's own output runs to its end (cut before nsys "
        "printed its tables?)",
    )


def test_nsys_capture_with_only_an_os_runtime_table_names_it(tmp_path, capsys):
    """pytorch#111570 quotes nsys 2022.1.3 up to its osrtsum table (was: "no nsys report header
    found", though the table's marker was read)."""
    path = NSYS / "2022.x" / "pytorch-111570-osrt-only.txt"
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected nsys stats output (cuda_gpu_trace, cuda_gpu_kern_sum, "
        "cuda_api_sum, ...) (its tables are all of nsys reports profgen does not use (osrtsum), "
        "none of a CUDA API, kernel or memory-copy report (a paste cut before them?))"
    )


def test_ncu_rule_advice_quoted_without_its_sections_says_so(tmp_path, capsys):
    """A Paddle pull request quotes two of ncu's `OPT` rule results under its own headings (was:
    "recognised none of them; it starts 'SimpleElemwiseAddGradCUDAKernel ...'")."""
    path = NCU / "any" / "paddle-76178-rule-advice-only.txt"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it quotes Nsight Compute's rule advice (2 `OPT`/`WRN`/`INF` lines, the first at line 4: "
        "'OPT Memory is more heavily utilized than Compute: Look at '... (112 characters)) "
        "without the `Section:` tables and kernel line it comes with: no measurements to import",
    )


def test_ncu_section_tables_quoted_without_a_kernel_line_say_so(tmp_path, capsys):
    """A lesson quotes three of ncu's `Section:` tables with no kernel line above them (was: "a
    Markdown document in which no profiler table was found", though it holds three)."""
    path = NCU / "any" / "sdod-ncu-basics-sections-no-kernel.md"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it quotes Nsight Compute's `Section:` tables (3, the first at line 78: 'GPU Speed Of "
        "Light Throughput') with no kernel line above them (`name (grid)x(block), Context 1, "
        "Stream 7`): no launch to give their metrics to",
    )
    kernel = "  k() (1, 1, 1)x(32, 1, 1), Context 1, Stream 7"
    assert unusable.describe([kernel, "    Section: Launch Statistics", "    ----- ---"]) is None


def test_near_misses_of_the_new_kinds_are_not_described_as_them():
    """A `WARNING:` line of another tool, a word `OPT` in prose and a run whose tables follow
    are not said to be nsys console output or ncu advice."""
    assert unusable.describe(["WARNING: disk almost full", "done"]) is None
    assert unusable.describe(["OPT: -O3 was used", "OPTIONS  none"]) is None
    assert unusable.describe(['Saved report file to "/tmp/r.qdrep"']) is not None
    assert unusable.describe(["Saved report file to", "[CUDA memcpy HtoD] rows follow"]) is None


def test_nsys_gui_stats_table_in_markdown_is_refused_as_one(tmp_path, capsys):
    """SuiteSparse #554 quotes a table copied from the Nsight Systems GUI's stats view (was: "a
    Markdown document in which no profiler table was found"): says so, with its header (line
    5) and the first row's `Total Time` cell, which carries its own unit (line 7)."""
    path = NSYS / "any" / "suitesparse-554-gui-api-table-markdown-cut.md"
    lines = path.read_text().splitlines()
    assert lines[4].startswith("|Time |Total Time|Num Calls|Avg ") and "12.340 s" in lines[6]
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it holds a Markdown table of calls with the columns of the Nsight Systems GUI's stats "
        "view (Time | Total Time | Num Calls | Avg | Name, line 5), a unit in each cell "
        "('12.340 s'): a copy of the GUI's view, not `nsys stats` output (whose headers name "
        "their unit, `Total Time (ns)`, and whose banner names the report), which profgen "
        "reads; run `nsys stats` on the report and import its output",
    )


def test_nsys_osrt_table_with_elided_columns_is_refused_as_unused(tmp_path, capsys):
    """A Japanese article quotes an `osrt_sum` table under its banner (line 13), its columns
    elided as `...` (was: "a Markdown document in which no profiler table was found"): a
    report profgen does not use, and no report it reads."""
    path = NSYS / "any" / "zenn-accelprof-osrt-elided-columns-ja-cut.md"
    assert path.read_text().splitlines()[12] == " ** OS Runtime Summary (osrt_sum):"
    assert refusal(path, tmp_path, capsys) == unrecognised(
        path,
        "it holds tables of nsys reports profgen does not use (osrt_sum at line 13) and none "
        "of a CUDA API, kernel or memory-copy report, which profgen reads",
    )


def test_gui_and_unused_tables_need_their_own_lines():
    assert unusable.describe(["|Time|Total Time|Name|", "|--|--|--|"]) is None  # no count
    assert unusable.describe(["Time | Total Time | Num Calls | Name"]) is None  # no pipes round
    banner = " ** OS Runtime Summary (osrt_sum):"
    assert unusable.describe([banner, "prose only"]) is None  # no table under it
    assert unusable.describe([banner, " Time (%)  Name", " --------  ----"]) is not None


def test_a_shell_script_quoting_an_nsys_csv_in_a_heredoc_says_so(tmp_path, capsys):
    """A test script's fake `nsys` writes a `cuda_gpu_kern_sum` CSV in a heredoc (was: "no nsys
    report header found"): the line names the CSV header's line and that the file is a shell
    script quoting it."""
    path = NSYS / "any" / "sbd-fake-nsys-stub-csv-heredoc-cut.sh"
    lines = path.read_text().splitlines()
    header = next(n for n, line in enumerate(lines, 1) if line.startswith('"Time (%)",'))
    said = refusal(path, tmp_path, capsys)
    assert f"line {header}: a cuda_gpu_kern_sum header in CSV" in said
    assert "no nsys report header found" not in said
    assert said.endswith(
        "the file is a shell source file that quotes it (a test's fixture, a comment?))"
    )


def test_an_nsys_header_pasted_apart_from_its_rows_names_the_header(tmp_path, capsys):
    """Notes that paste an nvtx_gpu_proj_trace header in a fence of its own and rows cut out
    with grep in other fences: the refusal names the lone header (it said no profiler table
    was found in the document before)."""
    path = NSYS / "any" / "cs336-notes-proj-trace-header-apart-from-grep-rows-cut.md"
    lines = path.read_text().splitlines()
    assert "Projected Start (ns)" in lines[1] and lines[2] == "```"
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected {detect.EXPECTED} (recognised none of them: its "
        "nvtx_gpu_proj_trace header at line 2 has no rule or rows under it (the next line is "
        "'```'): rows pasted apart from it (cut out with grep?) are no table profgen can read, "
        "which it reads from a header with its rule and rows under it; paste the table whole)"
    )


def test_nsys_skipped_cuda_reports_under_wsl_says_wsl_not_a_missing_cuda_trace(tmp_path, capsys):
    """An ADR's `nsys profile --trace=cuda` under WSL2, whose `nsys stats` skipped the kernel
    and memory reports: the refusal names the WSL the text names, not `-t cuda` (which the
    command gave)."""
    path = NSYS / "2024.5.1" / "adr-wsl2-nsys-skipped-placeholder-table-cut.md"
    text = path.read_text()
    assert "WSL2 guest" in text and "--trace=cuda" in text
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected nsys stats output (cuda_gpu_trace, cuda_gpu_kern_sum, "
        "cuda_api_sum, ...) (nsys skipped the reports profgen reads: the profile holds no 'CUDA "
        "kernel data nor GPU memory data' (recorded under WSL, which the text names), and the "
        "tables it printed hold no GPU work)"
    )


def test_ncu_report_run_in_an_indented_rst_block_names_the_report(tmp_path, capsys):
    """CuPy's docs quote the tail of an `ncu -o` run (`==PROF== Report: ...ncu-rep`) inside an
    RST console block, every line indented: the refusal names the report, as it does for a
    flush-left log (it said only that no section holds a table before)."""
    path = NCU / "2025.x" / "cupy-docs-import-source-warning-indented-cut.rst"
    line = next(t for t in path.read_text().splitlines() if "==PROF== Report: " in t)
    assert line.startswith("   ")
    report = line.split("==PROF== Report: ", 1)[1].strip()
    said = refusal(path, tmp_path, capsys)
    assert f"ncu wrote its results only to the report {report!r}" in said
    assert "import that .ncu-rep instead" in said


def test_nvprof_summary_of_openacc_rows_only_says_so_in_nvprofs_words(tmp_path, capsys):
    """An OpenACC course's multicore run: nvprof says `No kernels were profiled.` and `No API
    activities were profiled.`, and its summary holds only `OpenACC (excl):` rows (the refusal
    said only 'it has tables but no rows to import')."""
    path = DATA / "nvprof" / "9.x" / "openacc-course-multicore-no-kernels-openacc-only-cut.md"
    lines = path.read_text().splitlines()
    header = next(n for n, line in enumerate(lines, 1) if line.split()[:2] == ["Type", "Time(%)"])
    assert lines[header].split(":")[0].strip() == "OpenACC (excl)"
    assert "No kernels were profiled." in lines and "No API activities were profiled." in lines
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected {nvprof_tables.EXPECTED} (its summary at line "
        f"{header} holds only `OpenACC (excl):` rows, which profgen does not import (it reads "
        "an nvprof summary's `GPU activities:` and `API calls:` rows); nvprof says: 'No kernels "
        "were profiled.' / 'No API activities were profiled.')"
    )


def test_ncu_body_tables_without_their_sections_say_so(tmp_path, capsys):
    """A gpu-mode FP4 GEMV log: ncu's `Table Name : GPU Throughput` tables (what ncu prints of
    a section's charts, below its `Section:` table) under kernel lines, with no `Section:` line,
    cut into chunks by a harness's `Profiling k: ...` lines (was: 'recognised none of them')."""
    path = NCU / "2025.x" / "gpumode-fp4-gemv-b200-table-name-subtables-chunked-cut.txt"
    lines = path.read_text().splitlines()
    at = [n for n, line in enumerate(lines, 1) if line.strip().startswith("Table Name : ")]
    names = dict.fromkeys(lines[n - 1].split(" : ", 1)[1] for n in at)
    assert not any("Section:" in line for line in lines) and len(names) == 3
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected {detect.EXPECTED} (recognised none of them: it holds "
        f"Nsight Compute's body tables ({len(at)} `Table Name :` lines from line {at[0]} on: "
        f"{', '.join(names)}) without the `Section:` tables ncu prints them under, which are "
        "what profgen reads: the output was cut down to the tables of the sections' charts; "
        "import ncu's own output (or --csv, or the .ncu-rep))"
    )
