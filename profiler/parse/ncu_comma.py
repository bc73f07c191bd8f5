"""ncu's text tables printed in a locale with a decimal comma (`10,55`, `875,84`), digits grouped
by blanks or points (`13 181 137`, `12 837 852,30`): nv-nsight-cu-cli 2020 run in such a locale
(tests/data/ncu/2020.x/handson-ax-decimal-comma.txt).

Tried only when the plain read failed (`ncu_text`), so C's numbers cost nothing more. A
section's table (the rows under one `Section:` line) is read so when one of its value cells
shows the decimal comma (`decimal_comma.decides`, or digits grouped by blanks) and every number
in its value column is of that form; its value cells are then written as C writes them,
right-aligned in their column (`10.55`, `13181137`), and the text is read again. A section of
any C number (`1.25`, `13,181,137`) is left as it is, and so is a table of five columns (a
summary's Minimum, Maximum and Average) or a row whose value is not right-aligned.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from profiler.parse import decimal_comma, lines, ncu_text_counters, ncu_walk

# Blanks grouping digits (`13 181 137`), then maybe a decimal comma: each group starts with its
# blank, so nothing can backtrack.
_BLANKS = re.compile(r"[0-9]{1,3}(?: [0-9]{3})+(?:,[0-9]+)?")
_NUMERIC = frozenset("0123456789., ")
# What a row's value cell is to the decision: no number (`n/a`, a name), a number of the
# decimal comma's form, one that shows the decimal comma, a number of another form.
_NONE, _COMMA, _DECIDES, _OTHER = range(4)


class Rewritten(NamedTuple):
    """A text with its decimal-comma sections' value cells written as C writes them, and the
    first cell that showed the decimal comma, with its section's title and file line."""

    data: bytes
    cell: str
    section: str
    line: int


def rewritten(data: bytes, found: lines.Lines) -> Rewritten | None:
    """`data` (ncu's text, its lines `found`) with the value cells of each section that shows a
    decimal comma written as C writes them (see the module docstring); None when none does."""
    walk = ncu_walk.walk(data, found, every=True)
    width = max(len(walk.widths), 1)
    distinct, which = np.unique(walk.line * width + walk.table, return_inverse=True)
    cells = [_value_cell(walk.texts[p // width], walk.widths[p % width]) for p in distinct.tolist()]
    kind = np.array([_kind(cell) for cell in cells], dtype=np.int64)[which]
    section = np.searchsorted(walk.section_lines, walk.rows, side="right") - 1
    decided = np.zeros(len(walk.section_lines) + 1, dtype=bool)  # (the last: no section)
    np.logical_or.at(decided, section, kind == _DECIDES)
    blocked = np.zeros_like(decided)
    np.logical_or.at(blocked, section, kind == _OTHER)
    decided &= ~blocked
    decided[-1] = False
    rows = np.flatnonzero(decided[section] & (kind >= _COMMA) & (kind <= _DECIDES))
    if not len(rows):
        return None
    first = int(rows[np.argmax(kind[rows] == _DECIDES)])
    title = walk.texts[walk.section_texts[section[first]]].strip().removeprefix("Section:")
    new = {
        int(walk.rows[r]): _in_c(walk.texts[walk.line[r]], walk.widths[walk.table[r]])
        for r in rows.tolist()
    }
    said = cells[which[first]] or ""
    return Rewritten(_replaced(data, found, new), said, title.strip(), int(walk.rows[first]) + 1)


def _value_cell(line: str, widths: tuple[int, ...]) -> str | None:
    """The value cell of a row of a three-column table, right-aligned in its column; None for a
    row of another table, or one that does not fit its columns."""
    if len(widths) != 3:
        return None
    cut = ncu_text_counters.cut_row(line, widths)
    stripped = line.rstrip()
    if cut is None or stripped[-widths[-1] :].strip() != cut[2]:
        return None
    return cut[2]


def _kind(cell: str | None) -> int:
    """What a value cell is to the decision (`_NONE`, `_COMMA`, `_DECIDES`, `_OTHER`)."""
    if not cell or not _NUMERIC.issuperset(cell) or not any(c.isdigit() for c in cell):
        return _NONE
    if _BLANKS.fullmatch(cell) or decimal_comma.decides(cell):
        return _DECIDES
    return _COMMA if decimal_comma.is_number(cell) else _OTHER


def _in_c(line: str, widths: tuple[int, ...]) -> str:
    """A row with its value cell (right-aligned, the last `widths[-1]` characters before its
    trailing blanks) written as C writes it, right-aligned in the same width."""
    stripped = line.rstrip()
    cell = stripped[-widths[-1] :]
    number = decimal_comma.as_c(cell.strip().replace(" ", ""))
    return stripped[: -widths[-1]] + number.rjust(widths[-1]) + line[len(stripped) :]


def _replaced(data: bytes, found: lines.Lines, new: dict[int, str]) -> bytes:
    """`data` with the lines `new` gives (by line index) in place of theirs."""
    pieces, begin = [], 0
    for at in sorted(new):
        pieces += [data[begin : found.start[at]], new[at].encode("utf-8")]
        begin = int(found.end[at])
    pieces.append(data[begin:])
    return b"".join(pieces)
