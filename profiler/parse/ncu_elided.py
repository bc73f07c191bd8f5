"""Elision marks in ncu's text: a `...` (`[...]`, `<snip>`) line that a paste put among the
tables where it cut rows out. Nothing of ncu's is such a line, and rows cut out (a table's
header with them) leave the tables partial: the reader says so (`values.ReadNote`), as a capture
says it of a section (`capture`); the rows it can still read are read as ever.
"""

from __future__ import annotations

import warnings

import numpy as np

from profiler.parse import capture, lines, ncu_walk, values

# The first non-blank byte an elision mark can have: `.`, `[`, `<` or the first of `…` in UTF-8.
_FIRST = np.array([ord("."), ord("["), ord("<"), 0xE2], dtype=np.uint8)


def note(found: lines.Lines, walk: ncu_walk.Walk) -> None:
    """Warn (`values.ReadNote`, partial) when an elision mark lies below the first kernel line:
    the lines it stands for (rows, a table's header and rules) were not read, nor the rows of a
    table whose header and opening rule it stands for (no widths to cut them by)."""
    after = np.flatnonzero(np.isin(found.first, _FIRST) & (found.lead >= 0))
    after = after[after > int(walk.kernel_lines[0])]
    marks = [int(i) + 1 for i in after.tolist() if capture.elision(found.text(int(i)).strip())]
    if not marks:
        return
    more = f" and {len(marks) - 5} more" if len(marks) > 5 else ""
    said = (
        f"line {marks[0]}: `...` at line {', '.join(map(str, marks[:5]))}{more}: rows cut out "
        "of ncu's tables by the paste; the rows under a header cut out with them are not read "
        "either: tables partial"
    )
    warnings.warn(values.ReadNote(said, marks[0], partial=True), stacklevel=2)
