"""Where the columns of `nsys stats` column text lie: the rule of dash runs under a table's
header (one run per column), the header cell over each run, and a block's header, rule and rows.

The rule gives each column's place; a header or rule that a paste or a converted document moved
by a character or two is read as nsys printed it (`header_cells`, `columns_under`).
"""

from __future__ import annotations

import re

Span = tuple[int, int]
_DASHES = re.compile(r"-+")
MAX_COLUMNS = 256
MAX_GAP = 16
_SHIFT = 2  # how far left of its dash run a header word may start (`columns_under`)


def is_rule(line: str) -> bool:
    """A line of dash runs and blanks only, as nsys rules its tables: 2 to `MAX_COLUMNS` runs,
    at most `MAX_GAP` blanks apart (nsys puts two). Anything wider is no table of nsys, and the
    bounds keep the work of cutting rows (per column and per blank between columns) small."""
    text = line.strip()
    if not text.startswith("-") or text.strip("- ") or " " not in text:
        return False
    runs = spans(text)
    gaps = (b[0] - a[1] for a, b in zip(runs, runs[1:], strict=False))
    return len(runs) <= MAX_COLUMNS and max(gaps) <= MAX_GAP


def spans(rule: str) -> list[Span]:
    """The (start, end) of every dash run of a rule line."""
    return [m.span() for m in _DASHES.finditer(rule)]


def header_cells(header: str, columns: list[Span]) -> list[str]:
    """The header's cell over each column: from the column's start to the next one's.

    nsys starts its header where the rule's first dash run starts. A header that starts left
    of it lost its leading blanks to a paste (a selection from a terminal that begins at the
    first word: `Time (%)  Total Time (ns) ...` over ` --------  ---------------`), and is read
    as if they were there."""
    header = _padded(header, columns)
    starts = [a for a, _ in columns] + [max(len(header), columns[-1][1])]
    return [header[starts[i] : starts[i + 1]].strip() for i in range(len(columns))]


def columns_under(header: str, rule: str) -> list[Span]:
    """Each column's place: the rule's dash runs (`spans`), a run widened to the left where a
    header word starts at most `_SHIFT` characters before it, in the blanks between two runs
    (`StdDev (ns)   Name` over `------------   -----`: a copy, such as a document converted
    from a PDF, moved the rule by a character). nsys never starts a header word there: its
    header cells lie inside their runs, so a table it printed keeps its rule's places."""
    runs = spans(rule)
    if not runs:
        return runs
    header = _padded(header, runs)
    out: list[Span] = []
    for start, end in runs:
        word = start
        while 0 < word < len(header) and header[word] != " " and header[word - 1] != " ":
            word -= 1
        shifted = word < start and start - word <= _SHIFT and (not out or word > out[-1][1])
        out.append((word if shifted else start, end))
    return out


def _padded(header: str, columns: list[Span]) -> str:
    """`header` with the leading blanks a paste took from it (see `header_cells`)."""
    lead = len(header) - len(header.lstrip(" "))
    return " " * (columns[0][0] - lead) + header if lead < columns[0][0] else header


def head(source: tuple[bytes, int, int]) -> str:
    """The header and rule lines of a table in ASCII bytes (data, start, end), decoded."""
    data, start, end = source
    one = data.find(b"\n", start, end)
    two = data.find(b"\n", one + 1, end) if one >= 0 else -1
    return data[start : end if two < 0 else two + 1].decode("ascii")


def three_parts(block: str) -> tuple[str, str, int]:
    """Header line, rule line and where the rows start (no copy of them: they may be many)."""
    one = block.find("\n")
    two = block.find("\n", one + 1) if one >= 0 else -1
    if one < 0:
        return block, "", len(block)
    if two < 0:
        return block[:one], block[one + 1 :], len(block)
    return block[:one], block[one + 1 : two], two + 1
