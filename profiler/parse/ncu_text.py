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
line profiler metrics`, raw metric names).

Mapped to `schema.METRICS`:

| METRICS column | ncu metrics (display names of all versions, raw names) |
| --- | --- |
| duration_ns | `Duration` (`usecond`, `msecond`, `second`, `us`, ...), `gpu__time_duration.sum` |
| dram_throughput_pct | `DRAM Throughput`, `SOL DRAM`, `gpu__dram_throughput`, `dram__throughput` |
| sm_throughput_pct | `Compute (SM) Throughput`, `Compute (SM) [%]`, `SM [%]`, `sm__throughput` |
| achieved_occupancy_pct | `Achieved Occupancy`, `sm__warps_active` (pct of peak, active) |
| registers | `Registers Per Thread`, `launch__registers_per_thread` |
| dram_read_bytes, _write_ | `dram__bytes_read.sum`, `dram__bytes_write.sum` (`byte`, `Kbyte`, SI) |
| fp32_flops | 2 * ffma + fadd + fmul thread instructions executed (`smsp__sass_...`) |

Not mapped, as METRICS has no column for them: `Memory Throughput` / `Memory [%]` (the busiest
of the memory units, not DRAM alone), `SOL FB` (ncu 2019.x-2020.1's frame-buffer throughput,
not the DRAM throughput of later versions), the L1/L2 throughputs, cycles and frequencies,
theoretical occupancy, launch sizes other than grid and block, and every other section. The
NVTX range of a launch is not read from text (use `--csv --nvtx`): `range` is missing. `n/a`
and `(!) n/a` are missing values. ncu's text numbers the launches only in its `==PROF==
Profiling "name" - N` lines: those numbers are the launch IDs when they match the launches
found, else launches are numbered in file order from 0.

An output with no kernel results is refused with the line ncu itself wrote about it (`==ERROR==
ERR_NVGPUCTRPERM ...`, `==WARNING== No kernels were profiled.`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from profiler.errors import ParseError
from profiler.parse import csvtext, lines, ncu_csv, values

EXPECTED = "Nsight Compute output (ncu's per-kernel `Section:` tables, or ncu --csv)"

_KERNEL_TAIL = re.compile(r", Context [0-9]+, Stream [0-9]+(?:, Device [0-9]+, CC [0-9.]+)?\Z")
_SHAPE = re.compile(r" \(([0-9]+, [0-9]+, [0-9]+)\)x\(([0-9]+, [0-9]+, [0-9]+)\)\Z")
_DATE = re.compile(r", [0-9]{4}-[A-Za-z]{3}-[0-9]{2} [0-9:]{8}\Z")
_TOOL_LINE = re.compile(r"^==(?:PROF|ERROR|WARNING)==", re.MULTILINE)
_SECTION = re.compile(r"^[ \t]+Section: ", re.MULTILINE)
_NAMES = {name: field for field, (_, names) in ncu_csv.METRICS.items() for name in names}
_RULES = {"time": values.TIME, "bytes": values.SIZE, "count": values.COUNT, "pct": values.VALUE}
_NO_KERNEL = "no kernel results in it (a line `<kernel>, Context N, Stream N` with Section: tables)"
_MAX_TAIL = 120  # the launch shape, time and ids after a kernel name fit in this
# The first 8 characters of a metric row that `_metric` may keep or refuse (6 of `SM [%]`), or of
# a table's header, and of a `Section:` line (see `_events`).
_PREFIXES = np.array(
    sorted({lines.pack(n[:8].encode()) for n in [*_NAMES, "Metric Name"] if len(n) >= 8}),
    dtype=np.uint64,
)
_SIX = np.uint64(lines.pack(b"SM [%]") << 16)
_SIX_MASK = np.uint64(((1 << 48) - 1) << 16)
_SECTION_WORD = np.uint64(lines.pack(b"Section:"))
_HEADER_WORD = np.uint64(lines.pack(b"Metric N"))


@dataclass
class Launch:
    """One kernel result of the text: the kernel line's name and shape, the mapped values."""

    name: str
    grid: str | None = None
    block: str | None = None
    values: dict[str, float] = field(default_factory=dict)


def recognise(head: str) -> bool:
    """Whether the start of a file looks like ncu's text output: its `==PROF==`, `==ERROR==`,
    `==WARNING==` lines or a `Section:` line."""
    return bool(_TOOL_LINE.search(head) or _SECTION.search(head))


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
    path = Path(path)
    head = csvtext.read_head(path, EXPECTED)
    if not recognise(head):
        raise ParseError(path, EXPECTED, "no ==PROF== line nor Section: table at its start")
    text = csvtext.read_text(path, EXPECTED)
    kernels = _kernels(text, path)
    if not kernels:
        raise ParseError(path, EXPECTED, ncu_csv.nothing_profiled(text, _NO_KERNEL))
    ids = _launch_ids(text, len(kernels))
    launches = pd.DataFrame(
        {
            "ID": [str(i) for i in ids],
            "Kernel Name": [k.name for k in kernels],
            "Grid Size": [k.grid for k in kernels],
            "Block Size": [k.block for k in kernels],
        }
    )
    found = {
        name: pd.Series([k.values.get(name, float("nan")) for k in kernels], dtype="float64")
        for name in ncu_csv.METRICS
    }
    origin = values.Origin(path, EXPECTED)
    return ncu_csv.metrics_table(launches, found, stage, origin)


def _kernels(text: str, path: Path) -> list[Launch]:
    """Every kernel launch's name, grid, block and mapped metric values, in file order.

    Only the lines that can change them are walked (`_events`), each as every line once was."""
    kernels: list[Launch] = []
    widths: tuple[int, int, int] | None = None  # the open table's column widths
    header_next = False
    seen = _Seen()
    for number, kind, line in _events(text):
        if kind == _AS_RULE:
            runs = _rule_runs(line)
            if runs is None:  # a row that starts with `-`: of no mapped metric
                continue
        elif kind == _AS_SECTION:
            widths = None
            continue
        elif kind == _AS_ROW:  # no kernel line, rule nor `Section:`: a row or a header
            if widths is not None and kernels:
                if _row(line, widths, number, kernels[-1], path, seen):
                    header_next = True
            continue
        else:
            line = line.rstrip("\r")
            launch = _launch(line)
            if launch is not None:
                kernels.append(launch)
                widths = None
                continue
            stripped = line.strip()
            if not kernels or not stripped:
                continue
            if stripped.startswith("Section:"):
                widths = None
                continue
            runs = _rule_runs(stripped)
            if runs is None:
                if widths is not None:
                    if _row(line, widths, number, kernels[-1], path, seen):
                        header_next = True
                continue
        if not kernels:
            continue
        if widths is None and len(runs) == 3:
            widths, header_next = runs, False
        elif widths is not None and not header_next:
            widths = None
        header_next = False
    return kernels


@dataclass
class _Seen:
    """What `_kernels` has read: rows cut (`_cut_row`), by line and table widths, and values
    checked and converted, by metric, unit and cell. Kernels launched again print the same
    rows: each is cut, and each cell read, once."""

    cuts: dict[tuple[str, tuple[int, int, int]], _Cut | None] = field(default_factory=dict)
    values: dict[tuple[str, str, str], float] = field(default_factory=dict)


# A mapped metric's row: its name, the METRICS column it gives, its unit and its value cell.
_Cut = tuple[str, str, str, str]
_HEADER_ROW: _Cut = ("Metric Name", "", "", "")  # what `_cut_row` gives a table's header
_UNSEEN: _Cut = ("", "", "", "")  # (not in `_Seen.cuts`)


def _row(
    line: str, widths: tuple[int, int, int], number: int, kernel: Launch, path: Path, seen: _Seen
) -> bool:
    """A row of an open table: True for its `Metric Name ... Metric Value` header, else the
    row is read (as `_metric`) and False."""
    key = (line, widths)
    cut = seen.cuts.get(key, _UNSEEN)
    if cut is _UNSEEN:
        cut = _cut_row(line, widths, number, path)
        if len(seen.cuts) < _CACHED:
            seen.cuts[key] = cut
    if cut is _HEADER_ROW:
        return True
    if cut is not None:
        _keep(cut, number, kernel, path, seen.values)
    return False


_AS_LINE, _AS_SECTION, _AS_RULE, _AS_ROW = 0, 1, 2, 3
_CACHED = 1 << 16  # distinct metric cells whose value `_metric` keeps


def _events(text: str) -> Iterator[tuple[int, int, str]]:
    """(line number, kind, line) of the lines `_kernels` must walk, in order: `_AS_LINE` for
    lines that may name a kernel (`, Context `) and lines that start with no ASCII character
    (anything); `_AS_ROW` for `Metric Name` headers and rows whose first 8 characters are a
    mapped metric's (6 of `SM [%]`); `_AS_SECTION` for `Section:` lines (the rest of such a line
    changes nothing); `_AS_RULE` for lines that start with `-`. Every other line is blank,
    advice, program output or a metric row that `_metric` skips: it would change nothing, and
    neither would the lines `_observed` leaves out. The lines are sorted with NumPy
    (`lines.split`); only these are cut in Python."""
    data = text.encode("utf-8")
    found = lines.split(data)
    word = found.prefix(8)
    whole = np.isin(word, _PREFIXES)
    whole |= (word & _SIX_MASK) == _SIX
    at, contexts = data.find(b", Context "), []
    while at >= 0:
        contexts.append(at)
        at = data.find(b", Context ", at + 1)
    context = np.zeros(len(found), dtype=bool)
    offsets = np.array(contexts, dtype=np.int64)
    context[np.searchsorted(found.start, offsets, side="right") - 1] = True
    whole |= context
    kind = np.full(len(found), -1, dtype=np.int8)
    kind[found.first == ord("-")] = _AS_RULE
    kind[word == _SECTION_WORD] = _AS_SECTION
    kind[whole] = _AS_ROW
    kind[context | (found.lead == lines.UNKNOWN)] = _AS_LINE
    header = (word == _HEADER_WORD) & ~context
    chosen = np.flatnonzero(kind >= 0)
    chosen = chosen[_observed(kind[chosen], header[chosen])]
    starts, ends = found.start[chosen].tolist(), found.end[chosen].tolist()
    ascii_ = len(data) == len(text)  # then a character's offset is its byte's
    numbers, kinds = (chosen + 1).tolist(), kind[chosen].tolist()
    for number, k, a, b in zip(numbers, kinds, starts, ends, strict=True):
        yield number, k, text[a:b] if ascii_ else data[a:b].decode("utf-8")


def _observed(kind: np.ndarray, header: np.ndarray) -> np.ndarray:
    """Which of these lines (kinds in file order) to walk: every `_AS_LINE` but headers (they
    read or change the state: kernels, rows), and rules, headers and `Section:` lines that have
    such a line after them before the next `Section:` line. A `Section:` line closes the table,
    and what a rule or header did before it can no longer be seen."""
    sees = np.flatnonzero(((kind == _AS_LINE) | (kind == _AS_ROW)) & ~header)
    sections = np.flatnonzero(kind == _AS_SECTION)
    at = np.arange(len(kind))
    never = len(kind)
    next_seen = np.append(sees, never)[np.searchsorted(sees, at, side="right")]
    next_section = np.append(sections, never)[np.searchsorted(sections, at, side="right")]
    return ((kind == _AS_LINE) | (kind == _AS_ROW)) & ~header | (next_seen < next_section)


@functools.lru_cache(maxsize=256)
def _rule_runs(line: str) -> tuple[int, ...] | None:
    """The widths of a rule's dash runs; None when `line` is no rule (tables repeat their
    rules: the few distinct ones are cut once)."""
    stripped = line.strip()
    return tuple(len(run) for run in stripped.split()) if _is_rule(stripped) else None


def _is_rule(stripped: str) -> bool:
    return stripped.startswith("-") and not stripped.strip("- ")


def _launch(line: str) -> Launch | None:
    """The kernel a result line names (`name, <time>, Context 1, Stream 7` or `name (grid)x(block),
    Context 1, Stream 7, Device 0, CC 8.6`), or None for any other line."""
    shape = _launch_shape(line)
    return None if shape is None else Launch(*shape)


@functools.lru_cache(maxsize=256)
def _launch_shape(line: str) -> tuple[str, str | None, str | None] | None:
    """`_launch`'s name, grid and block (kernels are launched again and again: their few
    distinct lines are cut once)."""
    cut = line.rfind(", Context ")
    if cut < 0 or not _KERNEL_TAIL.search(line[cut : cut + _MAX_TAIL]):
        return None
    head = line[:cut].strip()
    grid = block = None
    shape = _SHAPE.search(head[-_MAX_TAIL:])
    if shape is not None:
        grid, block = f"({shape[1]})", f"({shape[2]})"
        head = head[: len(head) - len(shape[0])]
    else:
        date = _DATE.search(head[-_MAX_TAIL:])
        head = head[: len(head) - len(date[0])] if date else head
    return head.strip(), grid, block


def _metric(
    line: str,
    widths: tuple[int, int, int],
    number: int,
    kernel: Launch,
    path: Path,
    cache: dict[tuple[str, str, str], float] | None = None,
) -> None:
    """One `name  unit  value` row, cut from its right end (`_cut_row`); a mapped metric's
    value is kept (its first appearance for the launch), converted to the METRICS unit (`_keep`).

    Raises: ParseError as `_cut_row` and `_keep`.
    """
    cut = _cut_row(line, widths, number, path)
    if cut is not None and cut is not _HEADER_ROW:
        _keep(cut, number, kernel, path, cache)


def _cut_row(line: str, widths: tuple[int, int, int], number: int, path: Path) -> _Cut | None:
    """A row of an open table cut from its right end by the table's widths: `_HEADER_ROW` for
    the table's `Metric Name ... Metric Value` header, a mapped metric's `_Cut`, or None for a
    row that gives no value (of no mapped metric, or `n/a`).

    Raises: ParseError naming the line when the row of a mapped metric does not fit its
        table's columns.
    """
    stripped = line.strip()
    if stripped.startswith("Metric Name") and stripped.endswith("Metric Value"):
        return _HEADER_ROW
    _, unit_width, value_width = widths
    row = line.rstrip()
    if (
        len(row) < value_width + unit_width + 2
        or row[-value_width - 1] != " "
        or (row[-value_width - unit_width - 2] != " ")
    ):
        if row.strip().split("  ", 1)[0] in _NAMES:  # a mapped metric must fit its table
            raise ParseError(path, EXPECTED, f"line {number}: a metric row does not fit its table")
        return None  # a row of some other table (rule advice, source counters): not ours
    name = row[: -value_width - unit_width - 2].strip()
    target = _NAMES.get(name)
    if target is None:
        return None
    unit = row[-value_width - unit_width - 1 : -value_width - 1].strip()
    cell = row[-value_width:].strip()
    return None if cell.endswith("n/a") else (name, target, unit, cell)


def _keep(
    cut: _Cut,
    number: int,
    kernel: Launch,
    path: Path,
    cache: dict[tuple[str, str, str], float] | None = None,
) -> None:
    """A mapped metric's value kept for the launch (unless it has one already), converted to
    the METRICS unit. `cache` holds the values already read: a cell is checked and converted
    once.

    Raises: ParseError naming the line when the value is no number in range.
    """
    name, target, unit, cell = cut
    if target in kernel.values:
        return
    key = (target, unit, cell)
    known = cache.get(key) if cache is not None else None
    if known is not None:
        kernel.values[target] = known
        return
    kind = ncu_csv.METRICS[target][0]
    try:
        factor = ncu_csv.unit_factor(kind, unit, path, name)
        kernel.values[target] = values.scalar(cell, _RULES[kind], factor)
        if cache is not None and len(cache) < _CACHED:
            cache[key] = kernel.values[target]
    except ValueError as exc:
        raise ParseError(path, EXPECTED, f"line {number}, metric {name!r}: {exc}") from None


def _launch_ids(text: str, count: int) -> list[int]:
    """The launch numbers of ncu's `==PROF== Profiling "name" - N: ...` lines when there is one
    per launch found, else 0 .. count - 1."""
    ids = []
    mark = '==PROF== Profiling "'
    at = text.find(mark)
    while at >= 0:
        after, at = at + len(mark), text.find(mark, at + 1)
        if after > len(mark) and text[after - len(mark) - 1] != "\n":
            continue  # not at the start of a line
        end = text.find("\n", after)
        line = text[after : end if end >= 0 else len(text)]
        cut = line.rfind('" - ')
        number = line[cut + 4 :].split(":", 1)[0] if cut >= 0 else ""
        if number.isdigit() and len(number) < 12:
            ids.append(int(number))
    return ids if len(ids) == count else list(range(count))
