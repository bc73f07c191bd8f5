"""nsys column text with numbers grouped by four digits (`44,0087,8248`, `32,3999.0`): a real
Jetson capture (tests/data/nsys/README.md) read with its values, and the tables where the
commas could as well be a decimal comma refused. Expected values come from the file's text,
cut in the test itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from profiler.errors import ParseError
from profiler.parse import nsys_capture

JETSON = Path(__file__).parent / "data" / "nsys" / "2022.x" / "jetson-nvtx-four-digit-groups.txt"


def file_rows(path: Path, heading: str) -> list[list[str]]:
    """The rows of the table under `heading`, cells split at runs of two blanks or more."""
    lines = path.read_text().splitlines()
    at = lines.index(heading) + 4  # heading, blank, header, rule
    rows = []
    for line in lines[at:]:
        if not line.strip():
            break
        rows.append(re.split(r" {2,}", line.strip()))
    return rows


def number(cell: str) -> float:
    return float(cell.replace(",", ""))


@pytest.fixture(scope="module")
def tables():
    return nsys_capture.read_stats_stdout(JETSON, "s")


def test_nvtx_ranges_are_read_with_their_values(tables):
    rows = file_rows(JETSON, "NVTX Range Statistics:")
    ranges = tables["ranges"]
    assert len(ranges) == len(rows) == 50
    assert ranges["total_ns"].tolist() == [number(r[1]) for r in rows]
    assert ranges["calls"].tolist() == [number(r[2]) for r in rows]
    assert ranges["avg_ns"].tolist() == [number(r[3]) for r in rows]
    assert ranges["min_ns"].tolist() == [number(r[5]) for r in rows]
    assert ranges["max_ns"].tolist() == [number(r[6]) for r in rows]
    first = ranges.iloc[0]  # `44,0087,8248  1,3583  32,3999.0  ...  22,5201  126,4365`
    assert (first["total_ns"], first["calls"]) == (4_400_878_248, 13_583)
    assert first["avg_ns"] == 323_999.0
    assert (first["min_ns"], first["max_ns"]) == (225_201, 1_264_365)


def test_api_calls_and_copies_are_read_with_their_values(tables):
    api = file_rows(JETSON, "CUDA API Statistics:")
    calls = tables["api_calls"].set_index("name")
    for row in api:
        assert calls.loc[row[-1], "total_ns"] == number(row[1])
        assert calls.loc[row[-1], "calls"] == number(row[2])
    copies = tables["gpu_activities"].set_index("name")
    for row in file_rows(JETSON, "CUDA Memory Operation Statistics (by time):"):
        assert copies.loc[row[-1], "total_ns"] == number(row[1])
        assert copies.loc[row[-1], "calls"] == number(row[2])
    htod = copies.loc["[CUDA memcpy HtoD]"]  # `2,6959.009` MB
    assert (htod["total_ns"], htod["bytes"]) == (2_218_247_417, 26_959_009_000)


def test_every_total_is_calls_times_average(tables):
    """Read right, each row's total is its count times its average, within the average's
    rounding to 0.1 ns (a misread group of four digits is off by a factor of ten or more)."""
    for name in ("ranges", "api_calls", "gpu_activities"):
        t = tables[name]
        gap = (t["total_ns"] - t["calls"] * t["avg_ns"]).abs()
        assert (gap <= 0.05 * t["calls"] + 1).all(), t[gap > 0.05 * t["calls"] + 1]


HEADER = (
    " Time (%)  Total Time (ns)  Instances  Avg (ns)  Med (ns)  Min (ns)  Max (ns)   Style   Range"
)
RULE = (
    " --------  ---------------  ---------  --------  --------  --------  --------  -------  -----"
)


def nvtx_table(tmp_path: Path, numbers: str) -> Path:
    """An nvtx_sum table of one row: `numbers` (seven cells) right-aligned in their columns as
    nsys writes them, then `PushPop` and the range `a`."""
    runs = [m.span() for m in re.finditer("-+", RULE)]
    row = ""
    for cell, (_, end) in zip(numbers.split(), runs, strict=False):
        row += cell.rjust(end - len(row))
    row += "  PushPop  a"
    path = tmp_path / "nvtx.txt"
    path.write_text(f"[3/8] Executing 'nvtxsum' stats report\n\n{HEADER}\n{RULE}\n{row}\n")
    return path


def test_grouping_no_cell_decides_is_refused_saying_so(tmp_path):
    """`2,6815` and no cell with two commas or a point: 26815, or 2.6815 with a decimal comma?"""
    with pytest.raises(ParseError) as err:
        nsys_capture.read_stats_stdout(
            nvtx_table(tmp_path, "100 2,6815 13 2062 2016 1952 2496"), "s"
        )
    assert "line 5, column 'Total Time (ns)': '2,6815' is not a number" in str(err.value)
    assert "'2,6815' is grouped by four digits or has a decimal comma" in str(err.value)
    assert "LC_ALL=C" in str(err.value)


def test_grouping_a_point_decides_and_a_misfit_group_stays_refused(tmp_path):
    row = "100.0 2,6815 13 2062.7 2016.0 1952 2496"
    got = nsys_capture.read_stats_stdout(nvtx_table(tmp_path, row), "s")["ranges"]
    assert (got["total_ns"].iloc[0], got["calls"].iloc[0]) == (26_815, 13)
    row = "100.0 2,6815,12 13 2062.7 2016.0 1952 2496"
    with pytest.raises(ParseError, match=r"'2,6815,12' is not a number\)"):
        nsys_capture.read_stats_stdout(nvtx_table(tmp_path, row), "s")


INDIAN = (
    Path(__file__).parent / "data" / "nsys" / "2025.x" / "deepspeed-parser-test-indian-groups.py"
)


def test_numbers_grouped_in_lakhs_are_read_with_their_values():
    """nsys in an en_IN locale groups by two digits before the last three (`27,65,96,75,62,725`,
    `14,244`): the nvtx_sum table of a real test file is read with its values (was: refused,
    "'27,65,96,75,62,725' is not a number")."""
    lines = INDIAN.read_text().splitlines()
    at = next(k for k, line in enumerate(lines) if "(nvtx_sum):" in line) + 4
    rows = [line.split() for line in lines[at : lines.index("", at)]]
    ranges = nsys_capture.read_stats_stdout(INDIAN, "s")["ranges"].set_index("name")
    assert len(ranges) == len(rows) == 2
    for row in rows:
        got = ranges.loc[row[-1].lstrip(":")]
        assert got["total_ns"] == number(row[1]) and got["calls"] == number(row[2])
        assert got["avg_ns"] == number(row[3])
        assert (got["min_ns"], got["max_ns"]) == (number(row[5]), number(row[6]))
    assert ranges.loc["DeepSpeedEngine.backward", "total_ns"] == 2_765_967_562_725
