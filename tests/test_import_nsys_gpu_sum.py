"""nsys's `cuda_gpu_sum` report (2022.4 and later; what harrism/nsys_easy prints): kernels and
memory operations in one table, each row's `Category` saying which. Real files (see the README
of their folders), checked for the values they yield; expected values are read from the file
text here.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
from clirun import assert_refused, profgen

from profiler import schema, store
from profiler.analyze import activities, overlap
from profiler.parse import gpuops, nsys_fields

NSYS = Path(__file__).parent / "data" / "nsys"
IN_COMMENT = NSYS / "2025.x" / "nsys-easy-cuda-gpu-sum-in-comment.cu"
NOTES = NSYS / "2023.3.3" / "nsys-easy-cuda-gpu-sum-zh-notes.md"
NS = re.compile(r"^ +[0-9.]+ +[0-9,]+ ")  # a row: Time (%), then Total Time (ns)


def table_rows(path: Path) -> list[list[str]]:
    """The cuda_gpu_sum rows of the file's text, cut at runs of two blanks: Time (%), Total
    Time, Instances, Avg, Med, Min, Max, StdDev, Category, Operation."""
    lines = path.read_text().splitlines()
    found = [re.split(r" {2,}", ln.strip()) for ln in lines if NS.match(ln)]
    return [cells for cells in found if len(cells) == 10]


def number(cell: str) -> int:
    return int(cell.replace(",", ""))


def imported(capsys, tmp: Path, path: Path):  # type: ignore[no-untyped-def]
    argv = ["import", "--model", "gpusum", "--out", tmp, "--stage", f"s={path}"]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    return store.load_run(result.out.strip().splitlines()[-1])


def test_gpu_sum_rows_are_kernels_and_copies_by_category(tmp_path, capsys):
    """Both files: each `CUDA_KERNEL` row a kernel, each `MEMORY_OPER` row a memory operation,
    totals, counts, Min and Max to the nanosecond (refused before: "tables all of nsys reports
    profgen does not use (cuda_gpu_sum)")."""
    for n, path in enumerate((IN_COMMENT, NOTES)):
        rows = table_rows(path)
        assert [r[-2] for r in rows] == ["CUDA_KERNEL", "MEMORY_OPER", "MEMORY_OPER"]
        gpu = imported(capsys, tmp_path / str(n), path).table("gpu_activities")
        got = gpu.set_index("name")
        for r in rows:
            kind = "kernel" if r[-2] == "CUDA_KERNEL" else "memcpy"
            row = got.loc[r[-1]]
            assert row["kind"] == kind, r[-1]
            assert [row["total_ns"], row["calls"], row["min_ns"], row["max_ns"]] == [
                number(r[1]),
                number(r[2]),
                number(r[5]),
                number(r[6]),
            ]
    assert number(table_rows(IN_COMMENT)[0][1]) == 3_070_579


def test_gpu_sum_csv_header_is_its_own_report():
    """The header of the table (as `--format csv` writes the same columns) names `cuda_gpu_sum`,
    not the memory-time summary its `Operation` column looked like: every kernel row of a
    headerless-marker CSV was read as a memory copy before."""
    header = next(ln for ln in IN_COMMENT.read_text().splitlines() if "Category" in ln)
    cells = re.split(r" {2,}", header.strip())
    assert cells[-2:] == ["Category", "Operation"]
    assert nsys_fields.identify_cells(cells) == "cuda_gpu_sum"


def test_paste_that_ends_at_the_gpu_sum_header_is_refused_naming_it(tmp_path, capsys):
    """A comment whose paste ends at the `cuda_gpu_sum` header (no rule, no rows): one line that
    names the report and the header's line (it said "no nsys report header found" before)."""
    path = NSYS / "2024.5.1" / "nsys-easy-1-gpu-sum-header-alone.md"
    lines = path.read_text().splitlines()
    at = next(n for n, line in enumerate(lines, 1) if "Category" in line)
    assert at == len(lines)  # the header is the paste's last line
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    assert_refused(result, 2, str(path), f"the cuda_gpu_sum table at line {at} is its header alone")


def test_source_file_whose_table_a_formatter_reflowed_is_refused_as_source(tmp_path, capsys):
    """A CUDA source whose comment held a `cuda_gpu_sum` table that a formatter reflowed to 80
    columns: no table is left, and the one line says the file is CUDA source with none (it
    quoted the first line alone before)."""
    path = NSYS / "any" / "nsys-easy-table-reflowed-in-comment.cu"
    text = path.read_text()
    assert "Max\n(ns)" in text and max(len(line) for line in text.splitlines()[:24]) <= 80
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    said = "it is a CUDA source file in which no profiler table was found (it starts '#include"
    assert_refused(result, 2, str(path), said)


def test_unified_memory_migrations_have_their_direction(tmp_path, capsys):
    """nsys-easy's two `MEMORY_OPER` rows are managed-memory migrations (lines 27-28: `[CUDA
    memcpy Unified Host-to-Device]`, `... Device-to-Host]`): they keep their names and get the
    direction the name states (was: none), so the copy summary counts their time per direction."""
    rows = {r[-1]: r for r in table_rows(IN_COMMENT)}
    h2d = rows["[CUDA memcpy Unified Host-to-Device]"]
    d2h = rows["[CUDA memcpy Unified Device-to-Host]"]
    run = imported(capsys, tmp_path, IN_COMMENT)
    gpu = run.table("gpu_activities").set_index("name")
    assert gpu.loc[h2d[-1], "copy_kind"] == "HtoD" and gpu.loc[d2h[-1], "copy_kind"] == "DtoH"
    copies = overlap.copy_summary(run.table("gpu_activities")).iloc[0]
    assert (copies["h2d_ns"], copies["d2h_ns"]) == (number(h2d[1]), number(d2h[1]))


def test_2020_unified_memory_migrations_have_their_direction():
    """nsys 2020's spelling, `[CUDA Unified Memory memcpy HtoD]` (nsys-before-after-fenced.md,
    lines 76-77 and 86): the direction is the label's, the name stays as printed."""
    for direction in ("HtoD", "DtoH"):
        label = f"[CUDA Unified Memory memcpy {direction}]"
        assert label in (NSYS / "2020.x" / "nsys-before-after-fenced.md").read_text()
        assert gpuops.copy_direction(label) == direction and gpuops.copy_name(label) == label
    for label, direction in (
        ("[CUDA memcpy Unified Device-to-Device]", "DtoD"),  # ENUM_CUDA_MEMCPY_OPER, 2025.3.2
        ("[CUDA memcpy Host-to-Device]", "HtoD"),
    ):
        assert gpuops.copy_direction(label) == direction
    assert gpuops.copy_name("[CUDA memcpy Host-to-Device]") == "[CUDA memcpy HtoD]"


def test_a_trace_keeps_a_migrations_name():
    """In a trace (nsys's `cuda_gpu_trace` names copies as the summary does), a migration keeps
    its name beside an explicit copy of the same direction: two GPU-activity rows, both HtoD."""
    names = pd.Series(["[CUDA memcpy Unified Host-to-Device]", "[CUDA memcpy Host-to-Device]"])
    got = gpuops.describe(names, np.array([1, 1]), None, None)
    assert got["name"].tolist() == ["[CUDA memcpy Unified Host-to-Device]", "[CUDA memcpy HtoD]"]
    assert got["copy_kind"].tolist() == ["HtoD", "HtoD"]


def test_gpu_activities_of_a_trace_keep_a_migrations_name():
    """The summary made from such a trace: the migration and the explicit copy are two HtoD
    rows, each its own name (was: the migration a nameless `[CUDA memcpy]` with no direction)."""
    names = ["[CUDA memcpy Unified Host-to-Device]", "[CUDA memcpy Host-to-Device]"]
    described = gpuops.describe(pd.Series(names), np.array([1, 1]), None, None)
    trace = schema.empty(schema.GPU_TRACE).reindex(range(2))
    times = dict(duration_ns=[700, 300], start_ns=[0, 1000], end_ns=[700, 1300], repeat=[0, 0])
    trace = trace.assign(stage="s", **times)
    trace = schema.conform(trace.assign(**described), schema.GPU_TRACE)
    got = activities.gpu_activities(trace).set_index("name")
    assert got.loc[names[0], "copy_kind"] == "HtoD" and got.loc[names[0], "total_ns"] == 700
    assert got.loc["[CUDA memcpy HtoD]", "total_ns"] == 300 and len(got) == 2
