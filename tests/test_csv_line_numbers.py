"""A malformed CSV row is named by its line in the file, not by pandas' count from the table's
header: real files of each CSV reader, one row broken, with lines above the header (a banner,
ncu's and nvprof's own lines) and, for ncu, a tool line inside the table that is removed before
the read."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiler import importer
from profiler.errors import ProfgenError
from profiler.parse import ncu_csv

DATA = Path(__file__).parent / "data"
NSYS_TRACE = DATA / "nsys" / "2025.3.1" / "lenet-overlap_fusion" / "nsys_cuda_gpu_trace.csv"
NVPROF_METRICS = DATA / "nvprof" / "8.x" / "j3d27pt-csv-metrics.csv"
NCU_RAW = DATA / "ncu" / "2025.3.1" / "raw-metrics.csv"
NCU_DETAILS = DATA / "ncu" / "2025.3.1" / "details-sections.csv"

EXTRA = ",9" * 30  # more cells than any of these headers has


def broken(source: Path, tmp_path: Path, row: int, how: str, above: str = "") -> tuple[Path, int]:
    """`source` with its line `row` (0-based) given extra cells (`extra`) or an open quote in
    front (`open`, the lines after it dropped), `above` written first: the file and the
    broken line's number in it (1-based)."""
    lines = source.read_text().splitlines(keepends=True)
    if how == "extra":
        lines[row] = lines[row].rstrip("\n") + EXTRA + "\n"
    else:
        lines = [*lines[:row], 'x,"open' + lines[row]]
    path = tmp_path / source.name
    path.write_text(above + "".join(lines))
    return path, above.count("\n") + row + 1


def refusal(path: Path, tmp_path: Path) -> str:
    with pytest.raises(ProfgenError) as refused:
        importer.import_run("m", [("s", str(path))], {}, tmp_path / "runs")
    return str(refused.value)


@pytest.mark.parametrize("above", ["", "nsys stats banner line\n\n"])
def test_nsys_csv_row_with_extra_cells(tmp_path, above):
    path, line = broken(NSYS_TRACE, tmp_path, 12, "extra", above)
    assert f"Expected 21 fields in line {line}, saw 51" in refusal(path, tmp_path)


@pytest.mark.parametrize("above", ["", "nsys stats banner line\n\n"])
def test_nsys_csv_quote_left_open(tmp_path, above):
    path, line = broken(NSYS_TRACE, tmp_path, 12, "open", above)
    assert f"EOF inside string starting at line {line}" in refusal(path, tmp_path)


def test_nvprof_csv_metrics_below_its_own_lines(tmp_path):
    """The header is line 6, under nvprof's `==PID==` lines."""
    path, line = broken(NVPROF_METRICS, tmp_path, 9, "extra")
    assert line == 10
    assert f"Expected 8 fields in line {line}, saw 38" in refusal(path, tmp_path)


def test_ncu_raw_page_below_its_own_lines(tmp_path):
    path, line = broken(NCU_RAW, tmp_path, 12, "extra")
    assert f"fields in line {line}, saw" in refusal(path, tmp_path)


def test_ncu_details_page_with_a_tool_line_inside(tmp_path):
    """ncu's `==PROF==` lines inside the table are removed before pandas reads it: the broken
    row's file line counts them back in."""
    lines = NCU_DETAILS.read_text().splitlines(keepends=True)
    header = next(i for i, text in enumerate(lines) if text.startswith('"ID"'))
    lines[header + 20 : header + 20] = ["==PROF== Profiling kernel\n", "==WARNING== late\n"]
    row = header + 60
    lines[row] = lines[row].rstrip("\n") + EXTRA + "\n"
    path = tmp_path / "details.csv"
    path.write_text("".join(lines))
    with pytest.raises(ProfgenError) as refused:
        ncu_csv.read_tables(path, "s")
    assert f"fields in line {row + 1}, saw" in str(refused.value)
