"""`profgen import` of nsys output that people pasted into notes, issues and source files, as
they pasted it (issue 14; tests/data/nsys/README.md says where each file is from).

Expected values are read from the file's own text here (`_rows_under`), not from profgen.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clirun import assert_refused, profgen

from profiler import store

NSYS = Path(__file__).parent / "data" / "nsys"


def _import(tmp_path: Path, capsys: pytest.CaptureFixture[str], path: Path) -> store.Run:
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", out], capsys)
    assert result.code == 0, result.err
    return store.load_run(Path(result.out.strip().splitlines()[-1]))


def _rows_under(text: str, banner: str, numbers: int = 8) -> list[list[str]]:
    """The rows of the table under the line holding `banner`: its first `numbers` words, then
    the rest of the row (a name, blanks and all)."""
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if banner in line)
    rows = []
    for line in lines[at + 4 :]:  # banner, blank, header, rule
        if not line.strip():
            break
        words = line.split()
        rows.append([*words[:numbers], " ".join(words[numbers:])])
    return rows


def test_a_rule_a_pdf_conversion_shifted_right_of_its_header_keeps_every_column(
    tmp_path, capsys
):
    """The cuda_api_sum rule's last dash run starts a character right of `Name` and of every
    name under it: the column is the header's, and each call keeps its numbers."""
    path = NSYS / "2025.x" / "infini-add-rule-shifted-from-pdf-zh.md"
    text = path.read_text(encoding="utf-8")
    api = _import(tmp_path, capsys, path).table("api_calls").set_index("name")
    rows = _rows_under(text, "** CUDA API Summary (cuda_api_sum):")
    assert sorted(api.index) == sorted(row[-1] for row in rows)
    for row in rows:
        assert api.loc[row[-1], "total_ns"] == int(row[1])
        assert api.loc[row[-1], "calls"] == int(row[2])
        assert api.loc[row[-1], "max_ns"] == int(row[6])
    kernels = _rows_under(text, "** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):")
    act = _import(tmp_path / "again", capsys, path).table("gpu_activities").set_index("name")
    assert act.loc[kernels[0][-1], "total_ns"] == int(kernels[0][1])


def test_a_paste_of_only_an_os_runtime_banner_and_table_names_that_report(tmp_path, capsys):
    """The only table sits under ` ** OS Runtime Summary (osrt_sum):` (was: "... profgen does not
    use (), ...": a banner was no marker line whose report the refusal names). The file shows
    the `nsys stats` command above it (line 2) and the author's note past it (line 22): nsys
    printed no CUDA report, so the refusal says the program made no CUDA calls (was: "a paste
    cut before them?", which misled)."""
    path = NSYS / "2023.x" / "power-iteration-osrt-sum-only-zh.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert "nsys stats" in lines[1] and lines[21].strip().startswith("从 nsys stats")
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    assert_refused(
        result,
        2,
        f"{path}: expected nsys stats output",
        "its tables are all of nsys reports profgen does not use (osrt_sum), none of a CUDA API, "
        "kernel or memory-copy report, and the file shows nsys's start above them and goes on "
        "past them (line 22): nsys printed none, as for a program that made no CUDA calls (a "
        "CPU-only program, or one profiled without `-t cuda`?)",
    )
    assert "a paste cut before them" not in result.err


def test_an_os_runtime_table_that_ends_the_file_keeps_the_cut_hint(tmp_path, capsys):
    """The same file without the note past its table: the paste may have been cut before the
    CUDA reports, and the refusal says so; so it does without the command above the table."""
    path = NSYS / "2023.x" / "power-iteration-osrt-sum-only-zh.txt"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for n, kept in enumerate((lines[:21], lines[3:])):
        cut = tmp_path / f"cut{n}.txt"
        cut.write_text("".join(kept), encoding="utf-8")
        argv = ["import", "--model", "m", "--stage", f"s={cut}", "--out", tmp_path / f"o{n}"]
        result = profgen(argv, capsys)
        assert_refused(result, 2, "memory-copy report (a paste cut before them?)")


