"""Pastes whose shape hides a profiler's output, undone: a paste with a blank line after every
line (a reply to a GitHub issue or pull request sent by email doubles every line end), one
whose lines are quoted with `>` (a reply that quotes an earlier comment), one whose lines are
commented out with `//` (a CUDA source file that keeps its program's output under its code),
one whose lines are starred in a block comment (` * text`, the same in a `/* */` comment), one
whose lines are commented out with `#` (a batch script that keeps its commands' output under
them), one whose lines are indented (a Markdown code block indented by four, a docstring's
example: the CSV readers read a line from its first byte), nvprof summary rows pasted from
their `GPU activities:` line down, without the header line above them, an nvprof summary edited
so that each row type stands alone on its line above its first row, the rows of nsys's CUDA API
summary pasted without theirs, and a table rewritten as a
Markdown pipe table (`| GPU activities: |  51.53% | ... |`, a README's way to lay it out).

`double_spaced`, `unquoted`, `uncommented`, `unstarred`, `unhashed`, `unindented`, `headed`,
`retyped`,
`api_headed` and `unpiped` give the text as the profiler printed it, with the file line of each
of its lines (`Reshaped.located` makes a message's line numbers the file's own). They only say
what a file's shape is; `profiler.import_paste` decides when a shape is undone.

Linear in the text: the lines and their first non-blank bytes come from `parse.lines` (a few
NumPy passes), and the bytes kept are taken with one mask. `double_spaced_head` rejects a file
from its first 64 KiB alone (two non-blank lines in a row), so an ordinary file never pays for
more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from profiler.parse import bare_rows, lines, table_origin

_GAPS_MIN = 3  # the single blank lines between non-blank ones that make a paste double-spaced
_MARKED_MIN = 2  # the quoted (or commented) lines that make a paste quoted (or commented)
_QUOTE_INDENT_MAX = 3  # Markdown: a quote's `>` may follow up to three spaces
DOUBLE_SPACED = "a blank line after each of its lines (as an email reply pastes output): read as "
DOUBLE_SPACED += "single-spaced, those blank lines skipped"
QUOTED = "its lines quoted with `>` (a reply quoting a comment): read without the quote marks"
COMMENTED = "its lines commented out with `//` (a program's output kept in a source file's "
COMMENTED += "comments): read without the comment marks"
STARRED = "its lines in a block comment with a star down its left side (` * text`: a program's "
STARRED += "output kept in a source file's `/* */` comment): read without the stars"
HASHED = "its lines commented out with `#` (a program's output kept in a script's comments): "
HASHED += "read without the comment marks"
INDENTED = "its lines indented (a Markdown code block, a docstring's example): read with the "
INDENTED += "indent taken off"
HEADED = (
    "nvprof summary rows with no header line above them (from line {line}): read under the one "
    "header nvprof prints above rows that start with their type (Type Time(%) Time Calls Avg "
    "Min Max Name)"
)
API_HEADED = (
    "`nsys stats` rows of CUDA API calls with no header line above them (from line {line}): read "
    "under the header nsys prints above its {columns}-column CUDA API summary ({names})"
)
RETYPED = (
    "nvprof summary row types alone on their lines (from line {line}: `GPU activities:` above "
    "its first row, edited by hand): read with each type on its first row, as nvprof prints it"
)
PIPED = (
    "its tables written as Markdown pipe tables (`| cell | cell |`, as a README lays output out): "
    "read with the bars between cells made spaces and the `|---|` rules under headers left out"
)
UNTYPED_LEFT = (
    "; {rows} summary rows with no header or row type above them (lines {first}-{last}) are not "
    "read: nothing says if they are GPU activities or API calls"
)
NVPROF_API_HEADED = (
    "nvprof summary rows of CUDA API calls with neither a header line nor a row type above them "
    "(from line {line}): read as nvprof's `API calls:` rows, under the header nvprof prints"
)
LATE = (
    "profiler output from line {line} on only, further than the first 64 KiB that detection reads "
    "(a long run log: a build or the program's own output before it): read from that line"
)
NVPROF_HEADER = (
    b"            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
)
_API_TYPE = b"API calls:"  # put before the first of a run of untyped nvprof API rows
_TYPE_FIRSTS = (ord("G"), ord("A"))  # the first letters of nvprof's row types
_LONE_TYPES = ("GPU activities:", "API calls:")
_SUMMARY_COLUMNS = ("Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name")  # nvprof prints all
_RULE_BYTES = frozenset(b" \t:-|")  # a pipe table's rule under its header: `| :---: | --- |`


@dataclass(frozen=True)
class Reshaped:
    """A paste's text with its shape undone: `data`, whose line k (1-based) is line
    `lines[k - 1]` of the file, and `note`, what was undone (for warnings and refusals)."""

    data: bytes
    lines: np.ndarray
    note: str

    def file_line(self, line: int) -> int:
        """The file line of line `line` of `data` (a line past its end: as far past the file's
        last)."""
        if not len(self.lines):
            return line
        k = min(max(line, 1), len(self.lines))
        return int(self.lines[k - 1]) + line - k

    def located(self, text: str) -> str:
        """`text` (a message about `data`) with each `line N` made the file's line."""
        return table_origin.renumbered(text, self.file_line)

    def then(self, later: Reshaped) -> Reshaped:
        """This text, then `later` (made of this one's `data`) undone on top of it."""
        at = np.minimum(later.lines, len(self.lines)) - 1
        return Reshaped(later.data, self.lines[at], f"{self.note}; {later.note}")


