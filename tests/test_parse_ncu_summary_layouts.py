"""Layouts of ncu's `--print-summary per-kernel` text met in public files of later rounds, checked
against the files themselves: expected names and values are read from the text here, not from
the parser.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from profiler import schema
from profiler.parse import ncu_text

ANY = Path(__file__).parent / "data" / "ncu" / "any"
GROUPED = ANY / "bitonic-h100-summary-under-device-line.md"
KERNEL_LINE = re.compile(
    r"^ +(?P<name>.+) \((?P<grid>[0-9, ]+)\)x\((?P<block>[0-9, ]+)\), Invocations [0-9]+$"
)


def kernel_lines(path: Path) -> list[re.Match[str]]:
    """The summary's kernel lines: `name (grid)x(block), Invocations N`, no device on them."""
    found = (KERNEL_LINE.match(line) for line in path.read_text().splitlines())
    return [m for m in found if m]


def summary_cells(path: Path, metric: str) -> list[tuple[float, float, float]]:
    """Each kernel's Minimum, Maximum and Average of row `metric`, from the file text."""
    found: list[tuple[float, float, float]] = []
    for line in path.read_text().splitlines():
        cells = line.split()
        if cells and cells[0] == metric:
            found.append((float(cells[-3]), float(cells[-2]), float(cells[-1])))
    return found


def test_summary_under_a_device_line_reads_every_kernel():
    """A per-kernel summary whose device is a line of its own (`Device 0, CC 9.0`) and whose
    kernel lines end `, Invocations N` after the launch shape: one row per kernel, its averages
    as values (refused before, as tables with no kernel line above them)."""
    tables = ncu_text.read_tables(GROUPED, "s")
    m = schema.validate(tables["metrics"], schema.METRICS)
    lines = kernel_lines(GROUPED)
    assert [k["name"] for k in lines] == [
        "bitonic_merge(int *, int, int, int)",
        "fill_padding(int *, int, int, int)",
    ]
    assert list(m["name"]) == [k["name"] for k in lines]
    assert list(m["grid"]) == [f"({k['grid']})" for k in lines]
    assert list(m["block"]) == [f"({k['block']})" for k in lines]
    occupancy = summary_cells(GROUPED, "sm__warps_active.avg.pct_of_peak_sustained_active")
    assert list(m["achieved_occupancy_pct"]) == pytest.approx([c[2] for c in occupancy])
    assert list(m["achieved_occupancy_pct"]) == pytest.approx([73.84, 9.65])
    c = tables["counters"]
    row = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
    got = [tuple(r) for r in c[c["metric"] == row][["min", "max", "value"]].itertuples(index=False)]
    assert [pytest.approx(cells) for cells in summary_cells(GROUPED, row)] == got
    assert got[0] == pytest.approx((56.59, 72.29, 64.43))
