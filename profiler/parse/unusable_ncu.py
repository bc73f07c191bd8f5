"""What a file of Nsight Compute's that holds nothing profgen can read is (`unusable.describe`
asks): the list of sections ncu can collect (`ncu --list-sections`: the header `Identifier
Display Name Enabled Filename` above one row per section), rows of ncu's `--csv` output
pasted without the header line above them (an issue quoting a few rows), and the tables of
sections' bodies (`Table Name : GPU Throughput`) kept without their `Section:` lines.

Only the start of the file that detection read is looked at, line by line, with no pattern
that can backtrack.
"""

from __future__ import annotations

import csv

from profiler.parse import cell_quotes

_SECTIONS_HEADER = ["Identifier", "Display", "Name", "Enabled", "Filename"]
_CSV_ROWS = 3  # rows in a run that make a headless ncu --csv table
_CSV_CELLS = 11  # the fewest cells of an ncu --csv row: ID ... Metric Name, Metric Unit, Value
_TABLE_NAME, _SECTION = "Table Name : ", "Section: "  # a body table's first line; a section's


def section_list(lines: list[str]) -> str | None:
    """What the file is when a line of `lines` is the header of `ncu --list-sections`."""
    for at, line in enumerate(lines):
        if line.split() == _SECTIONS_HEADER:
            return (
                f"it is the list of Nsight Compute's sections (`ncu --list-sections`, its header "
                f"at line {at + 1}): which sections ncu can collect, no measurements to import"
            )
    return None


def headless_csv(lines: list[str]) -> str | None:
    """What the first run of `_CSV_ROWS` or more ncu `--csv` rows in `lines` is (detection found
    no header above them)."""
    run, first = 0, 0
    for at, line in enumerate(lines):
        if _csv_row(line):
            run, first = run + 1, first if run else at
            if run >= _CSV_ROWS:
                return (
                    f"rows of Nsight Compute `--csv` output from line {first + 1} on (starting "
                    f"{cell_quotes.shown_cell(lines[first].strip(), 60)}) without the header line "
                    '`"ID","Process ID","Process Name",...` above them: ncu\'s columns differ '
                    "between versions and pages (`--page raw`, `--print-summary`), and only the "
                    "header says which cell is which; paste the header line too, or import "
                    "ncu's own output"
                )
        else:
            run = 0
    return None


def _csv_row(line: str) -> bool:
    """Whether a line is a row of ncu's `--csv` output: quoted cells, `_CSV_CELLS` or more, the
    first two an ID and a process ID (a trailing comma's empty cell left out)."""
    if not line.startswith('"') or line.count('","') < _CSV_CELLS - 1:
        return False
    cells = next(csv.reader([line.rstrip().removesuffix(",")]))
    return len(cells) >= _CSV_CELLS and cells[0].isdigit() and cells[1].isdigit()


def body_tables(lines: list[str]) -> str | None:
    """What the file is when Nsight Compute's body tables (`Table Name : GPU Throughput`, then
    its `Metric Name  Metric Unit  Metric Value` rows: what `--print-details all` prints of a
    section's charts, below the section's own table) stand in `lines` with no `Section:` line:
    ncu prints one only under the `Section:` table of its section, whose metrics profgen reads,
    so the output was cut down to them (a script's log that kept only them)."""
    if any(line.lstrip(" \t").startswith(_SECTION) for line in lines):
        return None
    found = [n for n, line in enumerate(lines) if line.lstrip(" \t").startswith(_TABLE_NAME)]
    if not found:
        return None
    names = dict.fromkeys(lines[n].strip().removeprefix(_TABLE_NAME).strip() for n in found)
    return (
        f"it holds Nsight Compute's body tables ({len(found)} `Table Name :` lines from line "
        f"{found[0] + 1} on: {cell_quotes.listed(names)}) without the `Section:` tables ncu prints "
        "them under, which are what profgen reads: the output was cut down to the tables of the "
        "sections' charts; import ncu's own output (or --csv, or the .ncu-rep)"
    )
