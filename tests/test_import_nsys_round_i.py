"""`profgen import` of nsys output found in a ninth round of public pastes (issue 14;
tests/data/nsys/README.md says where each file is from).

Expected values are read from the file's own text here, not from profgen.
"""

from __future__ import annotations

from pathlib import Path

from test_import_pasted import imported

NSYS = Path(__file__).parent / "data" / "nsys"


def _int(cell: str) -> int:
    return int(cell.replace(",", ""))


def _rows_under(lines: list[str], header_start: str) -> list[list[str]]:
    """The rows (words) under the rule of the first table whose header starts (stripped) with
    `header_start`."""
    at = next(n for n, line in enumerate(lines) if line.strip().startswith(header_start))
    rows = []
    for line in lines[at + 2 :]:
        words = line.split()
        if not words or not words[0][0].isdigit():
            break
        rows.append(words)
    return rows


def test_nsys_tables_beside_an_ncu_error_are_read_as_nsys_output(tmp_path, capsys):
    """Notes quote `nsys stats` tables, then ncu's `==ERROR== Failed to connect` (ncu profiled
    nothing): was refused as ncu output that profiled no kernel; the nsys tables are read."""
    path = NSYS / "2021.x" / "hpc-lab-notes-stats-tables-no-headings-then-ncu-error-cut.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    api_rows = _rows_under(lines, "Time(%)  Total Time (ns)  Num Calls")
    kern_rows = _rows_under(lines, "Time(%)  Total Time (ns)  Instances")
    run, _ = imported(path, tmp_path, capsys)
    api = run.table("api_calls").set_index("name")
    assert len(api) == len(api_rows) == 12
    for row in api_rows:
        assert api.loc[row[-1], "total_ns"] == _int(row[1])
        assert api.loc[row[-1], "calls"] == _int(row[2])
        assert api.loc[row[-1], "max_ns"] == _int(row[5])
    activities = run.table("gpu_activities")
    kernels = activities[activities["kind"] == "kernel"].set_index("name")
    assert len(kernels) == len(kern_rows) == 3
    for row in kern_rows:
        assert kernels.loc[row[-1], "total_ns"] == _int(row[1])
        assert kernels.loc[row[-1], "calls"] == _int(row[2])
    copies = activities[activities["kind"] == "memcpy"].set_index("name")
    copy_rows = _rows_under(lines, "Time(%)  Total Time (ns)  Operations")
    assert len(copies) == len(copy_rows) == 2
    for row in copy_rows:
        name = " ".join(row[6:])
        assert copies.loc[name, "total_ns"] == _int(row[1])
        assert copies.loc[name, "calls"] == _int(row[2])


def test_a_runs_trace_fenced_under_its_summaries_stays_with_that_run(tmp_path, capsys):
    """A blog fences each `nsys stats -q --report` of one report file, the GPU trace (trimmed by
    hand, its banner gone) among them, then another program's summaries: was three stages, the
    trace one of its own; the trace goes with the summaries above it, the exercise is run 2."""
    name = "blog-post04-stats-q-fence-per-report-trimmed-trace-then-exercise-cut.md"
    path = NSYS / "2025.x" / name
    lines = path.read_text(encoding="utf-8").split("\n")
    trace_rows = _rows_under(lines, "Start (ns)   Duration (ns)")
    kern_rows = [
        _rows_under(lines[at:], "Time (%)  Total Time (ns)  Instances")
        for at, line in enumerate(lines)
        if line.strip().startswith("** CUDA GPU Kernel Summary")
    ]
    run, _ = imported(path, tmp_path, capsys)
    assert sorted(run.table("stages")["stage"]) == ["s.1", "s.2"]
    trace = run.table("gpu_trace")
    assert set(trace["stage"]) == {"s.1"}
    assert list(trace["start_ns"]) == [_int(row[0]) for row in trace_rows]
    assert list(trace["duration_ns"]) == [_int(row[1]) for row in trace_rows]
    kernels = run.table("gpu_activities")
    kernels = kernels[kernels["kind"] == "kernel"].set_index("stage")
    assert len(kern_rows) == 2
    for stage, rows in zip(("s.1", "s.2"), kern_rows, strict=True):
        assert kernels.loc[stage, "total_ns"] == _int(rows[0][1])
        assert kernels.loc[stage, "calls"] == _int(rows[0][2])
    assert set(run.table("ranges")["stage"]) == {"s.1"}