def double_spaced_head(head: str) -> bool:
    """Whether a file's first 64 KiB (`head`) may be a double-spaced paste: no two non-blank
    lines in a row, and at least a few single blank lines between non-blank ones."""
    rows = head.split("\n")[:-1]  # the last may be cut by the 64 KiB
    return _alternates(np.array([bool(row.strip()) for row in rows], dtype=bool))


def double_spaced(data: bytes) -> Reshaped | None:
    """The text of a double-spaced paste (`data`, its UTF-8 bytes) as printed: a lone blank line
    between two lines is the paste's and is skipped; a run of two or more is the output's own
    (a table's end) and is kept as one blank line. None when `data` is not double-spaced (two
    non-blank lines in a row anywhere, or too few blank lines between them)."""
    found = lines.split(data)
    solid = _solid(found)
    if not _alternates(solid):
        return None
    blank = ~solid
    after_blank = np.concatenate(([False], blank[:-1]))
    before_blank = np.concatenate((blank[1:], [False]))
    keep = solid | (blank & ~after_blank & before_blank)  # the first of two or more blanks
    keep[-1] = True  # the text after the last newline (empty when there is one)
    kept = np.flatnonzero(keep)
    bounds = np.append(found.start, len(data) + 1)  # line i with its newline: i .. i + 1
    data_kept = _joined(data, found.start[kept], np.minimum(bounds[kept + 1], len(data)))
    return Reshaped(data_kept, kept + 1, DOUBLE_SPACED)


def unquoted(data: bytes) -> Reshaped | None:
    """The text of a paste (`data`, its UTF-8 bytes) with one level of Markdown quote marks taken
    off its quoted lines (`> text`, `   >text`, `>`: the `>`, what is before it and one space
    after it); its other lines as they are. None when fewer than two lines are quoted."""
    found = lines.split(data)
    quoted = (found.first == ord(">")) & (found.lead >= 0) & (found.lead <= _QUOTE_INDENT_MAX)
    return _unmarked(data, found, quoted, 1, QUOTED)


def uncommented(data: bytes) -> Reshaped | None:
    """The text of a paste (`data`, its UTF-8 bytes) with the `//` taken off its commented
    lines (`// text`, `  //text`, `//`: the `//`, what is before it and one space after it), as a
    C, C++ or CUDA source file keeps the output of its program in line comments under its code;
    its other lines as they are. None when fewer than two lines are commented."""
    found = lines.split(data)
    codes = np.frombuffer(data, dtype=np.uint8)
    slash = (found.first == ord("/")) & (found.lead >= 0)
    at = np.flatnonzero(slash)
    second = found.start[at] + found.lead[at] + 1
    slash[at] = (second < found.end[at]) & (codes[np.minimum(second, len(codes) - 1)] == ord("/"))
    return _unmarked(data, found, slash, 2, COMMENTED)


