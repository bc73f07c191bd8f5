"""Elision marks in ncu's text: a `...` (`[...]`, `<snip>`) line that a paste put among the
tables where it cut rows out. Nothing of ncu's is such a line, and rows cut out leave the tables
partial: the reader says so (`reader_notes.ReadNote`), as a capture says it of a section
(`capture`); the rows it can still read are read as ever. A mark right under a `Section:` line
that stands for its table's header and opening rule leaves rows whose widths the rule at their
foot gives: `ncu_walk` reads them by it (`Walk.headless`), under that `Section:` line: the mark
may stand for more sections than its own (nothing tells), so the note says whose rows they are
taken for.
"""

from __future__ import annotations

import warnings

import numpy as np

from profiler.parse import capture, lines, ncu_walk, reader_notes

# The first non-blank byte an elision mark can have: `.`, `[`, `<` or the first of `…` in UTF-8.
_FIRST = np.array([ord("."), ord("["), ord("<"), 0xE2], dtype=np.uint8)


def marks(found: lines.Lines) -> np.ndarray:
    """The indices of the lines of `found` that are elision marks."""
    at = np.flatnonzero(np.isin(found.first, _FIRST) & (found.lead >= 0))
    keep = [capture.elision(found.text(int(i)).strip()) for i in at.tolist()]
    return at[np.array(keep, dtype=bool)] if len(at) else at


def note(found: lines.Lines, walk: ncu_walk.Walk) -> None:
    """Warn (`reader_notes.ReadNote`, partial) when an elision mark lies below the first kernel
    line: the lines it stands for (rows, a table's header and rules) were not read, nor the rows
    of a table whose header and opening rule it stands for unless the rule at their foot gives
    their widths (`Walk.headless`: said so)."""
    after = marks(found)
    after = after[after > int(walk.kernel_lines[0])]
    at = [int(i) + 1 for i in after.tolist()]
    if not at:
        return
    more = f" and {len(at) - 5} more" if len(at) > 5 else ""
    headless = [i + 1 for i in walk.headless]
    read = (
        f"; the rows under {len(headless)} of them (line {', '.join(map(str, headless[:5]))}"
        f"{', ...' if len(headless) > 5 else ''}), which stand for a table's header, are read "
        "by the widths of the rule at their foot, filed under the `Section:` line above the mark "
        "(their section is another if the mark also stands for more `Section:` lines)"
        if headless
        else ""
    )
    unread = "; the rows under a header cut out with them are not read either"
    unread = "" if len(headless) == len(at) else unread
    said = (
        f"line {at[0]}: `...` at line {', '.join(map(str, at[:5]))}{more}: rows cut out "
        f"of ncu's tables by the paste{read}{unread}: tables partial"
    )
    warnings.warn(reader_notes.ReadNote(said, at[0], partial=True), stacklevel=2)
