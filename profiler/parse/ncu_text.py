"""Nsight Compute's default text output (`ncu ./app`, `ncu --import x.ncu-rep`) -> `schema.METRICS`.

What ncu prints, from 2019.x to 2025.x: its own `==PROF==` lines mixed with the program's output,
then per kernel launch a line naming the kernel and one table per section:

      row_sums(const float *, float *, unsigned long), 2022-Jun-02 19:46:33, Context 1, Stream 7
        Section: GPU Speed Of Light Throughput
        ----------------------------------------------- --------------- ----------------
        Duration                                                msecond            11.97

Since 2022.x the kernel line carries the launch shape instead of the time (`name (64, 1, 1)x(256,
1, 1), Context 1, Stream 7, Device 0, CC 8.6`) and each table has a `Metric Name  Metric Unit
Metric Value` header between two rules. Rows may be indented deeper than their rule (2022.x);
the name is left-aligned, unit and value right-aligned, so a row is cut from its right end by
the widths of the rule's three dash runs. `WRN`/`INF`/`OPT` advice, tables of other shapes and
the program's output are skipped. A `--metrics` run gives the same tables (`Section: Command
line profiler metrics`, raw metric names). `--print-summary per-kernel` prints one line per
kernel (`name (grid)x(block), Device 0, CC 8.9, Invocations 14`, or, under a `Device 0, CC 9.0`
line of its own, `name (grid)x(block), Invocations 300`) and tables of five columns (`Metric
Name  Metric Unit  Minimum  Maximum  Average`): one row per kernel, of its `Average`s, as from
the --csv summary. ncu 2020.x-2021.x wrote its summary under a `Device 0` line, the
kernel's line (`name, Block Size 256, Grid Size 8192, 1 invocations`: block and grid as sizes)
again above each section, and every cell padded to its column's width, values left-aligned.

Mapped to `schema.METRICS`:

| METRICS column | ncu metrics (display names of all versions, raw names) |
| --- | --- |
| duration_ns | `Duration` (`usecond`, `msecond`, `second`, `us`, ...), `gpu__time_duration.sum` |
| dram_throughput_pct | `DRAM Throughput`, `SOL DRAM`, `SOL FB`, `gpu__dram_`/`dram__throughput` |
| sm_throughput_pct | `Compute (SM) Throughput`, `Compute (SM) [%]`, `SM [%]`, `sm__throughput` |
| achieved_occupancy_pct | `Achieved Occupancy`, `sm__warps_active` (pct of peak, active) |
| registers | `Registers Per Thread`, `launch__registers_per_thread` |
| dram_read_bytes, _write_ | `dram__bytes_read.sum`, `_write.sum` (CC 12.x: `dram__bytes_op_*`) |
| fp32_flops | 2 * ffma + fadd + fmul thread instructions executed (`smsp__sass_...`) |

`SOL FB` is `dram__throughput` from ncu 2019.3.1 on (its release notes); 2019.1-2019.3 drove it
by `fbpa__throughput` (the frame-buffer partitions'), which a page does not tell apart.

Not mapped, as METRICS has no column for them: `Memory Throughput` / `Memory [%]` (the busiest
of the memory units, not DRAM alone), the L1/L2 throughputs, cycles and frequencies,
theoretical occupancy, launch sizes other than grid and block, and every other section. With
`--nvtx`, ncu prints a launch's NVTX ranges above its sections (`NVTX Start/End Ranges:`,
`<default domain>`, `<0,convLayer>`): they give `range` as the CSV's NVTX columns do
(`ncu_nvtx`: profgen's innermost range, else the user's); without them `range` is missing. `n/a`
and `(!) n/a` are missing values. ncu's text numbers the launches only in its `==PROF==
Profiling "name" - N` lines: those numbers are the launch IDs when they match the launches
found, else launches are numbered in file order from 0. A pasted result whose kernel lines were
cut down to `name (grid)x(block), CC 8.9` is read with a warning (`reader_notes.ReadNote`) that they
lack `Context N, Stream N`; a note its author wrote after a row (`93.58   # <- ...`) is dropped.
A paste that stripped every line's indent (kernel line, `Section:` lines, rows at column 0) is
read as the indented text: its `Section:` lines are known by ncu's rule of dashes under them.
A text printed in a locale with a decimal comma (`10,55`, `13 181 137`) is read so when the plain
read fails or an unmapped counter shows it (`ncu_comma`: the page judged once, by section where
it mixes forms), said in a warning; its counters' `text` is each cell as printed (`10,55`).

An output with no kernel results is refused with the line ncu itself wrote about it (`==ERROR==
ERR_NVGPUCTRPERM ...`, `==WARNING== No kernels were profiled.`).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import (
    byte_spans,
    cell_quotes,
    csvtext,
    lines,
    ncu_comma,
    ncu_elided,
    ncu_metrics,
    ncu_nvtx,
    ncu_says,
    ncu_text_counters,
    ncu_walk,
    reader_notes,
    table_origin,
    values,
)

EXPECTED = "Nsight Compute output (ncu's per-kernel `Section:` tables, or ncu --csv)"

_TOOL_LINE = re.compile(r"^[ \t]*==(?:PROF|ERROR|WARNING)==", re.MULTILINE)  # (indented: RST)
_SECTION = re.compile(r"^[ \t]+Section: ", re.MULTILINE)
# A paste that stripped the indent: a `Section:` line at the start of a line with ncu's rule
# of dashes under it, and a kernel line (a flush-left table alone is an excerpt, `unusable_ncu`).
_FLUSH_SECTION = re.compile(r"^Section: [^\n]*\n-{3,} ", re.MULTILINE)
_KERNEL_LINE = re.compile(r", Context [0-9]+, Stream [0-9]+")
_RULES = {"time": values.TIME, "bytes": values.SIZE, "count": values.COUNT, "pct": values.VALUE}
_NO_KERNEL = "no kernel results in it (a line `<kernel>, Context N, Stream N` with Section: tables)"
_TARGETS = list(ncu_metrics.METRICS)
# What a row gives besides a METRICS column's number (`_cut_row`, `_targets`).
_NO_VALUE, _MISFIT = -1, -2
# The text read again with a decimal comma (`_with_decimal_comma`).
_CommaRead = tuple[ncu_comma.Rewritten, lines.Lines, ncu_walk.Walk, dict[str, np.ndarray]]
# A mapped metric's row: its name, the METRICS column it gives, its unit and its value cell.
Cut = tuple[str, str, str, str]


def recognise(head: str) -> bool:
    """Whether the start of a file looks like ncu's text output: its `==PROF==`, `==ERROR==`,
    `==WARNING==` lines (indented too, as a block of RST or Markdown quotes them) or a
    `Section:` line (flush left: with its rule and a kernel line)."""
    if _TOOL_LINE.search(head) or _SECTION.search(head):
        return True
    return bool(_FLUSH_SECTION.search(head) and _KERNEL_LINE.search(head))


def read_metrics(path: str | Path, stage: str) -> pd.DataFrame:
    """Read ncu's text output (see the module docstring for what is mapped).

    Args:
        path: the captured output, with whatever the program printed around it.
        stage: the stage key written into every row.

    Returns: DataFrame with `schema.METRICS` columns, one row per kernel launch.

    Raises: ParseError when the file's first 64 KiB hold no ncu line, ncu profiled nothing (the
        message quotes ncu's own error or warning line), a metric row does not fit its table, or
        a mapped value is no number in range (naming its line).
    """
    return _read(path, stage, every=False)[0][schema.METRICS.name]


def read_tables(path: str | Path, stage: str) -> dict[str, pd.DataFrame]:
    """Read ncu's text output: `metrics` as `read_metrics` gives it, and `counters`, every row
    of its tables that fits their columns (`ncu_text_counters`).

    Raises: ParseError as `read_metrics`.
    """
    return _read(path, stage, every=True)[0]


def read_placed(path: str | Path, stage: str) -> tuple[dict[str, pd.DataFrame], Placed]:
    """`read_tables`, and where each launch is in the file (`Placed`: what `ncu_runs` splits
    the tables into runs by).

    Raises: ParseError as `read_metrics`.
    """
    return _read(path, stage, every=True)


def _no_kernel(walk: ncu_walk.Walk) -> str:
    """Why a text with no kernel line gives nothing: its `Section:` tables, when it has some,
    belong to no launch (a paste that left ncu's kernel lines out)."""
    count = len(walk.section_lines)
    if not count:
        return _NO_KERNEL
    return (
        f"its {count} `Section:` table(s), the first at line {int(walk.section_lines[0]) + 1}, "
        "have no kernel line above them as ncu writes one (`<kernel> (grid)x(block), Context N, "
        "Stream N`; left out of this paste): no launch to give their values to"
    )


@dataclass(frozen=True)
class Placed:
    """The launches of a text: each one's `kernel_id`, the line index of its kernel line, the
    text's bytes (as read: a decimal comma's cells as profgen read them), and the launch (its
    index in file order, as `metrics` has one row each) of each `counters` row, so that runs
    whose IDs repeat can be told apart."""

    ids: list[int]
    kernel_lines: np.ndarray
    data: bytes
    counter_launches: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def _read(path: str | Path, stage: str, every: bool) -> tuple[dict[str, pd.DataFrame], Placed]:
    """`metrics`, and with `every` `counters` (`read_tables`); and where each launch is.

    Raises: ParseError as `read_metrics`.
    """
    path = Path(path)
    head = csvtext.read_head(path, EXPECTED)
    if not recognise(head):
        raise ParseError(path, EXPECTED, "no ==PROF== line nor Section: table at its start")
    data = csvtext.read_utf8(path, EXPECTED)
    split = lines.split(data)
    walk = ncu_walk.walk(data, split, every, ncu_elided.marks(split))
    if not walk.launches:
        text = data.decode("utf-8")
        raise ParseError(path, EXPECTED, ncu_says.nothing_profiled(text, _no_kernel(walk)))
    again: _CommaRead | None = None
    try:
        found = metric_values(walk, path)
    except ParseError as exc:  # a mapped metric's cell may show a decimal comma
        again = _with_decimal_comma(data, split, every, path)
        if again is None:
            raise _with_ncu_error(exc, data) from None
    if again is None and ncu_comma.may_show(_table_rows(walk, data, split)):  # or any other
        again = _with_decimal_comma(data, split, every, path)
    printed: dict[int, str] = {}  # the lines read with a decimal comma, as printed
    if again is not None:
        comma, split, walk, found = again
        data, printed = comma.data, comma.printed
    names, grids, blocks = zip(*walk.launches, strict=True)
    names = _without_stray_bracket(names, walk)
    numbers = _profiled(data, split)
    ids = _launch_ids(numbers, len(walk.launches))
    _note_unprinted(numbers, len(walk.launches), data)
    _note_bare(data, split, walk, ids)
    _note_empty(walk, names)
    ncu_elided.note(split, walk)
    launches = pd.DataFrame(
        {
            "ID": [str(i) for i in ids],
            "Kernel Name": list(names),
            "Grid Size": list(grids),
            "Block Size": list(blocks),
        }
    )
    columns = {name: pd.Series(found[name], dtype="float64") for name in _TARGETS}
    ranges = ncu_nvtx.text_ranges(split, walk.kernel_lines, walk.nvtx_lines)
    origin = table_origin.Origin(path, EXPECTED)
    metrics = ncu_metrics.metrics_table(launches, columns, stage, origin, ranges)
    if not every:
        return {schema.METRICS.name: metrics}, Placed(ids, walk.kernel_lines, data)
    in_order = list(range(len(ids)))  # (the rows numbered by launch, then given their IDs)
    counters = ncu_text_counters.text(walk, (in_order, list(names)), stage, printed)
    launches = counters["kernel_id"].to_numpy()
    given = np.asarray(ids, dtype=np.int64)[launches]
    counters = counters.assign(kernel_id=pd.array(given, dtype=counters["kernel_id"].dtype))
    placed = Placed(ids, walk.kernel_lines, data, launches)
    return {schema.METRICS.name: metrics, schema.COUNTERS.name: counters}, placed


def _table_rows(walk: ncu_walk.Walk, data: bytes, split: lines.Lines) -> bytes:
    """The table rows the walk read, each distinct line once (a million rows of a repeated
    kernel are a few hundred lines), and the lines of the tables above the first kernel line
    (a paste that left their kernel lines out, whose cells show the page's locale as well):
    what `ncu_comma.may_show` searches. Not the whole text, whose kernel lines' template
    arguments (`gemm<128,64>`) look like decimal commas and would make every such page be read
    twice."""
    rows = "".join(walk.texts[line] + "\n" for line in np.unique(walk.line).tolist()).encode()
    if not len(walk.section_lines) or walk.section_lines[0] > walk.kernel_lines[0]:
        return rows
    above = data[split.start[walk.section_lines[0]] : split.start[walk.kernel_lines[0]]]
    return rows + bytes(above)


def _with_decimal_comma(
    data: bytes, split: lines.Lines, every: bool, path: Path
) -> _CommaRead | None:
    """The text read again with the value cells of its decimal-comma sections written as C
    writes them (`ncu_comma`): the new text (and the lines it rewrote, as printed), its lines,
    walk and `metric_values`, said by a `reader_notes.ReadNote`; None when no section shows a
    decimal comma.

    Raises: ParseError, the new read's error, when it fails.
    """
    comma = ncu_comma.rewritten(data, split)
    if comma is None:
        return None
    split = lines.split(comma.data)
    walk = ncu_walk.walk(comma.data, split, every, ncu_elided.marks(split))
    try:
        found = metric_values(walk, path)
    except ParseError as again:
        raise _with_ncu_error(again, data) from None
    said = (
        f"line {comma.line}: the `{comma.section}` section's numbers are read with a decimal "
        f"comma ({comma.cell!r}): ncu ran in a locale that writes them so"
    )
    warnings.warn(reader_notes.ReadNote(said, comma.line), stacklevel=3)
    return comma, split, walk, found


def metric_values(walk: ncu_walk.Walk, path: Path) -> dict[str, np.ndarray]:
    """Per METRICS column, each launch's value: from the first row of the launch's tables that
    gives one (`n/a` gives none), converted to the METRICS unit; NaN where no row gives one.
    Each distinct row (line and table widths) is cut once, each distinct cell read once.

    Raises: ParseError for the first row, in file order, that is a mapped metric's and does not
        fit its table, or that gives its launch's value and is no number in range.
    """
    by_pair, _ = pd.factorize(walk.line * max(len(walk.widths), 1) + walk.table)
    firsts = byte_spans.first_rows(by_pair)
    cuts = [
        _cut_row(walk.texts[line], walk.widths[table])
        for line, table in zip(walk.line[firsts].tolist(), walk.table[firsts].tolist(), strict=True)
    ]
    target = np.array([_target(cut) for cut in cuts], dtype=np.int64)[by_pair]
    kept = np.flatnonzero(target >= 0)
    _, first = np.unique(walk.launch[kept] * len(_TARGETS) + target[kept], return_index=True)
    chosen = kept[first]  # the rows that give their launch's values
    number, wrong = _read_cells(cuts, path)
    misfits = np.flatnonzero(target == _MISFIT)
    bad = chosen[wrong[by_pair[chosen]]]
    if len(misfits) or len(bad):  # (chosen is in launch and column order, not file order)
        _raise_at(walk, int(np.concatenate([misfits, bad]).min()), path)
    number = number[by_pair[chosen]]
    found = {name: np.full(len(walk.launches), np.nan) for name in _TARGETS}
    for i, name in enumerate(_TARGETS):
        picked = target[chosen] == i
        found[name][walk.launch[chosen[picked]]] = number[picked]
    return found


def _target(cut: Cut | int) -> int:
    """The METRICS column a row's cut gives (by its place in `_TARGETS`), or `_NO_VALUE`,
    `_MISFIT`."""
    return cut if isinstance(cut, int) else _TARGETS.index(cut[1])


def _read_cells(cuts: list[Cut | int], path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Each cut's value (`_convert`; NaN for none), and whether it is no number in range."""
    read: dict[Cut, float | None] = {}
    number, wrong = np.full(len(cuts), np.nan), np.zeros(len(cuts), dtype=bool)
    for i, cut in enumerate(cuts):
        if isinstance(cut, int):
            continue
        if cut not in read:
            try:
                read[cut] = _convert(cut, path)
            except (ValueError, ParseError):
                read[cut] = None
        got = read[cut]
        if got is None:
            wrong[i] = True
        else:
            number[i] = got
    return number, wrong


def _raise_at(walk: ncu_walk.Walk, row: int, path: Path) -> None:
    """Raise the error of the row `row` (a misfit or a bad value: `metric_values`).

    Raises: ParseError naming the row's line.
    """
    number = int(walk.rows[row]) + 1
    cut = _cut_row(walk.texts[walk.line[row]], walk.widths[walk.table[row]])
    if isinstance(cut, int):
        raise ParseError(path, EXPECTED, f"line {number}: a metric row does not fit its table")
    try:
        _convert(cut, path)
    except ValueError as exc:
        detail = f"line {number}, metric {cut[0]!r}: {exc}"
        raise ParseError(path, EXPECTED, cell_quotes.locale_hint(detail) or detail) from None
    raise AssertionError(f"line {number} read without error")  # pragma: no cover


def _cut_row(line: str, widths: tuple[int, ...]) -> Cut | int:
    """A row of an open table cut as `ncu_text_counters.cut_row` cuts it: a mapped metric's
    `Cut` (its value the last column's: a per-kernel summary's `Average`), `_NO_VALUE` for a
    row that gives no value (of no mapped metric, or `n/a`), or `_MISFIT` for the row of a
    mapped metric that does not fit the table's columns."""
    row = ncu_text_counters.cut_row(line, widths)
    if row is not None:
        return _cut_cells(row[0], row[1], row[2])
    if line.strip().split("  ", 1)[0] in ncu_walk.NAMES:  # a mapped metric must fit its table
        return _MISFIT
    return _NO_VALUE  # a row of some other table (rule advice, source counters): not ours


def _cut_cells(name: str, unit: str, cell: str) -> Cut | int:
    """A row's name, unit and value cell as a `Cut`, or `_NO_VALUE` (of no mapped metric, or
    `n/a`)."""
    target = ncu_walk.NAMES.get(name)
    if target is None:
        return _NO_VALUE
    return _NO_VALUE if cell.endswith("n/a") else (name, target, unit, cell)


def _convert(cut: Cut, path: Path) -> float:
    """A mapped metric's value in the METRICS unit.

    Raises: ValueError when the cell is no number in range; ParseError for a unit that is not
        of the metric's kind.
    """
    name, target, unit, cell = cut
    kind = ncu_metrics.METRICS[target][0]
    factor = ncu_metrics.unit_factor(kind, unit, path, name)
    return values.scalar(cell, _RULES[kind], factor)


def _with_ncu_error(exc: ParseError, data: bytes) -> ParseError:
    """`exc` (a value ncu's text holds that is no number) with ncu's own first `==ERROR==` line
    before it when ncu wrote one: a failed launch leaves every metric `(!) nan`, and the error
    line says why."""
    line = ncu_says.ncu_error(data.decode("utf-8", "replace"))
    if line is None:
        return exc
    said = cell_quotes.shown_cell(line, 300)
    return ParseError(exc.path, exc.expected, f"ncu said {said}; {exc.detail}")


def _note_bare(data: bytes, found: lines.Lines, walk: ncu_walk.Walk, ids: list[int]) -> None:
    """Warn (`reader_notes.ReadNote`) when kernel lines were edited down to `name (grid)x(block),
    CC 8.9`: without ncu's `Context N, Stream N` (and with no `==PROF==` line per launch) the
    launches are told apart only by their order in the file."""
    at = walk.kernel_lines.tolist()
    edited = [i for i in at if ncu_walk.bare(data[found.start[i] : found.end[i]].decode("utf-8"))]
    if not edited:
        return
    numbered = "by the `==PROF==` lines" if ids != list(range(len(at))) else "in file order"
    said = (
        f"line {edited[0] + 1}: {len(edited)} of the {len(at)} kernel lines end at `, CC X.Y` "
        f"without ncu's `Context N, Stream N` (edited by hand): launches numbered {numbered}"
    )
    warnings.warn(reader_notes.ReadNote(said, edited[0] + 1), stacklevel=2)


def _note_empty(walk: ncu_walk.Walk, names: tuple[str, ...]) -> None:
    """Warn (`reader_notes.ReadNote`) naming the first launch with no `Section:` table row under its
    kernel line (ncu run with no section that collects a metric: `==WARNING== No metrics to
    collect found in sections`) and its line: its row holds its name, grid and block only."""
    empty = np.setdiff1d(np.arange(len(names)), walk.launch).tolist()
    if not empty:
        return
    line = int(walk.kernel_lines[empty[0]]) + 1
    name = cell_quotes.shown_cell(names[empty[0]], 80)
    which = (
        f"the launch of {name} has"
        if len(empty) == 1
        else f"{len(empty)} of the {len(names)} launches (the first {name}) have"
    )
    said = (
        f"line {line}: {which} no `Section:` table under the kernel line: no metric values; "
        "the row holds the kernel's name, grid and block only"
    )
    warnings.warn(reader_notes.ReadNote(said, line), stacklevel=2)


def _without_stray_bracket(names: tuple[str, ...], walk: ncu_walk.Walk) -> tuple[str, ...]:
    """The kernel names without the `[` and blanks a hand-edited paste left before some of them
    (`[  compute_gemm, 2019-Aug-08 ...`: what is left of ncu's `[pid] app@host` line, the rest
    of it cut away), with a warning (`reader_notes.ReadNote`) that names the first such line. A name
    with a `]` in it keeps its `[`."""
    stray = [i for i, name in enumerate(names) if name[:2] in ("[ ", "[\t") and "]" not in name]
    if not stray:
        return names
    line = int(walk.kernel_lines[stray[0]]) + 1
    at = set(stray)
    fixed = tuple(name[1:].strip() if i in at else name for i, name in enumerate(names))
    said = (
        f"line {line}: {len(stray)} kernel line(s) start with a stray `[` (what is left of "
        f"ncu's `[pid] app@host` line, edited by hand): read as `{fixed[stray[0]]}`"
    )
    warnings.warn(reader_notes.ReadNote(said, line), stacklevel=2)
    return fixed


def _launch_ids(numbers: list[int], count: int) -> list[int]:
    """The launch numbers of ncu's `==PROF== Profiling "name" - N: ...` lines (`_profiled`) when
    there is one per launch found, else 0 .. count - 1."""
    return numbers if len(numbers) == count else list(range(count))


def _profiled(data: bytes, found: lines.Lines) -> list[int]:
    """The launch numbers of ncu's `==PROF== Profiling "name" - N: ...` lines, in file order."""
    ids = []
    mark = b'==PROF== Profiling "'
    for i in np.flatnonzero((found.lead == 0) & (found.first == ord("="))).tolist():
        raw = data[found.start[i] : found.end[i]]
        if not raw.startswith(mark):
            continue
        line = raw[len(mark) :].decode("utf-8")
        cut = line.rfind('" - ')
        number = line[cut + 4 :].split(":", 1)[0] if cut >= 0 else ""
        if number.isdecimal() and len(number) < 12:  # (isdigit: "²" is a digit int refuses)
            ids.append(int(number))
    return ids


def _note_unprinted(numbers: list[int], count: int, data: bytes) -> None:
    """Warn (`reader_notes.ReadNote`, partial) when ncu's `==PROF== Profiling` lines (their launch
    `numbers`) name more launches (distinct numbers: application replay names a launch once per
    pass) than the file holds results of (`count`): ncu prints a result for each launch it
    profiled, unless it sums them up (`--print-summary`: `, Invocations N` on its kernel lines),
    so the others were cut out of the file."""
    profiled = len(set(numbers))
    if profiled <= count or b", Invocations " in data:
        return
    first = data.find(b'==PROF== Profiling "')
    line = data.count(b"\n", 0, first) + 1
    said = (
        f"line {line}: ncu's `==PROF== Profiling` lines name {profiled} profiled launches and the "
        f"file holds the results of {count}: the others are not in it (cut out?); launches "
        "numbered in file order"
    )
    warnings.warn(reader_notes.ReadNote(said, line, partial=True), stacklevel=2)
