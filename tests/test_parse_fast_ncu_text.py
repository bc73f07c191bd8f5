"""ncu's text read in bulk (`ncu_walk`, `ncu_text.metric_values`) gives what the line-by-line
walk it replaced gave: the same launches and values, or the same error.

The oracle below is that walk as it was (every line cut in Python, one after another), kept
here only to hold the bulk reader to it, on the real captures under tests/data and on mutated
copies of them: lines dropped, doubled, re-indented, led or ended by non-ASCII blanks, tabbed,
cut short, spaces run long, CRLF line ends, rules of other widths, blank lines; and as people
edit what they paste: kernel lines cut down to `name (grid)x(block), CC 8.9`, notes written
after a row's value (`93.58   # <- memory-bound`).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest
from test_parse_fast_paths import EDITS, mutants

from profiler.errors import ParseError
from profiler.parse import cell_quotes, lines, ncu_metrics, ncu_text, ncu_walk, values

DATA = Path(__file__).parent / "data"
NCU_TEXT = sorted(p for p in (DATA / "ncu").rglob("*") if p.suffix in (".txt", ".output", ".log"))
RULES = {"time": values.TIME, "bytes": values.SIZE, "count": values.COUNT, "pct": values.VALUE}
NAMES = {name: field for field, (_, names) in ncu_metrics.METRICS.items() for name in names}

# --- the oracle: the line-by-line walk ------------------------------------------------------

KERNEL_TAIL = re.compile(r", Context [0-9]+, Stream [0-9]+(?:, Device [0-9]+, CC [0-9.]+)?\Z")
SHAPE = re.compile(r" \(([0-9]+, [0-9]+, [0-9]+)\)x\(([0-9]+, [0-9]+, [0-9]+)\)\Z")
DATE = re.compile(r", [0-9]{4}-[A-Za-z]{3}-[0-9]{2} [0-9:]{8}\Z")
SUMMARY_TAIL = re.compile(r", Device [0-9]+, CC [0-9.]+, Invocations [0-9]+\Z")
BARE_TAIL = re.compile(r", CC [0-9]+\.[0-9]+\Z")
OLD_SUMMARY_TAIL = re.compile(r", Block Size ([0-9]+), Grid Size ([0-9]+), [0-9]+ invocations\Z")


def plain_shape(head: str) -> tuple[str, str | None, str | None] | None:
    shape = SHAPE.search(" " + head[-120:])
    if shape is None:
        return None
    return head[: max(len(head) - len(shape[0]), 0)].strip(), f"({shape[1]})", f"({shape[2]})"


def plain_bare_launch(line: str) -> tuple[str, str | None, str | None] | None:
    """A kernel line edited down to `name (grid)x(block), CC 8.9`: its launch shape needed."""
    cut = line.rfind(", CC ")
    if cut < 0 or not BARE_TAIL.search(line[cut : cut + 120]):
        return None
    return plain_shape(line[:cut].strip())


def plain_note_off(line: str) -> str:
    """`line` without a note after it: `  # ` after something not blank, then two or more
    words, or one that is not a value's cell (a number, `(!) n/a`, `n/a`)."""
    lead = len(line) - len(line.lstrip())
    before, mark, note = line[lead:].partition("  # ")
    if not mark or not before.strip() or note[:1].isspace():
        return line
    if len(note.split()) < 2 and re.match(r"[0-9(.+-]|n/a", note):
        return line
    return (line[:lead] + before).rstrip()


def plain_old_summary(line: str) -> tuple[str, str | None, str | None] | None:
    """ncu 2021.x's summary line `name, Block Size 256, Grid Size 8192, 1 invocations`."""
    cut = line.rfind(", Block Size ")
    tail = OLD_SUMMARY_TAIL.match(line[cut : cut + 120].rstrip()) if cut >= 0 else None
    return None if tail is None else (line[:cut].strip(), tail[2], tail[1])


