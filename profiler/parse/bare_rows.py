"""Rows of a summary table seen without their header line: what they are rows of.

People paste the rows of nvprof's summary from its `GPU activities:` line down, or an `nsys
stats` table's rows without its heading; detection (which finds a table by its header) then sees
nothing. `row_kind` says what the cells of one such line are: `profiler.parse.unusable` names
the rows in a refusal, and `profiler.parse.pasted` puts nvprof's header back above rows that
start with their type (nvprof 9.0 on prints one header, always the same, above such rows).
"""

from __future__ import annotations

NVPROF, NSYS = "nvprof", "nsys"
NVPROF_TYPES = (["GPU", "activities:"], ["API", "calls:"])
NVPROF_UNITS = ("ns", "us", "ms", "s")


def row_kind(cells: list[str]) -> str | None:
    """What the cells of a line are a row of: `NVPROF` (a summary row), `NSYS` (a row of an
    `nsys stats` table: times in ns, without units) or None (neither)."""
    if cells[:2] in NVPROF_TYPES:
        cells = cells[2:]
    if len(cells) < 7:
        return None
    if cells[0].endswith("%") and number(cells[0][:-1]) is not None:
        times = [cells[1], *cells[3:6]]
        timed = all(
            t.endswith(NVPROF_UNITS) and number(t.rstrip("nums")) is not None for t in times
        )
        return NVPROF if timed and cells[2].isdigit() else None
    share, numbers = number(cells[0]), [number(c.replace(",", "")) for c in cells[1:6]]
    whole = cells[1].replace(",", "").isdigit() and cells[2].replace(",", "").isdigit()
    if share is None or not 0 <= share <= 100 or not whole or None in numbers:
        return None
    return NSYS


def typed_nvprof_row(cells: list[str]) -> bool:
    """Whether the cells are an nvprof summary row that starts with its type (`GPU
    activities:` or `API calls:`), the first row of a type's rows."""
    return cells[:2] in NVPROF_TYPES and row_kind(cells) == NVPROF


def number(text: str) -> float | None:
    """`text` as a finite number, or None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if abs(value) < float("inf") else None