def unstarred(data: bytes) -> Reshaped | None:
    """The text of a paste (`data`, its UTF-8 bytes) with the `*` taken off the lines of a block
    comment written with a star down its left side (` * text`, ` *`: the `*`, what is before it
    and one space after it), as a C or CUDA source file keeps its program's output in a
    `/* ... */` comment under its code; its other lines as they are (a comment's close, ` */`, is
    no such line: a star and a slash). None when fewer than two lines are starred."""
    found = lines.split(data)
    codes = np.frombuffer(data, dtype=np.uint8)
    starred = (found.first == ord("*")) & (found.lead >= 0)
    at = np.flatnonzero(starred)
    after = found.start[at] + found.lead[at] + 1
    inside = after < found.end[at]
    starred[at[inside]] = codes[after[inside]] != ord("/")
    return _unmarked(data, found, starred, 1, STARRED)


def unhashed(data: bytes) -> Reshaped | None:
    """The text of a paste (`data`, its UTF-8 bytes) with the `#` taken off its commented lines
    (`#  ** CUDA API Summary`, `#`: the `#`, what is before it and one space after it), as a
    shell or Python script (a batch job's) keeps the output of its commands in comments under
    them; its other lines as they are. None when fewer than two lines are commented."""
    found = lines.split(data)
    hashed = (found.first == ord("#")) & (found.lead >= 0)
    return _unmarked(data, found, hashed, 1, HASHED)


def unindented(data: bytes) -> Reshaped | None:
    """The text of a paste (`data`, its UTF-8 bytes) with the indent taken off its indented CSV
    blocks, as a README's code block indented by four, or a docstring's example, indents a
    profiler's CSV output: the lines from an indented line that starts with two quoted cells
    (`    "Type","Time(%)",...`; a JSON list's `"item",` is none) down to the first line indented
    otherwise. Its other lines as they are. None when fewer than two lines are in such blocks."""
    found = lines.split(data)
    codes = np.frombuffer(data, dtype=np.uint8)
    quote, comma = codes == ord('"'), codes == ord(",")
    pairs = np.flatnonzero(quote[:-2] & comma[1:-1] & quote[2:])  # `","`
    quoted = np.zeros(len(found), dtype=bool)
    quoted[np.searchsorted(found.start, pairs, side="right") - 1] = True
    heads = np.flatnonzero((found.lead > 0) & (found.first == ord('"')) & quoted)
    run = np.cumsum(np.diff(found.lead, prepend=found.lead[:1] - 1) != 0)  # equal indents' run
    heads = heads[np.diff(run[heads], prepend=-1) != 0]  # the first head of each run
    ends = np.searchsorted(run, run[heads], side="right")  # each head's run's end
    edges = np.zeros(len(found) + 1, dtype=np.int64)
    np.add.at(edges, heads, 1)
    np.add.at(edges, ends, -1)
    return _unmarked(data, found, np.cumsum(edges[:-1]) > 0, 0, INDENTED)


def _unmarked(
    data: bytes, found: lines.Lines, marked: np.ndarray, width: int, note: str
) -> Reshaped | None:
    """`data` with a mark `width` bytes long taken off the lines `marked` (those whose first
    non-blank bytes are the mark): the mark, the blanks before it and one space after it. None
    when fewer than `_MARKED_MIN` lines are marked."""
    if int(marked.sum()) < _MARKED_MIN:
        return None
    at = np.flatnonzero(marked)
    mark_end = found.start[at] + found.lead[at] + width
    codes = np.frombuffer(data, dtype=np.uint8)
    inside = mark_end < found.end[at]
    spaced = np.zeros(len(at), dtype=bool)
    spaced[inside] = codes[mark_end[inside]] == ord(" ")
    cut = np.zeros(len(found), dtype=np.int64)
    cut[at] = mark_end + spaced - found.start[at]
    ends = np.append(found.start[1:], len(data))
    data_kept = _joined(data, found.start + cut, ends)
    return Reshaped(data_kept, np.arange(1, len(found) + 1), note)


