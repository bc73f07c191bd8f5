"""A column-text table of `nsys stats` that a terminal wrapped, left out of a capture.

A terminal narrower than nsys's padded lines puts the tail of each on a line of its own: the
header's padding comes out as a line of blanks under it, the rule's last dashes as a line of
dashes under the rule, and cells are cut by a blank (`p oll`, `[CUDA memcpy Device- to-Host]`).
Such a table is never read (a cut cell would be read as another value, or a name as two); when
its cells do not keep to its rule it is left out with a warning that names it and why, and the
capture's other tables are read. A wrap that only added blank lines breaks no cell, and the
table is read (`nsys_gaps`).

A copy that lost the table's line breaks runs its rule on into its header's line (and its rows
into one line after it): that table too is left out with a warning (`joined`), where it would
otherwise pass for a report nsys printed empty.
"""

from __future__ import annotations

import re
import warnings

from profiler.errors import ParseError
from profiler.parse import reader_notes
from profiler.parse.nsys_stdout import Block

_SUMMARY_HEADER = re.compile(r"[ \t]*Time ?\(%\)[ \t]+Total\b")  # a summary's first titles


def left_out(block: Block, refused: ParseError) -> bool:
    """Warn (`reader_notes.ReadNote`, partial) that the table of `block` is left out, when a
    terminal wrapped it (`sign`); `refused` is why it could not be read. False (no warning) when
    it shows no sign of a wrap: then the refusal stands."""
    found = sign(block)
    if found is None:
        return False
    what = f"the {block.report} table" if block.report else "a table"
    said = (
        f"line {block.first_line}: {what} is left out: a terminal wrapped it ({found}), which "
        f"cut its cells ({refused.detail})"
    )
    warnings.warn(reader_notes.ReadNote(said, block.first_line, partial=True), stacklevel=2)
    return True


def sign(block: Block) -> str | None:
    """What shows that a terminal wrapped a table: its header's tail on the line under it (a
    line of blanks, not empty), or its rule's tail on the line under the rule (dashes alone);
    None when neither does."""
    source, start = block.source, block.pieces[0][0]
    newline = "\n" if isinstance(source, str) else b"\n"
    one = source.find(newline, start)  # type: ignore[arg-type]
    two = source.find(newline, one + 1) if one >= 0 else -1  # type: ignore[arg-type]
    under = source[one + 1 : two] if two > one >= 0 else ""
    if under and not under.strip():
        return f"its header's tail is on line {block.first_line + 1}, blanks alone"
    lines = block.text.split("\n", 3)
    tail = lines[2].strip() if len(lines) > 2 else ""
    if tail and not tail.strip("-"):
        return "its rule's tail is on the line under the rule, dashes alone"
    return None


def joined(block: Block, header: str) -> bool:
    """Warn (`reader_notes.ReadNote`, partial) that the table of `block`, whose `header` line is a
    summary's and holds its rule too, is left out; False (no warning) when the line is no such
    header."""
    if _SUMMARY_HEADER.match(header) is None or "---" not in header:
        return False
    said = (
        f"line {block.first_line}: the {block.report} table is left out: its rule of dashes "
        "stands on its header's line, not under it (a copy that lost its line breaks?)"
    )
    warnings.warn(reader_notes.ReadNote(said, block.first_line, partial=True), stacklevel=2)
    return True
