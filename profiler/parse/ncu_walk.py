"""Where the tables of ncu's default text output are, found with NumPy: the kernel lines, and
every row that lies in an open table, with that table's column widths.

ncu's text is read as one walk down its lines (`ncu_text` says what they look like). A kernel
line starts a launch and closes any table; a `Section:` line closes the table; a rule of three
dash runs opens a table when none is open, and any rule closes the open one unless a `Metric
Name ... Metric Value` header came after the rule that opened it (then the rule under the header
keeps it open). A rule of one dash run right under a `Section:` line opens a table too: a paste
that cut ncu's rule to its first run (a 2019.x `--metrics` table quoted in OLCF's Summit guide),
whose rows are cut at their runs of blanks (`blank_cells`), as no widths are left to cut them by.
Lines before the first kernel line are skipped. Every other non-blank line is a row, read by the
open table's widths.

A million-row file walked line by line in Python costs seconds. Here the lines are sorted with
NumPy (`parse.lines`): only the lines that can be structure or a mapped metric's row are looked
at, each distinct one cut once in Python, and the walk's state at every line is found with a
prefix scan of the structural lines' moves (`_states`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from profiler.parse import byte_spans, lines, ncu_metrics

_KERNEL_TAIL = re.compile(r", Context [0-9]+, Stream [0-9]+(?:, Device [0-9]+, CC [0-9.]+)?\Z")
# `--print-summary per-kernel`: one line per kernel, its launches counted.
_SUMMARY_TAIL = re.compile(r", Device [0-9]+, CC [0-9.]+, Invocations [0-9]+\Z")
# The same summary under a `Device 0, CC 9.0` line of its own: the kernel line without the device.
_GROUPED_SUMMARY_TAIL = re.compile(r", Invocations [0-9]+\Z")
# ncu 2020.x-2021.x's `--print-summary` (under a `Device 0` line): the block and grid as sizes;
# later 2022-2023 versions name the device on the kernel's line (`, Device 0, 1 invocations`).
_OLD_SUMMARY_TAIL = re.compile(
    r", Block Size ([0-9]+), Grid Size ([0-9]+)(?:, Device [0-9]+)?, [0-9]+ invocations\Z"
)
# The launches a summary's kernel line sums up: `, Invocations 300` (ncu 2020.x: `, 1 invocations`).
_COUNT = re.compile(r", Invocations ([0-9]+)\Z|, ([0-9]+) invocations\Z")
# A kernel line edited down to its launch shape and compute capability (no Context, Stream).
_BARE_TAIL = re.compile(r", CC [0-9]+\.[0-9]+\Z")
_SHAPE = re.compile(r" \(([0-9]+, [0-9]+, [0-9]+)\)x\(([0-9]+, [0-9]+, [0-9]+)\)\Z")
_DATE = re.compile(r", [0-9]{4}-[A-Za-z]{3}-[0-9]{2} [0-9:]{8}\Z")
_CONTEXT = re.compile(rb", Context |, Invocations |, CC |, Block Size ")
# A note an author wrote after a row's value (`93.58   # <- memory-bound`): not ncu's.
_NOTE = "  # "
# A cell ncu prints as a value (a number, `(!) n/a`, `n/a`), not a word of a note.
_VALUE_CELL = re.compile(r"[0-9(.+-]|n/a")
_MAX_TAIL = 120  # the launch shape, time and ids after a kernel name fit in this
_SHORT = 512  # lines up to this long are grouped by their bytes with NumPy (`_distinct`)
NAMES = {name: target for target, (_, names) in ncu_metrics.METRICS.items() for name in names}
# The first 8 characters of a mapped metric's row (6 of `SM [%]` and `SOL FB`), of a table's
# header and of a `Section:` line.
_PREFIXES = np.array(sorted({lines.pack(n[:8].encode()) for n in NAMES if len(n) >= 8}), np.uint64)
_SIXES = np.array(sorted({lines.pack(n.encode()) << 16 for n in NAMES if len(n) == 6}), np.uint64)
_SIX_MASK = np.uint64(((1 << 48) - 1) << 16)
_SECTION_WORD = np.uint64(lines.pack(b"Section:"))
_HEADER_WORD = np.uint64(lines.pack(b"Metric N"))
# The first 8 characters of an NVTX block's title (`NVTX Start/End Ranges:`, `NVTX Push/Pop ...`).
_NVTX_WORDS = np.array([lines.pack(b"NVTX Sta"), lines.pack(b"NVTX Pus")], dtype=np.uint64)

# What a line is to the walk; `_RULE1`, a rule of one dash run, is `_RULE3` or `_RULE` by the line
# above it (`_one_run_rules`) before the walk.
_NOTHING, _ROW, _LAUNCH, _SECTION, _RULE3, _RULE, _HEADER, _RULE1 = range(8)
# The walk's states: no table open, a table open, a table open whose header was read.
_CLOSED, _OPEN, _HEADED = 0, 1, 2
# Per structural kind (from _LAUNCH on), the state it moves each state to.
_MOVES = np.array([[0, 0, 0], [0, 0, 0], [1, 0, 1], [0, 0, 1], [0, 2, 2]], dtype=np.int64)
# A move as one number (its image of state 0, 1, 2 in base 3), and moves composed by number.
_CODES = _MOVES @ np.array([1, 3, 9])


def _then(first: int, second: int) -> int:
    """The number of the move `first`, then `second` (moves as numbers)."""
    return sum((second // 3 ** ((first // 3**s) % 3)) % 3 * 3**s for s in range(3))


_COMPOSED = np.array([[_then(f, g) for f in range(27)] for g in range(27)])  # [second, first]
_CONSTANT = np.isin(np.arange(27), [0, 13, 26])

Shape = tuple[str, str | None, str | None]  # a kernel line's name, grid and block


@dataclass(frozen=True)
class Walk:
    """The launches of a text (their kernel lines' shapes and line indices, in file order), the
    lines that start with an NVTX block's title (`ncu_nvtx.text_ranges`), the `Section:` lines
    (and, with `every`, their text, `texts[section_texts[i]]`), and the rows read in open
    tables, in file order: each row's line index, launch, line text (`texts[line[i]]`) and
    table widths (`widths[table[i]]`). `counts` holds, per launch, the launches a per-kernel
    summary's kernel line sums up (`, Invocations 300`), NaN for a launch's own line."""

    launches: list[Shape]
    kernel_lines: np.ndarray
    counts: np.ndarray
    nvtx_lines: np.ndarray
    section_lines: np.ndarray
    section_texts: np.ndarray
    rows: np.ndarray
    launch: np.ndarray
    line: np.ndarray
    table: np.ndarray
    texts: list[str]
    widths: list[tuple[int, ...]]
    headless: tuple[int, ...] = ()  # elision marks read as a header cut out (`_headless`)


@dataclass
class _Distinct:
    """What each distinct line looked at is: its text, kind, table widths (id into `widths`, for
    `_RULE3`) and launch shape (for `_LAUNCH`)."""

    texts: list[str] = field(default_factory=list)
    kinds: list[int] = field(default_factory=list)
    tables: list[int] = field(default_factory=list)
    shapes: dict[int, Shape] = field(default_factory=dict)
    widths: dict[tuple[int, ...], int] = field(default_factory=dict)
    notes: bool = False  # whether the text holds `  # ` (a note after a row, `without_note`)
    old_summaries: list[int] = field(default_factory=list)  # (`_OLD_SUMMARY_TAIL` lines)

    def add(self, text: str) -> None:
        """The next distinct line (`_kind` says what it is), without a note after it."""
        if self.notes:
            text = without_note(text)
        kind, shape, runs = _kind(text.rstrip("\r"))
        if shape is not None:
            self.shapes[len(self.texts)] = shape
            if _OLD_SUMMARY_TAIL.search(text[-_MAX_TAIL:].rstrip()):
                self.old_summaries.append(len(self.texts))
        table = -1 if runs is None else self.widths.setdefault(runs, len(self.widths))
        self.texts.append(text)
        self.kinds.append(kind)
        self.tables.append(table)


def walk(
    data: bytes, found: lines.Lines, every: bool = False, elided: np.ndarray | None = None
) -> Walk:
    """The launches and open tables' rows of ncu's text `data` (UTF-8; its lines `found`): the
    rows that can be a mapped metric's, or with `every` all of them; `elided`: the indices of
    the lines that are elision marks (`ncu_elided.marks`), of which one under a `Section:` line
    may stand for its table's header (`_headless`)."""
    looked, sections, nvtx = _looked_at(data, found, every)
    codes, distinct = _distinct(data, found, looked)
    kind = np.full(len(found), _NOTHING, dtype=np.int8)
    kind[sections] = _SECTION
    code = np.full(len(found), -1, dtype=np.int64)
    code[looked] = codes
    kind[looked] = np.array(distinct.kinds, dtype=np.int8)[codes]
    if _RULE1 in distinct.kinds:
        _one_run_rules(kind)
    headless = _headless(kind, code, elided) if elided is not None and len(elided) else ()
    repeated = _repeated(kind, code, distinct.old_summaries)
    kind[repeated] = _SECTION  # (closes the table as a kernel line does; starts no launch)
    headings = (kind == _SECTION) & ~repeated
    events = np.flatnonzero(kind >= _LAUNCH)
    launches = np.flatnonzero(kind[events] == _LAUNCH)
    if not len(launches):
        none = np.zeros(0, dtype=np.int64)
        return Walk(
            [],
            none,
            np.zeros(0),
            nvtx,
            np.flatnonzero(headings),  # (tables of no launch: said in a refusal)
            none,
            none,
            none,
            none,
            none,
            distinct.texts,
            list(distinct.widths),
        )
    events = events[launches[0] :]
    event_kind = kind[events].astype(np.int64)
    after = _states(event_kind)
    before = np.concatenate(([_CLOSED], after[:-1]))
    opened = np.where((event_kind == _RULE3) & (before == _CLOSED), np.arange(len(events)), 0)
    opener = np.maximum.accumulate(opened)
    rows = np.flatnonzero(kind == _ROW)
    rows = rows[rows > events[0]]
    last = np.searchsorted(events, rows) - 1  # the structural line above each row
    inside = after[last] != _CLOSED
    rows, last = rows[inside], last[inside]
    at = events[event_kind == _LAUNCH]
    return Walk(
        launches=[_named(data, found, a, distinct.shapes[code[a]]) for a in at.tolist()],
        kernel_lines=at,
        counts=_counts(code[at], distinct.texts),
        nvtx_lines=nvtx,
        section_lines=np.flatnonzero(headings),
        section_texts=code[headings],
        rows=rows,
        launch=np.cumsum(event_kind == _LAUNCH)[last] - 1,
        line=code[rows],
        table=np.array(distinct.tables, dtype=np.int64)[code[events[opener[last]]]],
        texts=distinct.texts,
        widths=list(distinct.widths),
        headless=headless,
    )


def _headless(kind: np.ndarray, code: np.ndarray, elided: np.ndarray) -> tuple[int, ...]:
    """Make each elision mark right under a `Section:` line whose rows run to a rule that
    closes them open their table (`_RULE3`), the widths that rule's: the paste cut out the
    table's header and opening rule, and ncu rules the foot of a table as its head, so its rows
    (each a metric's name, unit and values) are cut by the foot. The rule must be the first
    structural line below the mark, not right under it, and not over a header (then it opens
    a table: the mark stood for rows alone). The marks made so, as indices."""
    structural = np.flatnonzero(kind >= _LAUNCH)
    made = []
    for i in elided.tolist():
        if i == 0 or kind[i - 1] != _SECTION:
            continue
        at = int(np.searchsorted(structural, i, side="right"))
        j = int(structural[at]) if at < len(structural) else -1
        over = kind[structural[at + 1]] if at + 1 < len(structural) else _NOTHING
        if j > i + 1 and kind[j] == _RULE3 and over != _HEADER:
            kind[i], code[i] = _RULE3, code[j]
            made.append(i)
    return tuple(made)


def _counts(codes: np.ndarray, texts: list[str]) -> np.ndarray:
    """Per launch (its kernel line's distinct-line number in `codes`), the launches its line
    sums up (`invocations`): each distinct kernel line read once, not once per launch."""
    distinct, back = np.unique(codes, return_inverse=True)
    return np.array([invocations(texts[c]) for c in distinct.tolist()], dtype=float)[back]


def _one_run_rules(kind: np.ndarray) -> None:
    """Make each rule of one dash run (`_RULE1`) one that opens a table (`_RULE3`, its widths
    the one run) when a `Section:` line is right above it, as ncu's rule under a section title
    is; else a rule that only closes (`_RULE`): program output's `-----` opens nothing."""
    at = np.flatnonzero(kind == _RULE1)
    under = kind[np.maximum(at - 1, 0)] == _SECTION
    kind[at] = np.where(under, _RULE3, _RULE)  # (a rule on line 1 is under itself: _RULE)


def _repeated(kind: np.ndarray, code: np.ndarray, old_summaries: list[int]) -> np.ndarray:
    """Which lines repeat the kernel line above them in ncu 2020.x-2021.x's summary, which
    writes its kernel's line again above each section: one kernel, not a launch per section."""
    repeated = np.zeros(len(kind), dtype=bool)
    at = np.flatnonzero(kind == _LAUNCH)
    if not old_summaries or len(at) < 2:
        return repeated
    same = (code[at[1:]] == code[at[:-1]]) & np.isin(code[at[1:]], old_summaries)
    repeated[at[1:][same]] = True
    return repeated


def _named(data: bytes, found: lines.Lines, at: int, shape: Shape) -> Shape:
    """A launch's shape, named by the line above its kernel line when that line holds only the
    launch shape (a pasted result whose kernel name was wrapped onto a line of its own), a note
    after that name left out as after any line (`without_note`)."""
    if shape[0] or not at:
        return shape
    above = data[found.start[at - 1] : found.end[at - 1]].decode("utf-8")
    return without_note(above).strip(), shape[1], shape[2]


def _looked_at(
    data: bytes, found: lines.Lines, every: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lines to look at in Python, the `Section:` lines (nothing else in them counts), and
    the lines led by `NVTX Sta` or `NVTX Pus` (a title indented past `lines.LEAD_LIMIT` is not
    ncu's).

    Looked at: lines with `, Context ` in them (kernel lines), lines whose lead is not known
    (`lines.UNKNOWN`: not ASCII, or long), rules (led by `-`), headers (led by `Metric N`) and
    rows whose first 8 characters are a mapped metric's (6 of `SM [%]`, `SOL FB`); with
    `every`, every line that is not blank. Any other line is blank, advice, program output or a
    row of no mapped metric: it moves nothing and gives no value."""
    word = found.prefix(8)
    context = np.zeros(len(found), dtype=bool)
    offsets = [m.start() for m in _CONTEXT.finditer(data)]
    context[np.searchsorted(found.start, np.array(offsets, dtype=np.int64), side="right") - 1] = 1
    looked = np.isin(word, _PREFIXES) | np.isin(word & _SIX_MASK, _SIXES)
    looked |= (found.first == ord("-")) | (word == _HEADER_WORD)
    looked |= context | (found.lead == lines.UNKNOWN)
    if every:
        looked |= found.lead != lines.BLANK_LINE
    section = (word == _SECTION_WORD) & ~looked
    return (
        np.flatnonzero(looked),
        np.flatnonzero(section),
        np.flatnonzero(np.isin(word, _NVTX_WORDS)),
    )


def _distinct(data: bytes, found: lines.Lines, looked: np.ndarray) -> tuple[np.ndarray, _Distinct]:
    """Each looked-at line's number among the distinct ones (a table's rules and rows repeat
    from launch to launch), and what each distinct line is: lines of up to `_SHORT` bytes
    grouped by their bytes with NumPy (`byte_spans.factorize`), longer ones (and all, should
    two lines share a hash) by their text in a dict, each decoded once (a page of 20,000 deeply
    indented lines is 200 MB of them: a copy of their bytes kept beside the text cost 1 s)."""
    start, end = found.start[looked], found.end[looked]
    short = end - start <= _SHORT
    keys = np.zeros(len(looked), dtype=np.int64)
    rows = np.flatnonzero(short)
    grouped = byte_spans.factorize(
        np.frombuffer(data, dtype=np.uint8), start[rows], (end - start)[rows]
    )
    if grouped is None:
        rows = np.zeros(0, dtype=np.int64)
    else:
        keys[rows] = grouped[0]
    rest = np.setdiff1d(np.arange(len(looked)), rows, assume_unique=True)
    first, first_texts = _first_places(data, start[rest], end[rest])
    keys[rest] = len(looked) + first  # (apart from the codes of short lines)
    codes, _ = pd.factorize(keys)
    firsts = byte_spans.first_rows(codes)
    long_texts = dict(zip(rest[list(first_texts)].tolist(), first_texts.values(), strict=True))
    distinct = _Distinct(notes=_NOTE.encode() in data)
    for row, a, b in zip(
        firsts.tolist(), start[firsts].tolist(), end[firsts].tolist(), strict=True
    ):
        text = long_texts.get(row)
        distinct.add(data[a:b].decode("utf-8") if text is None else text)
    return codes.astype(np.int64), distinct


def _first_places(
    data: bytes, start: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, dict[int, str]]:
    """For the lines `data[start[i]:end[i]]`: the place of the first line with each line's text,
    and the text at each such first place."""
    view = memoryview(data)
    texts = (str(view[a:b], "utf-8") for a, b in zip(start.tolist(), end.tolist(), strict=True))
    numbers: dict[str, int] = {}  # each text's first place
    first = np.array(list(map(numbers.setdefault, texts, range(len(start)))), dtype=np.int64)
    return first, {place: text for text, place in numbers.items()}


def _kind(line: str) -> tuple[int, Shape | None, tuple[int, ...] | None]:
    """What a line is to the walk, and its launch shape (`_LAUNCH`) or rule widths (`_RULE3`)."""
    shape = launch_shape(line)
    if shape is not None:
        return _LAUNCH, shape, None
    stripped = line.strip()
    if not stripped:
        return _NOTHING, None, None
    if stripped.startswith("Section:"):
        return _SECTION, None, None
    if stripped.startswith("-") and not stripped.strip("- "):
        runs = [len(run) for run in stripped.split()]
        if len(runs) in (3, 5):  # name, unit, value; or name, unit, Minimum, Maximum, Average
            return _RULE3, None, tuple(runs)
        if len(runs) == 1:  # (a table's rule cut short, or any other line of dashes)
            return _RULE1, None, tuple(runs)
        return _RULE, None, None
    if stripped.startswith("Metric Name") and stripped.endswith(("Metric Value", "Average")):
        return _HEADER, None, None
    return _ROW, None, None


def _states(kinds: np.ndarray) -> np.ndarray:
    """The walk's state after each structural line (kinds from `_LAUNCH` on), from no table
    open: the moves composed by doubling (each line's move with the 1, 2, 4, ... before it)
    until every line's composition reaches back to the start or to a move that forgets the
    state (a kernel line, a `Section:` line), which comes within a few lines."""
    moves = _CODES[kinds - _LAUNCH]
    step = 1
    while step < len(moves):
        moves[step:] = _COMPOSED[moves[step:], moves[:-step]]
        step *= 2
        if _CONSTANT[moves[step:]].all():
            break
    out: np.ndarray = moves % 3
    return out


def without_note(line: str) -> str:
    """`line` up to a note its author wrote after it: `  # ` after something not blank (a row
    named `# SMs` has a note only further on), then words, or one word that is no value (a note
    in Chinese has no blanks: `128  # 若SM占用率低`; `0  # __shared__`), not a unit `#` and its
    right-aligned value (`Registers Per Thread   #     40`)."""
    cut = line.find(_NOTE, len(line) - len(line.lstrip()))
    if cut < 0 or not line[:cut].strip():
        return line
    note = line[cut + len(_NOTE) :]
    if note[:1].isspace() or (len(note.split()) < 2 and _VALUE_CELL.match(note)):
        return line
    return line[:cut].rstrip()


def row_texts(line: str, widths: tuple[int, ...]) -> tuple[str, ...]:
    """The texts to cut a table row from, by its table's `widths` from the right: the row
    without its trailing blanks, and first the row as printed when it ends in blanks and its
    last cell starts with a character (ncu 2020.x-2021.x's summary tables pad every cell to its
    column's width, values left-aligned; later tables right-align them)."""
    line = line.rstrip("\r\n")
    stripped = line.rstrip()
    padded = len(line) > len(stripped) and len(line) > widths[-1]
    if padded and line[-widths[-1]] != " ":
        return line, stripped
    return (stripped,)


def blank_cells(line: str) -> tuple[str, str, str] | None:
    """A row of a table whose rule is one dash run, cut at its runs of two or more blanks: name,
    unit and value, or name and value (unit "", as ncu leaves a count's unit blank); None for a
    row of any other number of cells (no cell of ncu's holds two blanks in a row)."""
    cells = [cell.strip() for cell in line.split("  ")]
    cells = [cell for cell in cells if cell]
    if len(cells) == 3:
        return cells[0], cells[1], cells[2]
    if len(cells) == 2:
        return cells[0], "", cells[1]
    return None


def invocations(line: str) -> float:
    """How many launches a per-kernel summary's kernel line sums up (`name (grid)x(block),
    Invocations 300`; ncu 2020.x-2021.x's `name, Block Size 256, Grid Size 8192, 1
    invocations`), NaN for any other line (a launch's own)."""
    tail = _COUNT.search(line[-_MAX_TAIL:].rstrip())
    return float("nan") if tail is None else float(tail[1] or tail[2])


def bare(line: str) -> bool:
    """Whether a kernel line is one edited down to `name (grid)x(block), CC 8.9`."""
    return ", Context " not in line and bool(_BARE_TAIL.search(line.rstrip()))


def launch_shape(line: str) -> Shape | None:
    """The name, grid and block of the kernel a result line names (`name, <time>, Context 1,
    Stream 7`, `name (grid)x(block), Context 1, Stream 7, Device 0, CC 8.6`, a per-kernel
    summary's `name (grid)x(block), Device 0, CC 8.9, Invocations 14` (or `name (grid)x(block),
    Invocations 14` under a `Device 0, CC 9.0` line), or a pasted line edited down to `name
    (grid)x(block), CC 8.9`; ncu 2020.x-2021.x's summary line `name, Block Size 256, Grid Size
    8192, 1 invocations`, its sizes as grid and block), or None for any other line."""
    if "," not in line:  # (every tail has one: one fast scan, not four, of a long line without)
        return None
    cut = line.rfind(", Context ")
    if cut < 0 or not _KERNEL_TAIL.search(line[cut : cut + _MAX_TAIL]):
        cut = line.rfind(", Device ")
        if cut < 0 or not _SUMMARY_TAIL.search(line[cut : cut + _MAX_TAIL]):
            return _old_summary_shape(line) or _bare_shape(line) or _grouped_summary_shape(line)
    head = line[:cut].strip()
    shaped = _with_shape(head)
    if shaped is not None:
        return shaped
    date = _DATE.search(head[-_MAX_TAIL:])
    head = head[: len(head) - len(date[0])] if date else head
    return head.strip(), None, None


def _old_summary_shape(line: str) -> Shape | None:
    """The name, grid and block size of ncu 2020.x-2023.x's summary line (`name, Block Size 256,
    Grid Size 8192, 1 invocations`), or None."""
    cut = line.rfind(", Block Size ")
    tail = _OLD_SUMMARY_TAIL.match(line[cut : cut + _MAX_TAIL].rstrip()) if cut >= 0 else None
    if tail is None:
        return None
    return line[:cut].strip(), tail[2], tail[1]


def _grouped_summary_shape(line: str) -> Shape | None:
    """The name, grid and block of a per-kernel summary's line under a `Device 0, CC 9.0` line of
    its own (`name (grid)x(block), Invocations 300`; the launch shape is needed, as for a bare
    line), or None."""
    cut = line.rfind(", Invocations ")
    if cut < 0 or not _GROUPED_SUMMARY_TAIL.search(line[cut : cut + _MAX_TAIL].rstrip()):
        return None
    return _with_shape(line[:cut].strip())


def _bare_shape(line: str) -> Shape | None:
    """The name, grid and block of a kernel line edited down to `name (grid)x(block), CC 8.9`
    (the launch shape is needed: a bare `, CC 8.9` ends other lines too), or None."""
    cut = line.rfind(", CC ")
    if cut < 0 or not _BARE_TAIL.search(line[cut : cut + _MAX_TAIL]):
        return None
    return _with_shape(line[:cut].strip())


def _with_shape(head: str) -> Shape | None:
    """A kernel line's text before its tail (`head`) as the kernel's name, grid and block, when
    it ends with the launch shape `(grid)x(block)`; else None."""
    shape = _SHAPE.search(f" {head[-_MAX_TAIL:]}")  # (a name wrapped away leaves no blank)
    if shape is None:
        return None
    name = head[: max(len(head) - len(shape[0]), 0)].strip()
    return name, f"({shape[1]})", f"({shape[2]})"
