"""nvprof summary rows whose name a log broke onto the next line -> the rows whole again.

Some logs break long lines where a buffer ended, not where a word did: RAI's client (the
course runner of ECE408's mxnet projects) wrote a row ending `...mshadow::expr::Plan<mshadow:`
and put the rest of its name, `:expr::ReduceWithAxisExp<...>(mshadow::gpu, ...)`, at the start
of the next line. Such a line is read as the end of the name above only when it cannot be a
row (it starts in the table's first column, and what starts it is neither a row type nor a
share), and the lines above and under it are complete rows (seven fields after the type: a
share, a time, ... a name): a shell prompt typed under a table's last row is no part of its
name. Lines that cannot be rows under the last row (RAI's closing lines, with no blank line
before them; a program's output that a Slurm log puts under nvprof's tables) end the table
there. The table's first column is the margin of its least indented line among the header and
the whole rows: column 1 of a log, further in when a README indents the whole paste (an
admonition's body, a list item's code block).
The two are joined as written, with nothing between them (the break fell inside a word), and
the continuation's line is `dropped` from the table, so that messages still name file lines.
Any other line is left as it is, to be read (or refused) as a row. Only tables that were
refused as they are come here: the rows of a well-formed table are read at full speed.
"""

from __future__ import annotations

import dataclasses
import math

from profiler.parse import bare_rows, values
from profiler.parse.table_origin import Origin


def joined(origin: Origin) -> Origin | None:
    """The table of `origin` with each name continuation joined to the row above (its text
    in full, the continuations' file lines `dropped`) and ended at its last row, or None when
    neither changes it."""
    lines = origin.full_text().split("\n")
    margin = _margin(lines)
    end = len(lines)
    while end > 1 and (not lines[end - 1].strip() or _continues(lines[end - 1], margin)):
        end -= 1  # output typed right under the last row (RAI's closing lines): no row
    cut = end < len(lines) and _complete(lines[end - 1])
    lines = lines[:end] if cut else lines
    kept, dropped, line = lines[:1], list(origin.dropped), origin.first_line
    for k, part in enumerate(lines[1:], start=2):
        line += 1
        while line in origin.dropped:
            line += 1
        under = lines[k] if k < len(lines) else ""
        if _continues(part, margin) and _complete(kept[-1]) and _complete(under):
            kept[-1] = kept[-1].rstrip("\r") + part
            dropped.append(line)
        else:
            kept.append(part)
    if len(dropped) == len(origin.dropped) and not cut:
        return None
    return dataclasses.replace(
        origin, text="\n".join(kept), dropped=tuple(sorted(dropped)), cut=None
    )


def _fields(line: str) -> list[str]:
    """A summary row's fields after its row type (`GPU activities:`), the name the seventh."""
    body = line.strip()
    kind, sep, rest = body.partition(":")
    if body[:1].isalpha() and sep and "%" not in kind and (not rest or rest[0].isspace()):
        body = rest
    return body.split(None, 6)


def _is_share(cell: str) -> bool:
    """`20.21%`, or a bare number (nvprof before CUDA 6 wrote no `%`)."""
    return not math.isnan(values.number_or_nan(cell[:-1] if cell.endswith("%") else cell))


def _complete(line: str) -> bool:
    """Whether the line is a whole summary row: seven fields, a share and a time first."""
    fields = _fields(line)
    if len(fields) < 7 or not _is_share(fields[0]):
        return False
    unit = next((u for u in bare_rows.NVPROF_UNITS if fields[1].endswith(u)), None)
    return unit is not None and not math.isnan(values.number_or_nan(fields[1][: -len(unit)]))


def _indent(line: str) -> int:
    """How many blanks lead the line."""
    return len(line) - len(line.lstrip(" \t"))


def _margin(lines: list[str]) -> int:
    """The table's first column: the indent of its least indented line among its header (the
    first line) and its whole rows (`_complete`)."""
    return min(_indent(line) for line in lines[:1] + [x for x in lines[1:] if _complete(x)])


def _continues(line: str, margin: int) -> bool:
    """Whether the line cannot be a row: not blank, starting no further in than the table's
    first column (`margin`), and what starts it is neither a row type nor a share."""
    if not line.strip() or _indent(line) > margin:
        return False
    fields = _fields(line)
    return fields == line.strip().split(None, 6) and not _is_share(fields[0])
