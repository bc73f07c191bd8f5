"""`profgen import` of nsys output found in a seventh round of public pastes (issue 14;
tests/data/nsys/README.md says where each file is from).

Expected values are read from the file's own text here, not from profgen.
"""

from __future__ import annotations

from pathlib import Path

from clirun import assert_refused, profgen
from test_import_pasted import imported

NSYS = Path(__file__).parent / "data" / "nsys"


def _rows_after(text: str, marker: str, numbers: int = 7) -> list[list[str]]:
    """The rows under the first rule after the line holding `marker`, blank lines between them
    passed over, up to the next line that is no row: their first `numbers` words, then the
    rest (a name)."""
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if marker in line)
    rule = next(i for i in range(at, len(lines)) if lines[i].strip().startswith("---"))
    rows = []
    for line in lines[rule + 1 :]:
        if not line.strip():
            continue
        words = line.split()
        if not words[0][0].isdigit():
            break
        rows.append([*words[:numbers], " ".join(words[numbers:])])
    return rows


def _int(cell: str) -> int:
    return int(cell.replace(",", ""))


def test_a_kernel_header_a_terminal_wrapped_onto_two_lines_is_read_with_its_rows(tmp_path, capsys):
    """HPC SDK 21.7's gpukernsum header put `Name` on a line of its own under the other titles,
    a blank line before its rule, and blank lines between rows (was: the kernels were passed
    over without a word, only the memory copies imported)."""
    path = NSYS / "2021.x" / "openacc-mlp-wrapped-kern-header-hpcsdk21.7-cut.md"
    text = path.read_text(encoding="utf-8")
    run, _ = imported(path, tmp_path, capsys)
    act = run.table("gpu_activities")
    kernels = act[act["kind"] == "kernel"].set_index("name")
    rows = _rows_after(text, "gpukernsum.py openacc_kernel.sqlite")
    assert len(rows) == 13
    assert sorted(kernels.index) == sorted(row[-1] for row in rows)
    for row in rows:
        assert kernels.loc[row[-1], "total_ns"] == _int(row[1])
        assert kernels.loc[row[-1], "calls"] == _int(row[2])
        assert kernels.loc[row[-1], "max_ns"] == _int(row[5])
    copies = act[act["kind"] != "kernel"]
    assert len(copies) == 3  # HtoD, DtoH, memset: read before as now


def test_notes_written_after_the_rows_past_the_rule_are_cut_off_the_names(tmp_path, capsys):
    """Every row of the course's copy ends in a `# ...` note (Chinese) past the table's rule
    (was: the notes were read as part of each name, and the copies, their names no longer
    nsys's, lost their direction and bytes)."""
    path = NSYS / "2025.3.2" / "zh-cuda-course-stats-rows-with-hash-notes-cut.md"
    text = path.read_text(encoding="utf-8")
    run, err = imported(path, tmp_path, capsys)
    assert "`#` note after the name" in err
    api = run.table("api_calls").set_index("name")
    rows = _rows_after(text, "Executing 'cuda_api_sum'", numbers=8)
    names = [row[-1].split(" #")[0].strip() for row in rows]
    assert sorted(api.index) == sorted(names)
    for row, name in zip(rows, names, strict=True):
        assert api.loc[name, "total_ns"] == _int(row[1])
        assert api.loc[name, "calls"] == _int(row[2])
    act = run.table("gpu_activities").set_index("name")
    assert act.loc["matrixMulKernel(...)", "total_ns"] == 2_644_050
    sizes = _rows_after(text, "Executing 'cuda_gpu_mem_size_sum'", numbers=7)
    htod = next(row for row in sizes if "Host-to-Device" in row[-1])
    copies = act[act["kind"] == "memcpy"]
    assert sorted(copies["copy_kind"]) == ["DtoH", "HtoD"]
    assert copies.loc[copies["copy_kind"] == "HtoD", "bytes"].item() == round(
        float(htod[0]) * 1_000_000
    )
    ranges = run.table("ranges").set_index("name")
    assert ranges.loc["Matrix Multiplication", "total_ns"] == 329_694_056


def test_notes_cut_off_the_names_of_several_tables_are_said_once_naming_each_table(
    tmp_path, capsys
):
    """Five of the course's tables carry `# ...` notes past their rule (was: one warning per
    table, five for the file): one warning names the first row line of each."""
    path = NSYS / "2025.3.2" / "zh-cuda-course-stats-rows-with-hash-notes-cut.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    noted = []  # the first row line of each table read whose rows hold a `#` note
    report = ""
    for i, text in enumerate(lines):
        if "Executing '" in text:
            report = text.split("'")[1]
        if text.strip().startswith("---") and report != "osrt_sum":  # (OS calls: not read)
            rows = []
            for row in lines[i + 1 :]:
                if not row.strip():
                    break
                rows.append(row)
            if any(" #" in row for row in rows):
                noted.append(i + 2)
    assert len(noted) == 5
    _, err = imported(path, tmp_path, capsys)
    said = [line for line in err.splitlines() if "`#` note after the name" in line]
    assert len(said) == 1
    assert f"lines {', '.join(map(str, noted))}: " in said[0]


def test_a_figure_typed_under_a_table_is_named_as_such_in_the_refusal(tmp_path, capsys):
    """Under the second run's kernel table the author typed the first run's total alone, in the
    Total Time column (was: 'the cell is empty (truncated file?)', which it is not)."""
    path = NSYS / "2020.x" / "dli-prefetch-runs-in-c-comment-figures-under-rows-cut.cu"
    lines = path.read_text(encoding="utf-8").split("\n")
    line = next(i for i, text in enumerate(lines, 1) if text.strip() == "40732060")
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", out], capsys)
    assert_refused(result, 2, f"line {line}", "one cell alone ('40732060')", "by hand")
    assert "truncated" not in result.err


