"""Nsight Systems tables profgen can't use, in a file in which detection found none it reads
(`unusable.describe`): what the refusal says the file holds instead of quoting its first line.

- a table of the Nsight Systems GUI's stats view copied into Markdown (`|Time |Total Time|Num
  Calls|Avg |Name |`): its headers name no unit (`nsys stats` writes `Total Time (ns)`), every
  cell carries its own (`12.340 s`, `689.283 μs`) and no line names the report;
- a table under the banner of a report profgen does not use (` ** OS Runtime Summary
  (osrt_sum):`, a 2020-2021 `Operating System Runtime API Statistics:` heading) with none of a
  report it reads: what it holds is the OS calls of the CPU, not the GPU's work;
- the header of an nsys table with no rule under it (a fence, prose or rows of another shape
  follow): a note that pasted the header apart from rows it cut out (`... | grep mul`) holds no
  table profgen can read, since it reads a table from its header, rule and rows together.

Only the lines detection read (the first 64 KiB) are looked at, one at a time.
"""

from __future__ import annotations

import re

from profiler.parse import cell_quotes, nsys_csv, nsys_fields

# The GUI stats view's column names (no unit in them); a table of calls, kernels or operations
_GUI_TOTAL = "Total Time"
_GUI_COUNTS = {"Num Calls": "calls", "Instances": "kernels", "Count": "memory operations"}
_GUI_NAMES = ("Name", "Operation")
_CELL_GAP = re.compile(r"[ \t]{2,}")  # between the cells of an nsys header
_HEADER_CELLS_MIN = 4


def describe(lines: list[str]) -> str | None:
    """What the file whose first lines are `lines` holds and why profgen can't use it, when it
    is one of the kinds above; else None."""
    return _gui_table(lines) or _unused_reports(lines) or _header_apart(lines)


def _gui_table(lines: list[str]) -> str | None:
    for at, line in enumerate(lines):
        cells = _pipe_cells(line)
        counts = [c for c in cells if c in _GUI_COUNTS]
        if _GUI_TOTAL not in cells or not counts or not any(n in cells for n in _GUI_NAMES):
            continue
        rows = [_pipe_cells(row) for row in lines[at + 2 : at + 3]]
        total = rows[0][cells.index(_GUI_TOTAL)] if rows and len(rows[0]) == len(cells) else ""
        shown = f", a unit in each cell ({cell_quotes.shown_cell(total, 40)})" if total else ""
        return (
            f"it holds a Markdown table of {_GUI_COUNTS[counts[0]]} with the columns of the "
            f"Nsight Systems GUI's stats view ({' | '.join(cells)}, line {at + 1}){shown}: a "
            "copy of the GUI's view, not `nsys stats` output (whose headers name their unit, "
            "`Total Time (ns)`, and whose banner names the report), which profgen reads; run "
            "`nsys stats` on the report and import its output"
        )
    return None


def _unused_reports(lines: list[str]) -> str | None:
    named: dict[str, int] = {}
    for at, line in enumerate(lines):
        name = nsys_csv.unused_name(line) if _is_table_mark(line) else None
        if name and _under(lines[at + 1 : at + 4]):
            named.setdefault(name, at + 1)
    if not named:
        return None
    shown = ", ".join(f"{name} at line {at}" for name, at in list(named.items())[:3])
    return (
        f"it holds tables of nsys reports profgen does not use ({shown}) and none of a CUDA "
        "API, kernel or memory-copy report, which profgen reads"
    )


def _header_apart(lines: list[str]) -> str | None:
    for at, line in enumerate(lines):
        cells = _CELL_GAP.split(line.strip())
        if len(cells) < _HEADER_CELLS_MIN or "(ns)" not in line:
            continue
        report = nsys_fields.identify_cells(cells)
        below = next((row.strip() for row in lines[at + 1 :] if row.strip()), "")
        if report is None or below.startswith("--"):
            continue
        return (
            f"its {report} header at line {at + 1} has no rule or rows under it (the next "
            f"line is {cell_quotes.shown_cell(below, 40)}): "
            "rows pasted apart from it (cut out with "
            "grep?) are no table profgen can read, which it reads from a header with its rule "
            "and rows under it; paste the table whole"
        )
    return None


def _is_table_mark(line: str) -> bool:
    """Whether `line` is an nsys banner (` ** OS Runtime Summary (osrt_sum):`) or a 2020-2021
    heading (`Operating System Runtime API Statistics:`)."""
    text = line.strip()
    return text.startswith("** ") or (text.endswith(":") and " Statistics" in text)


def _under(lines: list[str]) -> bool:
    """Whether the lines under a banner start a table: a line of text, then a rule of dashes
    (columns elided by a paste, `--------  ...  -----`, included)."""
    text = [line.strip() for line in lines if line.strip()][:2]
    return len(text) == 2 and text[1].startswith("--") and not text[1].strip("-. ")


def _pipe_cells(line: str) -> list[str]:
    """The `|`-separated cells of a Markdown table row, stripped ([] for any other line)."""
    text = line.strip()
    if not text.startswith("|") or not text.endswith("|") or len(text) < 3:
        return []
    return [cell.strip() for cell in text[1:-1].split("|")]