def unpiped(data: bytes) -> Reshaped | None:
    """The text of a paste (`data`, its UTF-8 bytes) with its Markdown pipe-table rows (lines
    whose first non-blank byte is `|`) laid out as the profiler printed its rows: the bars at
    either end dropped, each bar between two cells made two spaces (the cells keep their own
    padding), and a rule under a header (`|---|:---:|`) left out; its other lines as they are.
    None when fewer than two lines are table rows."""
    found = lines.split(data)
    piped = np.flatnonzero((found.first == ord("|")) & (found.lead >= 0))
    if len(piped) < _MARKED_MIN:
        return None
    keep = np.ones(len(found), dtype=bool)
    pieces, begin = [], 0
    for i in piped.tolist():
        start, end = int(found.start[i]), int(found.end[i])
        pieces.append(data[begin:start])
        row = data[start + int(found.lead[i]) : end]
        cr = b"\r" if row.endswith(b"\r") else b""
        row = row.rstrip(b" \t\r")
        if b"-" in row and _RULE_BYTES.issuperset(row):
            keep[i] = False
            begin = end + 1  # the rule's newline goes with it
            continue
        cells = row[1:].removesuffix(b"|").split(b"|")
        pieces += [b" ", b"  ".join(cells), cr]
        begin = end
    pieces.append(data[begin:])
    return Reshaped(b"".join(pieces), np.flatnonzero(keep) + 1, PIPED)


def lacking(shape: Reshaped) -> str | None:
    """Why the first nvprof summary header of a paste with its shape undone (a line whose words
    include `Time(%)`, `Calls` and `Name`, not `Total`: a pipe table rebuilt by hand; nsys's
    2020 headers say `Total Time`) is no header nvprof prints: the columns it lacks (nvprof
    prints them all, `Min` and `Max` too). None when no line is such a header, or the first
    lacks none."""
    data = shape.data
    at = data.find(b"Time(%)")
    while at >= 0:
        start, end = data.rfind(b"\n", 0, at) + 1, data.find(b"\n", at)
        words = data[start : len(data) if end < 0 else end].split()
        if b"Calls" in words and b"Name" in words and b"Total" not in words:
            missing = [name for name in _SUMMARY_COLUMNS if name.encode() not in words]
            if not missing:
                return None
            line = shape.file_line(data.count(b"\n", 0, start) + 1)
            return f"its nvprof summary header (line {line}) lacks columns nvprof prints: " + (
                ", ".join(missing)
            )
        at = -1 if end < 0 else data.find(b"Time(%)", end)
    return None


def headed(data: bytes) -> Reshaped | None:
    """The text of a paste (`data`, its UTF-8 bytes) with nvprof's summary header put above
    each run of summary rows that starts with its row type (`GPU activities:`, `API calls:`)
    and has no summary row above it: the type says what the rows are, and nvprof (9.0 on) prints
    one header, always the same, above rows that carry their type. An inserted header is
    located at the row below it; rows that no typed row is above are not read, and the note
    says which (`UNTYPED_LEFT`). None when the paste has no such run."""
    found = lines.split(data)
    starts = [i for i in _typed_rows(found) if i == 0 or not _nvprof_row(found, i - 1)]
    if not starts:
        return None
    note = HEADED.format(line=starts[0] + 1) + _untyped_left(found)
    return _put_above(data, found, starts, NVPROF_HEADER, note)