def test_an_api_table_with_a_markdown_rule_is_left_out_saying_so_and_the_runs_read(
    tmp_path, capsys
):
    """The middle run's cuda_api_sum table has `---` under its header, rows flush left (was:
    'is its header alone: the paste ends there', though its rows follow); the other two runs
    are read, the kernel and the API totals as written."""
    path = NSYS / "2026.3.1" / "zh-vector-add-three-stats-api-table-markdown-rule-cut.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    header = next(i for i, t in enumerate(lines, 1) if t.startswith("Time (%)"))
    run, err = imported(path, tmp_path, capsys)
    assert f"table at line {header} has a Markdown rule (`---`)" in err
    rows = lines[header + 3 : header + 11]  # under the `---`, a blank line between
    assert [r.split()[-1] for r in rows[:2]] == ["cudaLaunchKernel", "cudaMalloc"]
    ends = [r.index(r.split()[1]) + len(r.split()[1]) for r in rows]  # of each Total Time
    assert len(set(ends)) > 1  # (nsys right-aligns a column's numbers: one end)
    assert "its rows do not line up under it as nsys's do" in err
    assert "the paste ends there" not in err
    kern_row = next(t for t in lines if "add_kernel<float>" in t).split()
    act = run.table("gpu_activities")
    assert sorted(act["stage"].unique()) == ["s.1", "s.2"]
    assert (act.loc[act["kind"] == "kernel", "total_ns"] == int(kern_row[1])).all()
    api_row = next(t for t in lines if t.strip().endswith("cudaLaunchKernel")).split()
    api = run.table("api_calls").set_index("name")
    assert api.loc["cudaLaunchKernel", "total_ns"] == int(api_row[1])


def test_an_elision_of_the_program_log_above_the_tables_marks_no_table_partial(tmp_path, capsys):
    """The student put `...` between the program's log and nsys's first heading (was: 'rows
    elided at line 12: tables partial', and the stage marked partial, though no row is
    missing); the tables under it are read whole."""
    path = NSYS / "2020.x" / "ece408-m3-rai-log-elided-then-stats-cut.md"
    text = path.read_text(encoding="utf-8")
    run, err = imported(path, tmp_path, capsys)
    assert "elided" not in err
    assert "partial" not in run.table("stages")["technique"].iloc[0]
    api = run.table("api_calls").set_index("name")
    rows = _rows_after(text, "CUDA API Statistics (nanoseconds)", numbers=6)
    assert sorted(api.index) == sorted(row[-1] for row in rows)
    for row in rows:
        assert api.loc[row[-1], "total_ns"] == int(row[1])
    kernel = _rows_after(text, "CUDA Kernel Statistics (nanoseconds)", numbers=6)[0]
    act = run.table("gpu_activities").set_index("name")
    assert act.loc["conv_forward_kernel", "total_ns"] == int(kernel[1])


def test_a_kernel_table_cut_down_to_no_count_column_is_refused_naming_both(tmp_path, capsys):
    """The notes' table of three kernels lost its Instances column (was: 'no column for calls,
    which nsys prints in every cuda_api_sum table', as if it were an API summary)."""
    path = NSYS / "2020.4.3" / "zh-a100-l2-persist-kern-table-cut-down.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    header = next(i for i, text in enumerate(lines, 1) if text.startswith(" Time(%)"))
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", out], capsys)
    assert_refused(result, 2, f"line {header}", "no column for calls nor instances")


def test_the_wrapped_kernel_header_is_read_from_a_crlf_copy_too(tmp_path, capsys):
    """The same capture with Windows line ends: the header's `\\r` stays out of the joined
    header line, and the 13 kernels are read."""
    path = NSYS / "2021.x" / "openacc-mlp-wrapped-kern-header-hpcsdk21.7-cut.md"
    text = path.read_text(encoding="utf-8")
    crlf = tmp_path / "crlf.md"
    crlf.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    run, _ = imported(crlf, tmp_path, capsys)
    act = run.table("gpu_activities")
    names = sorted(act.loc[act["kind"] == "kernel", "name"])
    assert names == sorted(row[-1] for row in _rows_after(text, "gpukernsum.py openacc_kernel"))


def test_a_markdown_rule_over_rows_that_line_up_as_nsys_s_says_only_that(tmp_path, capsys):
    """The course's cuda_api_sum table as nsys printed it (its rows line up under the header)
    with a Markdown rule in place of its dash rule: refused for the rule alone, not for rows
    that would not line up."""
    text = (NSYS / "2025.3.2" / "zh-cuda-course-stats-rows-with-hash-notes-cut.md").read_text(
        encoding="utf-8"
    )
    lines = text.split("\n")
    at = next(i for i, t in enumerate(lines) if "Executing 'cuda_api_sum'" in t)
    rule = next(i for i in range(at, len(lines)) if lines[i].strip().startswith("---"))
    end = next(i for i in range(rule, len(lines)) if not lines[i].strip())
    marker = " ** CUDA API Summary (cuda_api_sum):"  # (nsys's other marker, as in the g05 post)
    made = [marker, "", lines[rule - 1], "", "---", "", *lines[rule + 1 : end], ""]
    path = tmp_path / "api.md"
    path.write_text("\n".join(made), encoding="utf-8")
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", out], capsys)
    assert_refused(result, 2, "line 3", "has a Markdown rule (`---`)")
    assert "do not line up" not in result.err
