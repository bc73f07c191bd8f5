"""ncu's text tables printed in a locale with a decimal comma (`10,55`, `875,84`), digits grouped
by blanks or points (`13 181 137`, `12 837 852,30`): nv-nsight-cu-cli 2020 run in such a locale
(tests/data/ncu/2020.x/handson-ax-decimal-comma.txt).

Tried when the plain read failed (`ncu_text`), or when the table rows hold a token that may
show a decimal comma (`may_show`, over each distinct row once, not the kernel lines). ncu prints
a page in one process's locale, so the page is judged once: when one value cell shows the decimal
comma (`decimal_comma.decides`, or digits grouped by blanks: `43,44` is no C number) and every
number in every value cell is of that form, every section is read so (`13.181`, which alone
could be C's, is then 13181; the cells of tables above the first kernel line, whose kernel
lines a paste left out, count in that judgment too, though their values are read for no
launch). A page that mixes the forms (two pastes from two machines) is
judged by section: a section's table (the rows under one `Section:` line) is read so when one
of its cells shows the decimal comma and every number in it is of that form. The value cells
read so are written as C writes them, in their columns' places (`10.55`, `13181137`), and the
text is read again. The value cells are
those of every layout of ncu's text: the value of a table of three columns (name, unit, value),
the Minimum, Maximum and Average of a `--print-summary per-kernel` table of five, right-aligned
(2022.x on) or padded left-aligned (2020.x-2021.x), and the value of a `--metrics` table whose
rule is one dash run (2019.x: cut at runs of blanks). A section of any C number (`1.25`,
`13,181,137`) is left as it is, and so is a row that does not fit its table's columns.
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
# Tokens that may be decimal-comma cells: `decimal_comma.decides`' forms (a comma with one or
# two digits or five after it, or four before it, `0,` alone; a point-group then a point or a
# comma) and digits grouped by blanks at a line's end (`_BLANKS`, right-aligned). Each pattern
# starts with a literal byte, so re scans for it fast (a 126 MB page in about 0.3 s, where one
# pattern of alternatives took 5 s); the lookbehinds are of fixed width, so none backtracks.
_MAY_SHOW = tuple(
    re.compile(pattern)
    for pattern in (
        rb",(?:[0-9]{1,2}(?![0-9])|[0-9]{5}|(?<=[0-9]{4},)[0-9]|(?<=(?<![0-9])0,)[0-9])",
        rb"\.[0-9]{3}[.,][0-9]",
        rb"\n(?<=[0-9] [0-9]{3}\n)",
        rb"\r(?<=[0-9] [0-9]{3}\r)",
    )
)
# What a row's value cell is to the decision: no number (`n/a`, a name), a number of the
# decimal comma's form, one that shows the decimal comma, a number of another form.
_NONE, _COMMA, _DECIDES, _OTHER = range(4)


class Rewritten(NamedTuple):
    """A text with its decimal-comma sections' value cells written as C writes them, and the
    first cell that showed the decimal comma, with its section's title and file line; the
    rows rewritten, as printed, by line index (`printed`)."""

    data: bytes
    cell: str
    section: str
    line: int
    printed: dict[int, str]


def may_show(data: bytes) -> bool:
    """Whether `data` holds a token that may be a number with a decimal comma (`43,44`, `0,016`,
    `2.097.152`, `13 181` at a line's end): only then is a page that read plainly looked at
    again (`rewritten`)."""
    return any(pattern.search(data) is not None for pattern in _MAY_SHOW)


def rewritten(data: bytes, found: lines.Lines) -> Rewritten | None:
    """`data` (ncu's text, its lines `found`) with the value cells of each section that shows a
    decimal comma written as C writes them (see the module docstring); None when none does."""
    walk = ncu_walk.walk(data, found, every=True)
    width = max(len(walk.widths), 1)
    distinct, which = np.unique(walk.line * width + walk.table, return_inverse=True)
    slots = [_slots(walk.texts[p // width], walk.widths[p % width]) for p in distinct.tolist()]
    cells = [
        [walk.texts[p // width][a:b].strip() for a, b in at.at]
        for p, at in zip(distinct.tolist(), slots, strict=True)
    ]
    kind = np.array([_row_kind(row) for row in cells], dtype=np.int64)[which]
    section = np.searchsorted(walk.section_lines, walk.rows, side="right") - 1
    decided = np.zeros(len(walk.section_lines) + 1, dtype=bool)  # (the last: no section)
    np.logical_or.at(decided, section, kind == _DECIDES)
    blocked = np.zeros_like(decided)
    np.logical_or.at(blocked, section, kind == _OTHER)
    above = _above_launches(data, found, walk)
    shown = [cell for cell in above if cell.kind == _DECIDES]
    if (decided.any() or shown) and not blocked.any() and _OTHER not in [c.kind for c in above]:
        decided[:] = True  # one locale on the whole page
    decided &= ~blocked
    decided[-1] = False
    rows = np.flatnonzero(decided[section] & (kind >= _COMMA) & (kind <= _DECIDES))
    if not len(rows):
        return None
    printed = {int(walk.rows[r]): walk.texts[walk.line[r]] for r in rows}
    new = {int(walk.rows[r]): _in_c(walk.texts[walk.line[r]], slots[which[r]]) for r in rows}
    if not (kind[rows] == _DECIDES).any():  # shown only above the first kernel line
        return Rewritten(_replaced(data, found, new), *shown[0][1:], printed)
    first = int(rows[np.argmax(kind[rows] == _DECIDES)])
    title = walk.texts[walk.section_texts[section[first]]].strip().removeprefix("Section:")
    said = next(cell for cell in cells[which[first]] if _kind(cell) == _DECIDES)
    line = int(walk.rows[first]) + 1
    return Rewritten(_replaced(data, found, new), said, title.strip(), line, printed)


class _Above(NamedTuple):
    """A value cell of a table above the first kernel line: its kind, text, section title and
    file line."""

    kind: int
    cell: str
    section: str
    line: int


def _above_launches(data: bytes, found: lines.Lines, walk: ncu_walk.Walk) -> list[_Above]:
    """The value cells of the tables above the first kernel line: a paste that left their
    kernel lines out (tests/data/ncu/2023.x/rtx30-matmul-metrics-line-comments-point-groups-
    cut.cu). Their values are no launch's, but they show the page's locale as any table's do."""
    if not len(walk.kernel_lines) or not len(walk.section_lines):
        return []
    first, begin = int(walk.kernel_lines[0]), int(walk.section_lines[0])
    out, section = [], ""
    for at in range(begin, first):
        text = bytes(data[found.start[at] : found.end[at]]).decode("utf-8", "replace").strip()
        if text.startswith("Section:"):
            section = text.removeprefix("Section:").strip()
            continue
        cells = ncu_walk.blank_cells(text)
        if cells is not None and _kind(cells[2]) != _NONE:
            out.append(_Above(_kind(cells[2]), cells[2], section, at + 1))
    return out


class Slots(NamedTuple):
    """Where in a row its value cells stand (start, end), and whether they are padded
    left-aligned (ncu 2020.x-2021.x's summaries) rather than right-aligned."""

    at: list[tuple[int, int]]
    left: bool


def _slots(line: str, widths: tuple[int, ...]) -> Slots:
    """Where in `line` a row's value cells stand (a summary's Minimum, Maximum and Average; the
    value of any other table), as `ncu_text_counters` cuts it; none for a row that does not
    fit its table's columns."""
    if len(widths) == 1:
        cells = ncu_walk.blank_cells(line)
        end = len(line.rstrip())
        return Slots([] if cells is None else [(end - len(cells[2]), end)], False)
    for row in ncu_walk.row_texts(line, widths):
        if ncu_text_counters.cut_text(row, widths) is None:
            continue
        out, end = [], len(row)
        for value_width in reversed(widths[2:]):
            out.append((end - value_width, end))
            end -= value_width + 1
        return Slots(out[::-1], len(row) > len(row.rstrip()))
    return Slots([], False)


def _row_kind(cells: list[str]) -> int:
    """What a row's value cells are to the decision: `_OTHER` when one is a number of another
    form, else `_DECIDES` when one shows the decimal comma, else the most any is."""
    kinds = [_kind(cell) for cell in cells]
    return _OTHER if _OTHER in kinds else max(kinds, default=_NONE)


def _kind(cell: str) -> int:
    """What a value cell is to the decision (`_NONE`, `_COMMA`, `_DECIDES`, `_OTHER`)."""
    if not cell or not _NUMERIC.issuperset(cell) or not any(c.isdigit() for c in cell):
        return _NONE
    if _BLANKS.fullmatch(cell) or decimal_comma.decides(cell):
        return _DECIDES
    return _COMMA if decimal_comma.is_number(cell) else _OTHER


def _in_c(line: str, slots: Slots) -> str:
    """A row with each number in its value cells' `slots` written as C writes it, in the same
    place, aligned as the cells are."""
    out, begin = [], 0
    for a, b in slots.at:
        cell = line[a:b]
        text = cell.strip()
        if _kind(text) in (_COMMA, _DECIDES):
            number = decimal_comma.as_c(text.replace(" ", ""))
            cell = number.ljust(b - a) if slots.left else number.rjust(b - a)
        out += [line[begin:a], cell]
        begin = b
    return "".join(out) + line[begin:]


def _replaced(data: bytes, found: lines.Lines, new: dict[int, str]) -> bytes:
    """`data` with the lines `new` gives (by line index) in place of theirs."""
    pieces, begin = [], 0
    for at in sorted(new):
        pieces += [data[begin : found.start[at]], new[at].encode("utf-8")]
        begin = int(found.end[at])
    pieces.append(data[begin:])
    return b"".join(pieces)