def test_report_banners_pasted_without_their_tables_are_named(tmp_path, capsys):
    """nsys prints a ` ** ... (report):` banner only over a table: banners alone are a paste
    that left the tables out (was: "no nsys report header found")."""
    path = NSYS / "2024.5.4" / "jetson-orin-banners-without-tables-cut.md"
    banners = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln[:4] == " ** "]
    assert len(banners) == 5
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    assert_refused(
        result,
        2,
        "its banners name reports profgen reads (cuda_api_sum, cuda_gpu_kern_sum, "
        "cuda_gpu_mem_time_sum, ...) but no table is under any",
    )


def test_a_kernel_row_nsys_printed_without_a_name_is_kept_and_said(tmp_path, capsys):
    """nsys 2019.5.2 printed one Triton kernel's row with every number and a blank name: the
    kernel is imported as `(no name)`, with a warning naming its line (was: refused, "the cell
    is empty (truncated file?)")."""
    path = NSYS / "2019.5.2" / "triton-matmul-dli-unnamed-kernel-zh.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    table = lines.index("CUDA Kernel Statistics (nanoseconds)")
    rows = [ln.split() for ln in lines[table + 4 : lines.index("", table + 4)]]
    blank = next(i for i, row in enumerate(rows) if len(row) == 6)
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", out], capsys)
    assert result.code == 0, result.err
    assert f"line {table + 4 + blank + 1}: 1 kernel row(s) of cuda_gpu_kern_sum" in result.err
    run = store.load_run(Path(result.out.strip().splitlines()[-1]))
    act = run.table("gpu_activities")
    kernels = act[act["kind"] == "kernel"].set_index("name")
    assert len(kernels) == len(rows)
    assert kernels.loc["(no name)", "total_ns"] == int(rows[blank][1])
    assert kernels.loc["(no name)", "calls"] == int(rows[blank][2])
    assert kernels.loc["(no name)", "max_ns"] == int(rows[blank][5])
    assert kernels.loc[rows[0][-1], "total_ns"] == int(rows[0][1])


def _csv_under(lines: list[str], header: str) -> list[list[str]]:
    """The CSV rows under the first line that starts with `header`, up to the fence or the
    `...` a paste put after them."""
    at = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[at + 1 :]:
        if line.startswith(("```", "...")):
            break
        rows.append(line.split(","))
    return rows


def test_csv_reports_right_under_a_fence_import_with_the_elided_rows_said(tmp_path, capsys):
    """`nsys stats --format csv` output pasted right under a code fence, the second table cut
    with `...`: both import, the elision said (was: refused, "the last row has fewer than the
    header's 9 cells": the header under the fence was not seen as nsys's, nor the `...`)."""
    path = NSYS / "2024.6.2" / "dotllm-csv-in-fences-elided-zh-cut.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    kernels = _csv_under(lines, "Time (%),Total Time (ns),Instances,")
    calls = _csv_under(lines, "Time (%),Total Time (ns),Num Calls,")
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", out], capsys)
    assert result.code == 0, result.err
    elided = lines.index("...") + 1
    assert f"rows elided at line {elided}: tables partial" in result.err
    run = store.load_run(Path(result.out.strip().splitlines()[-1]))
    act = run.table("gpu_activities").set_index("name")
    assert sorted(act.index) == sorted(row[-1] for row in kernels)
    for row in kernels:
        assert act.loc[row[-1], "total_ns"] == int(row[1])
        assert act.loc[row[-1], "calls"] == int(row[2])
        assert act.loc[row[-1], "max_ns"] == int(row[6])
    api = run.table("api_calls").set_index("name")
    assert sorted(api.index) == sorted(row[-1] for row in calls)
    assert api.loc[calls[0][-1], "total_ns"] == int(calls[0][1])
    assert api.loc[calls[-1][-1], "min_ns"] == int(calls[-1][5])


