"""Rows of an nvprof or `nsys stats` table that profgen can't read, in a file in which detection
found no table it reads (`unusable.describe` asks): what the refusal says the file holds.

- an nvprof summary's text table with its columns joined by commas (`47.79%,542.36ms,45,...`:
  the unit in each cell), which is not the CSV `nvprof --csv` writes (a quoted header, a units
  row, bare numbers) but the printed summary remade by hand or by a script;
- rows of an nvprof summary, of an `nsys stats` table or of an nvprof gpu trace pasted
  without the header line above them (an issue or forum post that quotes the top rows only): a
  table is read from its header, which says what its columns and rows are;
- an nvprof `--csv` gpu trace with a column a script put before nvprof's own on every line
  (`131072,"Start","Duration",...`), or its rows without the header above them.

Only the lines detection read are looked at, one at a time, with no pattern that can backtrack.
"""

from __future__ import annotations

import csv
from collections.abc import Callable

from profiler.parse import bare_rows, cell_quotes

_SUMMARY_CELLS = ["Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"]


def comma_joined_summary(lines: list[str]) -> str | None:
    """What the file is when a line of `lines` is nvprof's summary header joined by commas,
    unquoted (`Time(%),Time,Calls,Avg,Min,Max,Name`, `Type` first or not), and the next one
    a summary row so joined, the unit in each cell (`47.79%,542.36ms,45,12.052ms,...`)."""
    for at, line in enumerate(lines[:-1]):
        cells = line.strip().split(",")
        typed = cells[:1] == ["Type"]
        if cells[typed:] != _SUMMARY_CELLS:
            continue
        row = lines[at + 1].strip().split(",")[typed:]
        if bare_rows.row_kind(row) != bare_rows.NVPROF:
            return None
        return (
            f"it is an nvprof summary's text table (from line {at + 1}) with its columns joined by "
            f"commas, the unit in each cell ({cell_quotes.shown_cell(row[1], 20)}): not the CSV "
            "`nvprof --csv` writes, which quotes its header and names and puts the units in a "
            "row of their own (`%,ms,,us,us,us,`) above bare numbers: made from the printed "
            "summary by hand or by a script, which profgen does not guess at; import nvprof's own "
            "output (its log, or what `nvprof --csv` printed)"
        )
    return None


_HEADLESS_ROWS = 3  # rows in a run that make a headless table


def headless_rows(lines: list[str]) -> str | None:
    """What the first run of rows of an nvprof summary or an `nsys stats` table in `lines` is,
    when it has at least `_HEADLESS_ROWS` rows (it has no header: detection found none)."""
    found = _first_run(lines, lambda line: bare_rows.row_kind(line.split()))
    if found is None:
        return None
    at, rows, kind = found
    if kind == bare_rows.NVPROF and not bare_rows.typed_nvprof_row(lines[at].split()):
        return _UNTYPED.format(rows=rows, line=at + 1)
    return _HEADLESS_SAID[kind].format(rows=rows, line=at + 1) + _HEADLESS_WHY


def _first_run(
    lines: list[str], kind_of: Callable[[str], str | None]
) -> tuple[int, int, str] | None:
    """Where the first run of rows of one kind in `lines` starts, how many rows it has and
    their kind (`kind_of` of a line; None: no such row), when it has at least
    `_HEADLESS_ROWS` rows; None otherwise (a shorter first run too)."""
    for at, line in enumerate(lines):
        kind = kind_of(line)
        if kind is None:
            continue
        rows = 1
        for more in lines[at + 1 :]:
            if kind_of(more) != kind:
                break
            rows += 1
        return (at, rows, kind) if rows >= _HEADLESS_ROWS else None
    return None


_HEADLESS_SAID = {
    bare_rows.NVPROF: "{rows} rows of an nvprof summary (Time(%) Time Calls Avg Min Max Name) "
    "from line {line} on, with no header line above them",
    bare_rows.NSYS: "{rows} rows of an `nsys stats` table (Time (%), Total Time (ns), a count, "
    "per-call times in ns) from line {line} on, with no header line or report name above them, "
    "so nothing says which report (kernels, memory operations, ...) they are rows of (rows "
    "named all as CUDA API calls are read as the API summary's)",
}