def plain_launch(line: str) -> tuple[str, str | None, str | None] | None:
    cut = line.rfind(", Context ")
    if cut < 0 or not KERNEL_TAIL.search(line[cut : cut + 120]):
        cut = line.rfind(", Device ")
        if cut < 0 or not SUMMARY_TAIL.search(line[cut : cut + 120]):
            return plain_old_summary(line) or plain_bare_launch(line)
    head = line[:cut].strip()
    shaped = plain_shape(head)
    if shaped is not None:
        return shaped
    date = DATE.search(head[-120:])
    head = head[: len(head) - len(date[0])] if date else head
    return head.strip(), None, None


def plain_fits(row: str, widths) -> int | None:
    """Where a row's unit cell ends, cut from the right by `widths`; None when it does not fit
    (no blank before each value cell, a summary's Minimum and Maximum included, or the unit's)."""
    unit_width = widths[1]
    end = len(row)
    for width in reversed(widths[2:]):
        end -= width + 1
        if end < 0 or row[end] != " ":
            return None
    if end < unit_width + 1 or row[end - unit_width - 1] != " ":
        return None
    return end


def plain_cells(line: str, widths) -> tuple[str, str, str] | None:
    """A row's name, unit and value cell, cut by `widths` from the right; a table of one width
    (its rule one dash run) cut at runs of two blanks. None when it does not fit."""
    if len(widths) == 1:
        cells = [cell.strip() for cell in line.split("  ") if cell.strip()]
        if len(cells) not in (2, 3):
            return None
        return (cells[0], "", cells[1]) if len(cells) == 2 else (cells[0], cells[1], cells[2])
    unit_width, value_width = widths[1], widths[-1]
    raw = line.rstrip("\r\n")
    tries = [raw.rstrip()]  # the row as printed first when its blank-padded last cell starts
    if len(raw) > len(tries[0]) and len(raw) > value_width and raw[-value_width] != " ":
        tries.insert(0, raw)  # (ncu 2021.x's summary: cells padded, values left-aligned)
    fits = [(row, end) for row in tries if (end := plain_fits(row, widths)) is not None]
    if not fits:
        return None
    row, unit_end = fits[0]
    name = row[: unit_end - unit_width - 1].strip()
    return name, row[unit_end - unit_width : unit_end].strip(), row[-value_width:].strip()


def plain_metric(line: str, widths, number: int, kept: dict, path: Path) -> None:
    cells = plain_cells(line, widths)
    if cells is None:
        if line.strip().split("  ", 1)[0] in NAMES:
            raise ParseError(
                path, ncu_text.EXPECTED, f"line {number}: a metric row does not fit its table"
            )
        return
    name, unit, cell = cells
    target = NAMES.get(name)
    if target is None:
        return
    if cell.endswith("n/a") or target in kept:
        return
    kind = ncu_metrics.METRICS[target][0]
    try:
        factor = ncu_metrics.unit_factor(kind, unit, path, name)
        kept[target] = values.scalar(cell, RULES[kind], factor)
    except ValueError as exc:
        detail = f"line {number}, metric {name!r}: {exc}"
        hint = cell_quotes.locale_hint(detail)  # (a decimal comma: how to print it)
        raise ParseError(path, ncu_text.EXPECTED, hint or detail) from None


def plain_kernels(text: str, path: Path) -> list:
    """Every launch's (name, grid, block) and values, walking every line in Python."""
    kernels: list = []
    widths = None
    header_next = False
    above = last_launch = ""
    for number, raw in enumerate(text.split("\n"), 1):
        line, above_this = plain_note_off(raw.rstrip("\r")), above
        above = line
        launch = plain_launch(line)
        if launch is not None and not launch[0] and number > 1:  # the name wrapped above
            launch = (above_this.strip(), launch[1], launch[2])
        if launch is not None:
            repeat = raw == last_launch and plain_old_summary(line) is not None
            last_launch = raw  # (ncu 2021.x's summary writes its kernel's line above each section)
            if not repeat:
                kernels.append((launch, {}))
            widths = None
            continue
        if not kernels:
            continue
        stripped = line.strip()
        if stripped.startswith("Section:"):
            widths = None
        elif stripped.startswith("-") and not stripped.strip("- "):
            runs = [len(run) for run in stripped.split()]
            under = len(runs) == 1 and above_this.strip().startswith("Section:")
            if widths is None and (len(runs) in (3, 5) or under):
                widths, header_next = tuple(runs), False
            elif widths is not None and not header_next:
                widths = None
            header_next = False
        elif widths is not None and stripped:
            headers = ("Metric Value", "Average")
            if stripped.startswith("Metric Name") and stripped.endswith(headers):
                header_next = True
                continue
            plain_metric(line, widths, number, kernels[-1][1], path)
    return kernels