def _untyped_left(found: lines.Lines) -> str:
    """What `headed` leaves unread, said: the summary rows of a paste that no typed row is above
    (rows before its first row type, or after a break in the rows), as `UNTYPED_LEFT`; "" when
    every row is under a typed one."""
    digit = (found.first >= ord("0")) & (found.first <= ord("9")) & (found.lead >= 0)
    left, above = [], False  # above: the line before is a row of a typed run
    for i in range(len(found)):
        row = bool(digit[i]) and _nvprof_row(found, i)
        typed = not row and found.first[i] in _TYPE_FIRSTS and _nvprof_row(found, i)
        if row and not above:
            left.append(i)
        above = typed or (row and above)
    if not left:
        return ""
    return UNTYPED_LEFT.format(rows=len(left), first=left[0] + 1, last=left[-1] + 1)


def api_headed(data: bytes) -> Reshaped | None:
    """The text of a paste (`data`, its UTF-8 bytes) with the header of nsys's CUDA API summary
    put above each run of its rows, when every `nsys stats` row in it is a CUDA API call and all
    have one width (`bare_rows.api_row`): only that summary names rows so, and its width says
    which nsys printed it. Likewise nvprof summary rows with no row type that all name CUDA API
    calls (`bare_rows.untyped_nvprof_api_row`: a paste that starts inside nvprof's `API calls:`
    rows) get nvprof's header above each run and the `API calls:` type on its first row. An
    inserted header is located at the row below it. None when the paste has no such rows, rows
    of both tools, or rows of another table (kernels, memory operations: nothing says which
    report they are of)."""
    found = lines.split(data)
    digit = (found.first >= ord("0")) & (found.first <= ord("9")) & (found.lead >= 0)
    rows: dict[str, dict[int, int]] = {bare_rows.NSYS: {}, bare_rows.NVPROF: {}}
    for i in np.flatnonzero(digit).tolist():
        cells = found.text(i).split()
        kind = bare_rows.row_kind(cells)
        if kind is None:
            continue
        api = bare_rows.api_row if kind == bare_rows.NSYS else bare_rows.untyped_nvprof_api_row
        if not api(cells):
            return None
        rows[kind][i] = len(cells)
    nsys, nvprof = rows[bare_rows.NSYS], rows[bare_rows.NVPROF]
    if nsys and nvprof:
        return None
    if nvprof:
        if _typed_rows(found):  # a typed row says what its run is: `headed`'s case
            return None
        starts = sorted(i for i in nvprof if i - 1 not in nvprof)
        note = NVPROF_API_HEADED.format(line=starts[0] + 1)
        return _put_above(data, found, starts, NVPROF_HEADER + _API_TYPE, note)
    widths = set(nsys.values())
    if len(widths) != 1:
        return None
    width = widths.pop()
    starts = sorted(i for i in nsys if i - 1 not in nsys)
    header = bare_rows.API_HEADERS[width]
    names = ", ".join(c.strip() for c in header.decode().split("\n")[0].split("  ") if c.strip())
    note = API_HEADED.format(line=starts[0] + 1, columns=width, names=names)
    return _put_above(data, found, starts, header, note)


def retyped(data: bytes) -> Reshaped | None:
    """The text of a paste (`data`, its UTF-8 bytes) with each nvprof row type that stands alone
    on its line (`GPU activities:`, `API calls:`, put there by hand) joined to the summary row
    under it, and the blank lines between it and the line above left out: nvprof prints a row
    type on its first row, right under the header or the rows of the type before. A joined line
    is located at the type's line. None when no row type stands alone above a summary row."""
    found = lines.split(data)
    joins = _lone_types(found)
    if not joins:
        return None
    keep = np.ones(len(found), dtype=bool)
    pieces, begin = [], 0
    for blank, label, row in joins:
        keep[blank:label] = False
        keep[label + 1 : row + 1] = False
        typed = data[found.start[label] : found.end[label]].rstrip(b" \t\r")
        pieces += [data[begin : found.start[blank]], typed + b"  "]
        begin = found.start[row] + found.lead[row]
    pieces.append(data[begin:])
    note = RETYPED.format(line=joins[0][1] + 1)
    return Reshaped(b"".join(pieces), np.flatnonzero(keep) + 1, note)


