"""Where the table of an `ncu --csv` file is among its other lines: its header (`is_header`),
ncu's own lines within it (`==PROF==`, `==WARNING==`, removed: `table`), and where a table
pasted among other text ends (a Markdown fence, a blank line then prose, text after its last
row): ncu writes its `==PROF==` lines and the program's own stdout before the header.
"""

from __future__ import annotations

import re
from pathlib import Path

from profiler.parse import csv_parts, lines, reader_notes
from profiler.parse.table_origin import LineCounter, Origin

EXPECTED = 'Nsight Compute CSV (ncu --csv; a header starting "ID","Process ID")'

_HEADER_AT = (
    r'^"?(?:ID"?,"?Process ID|Process ID"?,"?Process Name'
    r'|Kernel Name"?,"?Kernel Time"?,"?Section Name)"?,'
)
HEADER = re.compile(_HEADER_AT, re.MULTILINE)
HEADER_BYTES = re.compile(_HEADER_AT.encode(), re.MULTILINE)


def is_header(line: str) -> bool:
    """Whether `line` is the header of an ncu CSV table (`"ID","Process ID",...`)."""
    return HEADER.match(line) is not None


PROF_LINE = re.compile(r"^==[A-Z]+==", re.MULTILINE)


def table(data: bytes, start: int, path: Path) -> tuple[Origin, bytes, int]:
    """The CSV from the header on, ncu's own lines removed (lines that start with `==`:
    `==PROF==`, `==WARNING==` ...; their file lines remembered): its origin, and the bytes and
    the byte the table starts at.

    Without such lines the table is `data` from `start` on, not copied (a copy of 300 MB costs
    0.2 s): its origin cuts the text only for a message that counts lines.
    """
    counter = LineCounter(data)
    first = counter.at(start)
    pieces, dropped, pos = [], [], start
    at = _tool_line(data, start)
    while at >= 0:
        pieces.append(data[pos:at])
        dropped.append(counter.at(at))
        end = data.find(b"\n", at)
        pos = len(data) if end < 0 else end + 1
        at = _tool_line(data, pos) if end >= 0 else -1
    if not dropped:
        return Origin(path, EXPECTED, b"", first, cut=lambda: data[start:]), data, start
    text = b"".join([*pieces, data[pos:]])
    return Origin(path, EXPECTED, text, first, dropped=tuple(dropped)), text, 0


def fence_line(data: bytes, start: int) -> int:
    """Where the first Markdown code fence line (```` ``` ```` or `~~~`, up to three blanks
    before it) after the header at `start` starts: the end of a table a README pasted in a
    fence. The end of `data` when there is none, or when no fence mark comes before the header
    (ncu writes none, and a fence that closes a table was opened above it): the rows of ncu's
    own output, which can be hundreds of MB, are not searched."""
    end = len(data)
    for mark in (b"```", b"~~~"):
        if data.rfind(mark, 0, start) < 0:
            continue
        at = data.find(mark, start, end)
        while at >= 0:
            line = data.rfind(b"\n", start, at) + 1
            if line > start and at - line <= 3 and not data[line:at].strip(b" \t"):
                end = line
                break
            at = data.find(mark, at + 3, end)
    return end


# A blank line, then a line that starts with neither a quote nor `==` (what ncu writes).
_PROSE_AFTER = re.compile(rb"\n[ \t\r]*\n[ \t]*(?=[^\s\"=])")
_MATCHED_ONE_BY_ONE = 1024  # more places than this: one search from the first is quicker


def ncu_only_before(data: bytes, start: int) -> bool:
    """Whether only ncu's own lines (`==PROF==`) or blank ones come before the header at
    `start`: ncu's own output, not a table pasted among other text. Its rows, which can be
    hundreds of MB and hold no blank line, are then not searched for the text after them
    (`prose_line`, `tail_line`)."""
    before = data[:start].split(b"\n")[:-1]
    return all(line.startswith(b"==") or not line.strip() for line in before)


def prose_line(data: bytes, start: int) -> int:
    """Where a table pasted among other text ends: the first blank line after the header at
    `start` that other text follows (a heading, a second block of a README or of a source
    file's comment), its lines then left out with a note. The end of `data` when there is
    none."""
    found = _prose_after(data, start)
    if found is None:
        return len(data)
    end = found.start() + 1
    line = data.count(b"\n", 0, found.end()) + 1
    text = data[found.end() : data.find(b"\n", found.end()) % (len(data) + 1)]
    shown = text.decode("utf-8", "replace").strip()[:60]
    reader_notes.read_note(
        f"line {line} on ('{shown}') left out: no ncu CSV row follows the blank line"
    )
    return end


def _prose_after(data: bytes, start: int) -> re.Match[bytes] | None:
    """`_PROSE_AFTER`'s first match after `start`, tried only at the newlines a blank line can
    begin after (`lines.space_led_newlines`, on threads for a large page: none in ncu's own
    rows); searched for from the first of them when there are many (an indented paste)."""
    starts = lines.space_led_newlines(data, start, csv_parts.part_count(len(data) - start))
    if len(starts) > _MATCHED_ONE_BY_ONE:
        return _PROSE_AFTER.search(data, int(starts[0]))
    return next(filter(None, (_PROSE_AFTER.match(data, at) for at in starts.tolist())), None)


def tail_line(data: bytes, start: int) -> int:
    """Where the text right after a pasted table's last row starts: the lines at the end after
    the last one that starts with a quote, when they start with neither a quote nor `==` (a
    source file's string closed by a backtick on the next line): left out with a note, not read
    as a row cut short (ncu quotes every cell: a row it cut starts with a quote). The end of
    `data` when there are none, or when they are ncu's or an elision mark's."""
    last = _last_row(data, start)
    end = data.find(b"\n", last) + 1
    tail = data[end:].strip() if end else b""
    if not tail or tail.startswith((b"==", b"...", "…".encode())):
        return len(data)  # (an elision mark `...` is the table's, as the rows it stands for)
    shown = tail.split(b"\n", 1)[0].decode("utf-8", "replace")[:60]
    line = data.count(b"\n", 0, end) + 1
    reader_notes.read_note(f"line {line} on ('{shown}') left out: it follows the last ncu CSV row")
    return end


def _last_row(data: bytes, start: int) -> int:
    """Where the last line after the header at `start` that starts with a quote starts (`start`
    when none does), a line that opens with three quotes left out: that closes a Python string
    the table was pasted into (a test's fixture), and ncu starts no row with an empty cell's
    `""` before a quote."""
    last = data.rfind(b'\n"', start) + 1 or start
    while last > start and data.startswith(b'"""', last):
        last = data.rfind(b'\n"', start, last - 1) + 1 or start
    return last


def _tool_line(data: bytes, pos: int) -> int:
    """Where the first line from `pos` on (`pos` a line's start or later) that starts with `==`
    starts; -1 when none does. `memchr` finds the first `=`: a file without one costs no more."""
    equals = data.find(b"=", pos)
    if equals < 0:
        return -1
    if equals == pos and data.startswith(b"==", pos) and (pos == 0 or data[pos - 1] == 10):
        return pos
    at = data.find(b"\n==", max(equals - 1, pos))
    return -1 if at < 0 else at + 1


def line_at(data: bytes, start: int) -> str:
    """The line of `data` that starts at `start` (the header), as text."""
    end = data.find(b"\n", start)
    return data[start : len(data) if end < 0 else end].decode("utf-8")
