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
