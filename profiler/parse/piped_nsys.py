"""`nsys stats` tables laid out as Markdown pipe tables (a README's or a lab report's way to
show them), laid out again as nsys's column text:

    | Time (%) | Total Time (ns) | Instances | Avg (ns) | ... | Name          |
    |---------:|----------------:|----------:|---------:|-----|:--------------|
    | 100.0    | 25,056          | 1         | 25,056.0 | ... | vectorAdd(...) |

A writer pads cells as it likes (or not at all) and its rows need not line up, so the cells are
taken between the bars and put back in columns as nsys prints them: each column as wide as its
widest cell, two blanks apart, numbers right-aligned, the last column (a name) left-aligned, and
the `|---|` rule under the header made a rule of dash runs (`nsys_text` finds each column's place
from it). Only a table whose header is an nsys report's (`nsys_fields`) is laid out so; every
other line (prose, a program's own pipe table) stays as it is, and every line keeps its place,
so a message's line numbers are the file's.

Linear in the text: one pass over its lines, and each table's cells twice (widths, then rows).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from profiler.parse import nsys_fields
from profiler.parse.pasted import Reshaped

PIPED = (
    "its `nsys stats` tables written as Markdown pipe tables (`| Time (%) | Total Time (ns) | "
    "... |`, as a README lays them out): read with their cells put back in nsys's columns and "
    "the `|---|` rule under each header made nsys's rule of dashes"
)
_RULE_CHARS = frozenset(" \t:-|")


def unpiped(data: bytes) -> Reshaped | None:
    """The text of `data` (UTF-8 bytes) with its pipe tables of nsys reports laid out as column
    text (see the module docstring). None when it has none: a pipe row whose cells are an nsys
    report's header, with a `|---|` rule right under it."""
    rows = data.decode("utf-8").split("\n")
    out, tables = list(rows), 0
    for at, end in _tables(rows):
        out[at:end] = _laid_out(rows[at:end])
        tables += 1
    if not tables:
        return None
    return Reshaped("\n".join(out).encode("utf-8"), np.arange(1, len(rows) + 1), PIPED)


def header_lines(data: bytes) -> list[int]:
    """The file line (1-based) of each pipe table of an nsys report in `data` (its header's),
    as `unpiped` finds them; none in a text that is not UTF-8."""
    try:
        rows = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return []
    return [at + 1 for at, _ in _tables(rows)]


def _tables(rows: list[str]) -> Iterator[tuple[int, int]]:
    """The first and past-the-last row index of each pipe table of an nsys report in `rows`:
    a run of pipe rows whose first is an nsys report's header and whose second a rule."""
    at = 0
    while at < len(rows):
        end = at
        while end < len(rows) and rows[end].lstrip().startswith("|"):
            end += 1
        if end - at >= 3 and _is_rule(rows[at + 1]) and _nsys_header(rows[at]):
            yield at, end
        at = max(end, at + 1)


def _cells(row: str) -> list[str]:
    """The cells of a pipe-table row, stripped (its bars at either end dropped)."""
    text = row.strip()
    return [cell.strip() for cell in text[1:].removesuffix("|").split("|")]


def _is_rule(row: str) -> bool:
    text = row.strip()
    return "-" in text and _RULE_CHARS.issuperset(text)


def _nsys_header(row: str) -> bool:
    return nsys_fields.identify_cells(_cells(row)) is not None


def _laid_out(rows: list[str]) -> list[str]:
    """A pipe table (header, rule, rows) as nsys's column text, line for line. A row with more
    cells than the header (a bar in a name) has its extra cells joined to its last."""
    header = _cells(rows[0])
    n = len(header)
    body = [_fitted(_cells(row), n) for row in rows[2:]]
    widths = [max(len(cells[i]) for cells in [header, *body]) for i in range(n)]
    lines = [_line(header, widths), "  ".join("-" * max(w, 1) for w in widths)]
    return lines + [_line(cells, widths) for cells in body]


def _fitted(cells: list[str], n: int) -> list[str]:
    if len(cells) > n:
        return [*cells[: n - 1], "|".join(cells[n - 1 :])]
    return cells + [""] * (n - len(cells))


def _line(cells: list[str], widths: list[int]) -> str:
    """One row: every cell right-aligned in its column but the last, left-aligned."""
    firsts = [cell.rjust(width) for cell, width in zip(cells[:-1], widths, strict=False)]
    return "  ".join([*firsts, cells[-1]]).rstrip()