@pytest.mark.parametrize(
    "name",
    ["lec8-mlp-hand-summary-tables-zh-cut.md", "colab-guide-illustrative-kern-table-zh-tw-cut.md"],
)
def test_a_table_written_by_hand_under_a_report_banner_is_named(name, tmp_path, capsys):
    """A lecture's `Time(%)  Total(ns)  Calls  Avg(ns)  Name` table (`1.88e8`) under a
    ` ** CUDA API Summary` banner, a guide's illustrative table under `CUDA Kernel Statistics:`:
    refused naming the report, the table's line and its header (was: "no table is under any:
    the paste ... left its tables out", and "no nsys report header found", neither true)."""
    path = NSYS / "any" / name
    lines = path.read_text(encoding="utf-8").split("\n")
    mark = next(k for k, line in enumerate(lines) if "Statistics:" in line or "Summary (" in line)
    at = next(k for k in range(mark + 1, len(lines)) if lines[k].strip())
    report = "cuda_api_sum" if "API" in lines[mark] else "cuda_gpu_kern_sum"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    assert_refused(
        result,
        2,
        f"the {report} table at line {at + 1} is not in nsys's layout",
        f"its header '{' '.join(lines[at].split())}' lacks the columns nsys prints for it",
    )


def test_a_cell_a_paste_split_with_a_blank_is_refused_not_cut(tmp_path, capsys):
    """A copy from a wrapping terminal put a blank into the `Operation` cells and into the rule
    under them (`-------------------- --------`): the text under the unheaded run is named
    with its line (was: imported, `[CUDA memcpy Device-` and `[CUDA memcpy Host-to`, without a
    word)."""
    path = NSYS / "2025.3.2" / "saxpy-mem-time-cell-split-by-paste-cut.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    row = next(k for k, line in enumerate(lines) if "Device- to-Host]" in line)
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    assert_refused(
        result,
        2,
        "expected nsys cuda_gpu_mem_time_sum report",
        f"line {row + 1}: 'to-Host]' lies under a run of the rule with no header over it",
    )


def test_an_os_runtime_table_without_its_banner_is_not_read_as_cuda_api_calls(tmp_path, capsys):
    """osrt_sum's header is cuda_api_sum's: pasted without its banner, a table of `poll`,
    `pthread_cond_wait`, `sem_wait`, ... (no `cu` function) is that report, refused as one
    profgen does not use (was: imported as seven CUDA API calls)."""
    path = NSYS / "any" / "pangeo-hackathon-osrt-table-no-banner-cut.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    header = next(k for k, line in enumerate(lines) if "Num Calls" in line)
    names = [line.split()[-1] for line in lines[header + 2 :] if line.strip()[:1].isdigit()]
    assert names and not any(name.startswith("cu") for name in names)
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    assert_refused(
        result,
        2,
        f"its table at line {header + 1} is an OS runtime summary (osrt_sum",
        "no CUDA API, kernel or memory-copy report is in it",
    )


def test_tables_a_terminal_wrapped_are_left_out_with_a_warning_and_the_rest_read(
    tmp_path, capsys
):
    """`nsys stats` copied from a terminal narrower than its lines: the CUDA API and
    memory-time tables have their header's tail on a line of blanks, the API rule's tail on a
    line of dashes, names cut (`cuMemAllocAsy nc`, `[CUDA memcpy Device- to-Host]`). Those two
    are left out, each named with its line and why; the intact NVTX and kernel tables are read
    (was: the whole file refused for `'-------' is not a number`). The `...` that ends the
    kernel report's `Processing [...]` line, wrapped onto a line of its own, is no elision
    mark (the tables were said to be partial)."""
    path = NSYS / "2025.3.2" / "rust-saxpy-nsys-stats-wrapped-cut.md"
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", out], capsys)
    assert result.code == 0, result.err
    for report in ("cuda_api_sum", "cuda_gpu_mem_time_sum"):
        banner = next(k for k, line in enumerate(lines) if f"({report}):" in line)
        header = banner + 2  # banner, blank, header
        assert lines[header + 1].strip() == ""  # the header's tail: blanks alone
        said = f"line {header + 1}: the {report} table is left out: a terminal wrapped it"
        assert said in result.err, result.err
        assert f"its header's tail is on line {header + 2}, blanks alone" in result.err
    kern = next(k for k, line in enumerate(lines) if "cuda_gpu_kern_sum.py]" in line)
    assert lines[kern + 1].strip() == "..."  # the marker's tail, wrapped: no elision mark
    assert "rows elided" not in result.err, result.err
    run = store.load_run(Path(result.out.strip().splitlines()[-1]))
    assert "elide" not in run.table("stages")["technique"].iloc[0]
    assert not run.has("api_calls")
    kernels = _rows_under(text, "(cuda_gpu_kern_sum):")
    act = run.table("gpu_activities")
    assert list(act["name"]) == [row[-1] for row in kernels] == ["saxpy"]
    assert list(act["total_ns"]) == [int(row[1].replace(",", "")) for row in kernels]
    assert list(act["min_ns"]) == [int(row[5].replace(",", "")) for row in kernels]
    nvtx = _rows_under(text, "(nvtx_sum):")  # ... StdDev, then Style and Range
    ranges = run.table("ranges").set_index("name")
    names = [row[-1].split(None, 1)[1].lstrip(":") for row in nvtx]
    assert sorted(ranges.index) == sorted(names) and len(names) == 3
    for name, row in zip(names, nvtx, strict=True):
        assert ranges.loc[name, "total_ns"] == int(row[1].replace(",", ""))
        assert ranges.loc[name, "max_ns"] == int(row[6].replace(",", ""))