# nvprof rows with no type: `pasted.api_headed` reads them when all name CUDA API calls
_UNTYPED = (
    "{rows} rows of an nvprof summary (Time(%) Time Calls Avg Min Max Name) from line {line} on, "
    "pasted without nvprof's header line and without the row type (`GPU activities:` or `API "
    "calls:`) on the first, so nothing says whether they are GPU activities or API calls: "
    "profgen reads such rows only when all of them name CUDA API calls (as nvprof's API calls), "
    "and these do not"
)


_HEADLESS_WHY = (
    ": a paste that left the header out; profgen reads a table from its header line, which says "
    "what its columns (and, for nsys, its rows) are"
)


def headless_trace(lines: list[str]) -> str | None:
    """What the first run of `_HEADLESS_ROWS` or more rows of an nvprof gpu trace or API trace
    in `lines` is (it has no header: detection found none)."""
    found = _first_run(lines, _trace_kind)
    if found is None:
        return None
    at, rows, kind = found
    return f"{rows} rows of an nvprof {kind} from line {at + 1} on, " + _HEADLESS_TRACE_WHY


_HEADLESS_TRACE_WHY = "pasted without the header line that names their columns" + _HEADLESS_WHY


def _trace_kind(line: str) -> str | None:
    """What trace `line` is a row of, as `headless_trace` names it; None for any other."""
    cells = line.split()
    if bare_rows.trace_row(cells):
        return "gpu trace (`--print-gpu-trace`: Start, Duration, ..., Name)"
    if bare_rows.api_trace_row(cells):
        return "API trace (`--print-api-trace`: Start, Duration, Name)"
    return None


_CSV_TRACE = '"Start","Duration",'  # how `nvprof --csv --print-gpu-trace` starts its header


def prefixed_csv_trace(lines: list[str]) -> str | None:
    """What the file is when a line holds nvprof's `--csv` gpu-trace header after a cell that
    is none of nvprof's (`131072,"Start","Duration",...`: a script put a column before them)."""
    for at, line in enumerate(lines):
        cut = line.find("," + _CSV_TRACE)
        if cut <= 0 or '"' in line[:cut]:
            continue
        return (
            f"it is nvprof `--csv --print-gpu-trace` output (its header at line {at + 1}) with a "
            f"column put before nvprof's own ({cell_quotes.shown_cell(line[: cut + 1], 30)} "
            "on each "
            'line): not the CSV nvprof writes, whose lines start at `"Start","Duration"`: '
            "made by a script, which profgen does not guess at; cut that column off, or import "
            "nvprof's own output"
        )
    return None


def headless_csv_trace(lines: list[str]) -> str | None:
    """What the first run of `_HEADLESS_ROWS` or more CSV gpu-trace rows in `lines` is (they
    end `"<device> (N)","<context>","<stream>","<name>"`; detection found no header)."""
    found = _first_run(lines, lambda line: "csv" if _csv_trace_row(line) else None)
    if found is None:
        return None
    at, rows, _ = found
    return (
        f"{rows} rows of a gpu trace in CSV (as `nvprof --csv --print-gpu-trace` writes them: "
        f"Start, Duration, ..., Device, Context, Stream, Name) from line {at + 1} on, without "
        "the header line and units row above them" + _HEADLESS_WHY
    )


def _csv_trace_row(line: str) -> bool:
    """Whether a line is a CSV gpu-trace row: eight cells or more, the last four a device
    (`"Tesla K40c (0)"`), a context and a stream number, and a quoted name."""
    if not line.endswith('"') or line.count(",") < 7:
        return False
    cells = next(csv.reader([line]))
    if len(cells) < 8:
        return False
    device, context, stream = cells[-4:-1]
    number = device[device.rfind(" (") + 2 : -1]
    return device.endswith(")") and number.isdigit() and context.isdigit() and stream.isdigit()
