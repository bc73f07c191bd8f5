"""A large ncu `--csv` details page or nsys `cuda_gpu_trace` read in parts on threads
(`profiler.parse.csv_parts`) gives the same tables as the page read whole, on every real details
page and GPU trace in tests/data; a page whose part fails is read whole, and refused with the
whole read's message."""

from __future__ import annotations

import csv
import io
import os
import threading
from pathlib import Path

import pandas as pd
import pytest

from profiler.errors import ParseError
from profiler.parse import csv_parts, csvtext, ncu_csv, nsys_capture, nsys_csv

DATA = Path(__file__).parent / "data"
DETAILS = sorted(
    p for p in (DATA / "ncu").rglob("*") if p.is_file() and b'"Metric Value"' in p.read_bytes()
)
# (the pages `ncu_csv` reads itself: not those quoted in a document or a program's comments)
DETAILS = [p for p in DETAILS if p.suffix not in (".md", ".cu") or "readme-head" in p.name]


# nsys GPU traces as `nsys stats --format csv` writes them (each file one report)
TRACES = sorted(p for p in (DATA / "nsys").rglob("*gpu_trace.csv") if p.is_file())
STDOUT = DATA / "nsys" / "2025.3.1" / "demo" / "nsys-stats-stdout.txt"


def read(path: Path, parts: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, pd.DataFrame]:
    """`ncu_csv.read_tables` with the page read in `parts` parts (1: whole)."""
    monkeypatch.setattr(csv_parts, "part_count", lambda size, cores=None: parts)
    return ncu_csv.read_tables(path, "s")


def test_the_real_details_pages_are_found():
    assert len(DETAILS) >= 5


@pytest.mark.parametrize("path", DETAILS, ids=lambda p: p.name)
@pytest.mark.parametrize("parts", [2, 3, 7])
def test_parts_give_the_whole_pages_tables(path, parts, monkeypatch):
    whole = read(path, 1, monkeypatch)
    cut = read(path, parts, monkeypatch)
    assert whole.keys() == cut.keys()
    for name in whole:
        pd.testing.assert_frame_equal(cut[name], whole[name])


