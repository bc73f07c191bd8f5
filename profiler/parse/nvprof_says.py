"""What nvprof itself says in a log: its own messages (`No kernels were profiled.`, an error),
quoted when a file or a run has no table (`nothing`), and its line when it aborted after
printing its tables (`note_abort`)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator

from profiler.parse import cell_quotes, nvprof_export, nvprof_unread, reader_notes
from profiler.parse.nvprof_tables import Table
from profiler.parse.nvprof_text import Text
from profiler.parse.table_origin import LineCounter

# A gpu trace's header words inside a line: a page ran the trace's lines together (`nothing`)
_TRACE_WORDS = " Start Duration Grid Size "
_RUN_TOGETHER = (
    "an nvprof gpu trace whose line breaks and column alignment the page it was copied from lost "
    "(its header `Start Duration Grid Size ... Name` and rows run together, one space apart, in "
    "one line with the text around them): its rows and cells cannot be told apart"
)
_ABORTED = "\nnvprof: "  # nvprof's own message when it aborts (`note_abort`)
_SAYS = re.compile(
    r"^[ \t]*+(?:==[0-9]+== |======== )?(?P<msg>(?:Error|Warning|Generated result file): [^\n]*"
    r"|No kernels were profiled\.|No API activities were profiled\.|No events/metrics were "
    r"profiled\.)",
    re.MULTILINE,
)


def note_abort(text: Text, tables: list[Table]) -> None:
    """Warn (`reader_notes.ReadNote`, partial) when nvprof aborted (its line `nvprof: <source file>:
    <line>: <function>: Assertion `...' failed.`, as when its OpenACC tracing fails): the tables
    it printed before may lack what it had not printed yet. The message quotes nvprof's line,
    its source file's folders left out. Only the text outside the tables is searched: such a
    line ends a table (`nvprof_tables._TABLE_END`), so none lies inside one."""
    for low, high in _outside(tables, len(text)):
        for start in _nvprof_lines(text, low, high):
            end = text.find("\n", start)
            line = text[start : len(text) if end < 0 else end].rstrip()
            if line.endswith(" failed.") and ": Assertion " in line:
                where, _, rest = line.removeprefix("nvprof: ").partition(": ")
                shown = cell_quotes.shown_cell(f"nvprof: {where.rsplit('/', 1)[-1]}: {rest}", 160)
                number = LineCounter(text).at(start)
                said = f"line {number}: nvprof aborted ({shown}): its output may be incomplete"
                warnings.warn(reader_notes.ReadNote(said, number, partial=True), stacklevel=2)
                return


def _nvprof_lines(text: Text, low: int, high: int) -> Iterator[int]:
    """The starts of the lines that begin with `nvprof: ` in `text[low:high]` (`low` 0, or
    a newline): the text's first line has no newline before it."""
    if low == 0 and text[: len(_ABORTED) - 1] == _ABORTED[1:]:
        yield 0
    at = text.find(_ABORTED, low, high)
    while at >= 0:
        yield at + 1
        at = text.find(_ABORTED, at + 1, high)


def _outside(tables: list[Table], size: int) -> Iterator[tuple[int, int]]:
    """The spans of a text of `size` characters that no table covers, each from the newline
    that ends the table before it (a line right under a table starts there)."""
    pos = 0
    for table in sorted(tables, key=lambda t: t.at):
        if table.at > pos:
            yield pos, table.at
        pos = max(pos, table.at + table.size - 1)
    yield pos, size


def nothing(text: str) -> str:
    """Why a file with no table is refused, in nvprof's own words when it has some, or for
    holding only the Unified Memory tables profgen has none for (`nvprof_unread.only`)."""
    said = quoted(text)
    if said is not None:
        exported = f": {nvprof_export.IMPORT_IT}" if nvprof_export.RESULT_FILE in said else ""
        return f"nvprof output with no table profgen reads; nvprof says: {said}{exported}"
    unread = nvprof_unread.only(text)
    if unread is not None:
        return unread
    ran = text.find(_TRACE_WORDS)  # not at a line's start: no header was found there
    return "no nvprof table header found" if ran < 0 else _RUN_TOGETHER


def quoted(text: str) -> str | None:
    """nvprof's own messages in `text` (its errors first, then what it found nothing of), the
    first two quoted, or None when it has none."""
    said = []
    for match in _SAYS.finditer(text):
        message = match["msg"].strip()
        if message not in said:
            said.append(message)
        if len(said) >= 8:
            break
    if not said:
        return None
    said.sort(key=lambda m: (not m.startswith(("Error", "Generated")), not m.startswith("No ")))
    return " / ".join(cell_quotes.shown_cell(m, 160) for m in said[:2])
