"""Where a table is in its file (`Origin`), so that a bad cell can be named by its line and
column, and file line numbers of positions in a text (`LineCounter`) and in messages.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from profiler.errors import ParseError
from profiler.parse.cell_quotes import shown_cell

_LINE = re.compile(r"\bline (?P<line>[0-9]{1,12})\b")  # a message's line number


@dataclass(frozen=True)
class Origin:
    """A table's place in its file, so that a bad cell can be named by line and column.

    Attributes:
        path: the file.
        expected: what the file should be (the `expected` of every ParseError).
        text: the table's text, header line first (str or bytes); empty when unknown.
        first_line: the file line (1-based) of the header.
        skip: non-blank lines between the header and the first data row (a units row).
        dropped: file lines inside the table that were removed before parsing (sorted).
        cut: when `text` is left empty, what cuts it from the file: called only for a message
            that counts lines, so that a large table's text is not copied for every read.
    """

    path: Path
    expected: str
    text: str | bytes = ""
    first_line: int = 1
    skip: int = 0
    dropped: tuple[int, ...] = ()
    cut: Callable[[], str | bytes] | None = field(default=None, compare=False, repr=False)

    def error(self, detail: str) -> ParseError:
        return ParseError(self.path, self.expected, detail)

    def cell_error(self, row: int | None, column: str, detail: str) -> ParseError:
        """A ParseError naming the line of data row `row` (0-based, as read) and the column."""
        name = shown_cell(column, 80)
        where = f"column {name}" if row is None else f"line {self.line(row)}, column {name}"
        return self.error(f"{where}: {detail}")

    def with_text(self) -> Origin:
        """This origin with its table's text, cut from the file (`cut`) when it was left empty."""
        return self if self.text or self.cut is None else dataclasses.replace(self, text=self.cut())

    def full_text(self) -> str:
        """The table's text as `str` (cut from the file when it was left empty)."""
        text = self.with_text().text
        return text.decode("utf-8", "replace") if isinstance(text, bytes) else text

    def text_line(self, line: int) -> int:
        """The file line of the table text's line `line` (1-based: the header's line is 1), the
        lines removed before parsing counted back in."""
        at = self.first_line + line - 1
        for dropped in self.dropped:
            at += dropped <= at
        return at

    def line(self, row: int) -> int:
        """The file line of data row `row`: blank lines are no rows (as pandas reads them)."""
        text = self.full_text()
        target, seen, pos, line = 1 + self.skip + row, -1, 0, self.first_line
        dropped = set(self.dropped)
        while True:
            while line in dropped:
                line += 1
            end = text.find("\n", pos)
            if text[pos : len(text) if end < 0 else end].strip("\r"):
                seen += 1
                if seen == target:
                    return line
            if end < 0:
                return line
            pos, line = end + 1, line + 1


class Countable(Protocol):
    """A text whose newlines `LineCounter` counts: `str`, `bytes`, or one with their `count`."""

    def count(self, sub: Any, start: int, end: int, /) -> int: ...


class LineCounter:
    """File line numbers of increasing positions in one text (`str`, `bytes`, or anything with
    `str.count`, such as nvprof's `AsciiText`), each newline counted once."""

    def __init__(self, text: Countable) -> None:
        self.text, self.pos, self.line = text, 0, 1
        self.newline: str | bytes = b"\n" if isinstance(text, bytes) else "\n"

    def at(self, pos: int) -> int:
        """The line of `pos`; positions must not decrease from call to call."""
        self.line += self.text.count(self.newline, self.pos, pos)
        self.pos = max(pos, self.pos)
        return self.line


def first_line(text: str) -> int | None:
    """The line number `text` (a message) names first (`line 103, column 'Name': ...` -> 103),
    or None."""
    found = _LINE.search(text)
    return None if found is None else int(found["line"])


def renumbered(text: str, file_line: Callable[[int], int]) -> str:
    """`text` (a message about a text cut out of a file, or reshaped) with each `line N` made
    `line file_line(N)`, the file's own."""
    return _LINE.sub(lambda m: f"line {file_line(int(m['line']))}", text)