def parts_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list to which each later call of `csv_parts.read_in_parts` adds how many parts it
    reads."""
    seen: list[int] = []
    real = csv_parts.read_in_parts

    def counted(data, cuts, read_part):
        seen.append(len(cuts))
        return real(data, cuts, read_part)

    monkeypatch.setattr(csv_parts, "read_in_parts", counted)
    return seen


def test_the_page_is_read_in_parts(monkeypatch):
    """The parts reader is what runs (not a fall-back to the whole page): each part is read."""
    seen = parts_read(monkeypatch)
    read(DATA / "ncu" / "2025.3.1" / "details-sections.csv", 4, monkeypatch)
    assert seen == [4]


def test_the_real_gpu_traces_are_found():
    assert len(TRACES) >= 5


@pytest.mark.parametrize("path", TRACES, ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("parts", [2, 3, 7])
def test_parts_give_the_whole_gpu_trace(path, parts, monkeypatch):
    monkeypatch.setattr(csv_parts, "part_count", lambda size, cores=None: 1)
    whole = nsys_csv.read_gpu_trace(path, "s")
    monkeypatch.setattr(csv_parts, "part_count", lambda size, cores=None: parts)
    pd.testing.assert_frame_equal(nsys_csv.read_gpu_trace(path, "s"), whole)


@pytest.mark.parametrize("parts", [2, 5])
def test_a_gpu_trace_in_nsys_stdout_is_read_in_parts_as_whole(parts, monkeypatch):
    """The trace among other reports in `nsys stats` output is read in parts (each part read:
    no fall-back), and gives what the whole read gives."""
    monkeypatch.setattr(csv_parts, "part_count", lambda size, cores=None: 1)
    whole = nsys_capture.read_stats_stdout(STDOUT, "s")
    seen = parts_read(monkeypatch)
    monkeypatch.setattr(csv_parts, "part_count", lambda size, cores=None: parts)
    cut = nsys_capture.read_stats_stdout(STDOUT, "s")
    assert seen == [parts] and whole.keys() == cut.keys()
    for name in whole:
        pd.testing.assert_frame_equal(cut[name], whole[name])


def test_a_part_that_fails_makes_the_whole_page_refused_as_before(monkeypatch, tmp_path):
    """A row with one cell too many in the page's last eighth: the parts reader fails, and the
    whole page's read refuses the file as it did before, naming the row's line."""
    text = (DATA / "ncu" / "2025.3.1" / "details-sections.csv").read_text()
    lines = text.splitlines(keepends=True)
    at = len(lines) * 7 // 8
    at += next(i for i, line in enumerate(lines[at:]) if line.startswith('"') and '"hz"' in line)
    lines[at] = lines[at].rstrip("\n") + '"x","y","z","u","v","w"\n'
    broken = tmp_path / "broken.csv"
    broken.write_text("".join(lines))
    with pytest.raises(ParseError) as whole:
        read(broken, 1, monkeypatch)
    with pytest.raises(ParseError) as cut:
        read(broken, 4, monkeypatch)
    assert f"Expected 22 fields in line {at + 1}, saw 23" in str(whole.value)
    assert str(cut.value) == str(whole.value)


def quoted_page(cells: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(cells)
    return out.getvalue().encode()


def test_a_newline_inside_a_quoted_cell_is_never_a_cut():
    """A cell whose text holds a newline and a quoted line (as a rule's description can) lies
    where every share of the bytes falls: the parts start only at real records."""
    tricky = 'first line\n"0","looks like a row"\nlast'
    rows = [["ID", "Text"]] + [[str(i), tricky if i % 2 else "plain"] for i in range(40)]
    data = quoted_page(rows)
    start = data.index(b"\n") + 1
    cuts = csv_parts.record_starts(data, start, 9)
    records = {start}
    reader_at = start
    for row in rows[1:]:
        reader_at += len(quoted_page([row]))
        records.add(reader_at)
    assert len(cuts) == 9
    assert cuts == sorted(set(cuts))
    assert set(cuts) <= records


def test_a_page_with_nowhere_to_cut_is_one_part():
    data = quoted_page([["ID"], ["0"]])
    assert csv_parts.record_starts(data, data.index(b"\n") + 1, 4) == [data.index(b"\n") + 1]


@pytest.mark.parametrize(
    ("size", "cores", "parts"),
    [
        (10 << 20, 16, 1),
        (64 << 20, 16, 2),
        (339 << 20, 16, 8),
        (339 << 20, 4, 4),
        (339 << 20, 2, 1),
    ],
)
def test_part_count(size, cores, parts):
    assert csv_parts.part_count(size, cores) == parts


def test_usable_cores_is_what_the_process_may_run_on():
    assert 1 <= csv_parts.usable_cores() <= (os.cpu_count() or 1)


@pytest.mark.parametrize("parts", [2, 5])
def test_parts_joined_are_the_frame_of_one_read(parts):
    """The frame itself, not only the tables made of it: each category column's categories in
    the order one read gives them (sorted), the cells and their dtypes the same."""
    data = (DATA / "ncu" / "2025.3.1" / "details-sections.csv").read_bytes()
    start = data.index(b'"ID",')
    rows = data.index(b"\n", start) + 1
    header = next(csv.reader([data[start:rows].decode()]))
    dtypes = {name: "category" for name in header} | {"Metric Value": object, "CC": "S1"}
    whole = csvtext.read_part(data, csvtext.csv_options(dtypes, names=header, header=0), start)
    options = csvtext.csv_options(dtypes, names=header, header=None)
    cuts = csv_parts.record_starts(data, rows, parts)
    cut = csv_parts.read_in_parts(data, cuts, lambda part: csvtext.read_part(part, options))
    assert len(cuts) == parts
    pd.testing.assert_frame_equal(cut, whole)
    assert (cut["Kernel Name"].cat.categories == whole["Kernel Name"].cat.categories).all()


def test_quotes_in_counts_across_blocks(monkeypatch):
    data = b'ab"c""' * 1000 + b'"'
    monkeypatch.setattr(csv_parts, "_BLOCK", 7)
    assert csv_parts.quotes_in(data, 0, len(data)) == data.count(b'"')
    assert csv_parts.quotes_in(data, 3, 4000) == data.count(b'"', 3, 4000)
    assert csv_parts.quotes_in(data, 5, 5) == 0


@pytest.mark.parametrize("parts", [2, 3, 8, 30])
def test_cuts_are_distinct_record_starts_however_many_parts_are_asked(parts):
    rows = [["ID", "Text"], ["0", "a"], ["1", 'b\n"c"'], ["2", "d"]]
    data = quoted_page(rows)
    start = data.index(b"\n") + 1
    records = [start, start + len(quoted_page(rows[1:2])), start + len(quoted_page(rows[1:3]))]
    cuts = csv_parts.record_starts(data, start, parts)
    assert cuts[0] == start
    assert cuts == sorted(set(cuts))
    assert set(cuts) <= set(records)
    assert len(cuts) >= 2


def test_quotes_before_each_bound_are_those_counted_from_the_start():
    data = b'"a","b\n""c"""\n' * 500
    bounds = [10, 11, 2000, 5003, len(data)]
    assert csv_parts.quotes_before(data, 3, bounds) == [data.count(b'"', 3, b) for b in bounds]
    assert csv_parts.quotes_before(data, 3, []) == []


@pytest.mark.parametrize("alone", [True, False])
def test_begun_work_gives_its_result_and_raises_its_error(alone):
    ran_on = []

    def work():
        ran_on.append(threading.get_ident())
        return 7

    def fails():
        raise ValueError("bad cell")

    assert csv_parts.begun(work, alone)() == 7
    assert (ran_on[0] != threading.get_ident()) is alone
    with pytest.raises(ValueError, match="bad cell"):
        csv_parts.begun(fails, alone)()
