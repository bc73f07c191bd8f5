"""`profgen import` of nsys output found in an eighth round of public pastes (issue 14;
tests/data/nsys/README.md says where each file is from).

Expected values are read from the file's own text here, not from profgen.
"""

from __future__ import annotations

from pathlib import Path

from test_import_pasted import imported

NSYS = Path(__file__).parent / "data" / "nsys"


def _int(cell: str) -> int:
    return int(cell.replace(",", ""))


def _range_rows(lines: list[str]) -> dict[str, list[str]]:
    """Rows of a range summary (nine cells, the last `:name`): the name without its `:` -> the
    cells."""
    rows = [t.split() for t in lines]
    return {
        r[-1].lstrip(":"): r
        for r in rows
        if len(r) == 9 and r[0][0].isdigit() and r[-1].startswith(":")
    }


def test_nvtx_pushpop_sum_tables_are_read_as_ranges_one_run_each(tmp_path, capsys):
    """`nsys stats --report nvtx_pushpop_sum` prints nvtx_sum's layout less `Style` (was: the
    table under its banner passed over without a word, the second, under no banner, read as
    the one run's); each fence's table is a run, its ranges as written."""
    path = NSYS / "2023.x" / "bench-walkthrough-nvtx-pushpop-sum-two-runs-cut.md"
    rows = _range_rows(path.read_text(encoding="utf-8").split("\n"))
    run, err = imported(path, tmp_path, capsys)
    assert "rows elided" not in err  # (the `...` above the second header elides no row)
    assert not run.table("stages")["technique"].str.contains("partial").any()
    ranges = run.table("ranges")
    assert sorted(ranges["stage"].unique()) == ["s.1", "s.2"]
    first = ranges[ranges["stage"] == "s.1"].set_index("name")
    assert list(first.index) == ["NvtxAnnotation.G1"]
    assert first.loc["NvtxAnnotation.G1", "total_ns"] == _int(rows["NvtxAnnotation.G1"][1])
    second = ranges[ranges["stage"] == "s.2"].set_index("name")
    assert sorted(second.index) == sorted(
        ["NvtxAnnotation.G1Phases", "copy_in", "copy_out", "kernel"]
    )
    for name in ("copy_in", "copy_out", "kernel"):
        assert second.loc[name, "total_ns"] == _int(rows[name][1])
        assert second.loc[name, "calls"] == _int(rows[name][2])
        assert second.loc[name, "min_ns"] == _int(rows[name][5])


def _table_rows(lines: list[str], heading: str, numbers: int = 6) -> list[list[str]]:
    """The rows under the rule of each table under a line that starts with `heading`, in file
    order, one list per table: their first `numbers` words, then the rest (a name)."""
    tables = []
    for at, line in enumerate(lines):
        if not line.startswith(heading):
            continue
        rule = next(i for i in range(at, len(lines)) if lines[i].strip().startswith("---"))
        rows = []
        for row in lines[rule + 1 :]:
            words = row.split()
            if not words or not words[0][0].isdigit():
                break
            rows.append([*words[:numbers], " ".join(words[numbers:])])
        tables.append(rows)
    return tables


def test_a_run_whose_api_table_opens_its_own_fence_is_not_mixed_with_the_run_above(
    tmp_path, capsys
):
    """The first run shows kernels and copies only; the second's fence starts with its API table
    (was: one stage, the second run's API calls read with the first run's kernels, its own
    kernels left out); each run is a stage of its own, its tables as written."""
    path = NSYS / "2021.x" / "sycl-a100-buffers-vs-usm-two-runs-no-api-table-in-first.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    kernels = _table_rows(lines, "CUDA Kernel Statistics:")
    (api,) = _table_rows(lines, "CUDA API Statistics:")
    run, err = imported(path, tmp_path, capsys)
    assert "left out" not in err
    act = run.table("gpu_activities")
    assert sorted(act["stage"].unique()) == ["s.1", "s.2"]
    for stage, rows in zip(("s.1", "s.2"), kernels, strict=True):
        got = act[(act["stage"] == stage) & (act["kind"] == "kernel")]
        assert sorted(got["total_ns"]) == sorted(_int(r[1]) for r in rows)
        assert sorted(got["calls"]) == sorted(_int(r[2]) for r in rows)
    calls = run.table("api_calls")
    assert list(calls["stage"].unique()) == ["s.2"]
    assert sorted(calls["total_ns"]) == sorted(_int(r[1]) for r in api)
    assert calls.set_index("name").loc["cuMemAllocManaged", "max_ns"] == _int(api[0][5])


def test_a_kernel_table_whose_lines_a_copy_joined_is_left_out_saying_so(tmp_path, capsys):
    """The slide's kernel table has its rule on its header's line and its rows run together
    (was: left out without a word, as if nsys had printed no kernel); the warning names its
    line and the stage is partial, the API calls and memory operations read as written."""
    path = NSYS / "2020.x" / "csc-openacc-slides-kern-table-lines-joined-cut.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    header = next(n for n, t in enumerate(lines, 1) if t.startswith("Time(%)") and "---" in t)
    run, err = imported(path, tmp_path, capsys)
    assert f"line {header}: the cuda_gpu_kern_sum table is left out" in err
    assert "stands on its header's line" in err
    assert "partial" in run.table("stages").loc[0, "technique"]
    act = run.table("gpu_activities")
    assert set(act["kind"]) == {"memcpy", "memset"}
    (copies,) = [r for r in _table_rows(lines, "CUDA Memory Operation Statistics (nano")]
    assert sorted(act["total_ns"]) == sorted(_int(r[1]) for r in copies)
    (api,) = _table_rows(lines, "CUDA API Statistics (nano")
    calls = run.table("api_calls").set_index("name")
    assert calls.loc["cuStreamSynchronize", "total_ns"] == _int(api[0][1])
    assert len(calls) == len(api)


def test_a_dots_line_below_the_last_tables_blank_line_elides_no_row(tmp_path, capsys):
    """A blog's first fence: osrt_sum with `......` right under its rows, then cuda_api_sum,
    its blank line and `......` (line 35: the author cut the rest of the log; nsys ends each
    table with a blank line). Only the first is said to elide rows (was: 'rows elided at line
    23, 35'); the API rows are as printed, and the second run's kernel as well."""
    path = NSYS / "2023.1.2" / "jasonkayzk-blog-osrt-api-ellipsis-two-runs-cut.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    dots = [n for n, line in enumerate(lines, 1) if line.strip() == "......"]
    assert dots == [23, 35] and not lines[33].strip()
    run, err = imported(path, tmp_path, capsys)
    assert f"rows elided at line {dots[0]}: tables partial" in err
    assert str(dots[1]) not in " ".join(t for t in err.split("\n") if "elided" in t)
    api_rows = [t.split() for t in lines[28:33]]
    calls = run.table("api_calls")
    first = calls[calls["stage"] == calls["stage"].iloc[0]].set_index("name")
    assert sorted(first.index) == sorted(r[-1] for r in api_rows)
    for r in api_rows:
        assert first.loc[r[-1], "total_ns"] == _int(r[1])
        assert first.loc[r[-1], "calls"] == _int(r[2])
    kernels = run.table("gpu_activities")
    kernels = kernels[kernels["kind"] == "kernel"]
    assert kernels["total_ns"].tolist() == [_int(lines[95].split()[1])]