def test_a_summary_without_the_columns_nsys_always_prints_is_said_to_be_no_table_of_nsys(
    tmp_path, capsys
):
    """A blog's ` ** CUDA API Summary (cudaapisum):` table whose author left out Min, Max and
    StdDev: refused naming the header's line and that nsys prints those columns in every such
    table, so the table was written or cut down by hand (it said only "no column for min,
    max")."""
    path = NSYS / "any" / "nsight-ai-blog-api-sum-without-min-max-cut.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    header = next(k for k, line in enumerate(lines) if "Num Calls" in line)
    assert "Min" not in lines[header] and "Max" not in lines[header]
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    assert_refused(
        result,
        2,
        "expected nsys cuda_api_sum report",
        f"line {header + 1}: no column for min, max, which nsys prints in every cuda_api_sum "
        "table: its header is not nsys's (written or cut down by hand?)",
    )


def test_nsys_text_in_a_python_fixture_that_cannot_be_read_names_the_file_as_python(
    tmp_path, capsys
):
    """A test's fixture: `nsys stats --format csv` output made by hand in a Python string, its
    trace header continued onto the next line with a backslash. The refusal says why (no Name
    column) and that the file is Python source quoting the output (it named no file kind)."""
    path = NSYS / "any" / "hpcagent-bench-nsys-csv-fixture-cut.py"
    lines = path.read_text(encoding="utf-8").split("\n")
    header = next(k for k, line in enumerate(lines) if line.startswith("Start (ns),"))
    assert lines[header].endswith("\\") and lines[header + 1].endswith(",Name")
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    assert_refused(
        result,
        2,
        "expected nsys cuda_gpu_trace report",
        f"line {header + 1}: no column for name",
        "the file is a Python source file that quotes it (a test's fixture, a comment?)",
    )


def test_a_size_table_whose_counts_are_not_the_time_tables_gives_no_bytes(tmp_path, capsys):
    """Notes of two stages: the first's memory time table, the second's size table. The size
    table counts 378,210 Device-to-Device copies where the time table counts 252,014: another
    run's, so its bytes are not given to these copies (they were, silently)."""
    path = NSYS / "2023.x" / "ml-port-notes-size-table-of-another-stage.md"
    text = path.read_text(encoding="utf-8")
    assert "252,014" in text and "612.337  378,210" in text
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", out], capsys)
    assert result.code == 0, result.err
    assert (
        "the memory size summary counts [CUDA memcpy Device-to-Device] 378210 times and the time "
        "summary 252014: tables of different runs, so no bytes are taken from it"
    ) in result.err
    run = store.load_run(Path(result.out.strip().splitlines()[-1]))
    copies = run.table("gpu_activities").set_index("name")
    assert copies.loc["[CUDA memcpy DtoD]", "calls"] == 252014
    assert copies.loc["[CUDA memcpy DtoD]", "total_ns"] == 237308475
    assert copies["bytes"].isna().all()
