"""Layouts of ncu's `--print-summary per-kernel` text met in public files of later rounds, checked
against the files themselves: expected names and values are read from the text here, not from
the parser.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from profiler import schema
from profiler.parse import ncu_text, reader_notes

ANY = Path(__file__).parent / "data" / "ncu" / "any"
GROUPED = ANY / "bitonic-h100-summary-under-device-line.md"
ELIDED = ANY.parent / "2025.x" / "thor-import-summary-elided-occupancy.md"
KERNEL_LINE = re.compile(
    r"^ +(?P<name>.+) \((?P<grid>[0-9, ]+)\)x\((?P<block>[0-9, ]+)\), Invocations (?P<n>[0-9]+)$"
)
INVOCATIONS = re.compile(r", (?:Device 0, CC [0-9.]+, )?Invocations (?P<n>[0-9]+)$")


def kernel_lines(path: Path) -> list[re.Match[str]]:
    """The summary's kernel lines: `name (grid)x(block), Invocations N`, no device on them."""
    found = (KERNEL_LINE.match(line) for line in path.read_text().splitlines())
    return [m for m in found if m]


def summary_cells(path: Path, metric: str) -> list[tuple[float, ...]]:
    """Each kernel's Minimum, Maximum and Average of row `metric`, from the file text."""
    found: list[tuple[float, ...]] = []
    for line in path.read_text().splitlines():
        cells = line.split()
        if cells and cells[0] == metric:
            found.append(tuple(float(cell.replace(",", "")) for cell in cells[-3:]))
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


@pytest.mark.parametrize("path", [GROUPED, ELIDED], ids=["grouped", "with-device"])
def test_summary_rows_carry_the_launches_their_kernel_line_sums_up(path):
    """Each counter row of a per-kernel summary has its kernel line's `Invocations N` (it was
    left empty, as for a launch's own row, though ncu printed it)."""
    c = ncu_text.read_tables(path, "s")["counters"]
    counts = [int(m["n"]) for m in map(INVOCATIONS.search, path.read_text().splitlines()) if m]
    per_kernel = c.groupby("kernel_id", sort=True)["invocations"].agg(["min", "max"])
    assert per_kernel["min"].tolist() == counts
    assert per_kernel["max"].tolist() == counts


def test_the_bitonic_summary_counts_300_launches_of_its_merge_kernel():
    c = ncu_text.read_tables(GROUPED, "s")["counters"]
    merge = c[c["name"] == "bitonic_merge(int *, int, int, int)"]
    assert merge["invocations"].tolist() == [300, 300]


def test_summary_with_elided_rows_reads_the_rest_and_says_the_tables_are_partial():
    """A per-kernel summary whose author replaced each Occupancy table's header, rules and first
    rows by a `...` line: every kernel's `--metrics` rows are read (Minimum, Maximum, Average,
    thousands separators), and a partial `ReadNote` names each `...` line (the import was silent
    before: the Occupancy rows under the cut header were dropped without a word; they are read
    now, below)."""
    with reader_notes.trimmed() as said:
        tables = ncu_text.read_tables(ELIDED, "s")
    text = ELIDED.read_text().splitlines()
    marks = [n for n, line in enumerate(text, 1) if line.strip() == "..."]
    assert len(marks) == 3
    assert [note.partial for note in said] == [True]
    assert said[0].line == marks[0] and all(str(n) in str(said[0]) for n in marks)
    m = schema.validate(tables["metrics"], schema.METRICS)
    assert list(m["name"]) == [k["name"] for k in kernel_lines_with_device(ELIDED)]
    c = tables["counters"]
    row = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
    got = [tuple(r) for r in c[c["metric"] == row][["min", "max", "value"]].itertuples(index=False)]
    assert [pytest.approx(cells) for cells in summary_cells(ELIDED, row)] == got
    assert got[1] == pytest.approx((1_016_796, 1_016_893, 1_016_842.21))