# --- the bulk reader, in the oracle's terms ----------------------------------------------------


def bulk_kernels(text: str, path: Path) -> list:
    data = text.encode("utf-8")
    walk = ncu_walk.walk(data, lines.split(data))
    found = ncu_text.metric_values(walk, path)
    return [
        (shape, {name: float(v[i]) for name, v in found.items() if not np.isnan(v[i])})
        for i, shape in enumerate(walk.launches)
    ]


def outcome(func, *args):
    try:
        return "ok", func(*args)
    except ParseError as exc:
        return "error", str(exc)


def assert_same(text: str, path: Path) -> None:
    assert outcome(bulk_kernels, text, path) == outcome(plain_kernels, text, path)


# --- inputs ---------------------------------------------------------------------------------

# `mutants`' changes, and more: non-ASCII blanks at a line's end, long runs of spaces, rules
# cut or split, blank lines, non-ASCII letters, carriage returns.
HOSTILE = [
    *EDITS,
    lambda s: s + "\u3000",
    lambda s: s + " " * 70,
    lambda s: s.replace(" ", " " * 300, 1),
    lambda s: s.replace("-", "", 1),
    lambda s: s.replace("- -", "-- ", 1),
    lambda s: s.replace("-", "- ", 1),
    lambda s: f"{s}\n\n  \n",
    lambda s: s.replace("e", "é", 1),
    lambda s: s + "\r",
    *(PASTED := [
        lambda s: s[: s.find(", Context ")] + ", CC 8.9" if ", Context " in s else s,
        lambda s: s.rstrip() + ", CC 7.0",
        lambda s: s.rstrip() + "   # <- memory-bound",
        lambda s: s + "  # note",
        lambda s: s + "  #  two words",
        lambda s: "  # a b " + s,
        lambda s: s.replace("  ", "  # x y", 1),
    ]),
]  # fmt: skip


@pytest.mark.parametrize("path", NCU_TEXT, ids=lambda p: p.name)
def test_bulk_reads_what_the_line_by_line_walk_read(path, monkeypatch):
    monkeypatch.setattr(lines, "_SLICE", 61)
    for text in mutants(path.read_text(encoding="utf-8"), len(path.name), 60, HOSTILE):
        assert_same(text, path)


@pytest.mark.parametrize("path", NCU_TEXT, ids=lambda p: p.name)
def test_pasted_edits_on_every_line_are_read_as_the_walk_reads_them(path):
    """Each paste edit (`PASTED`) made to every line at once: every kernel line cut down to
    `, CC 8.9`, a note after every row (a few lines drawn at random seldom hit a kernel line)."""
    rows = path.read_text(encoding="utf-8").split("\n")
    for edit in PASTED:
        assert_same("\n".join(edit(row) for row in rows), path)


@pytest.mark.parametrize("path", NCU_TEXT, ids=lambda p: p.name)
def test_bulk_reads_launches_again_as_the_first_time(path):
    """The capture three times over, one line of one copy changed (a rule, a row, a kernel
    line): distinct rows are cut once, and each copy is read as the walk reads it."""
    text = "\n".join([path.read_text(encoding="utf-8")] * 3)
    for changed in mutants(text, len(path.name) + 1, 40, HOSTILE):
        assert_same(changed, path)


