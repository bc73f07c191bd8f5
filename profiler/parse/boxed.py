"""`nsys stats --format table` output: its tables drawn in boxes, laid out as nsys's column text.

`--format table` draws each report as

    +----------+-----------------+------------+
    | Time (%) | Total Time (ns) |    Name    |
    +----------+-----------------+------------+
    |     23.4 |        75270120 | enqueueV3  |
    +----------+-----------------+------------+

(a long cell cut with `…`). `unboxed` lays a box whose header is a report's (`nsys_fields`; a
program's own boxed table is left as it is) out as the column text `nsys_text` reads: each bar
on a column border of its box (where its rules have a `+`) made a space, the rule under the
header made a rule of dash runs (its `+` made spaces), and the rules above the header and
under the last row left out. Every character keeps its column, so every cell keeps its place
under its header; a bar inside a cell (`a|b`) is no border and is kept.

Linear in the text: the lines come from `parse.lines`, and the rows of a box whose rows are as
wide as its rule (nsys pads them so) are blanked at its borders with one NumPy pass.
"""

from __future__ import annotations

import numpy as np

from profiler.parse import lines, nsys_fields
from profiler.parse.pasted import Reshaped

BOXED = (
    "its tables drawn in boxes (`nsys stats --format table`): read with the bars on their "
    "column borders made spaces and the `+---+` rules above and below them left out"
)
_BAR, _PLUS, _SPACE = ord("|"), ord("+"), ord(" ")
_RULE_BYTES = frozenset(b"+-")


def unboxed(data: bytes) -> Reshaped | None:
    """The text of `data` (UTF-8 bytes) with its boxed tables laid out as column text (see the
    module docstring); its other lines as they are. None when it has no box of an nsys report:
    a rule (`+---+---+`), a row of bars under it that is a report's header (`nsys_fields`), and
    a rule under that row. A box of a program's own (its header no report's) is left as it is."""
    found = lines.split(data)
    buf = bytearray(data)
    keep = np.ones(len(found), dtype=bool)
    known = found.lead >= 0
    plus = known & (found.first == _PLUS)
    boxy = plus | (known & (found.first == _BAR))  # a box's lines: its rules and its rows
    edges = np.flatnonzero(np.diff(np.concatenate(([0], boxy.view(np.int8), [0]))))
    boxes = 0
    for top, end in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
        if end - top < 3 or not (_rule(found, top) and _rule(found, top + 2)):
            continue  # no header between two rules: no box
        if not _nsys_header(found, top + 1):
            continue  # a program's own table
        _unbox(buf, found, top, end)
        rules = top + np.flatnonzero(plus[top:end])
        keep[rules[rules != top + 2]] = False
        boxes += 1
    if not boxes:
        return None
    return Reshaped(_without(buf, found, ~keep), np.flatnonzero(keep) + 1, BOXED)


def _without(buf: bytearray, found: lines.Lines, dropped: np.ndarray) -> bytes:
    """The bytes of `buf` less its lines `dropped` (a mask), each with its newline: the few
    rules left out cut the text into a few runs, joined with one copy each."""
    pieces, begin = [], 0
    for j in np.flatnonzero(dropped).tolist():
        pieces.append(buf[begin : found.start[j]])
        begin = int(found.end[j]) + 1
    pieces.append(buf[begin:])
    return b"".join(pieces)


def _rule(found: lines.Lines, i: int) -> bool:
    """Whether line i is a box's rule: `+`, dashes and `+` only (blanks around them)."""
    if found.lead[i] < 0 or found.first[i] != _PLUS:
        return False
    text = bytes(found.data[found.start[i] + found.lead[i] : found.end[i]]).rstrip()
    return len(text) > 2 and text.endswith(b"+") and _RULE_BYTES.issuperset(text)


def _nsys_header(found: lines.Lines, i: int) -> bool:
    """Whether line i, a box's header row, is the header of an nsys report (`nsys_fields`)."""
    row = bytes(found.data[found.start[i] : found.end[i]]).decode("utf-8", "replace").strip()
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    return nsys_fields.identify_cells(cells) is not None


def _unbox(buf: bytearray, found: lines.Lines, top: int, end: int) -> None:
    """Blank, in `buf`, the bars on the column borders of the box from line `top` (its first
    rule) to line `end`, and the `+` of its rules. nsys pads cells by characters: a row of
    more bytes than the rule (a character of several bytes in it: a range named `démo`, a cell
    cut with `…`) has its borders found by characters (`_blank_bars`)."""
    rule = bytes(found.data[found.start[top] : found.end[top]]).rstrip()
    borders = np.array([k for k, byte in enumerate(rule) if byte == _PLUS], dtype=np.int64)
    starts, ends = found.start[top:end], found.end[top:end]
    size = len(rule)
    codes = np.frombuffer(buf, dtype=np.uint8)  # a view: writes go to `buf`
    # a row (or rule) as wide as the rule, a `\r` after it at most, ending where the rule ends
    even = (ends - starts >= size) & (ends - starts <= size + 1)
    last = codes[starts[even] + size - 1]
    even[even] = (last == _BAR) | (last == _PLUS)
    at = (starts[even][:, None] + borders[None, :]).ravel()
    at = at[(codes[at] == _BAR) | (codes[at] == _PLUS)]
    codes[at] = _SPACE
    for a, b in zip(starts[~even].tolist(), ends[~even].tolist(), strict=True):
        _blank_bars(buf, a, bytes(buf[a:b]).rstrip(), borders.tolist())


def _blank_bars(buf: bytearray, at: int, row: bytes, borders: list[int]) -> None:
    """Blank, in `buf`, the bars of the row `row` (UTF-8, at `at` in `buf`) on the `borders`
    (character places) before its last character, and its last bar where it is (a row of a
    cell longer than its column)."""
    chars = [k for k, byte in enumerate(row) if byte & 0xC0 != 0x80]  # where each one begins
    for k in [chars[p] for p in borders if p < len(chars) - 1] + [len(row) - 1]:
        if buf[at + k] == _BAR:
            buf[at + k] = _SPACE