def test_rows_under_a_header_cut_out_are_read_by_the_rule_at_their_foot():
    """The same summary: each `...` right under `Section: Occupancy` stands for the table's
    header and opening rule, and the rule under its four rows (five dash runs: name, unit,
    Minimum, Maximum, Average) gives their widths. The rows are read, each under its section
    (was: warned about, not read), `Achieved Occupancy`'s Average as the kernel's occupancy,
    and the note says which marks were read so."""
    with reader_notes.trimmed() as said:
        tables = ncu_text.read_tables(ELIDED, "s")
    text = ELIDED.read_text().splitlines()
    marks = [n for n, line in enumerate(text, 1) if line.strip() == "..."]
    assert all(text[n - 2].strip() == "Section: Occupancy" for n in marks)
    shown = ", ".join(map(str, marks))
    assert f"the rows under 3 of them (line {shown}), which stand for a table's header" in str(
        said[0]
    )
    assert "not read either" not in str(said[0])
    occupancy = [cells[-1] for cells in summary_cells(ELIDED, "Achieved")]  # `Achieved Occupancy`
    assert occupancy == [35.26, 65.27, 63.80]
    m = tables["metrics"]
    assert list(m["achieved_occupancy_pct"]) == pytest.approx(occupancy)
    c = tables["counters"]
    rows = c[c["section"] == "Occupancy"]
    assert list(rows["metric"][:4]) == [
        "Block Limit Shared Mem",
        "Block Limit Warps",
        "Theoretical Occupancy",
        "Achieved Occupancy",
    ]
    assert len(rows) == 4 * len(marks)
    first = rows.iloc[3]
    assert (first["unit"], first["min"], first["max"], first["value"]) == ("%", 34.68, 35.78, 35.26)


def kernel_lines_with_device(path: Path) -> list[re.Match[str]]:
    """The summary's kernel lines as ncu 2024.x-2025.x print them: `name (grid)x(block), Device
    0, CC 11.0, Invocations 14`."""
    line = re.compile(r"^ +(?P<name>.+) \([0-9, ]+\)x\([0-9, ]+\), Device 0, CC [0-9.]+, Inv")
    found = (line.match(text) for text in path.read_text().splitlines())
    return [m for m in found if m]


def test_rows_under_a_mark_are_filed_under_the_section_above_it_and_the_note_says_so():
    """A `...` right under `Section: Occupancy` may stand for more than that table's header
    (other `Section:` lines with it: nothing in the text tells): the rows under it are filed
    under the `Section:` line above the mark, and the note says that their section is another
    if the mark stands for more (it said only that they were read)."""
    with reader_notes.trimmed() as said:
        tables = ncu_text.read_tables(ELIDED, "s")
    text = ELIDED.read_text().splitlines()
    marks = [n for n, line in enumerate(text, 1) if line.strip() == "..."]
    under = {text[n - 2].strip().removeprefix("Section: ") for n in marks}
    assert under == {"Occupancy"}
    assert "filed under the `Section:` line above the mark" in str(said[0])
    assert "their section is another if the mark also stands for more `Section:` lines" in str(
        said[0]
    )
    c = tables["counters"]
    rows = {line.strip().split("  ")[0] for n in marks for line in text[n : n + 4]}
    assert set(c.loc[c["metric"].isin(rows), "section"]) == under
    assert len(c[c["metric"].isin(rows)]) == 4 * len(marks)


DEVICE_NAMED = ANY.parent / "2023.x" / "es-transpose-summary-per-kernel-device.md"
OLD_LINE = re.compile(
    r"^ +(?P<name>.+), Block Size (?P<block>[0-9]+), Grid Size (?P<grid>[0-9]+), Device 0, "
    r"(?P<n>[0-9]+) invocations *$"
)


def test_old_summary_whose_kernel_line_names_the_device_is_read():
    """ncu 2022-2023's `--print-summary per-kernel` line `name, Block Size 256, Grid Size 32,
    Device 0, 1 invocations`: its table is read as the kernel's (left out before, as a table with
    no kernel line above it), the Average column as the value."""
    tables = ncu_text.read_tables(DEVICE_NAMED, "s")
    text = DEVICE_NAMED.read_text()
    line = next(m for m in map(OLD_LINE.match, text.splitlines()) if m)
    assert line["name"] == "transpose_device(float *, float *, int, int)"
    m = schema.validate(tables["metrics"], schema.METRICS)
    summary = m[m["block"] == line["block"]]
    assert list(summary["name"]) == [line["name"]]
    assert list(summary["grid"]) == [line["grid"]]
    duration = summary_cells(DEVICE_NAMED, "gpu__time_duration.sum")
    assert duration == [(9.989888, 9.989888, 9.989888)]
    assert list(summary["duration_ns"]) == [9_989_888]
    c = tables["counters"]
    rows = c[c["metric"] == "gpu__time_duration.sum"]
    assert rows["invocations"].tolist() == [int(line["n"])]
