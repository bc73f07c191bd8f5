"""Blank lines a paste put inside an nsys column-text table, closed up again.

A terminal that wraps a line as wide as itself adds an empty line under it when the text is
copied: a `CUDA API Statistics (nanoseconds)` header padded to the window's width comes out
with a blank line between it and its rule, and a table whose rows are that wide comes out
double-spaced. `nsys_stdout` ends a table at a blank line, so the header stood alone (no
table) and the rows under it, headerless, were passed over without a word. Here a block that
is one header line is joined to the rule and rows under it, and a block of rows that fit the
columns of the table above it is joined to that table, when nothing but blank lines lies
between them (a marker, a heading or any other text keeps them apart).

A terminal narrower than the header also puts its last title on a line of its own under it
(`... Maximum     StdDev` over `                  Name`, as HPC SDK 21.x captures show, a blank
line and the rule under that): the header is read as one line again, the title in the rule's
column that the first line leaves uncovered.
"""

from __future__ import annotations

import dataclasses
import re

from profiler.parse import nsys_fields, nsys_rule
from profiler.parse.nsys_stdout import Block

_GAP_MAX = 4096  # characters between two blocks: more is no paste's blank lines
_ROWS_MAX = 10_000  # lines of a block of rows checked against the columns above it
_TITLE = re.compile(r"[A-Za-z%()/ ]{1,40}")  # a header's wrapped tail: titles, no number


def rejoined(blocks: list[Block]) -> list[Block]:
    """`blocks` with each one that continues the table above it (see the module) joined to it.
    Linear in the blocks: each is joined to its table once, however many rows it is cut into."""
    groups: list[list[Block]] = []
    columns: list[tuple[int, int]] | None = None  # the rule's of the last group, once known
    for block in blocks:
        if groups and columns is None and len(groups[-1]) == 1:
            groups[-1][0] = _unwrapped(groups[-1][0], block) or groups[-1][0]
        if groups and _continues(groups[-1], columns, block):
            groups[-1].append(block)
        else:
            groups.append([block])
            columns = None
        if columns is None:
            columns = _columns(groups[-1])
    return [group[0] if len(group) == 1 else _joined(group) for group in groups]


def _columns(table: list[Block]) -> list[tuple[int, int]] | None:
    """The columns of the rule of a table's blocks (its header and rule, then rows), or None
    when they are no table (yet: a lone header line has no rule)."""
    rule = table[0].header_rule()[1]
    if not rule and len(table) > 1:
        rule = table[1].header_rule()[0]  # (the header stood alone above its rule)
    return nsys_rule.spans(rule) if rule and nsys_rule.is_rule(rule) else None


def _continues(table: list[Block], columns: list[tuple[int, int]] | None, below: Block) -> bool:
    """Whether `below` is the rule and rows of a lone header (`table` is that one line), or more
    rows of `table` (the blocks of one table so far, whose rule has `columns`), with only blank
    lines between them."""
    if below.report is not None or not _blanks_between(table[-1], below):
        return False
    below_first, below_second = below.header_rule()
    if columns is None:
        header, rule = table[0].header_rule()
        if rule or len(table) > 1 or not nsys_rule.is_rule(below_first):
            return False  # a lone line is a header only if a rule is under the gap
        cells = nsys_rule.header_cells(header, nsys_rule.columns_under(header, below_first))
        return table[0].report is not None or nsys_fields.identify_cells(cells) is not None
    if nsys_rule.is_rule(below_second):
        return False  # `below` is a table of its own
    return _rows_fit(below, columns)


def _unwrapped(top: Block, below: Block) -> Block | None:
    """`top` as one header line when it is a header a terminal wrapped onto two lines (see the
    module) and `below` starts with its rule, blank lines between; None when it is not."""
    header, tail = top.header_rule()
    rule = below.header_rule()[0]
    if len(top.pieces) != 1 or top.text.count("\n") != 2 or not tail.startswith(" "):
        return None
    if not _TITLE.fullmatch(tail.strip()) or below.report is not None:
        return None
    if not nsys_rule.is_rule(rule) or not _blanks_between(top, below):
        return None
    start = next((a for a, _ in nsys_rule.spans(rule) if a > len(header.rstrip())), None)
    lead = len(tail) - len(tail.lstrip(" "))
    pad = None if start is None else max(start - len(header), 1)
    if pad is None or pad > lead:
        return None
    one = f"{header}{' ' * pad}{tail.strip()}"
    cells = nsys_rule.header_cells(one, nsys_rule.columns_under(one, rule))
    if nsys_fields.identify_cells(cells) is None:
        return None
    a, b = top.pieces[0]
    pieces = ((a, a + len(header)), (a + len(header) + 1 + lead - pad, b))
    dropped = (top.first_line + 1, *top.dropped)
    return dataclasses.replace(top, dropped=dropped, at=-1, pieces=pieces)


def _rows_fit(block: Block, columns: list[tuple[int, int]]) -> bool:
    """Whether every line of `block` is a row laid out in `columns`: its first cell filled,
    blanks wherever the rule has them between two columns."""
    if sum(b - a for a, b in block.pieces) > _ROWS_MAX * 200:
        return False
    rows = block.text.split("\n")
    rows = rows[:-1] if not rows[-1] else rows
    if len(rows) > _ROWS_MAX:
        return False
    gaps = [(0, columns[0][0])] + [(a[1], b[0]) for a, b in zip(columns, columns[1:], strict=False)]
    first = slice(*columns[0])
    return all(row[first].strip() and not any(row[a:b].strip() for a, b in gaps) for row in rows)


def _blanks_between(above: Block, below: Block) -> bool:
    end, start = above.pieces[-1][1], below.pieces[0][0]
    if above.source is not below.source or start - end > _GAP_MAX:
        return False
    return not above.source[end:start].strip()


def _joined(table: list[Block]) -> Block:
    """One block of the blocks of a table, the blank lines between them dropped."""
    dropped: list[int] = list(table[0].dropped)
    for above, below in zip(table, table[1:], strict=False):
        last = above.first_line + len(above.dropped) + _newlines(above) - 1  # its last file line
        dropped += [*range(last + 1, below.first_line), *below.dropped]
    pieces = tuple(piece for block in table for piece in block.pieces)
    return dataclasses.replace(table[0], dropped=tuple(dropped), at=-1, pieces=pieces)


def _newlines(block: Block) -> int:
    """How many line ends a block's text holds (its lines, each piece ending with one)."""
    source = block.source
    if isinstance(source, bytes):
        return sum(source.count(b"\n", a, b) for a, b in block.pieces)
    return sum(source.count("\n", a, b) for a, b in block.pieces)