def _lone_types(found: lines.Lines) -> list[tuple[int, int, int]]:
    """Per row type alone on its line above a summary row without a type: the first blank line
    above it (itself when none), its line and the row's line (0-based, ascending)."""
    solid = np.flatnonzero(found.lead >= 0)
    short = found.end[solid] - found.start[solid] - found.lead[solid] <= len(b"GPU activities: \r")
    joins = []
    for k in np.flatnonzero(np.isin(found.first[solid], _TYPE_FIRSTS) & short).tolist():
        label = int(solid[k])
        if found.text(label).strip() not in _LONE_TYPES or k + 1 == len(solid):
            continue
        row = int(solid[k + 1])
        cells = found.text(row).split()
        if bare_rows.row_kind(cells) != bare_rows.NVPROF or bare_rows.typed_nvprof_row(cells):
            continue
        blank = int(solid[k - 1]) + 1 if k else label
        joins.append((blank, label, row))
    return joins


def _put_above(
    data: bytes, found: lines.Lines, starts: list[int], header: bytes, note: str
) -> Reshaped:
    """`data` (its lines `found`) with `header` (whole lines, then what starts the row's own
    line: nvprof's `API calls:` type) put before each of the lines `starts` (0-based,
    ascending), each header line located at the line below it."""
    at = np.asarray(starts, dtype=np.int64)
    pieces, begin = [], 0
    for start in found.start[at].tolist():
        pieces += [data[begin:start], header]
        begin = start
    pieces.append(data[begin:])
    above = np.repeat(at, header.count(b"\n"))
    file_lines = np.insert(np.arange(1, len(found) + 1), above, above + 1)
    return Reshaped(b"".join(pieces), file_lines, note)


def _typed_rows(found: lines.Lines) -> list[int]:
    """The lines (0-based) that are nvprof summary rows starting with their row type."""
    candidates = np.flatnonzero(np.isin(found.first, _TYPE_FIRSTS) & (found.lead >= 0))
    return [i for i in candidates.tolist() if bare_rows.typed_nvprof_row(found.text(i).split())]


def _nvprof_row(found: lines.Lines, i: int) -> bool:
    """Whether line `i` (0-based) is a row of an nvprof summary."""
    return bare_rows.row_kind(found.text(i).split()) == bare_rows.NVPROF


def _solid(found: lines.Lines) -> np.ndarray:
    """Per line, whether it holds more than blanks (a line whose lead `parse.lines` left unknown,
    not ASCII or blank for long, is looked at here)."""
    solid = found.lead >= 0
    for i in np.flatnonzero(found.lead == lines.UNKNOWN).tolist():
        solid[i] = bool(found.text(i).strip())
    return solid


def _alternates(solid: np.ndarray) -> bool:
    """Whether no two lines in a row are solid and at least `_GAPS_MIN` lone blank lines lie
    between solid ones."""
    if len(solid) < 3 or bool((solid[1:] & solid[:-1]).any()):
        return False
    lone = solid[:-2] & ~solid[1:-1] & solid[2:]
    return int(lone.sum()) >= _GAPS_MIN


def _joined(data: bytes, starts: np.ndarray, ends: np.ndarray) -> bytes:
    """Bytes `starts[i]:ends[i]` of `data` (ascending, not overlapping) run together: ranges
    that touch are joined, then one mask of the bytes kept selects them all (a million lines
    joined one by one take seconds)."""
    if not len(starts):
        return b""
    breaks = np.flatnonzero(starts[1:] != ends[:-1]) + 1
    first = np.concatenate(([0], breaks))
    last = np.concatenate((breaks - 1, [len(starts) - 1]))
    mark = np.zeros(len(data) + 1, dtype=np.int8)
    mark[starts[first]] = 1
    mark[ends[last]] = -1  # (after the joining, no range ends where another starts)
    keep = np.cumsum(mark[:-1], dtype=np.int8).view(bool)
    return np.frombuffer(data, dtype=np.uint8)[keep].tobytes()