def test_a_row_under_other_widths_is_cut_by_them():
    """One row in tables of two kernels whose rules differ: each cut by its own table."""
    row = "    Duration            usecond   12.50"
    for unit, value in [(a, b) for a in range(12) for b in range(3, 9)]:
        text = "".join(
            f"k{i} (1, 1, 1)x(1, 1, 1), Context 1, Stream 7, Device 0, CC 8.6\n"
            f"    Section: S\n    {rule}\n    Metric Name Metric Unit Metric Value\n"
            f"    {rule}\n{row}\n    {rule}\n"
            for i, rule in enumerate(
                [
                    "-" * 8 + " " + "-" * 9 + " " + "-" * 5,
                    "-" * 8 + " " + "-" * unit + " " + "-" * value,
                ]
            )
        )
        assert_same(text, Path("x"))


# Lines of every kind to the walk, with how often each is drawn: the rows fit the tables of
# the first rule; a table of the second rule makes a mapped row a misfit (an error).
STRUCTURE = {
    "k (1, 1, 1)x(1, 1, 1), Context 1, Stream 7, Device 0, CC 8.6": 1,
    "    Section: S": 2,
    "    -------- ------- -----": 12,
    "    -------------------- --------------- -----": 1,
    "    -- --": 3,
    "    Metric Name Metric Unit Metric Value": 6,
    "    Duration usecond   1.5": 4,
    "    Duration usecond   n/a": 2,
    "    Duration usecond   2.5": 4,
    "    SM [%]         %     7": 4,
    "    SM [%]         %   bad": 1 / 20,
    "    Registers Per Thread       #    40": 3,
    "": 2,
    "    other row": 2,
}


@pytest.mark.parametrize("seed", range(60))
def test_random_structure_is_walked_as_line_by_line(seed):
    """Kernel lines, sections, rules, headers and rows in any order and number: long runs
    of rules and headers with no kernel line or `Section:` between them (`ncu_walk._states`
    composes the most moves there)."""
    rng = random.Random(seed)
    count = rng.choice([5, 50, 400, 3000])
    text = "\n".join(rng.choices(list(STRUCTURE), weights=list(STRUCTURE.values()), k=count))
    assert_same(text, Path("x"))


def test_fixtures_have_launches_and_values():
    """(The comparisons above are not between empty lists.)"""
    results = [outcome(plain_kernels, p.read_text(encoding="utf-8"), p) for p in NCU_TEXT]
    read = [kernels for status, kernels in results if status == "ok"]  # (one is a refusal)
    assert sum(len(k) for k in read) >= 10
    assert sum(len(found) for kernels in read for _, found in kernels) >= 30


def plain_launch_ids(text: str, count: int) -> list[int]:
    """ncu_text's launch numbers as they were found: `str.find` over the whole text."""
    ids = []
    mark = '==PROF== Profiling "'
    at = text.find(mark)
    while at >= 0:
        after, at = at + len(mark), text.find(mark, at + 1)
        if after > len(mark) and text[after - len(mark) - 1] != "\n":
            continue
        end = text.find("\n", after)
        line = text[after : end if end >= 0 else len(text)]
        cut = line.rfind('" - ')
        number = line[cut + 4 :].split(":", 1)[0] if cut >= 0 else ""
        if number.isdigit() and len(number) < 12:
            ids.append(int(number))
    return ids if len(ids) == count else list(range(count))


PROF = [
    '==PROF== Profiling "k" - 4: 0%....50%....100% - 8 passes',
    '==PROF== Profiling "k - 1" - 5: 0%',
    '==PROF== Profiling "k" - 6',
    '==PROF== Profiling "k" - 7\r',
    '==PROF== Profiling "k" - x: 0%',
    'out ==PROF== Profiling "k" - 9: 0%',
    ' ==PROF== Profiling "k" - 9: 0%',
    '==PROF== Profiling "é" - 12345678901234: 0%',
    "==PROF== Connected to process 1",
    "",
]


@pytest.mark.parametrize("seed", range(30))
def test_launch_ids_are_found_as_by_str_find(seed):
    rng = random.Random(seed)
    text = "\n".join(rng.choices(PROF, k=rng.randint(0, 12)))
    data = text.encode("utf-8")
    for count in range(6):
        numbers = ncu_text._profiled(data, lines.split(data))
        assert ncu_text._launch_ids(numbers, count) == plain_launch_ids(text, count)
