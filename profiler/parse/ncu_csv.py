"""Nsight Compute `ncu --csv` output -> `schema.METRICS`, one row per profiled kernel launch.

Both CSV pages are read, and the per-kernel summary:

- `--page raw` (profgen's own collection): one row per launch, one column per metric, and a
  units row (`,,,"ns","byte",...`) under the header;
- `--page details` (ncu's default): one row per launch and metric with `Section Name`,
  `Metric Name`, `Metric Unit`, `Metric Value` columns, pivoted here; section display names
  (`Duration`, `DRAM Throughput`, `SM [%]` of 2020.x, ...) are understood as well as raw metric
  names;
- `--print-summary per-kernel` (header `"Process ID","Process Name",...`, no `ID`): one row
  per kernel and metric with `Invocations`, `Minimum`, `Maximum`, `Average`. Each kernel (its
  name, block and grid size) becomes one row, numbered in file order from 0, whose metrics are
  ncu's averages over its invocations (a duration is the mean duration of one launch);
- nv-nsight-cu-cli 2019.1-2019.3's details page (header `"Kernel Name","Kernel Time",...`, no
  `ID` and no process columns): a launch's rows come together, so launches are told apart by
  kernel name and time and numbered in file order from 0.

ncu writes its `==PROF==` lines and the program's own stdout before the header; numbers carry
thousands separators inside quotes (`"6,144"`, `"2,601,092,896.17"`); `n/a` means no value.
Units are converted (`usecond` -> ns, `Kbyte` -> bytes with SI prefixes, as ncu uses). A metric
the file lacks is NA, not an error. The NVTX columns (`--nvtx`) give `range`: profgen's innermost
range, else the user's (`ncu_nvtx` says which).

FP32 FLOPs are 2 * ffma + fadd + fmul thread instructions executed (predicated on).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

import numpy as np
import pandas as pd

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import csv_parts, csvtext, ncu_counters, ncu_nvtx, values
from profiler.parse.values import LineCounter, Origin

EXPECTED = 'Nsight Compute CSV (ncu --csv; a header starting "ID","Process ID")'

_SASS = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
# field -> (unit kind, names it goes by: raw metric names first, then details-page names)
METRICS = {
    "duration_ns": ("time", ("gpu__time_duration.sum", "Duration")),
    # compute capability 12.x (GB20x) names them dram__bytes_op_*: its ncu has no dram__bytes_read
    "dram_read_bytes": ("bytes", ("dram__bytes_read.sum", "dram__bytes_op_read.sum")),
    "dram_write_bytes": ("bytes", ("dram__bytes_write.sum", "dram__bytes_op_write.sum")),
    "ffma": ("count", (_SASS.format("ffma"),)),
    "fadd": ("count", (_SASS.format("fadd"),)),
    "fmul": ("count", (_SASS.format("fmul"),)),
    "sm_throughput_pct": (
        "pct",
        (
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "Compute (SM) Throughput",
            "Compute (SM) [%]",  # 2021.x-2022.1
            "SM [%]",  # 2019.x-2020.x
        ),
    ),
    "dram_throughput_pct": (
        "pct",
        (
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "DRAM Throughput",
            "SOL DRAM",  # 2020.x
            # 2019.3.1-2020.x: "Switched underlying metric for SOL FB in the GPU Speed Of Light
            # section to be driven by dram__throughput.avg.pct_of_peak_sustained_elapsed instead
            # of fbpa__throughput..." (ncu 2019.3.1's release notes, docs.nvidia.com/
            # nsight-compute/2019.3/ReleaseNotes). 2019.1-2019.3 printed the latter as SOL FB.
            "SOL FB",
        ),
    ),
    "achieved_occupancy_pct": (
        "pct",
        ("sm__warps_active.avg.pct_of_peak_sustained_active", "Achieved Occupancy"),
    ),
    "registers": ("count", ("launch__registers_per_thread", "Registers Per Thread")),
}
_HEADER_AT = (
    r'^"?(?:ID"?,"?Process ID|Process ID"?,"?Process Name'
    r'|Kernel Name"?,"?Kernel Time"?,"?Section Name)"?,'
)
_HEADER = re.compile(_HEADER_AT, re.MULTILINE)
_HEADER_BYTES = re.compile(_HEADER_AT.encode(), re.MULTILINE)


def is_header(line: str) -> bool:
    """Whether `line` is the header of an ncu CSV table (`"ID","Process ID",...`)."""
    return _HEADER.match(line) is not None


_SUMMARY_KEYS = ("Kernel Name", "Block Size", "Grid Size", "Device", "Context", "Stream")
# A details page's columns that nothing reads. pandas reads their cells as one byte each, not
# a string each, and they are dropped; it still counts every row's cells, so a row with more
# cells than the header is still refused (pandas' own `usecols` would drop the extra cells).
_UNREAD = frozenset(
    ("Process ID", "Process Name", "Host Name", "Context", "Stream", "Device", "CC")
)
_PROF_LINE = re.compile(r"^==[A-Z]+==", re.MULTILINE)
_RULES = {"time": values.TIME, "bytes": values.SIZE, "count": values.COUNT, "pct": values.VALUE}


def read_metrics(path: str | Path | csvtext.Held, stage: str) -> pd.DataFrame:
    """Read an `ncu --csv` file (raw or details page): `read_tables`' `metrics`.

    Returns: DataFrame with `schema.METRICS` columns, one row per kernel launch, by launch ID
        (none when the file has only its header).

    Raises: ParseError as `read_tables`.
    """
    return read_tables(path, stage)[schema.METRICS.name]


def read_tables(path: str | Path | csvtext.Held, stage: str) -> dict[str, pd.DataFrame]:
    """Read an `ncu --csv` file (raw or details page, or a per-kernel summary).

    Args:
        path: the CSV file, with whatever ncu and the program printed before the header (or its
            bytes, held).
        stage: the stage key written into every row.

    Returns: `metrics` (`schema.METRICS` columns, one row per kernel launch, by launch ID; none
        when the file has only its header) and `counters` (`schema.COUNTERS` columns, every
        metric cell of the file: `ncu_counters`).

    Raises: ParseError when the file's first 64 KiB have neither an `==PROF==` line nor the
        header, it has no ncu CSV header, is malformed or truncated, repeats a column, or a
        cell is no number in range (naming its line and column).
    """
    source, path = path, csvtext.source_path(path)
    head = csvtext.read_head(source, EXPECTED)
    if not (_PROF_LINE.search(head) or _HEADER.search(head)):
        raise ParseError(path, EXPECTED, "no such header nor ==PROF== line at its start")
    data = csvtext.read_utf8(source, EXPECTED)
    match = _HEADER_BYTES.search(data)
    if match is None:
        said = nothing_profiled(data.decode("utf-8"), "no such header found")
        raise ParseError(path, EXPECTED, said)
    data = data[: _fence_line(data, match.start())]
    if not _ncu_only_before(data, match.start()):  # (a table pasted among other text)
        data = data[: _prose_line(data, match.start())]
        data = data[: _tail_line(data, match.start())]
    origin, source_bytes, start = _table(data, match.start(), path)
    header = csvtext.header_cells(_line_at(data, match.start()))
    csvtext.check_header(header, path, EXPECTED)
    table = _read_page(source_bytes, origin, start, header)
    csvtext.check_last_row(origin, _row_cells(header), len(table) - 1, source_bytes)
    if "ID" not in table.columns and "Kernel Time" in table.columns:
        table.insert(0, "ID", _launch_ids(table))
    if "Metric Name" in table.columns and "Metric Value" in table.columns:
        _check_metric_rows(table, origin)
        counters = csv_parts.begun(  # (its own frame over the same cells, while _details reads)
            functools.partial(ncu_counters.details, table.copy(deep=False), stage),
            alone=csv_parts.part_count(len(source_bytes) - start) > 1,
        )
        launches, found = _details(table, origin)
    elif "Metric Name" in table.columns and "Average" in table.columns:
        table = _by_kernel(table.astype("string"))
        launches, found = _details(table, origin, value="Average")
        counters = functools.partial(ncu_counters.details, table, stage, "Average")
    else:
        table = table.astype("string")
        units: dict[str, str] = {}
        if len(table) and "ID" in table and pd.isna(table["ID"].iloc[0]):  # the units row
            units = {str(c): ("" if pd.isna(u) else str(u)) for c, u in table.iloc[0].items()}
            table = table.iloc[1:].reset_index(drop=True)
            origin = dataclasses.replace(origin, skip=1)
        launches, found = _raw(table, units, origin)
        counters = functools.partial(ncu_counters.raw, table, units, stage)
    ranges = ncu_nvtx.csv_ranges(launches)
    metrics = metrics_table(launches, found, stage, origin, ranges)  # (checks the IDs first)
    return {schema.METRICS.name: metrics, schema.COUNTERS.name: counters()}


def _read_page(data: bytes, origin: Origin, start: int, header: list[str]) -> pd.DataFrame:
    """The page from its header at byte `start` on, every cell an object (a million rows are
    not made `string`).

    A details page (one row per launch and metric) is read by distinct cell instead: its
    columns but `Metric Value` as categories, whose strings pandas makes once per distinct
    cell (a launch's name, NVTX ranges and shape repeat on each of its rows, the section,
    metric and unit names in every launch), and without its `_UNREAD` columns, which pandas
    reads one byte a cell. pandas is given the header's names, so that each column gets its
    dtype by name (a dict of dtypes without every name would let pandas guess the others')."""
    if not ("Metric Name" in header and "Metric Value" in header and all(header)):
        table = csvtext.read_csv_text(data, origin, start, dtype=object)
        if len(table.columns) != len(header):  # (a quote left open ran the header on)
            raise origin.error(
                f"its header line has {len(header)} cells, but a quote left open in it runs on "
                f"past the line ({len(table.columns)} names)"
            )
        return table
    dtypes = {name: _details_dtype(name) for name in header}
    table = _read_in_parts(data, start, header, dtypes)
    if table is None:
        table = csvtext.read_csv_text(data, origin, start, dtype=dtypes, names=header, header=0)
    return table.drop(columns=[c for c in header if c in _UNREAD])


def _read_in_parts(
    data: bytes, start: int, header: list[str], dtypes: dict[str, str | type]
) -> pd.DataFrame | None:
    """A large details page read in parts on threads (`csv_parts.read_rows`), its rows after
    the header line at `start`; None when it is read whole, as a header not quoted as ncu
    writes it is."""
    if not data.startswith(b'"', start):
        return None
    return csv_parts.read_rows(data, start, header, dict(dtypes), lead=b'\n"')


def _details_dtype(column: str) -> str | type:
    """How `_read_page` reads a details page's column: one byte a cell (unread), objects (the
    values, mostly distinct) or categories (every other column, each repeating)."""
    if column in _UNREAD:
        return "S1"
    return object if column == "Metric Value" else "category"


def _launch_ids(table: pd.DataFrame) -> np.ndarray:
    """The launch IDs of a details page without an `ID` column (nv-nsight-cu-cli 2019.1-2019.3,
    whose header starts `"Kernel Name","Kernel Time"`): ncu writes a launch's rows together,
    so a launch starts where the kernel name or its time (to the second) changes; numbered in
    file order from 0, as strings like the IDs ncu writes."""
    key = table["Kernel Name"].astype(str) + "\x00" + table["Kernel Time"].astype(str)
    starts = (key != key.shift()).to_numpy()
    return (np.cumsum(starts) - 1).astype(str).astype(object)


def _row_cells(header: list[str]) -> int:
    """The cells a whole last row has: a details page's metric rows stop after `Metric Value`
    (ncu writes its cells, then one comma: the `Rule Name` cell, empty) and only rule rows fill
    every column, so a page whose last launch's last section has no rule ends with a short
    row; any other page's rows have every header cell."""
    return header.index("Rule Name") + 1 if "Rule Name" in header else len(header)


def _table(data: bytes, start: int, path: Path) -> tuple[Origin, bytes, int]:
    """The CSV from the header on, ncu's own lines removed (lines that start with `==`:
    `==PROF==`, `==WARNING==` ...; their file lines remembered): its origin, and the bytes and
    the byte the table starts at.

    Without such lines the table is `data` from `start` on, not copied (a copy of 300 MB costs
    0.2 s): its origin cuts the text only for a message that counts lines.
    """
    lines = LineCounter(data)
    first = lines.at(start)
    pieces, dropped, pos = [], [], start
    at = _tool_line(data, start)
    while at >= 0:
        pieces.append(data[pos:at])
        dropped.append(lines.at(at))
        end = data.find(b"\n", at)
        pos = len(data) if end < 0 else end + 1
        at = _tool_line(data, pos) if end >= 0 else -1
    if not dropped:
        return Origin(path, EXPECTED, b"", first, cut=lambda: data[start:]), data, start
    text = b"".join([*pieces, data[pos:]])
    return Origin(path, EXPECTED, text, first, dropped=tuple(dropped)), text, 0


def _fence_line(data: bytes, start: int) -> int:
    """Where the first Markdown code fence line (```` ``` ```` or `~~~`, up to three blanks
    before it) after the header at `start` starts: the end of a table a README pasted in a
    fence. The end of `data` when there is none, or when no fence mark comes before the header
    (ncu writes none, and a fence that closes a table was opened above it): the rows of ncu's
    own output, which can be hundreds of MB, are not searched."""
    end = len(data)
    for mark in (b"```", b"~~~"):
        if data.rfind(mark, 0, start) < 0:
            continue
        at = data.find(mark, start, end)
        while at >= 0:
            line = data.rfind(b"\n", start, at) + 1
            if line > start and at - line <= 3 and not data[line:at].strip(b" \t"):
                end = line
                break
            at = data.find(mark, at + 3, end)
    return end


# A blank line, then a line that starts with neither a quote nor `==` (what ncu writes).
_PROSE_AFTER = re.compile(rb"\n[ \t\r]*\n[ \t]*(?=[^\s\"=])")


def _ncu_only_before(data: bytes, start: int) -> bool:
    """Whether only ncu's own lines (`==PROF==`) or blank ones come before the header at
    `start`: ncu's own output, not a table pasted among other text. Its rows, which can be
    hundreds of MB and hold no blank line, are then not searched for the text after them
    (`_prose_line`, `_tail_line`)."""
    before = data[:start].split(b"\n")[:-1]
    return all(line.startswith(b"==") or not line.strip() for line in before)


def _prose_line(data: bytes, start: int) -> int:
    """Where a table pasted among other text ends: the first blank line after the header at
    `start` that other text follows (a heading, a second block of a README or of a source
    file's comment), its lines then left out with a note. The end of `data` when there is
    none."""
    found = _PROSE_AFTER.search(data, start)
    if found is None:
        return len(data)
    end = found.start() + 1
    line = data.count(b"\n", 0, found.end()) + 1
    text = data[found.end() : data.find(b"\n", found.end()) % (len(data) + 1)]
    shown = text.decode("utf-8", "replace").strip()[:60]
    values.read_note(f"line {line} on ('{shown}') left out: no ncu CSV row follows the blank line")
    return end


def _tail_line(data: bytes, start: int) -> int:
    """Where the text right after a pasted table's last row starts: the lines at the end after
    the last one that starts with a quote, when they start with neither a quote nor `==` (a
    source file's string closed by a backtick on the next line): left out with a note, not read
    as a row cut short (ncu quotes every cell: a row it cut starts with a quote). The end of
    `data` when there are none, or when they are ncu's or an elision mark's."""
    last = _last_row(data, start)
    end = data.find(b"\n", last) + 1
    tail = data[end:].strip() if end else b""
    if not tail or tail.startswith((b"==", b"...", "…".encode())):
        return len(data)  # (an elision mark `...` is the table's, as the rows it stands for)
    shown = tail.split(b"\n", 1)[0].decode("utf-8", "replace")[:60]
    line = data.count(b"\n", 0, end) + 1
    values.read_note(f"line {line} on ('{shown}') left out: it follows the last ncu CSV row")
    return end


def _last_row(data: bytes, start: int) -> int:
    """Where the last line after the header at `start` that starts with a quote starts (`start`
    when none does), a line that opens with three quotes left out: that closes a Python string
    the table was pasted into (a test's fixture), and ncu starts no row with an empty cell's
    `""` before a quote."""
    last = data.rfind(b'\n"', start) + 1 or start
    while last > start and data.startswith(b'"""', last):
        last = data.rfind(b'\n"', start, last - 1) + 1 or start
    return last


def _tool_line(data: bytes, pos: int) -> int:
    """Where the first line from `pos` on (`pos` a line's start or later) that starts with `==`
    starts; -1 when none does. `memchr` finds the first `=`: a file without one costs no more."""
    equals = data.find(b"=", pos)
    if equals < 0:
        return -1
    if equals == pos and data.startswith(b"==", pos) and (pos == 0 or data[pos - 1] == 10):
        return pos
    at = data.find(b"\n==", max(equals - 1, pos))
    return -1 if at < 0 else at + 1


def _line_at(data: bytes, start: int) -> str:
    """The line of `data` that starts at `start` (the header), as text."""
    end = data.find(b"\n", start)
    return data[start : len(data) if end < 0 else end].decode("utf-8")


def _raw(
    table: pd.DataFrame, units: dict[str, str], origin: Origin
) -> tuple[pd.DataFrame, dict[str, pd.Series]]:
    """The raw page: metric columns, units from the row under the header."""
    found = {}
    for field, (kind, names) in METRICS.items():
        column = next((n for n in names if n in table.columns), None)
        if column is not None:
            factor = unit_factor(kind, units.get(column, ""), origin.path, column)
            found[field] = values.numbers(table[column], origin, column, _RULES[kind], factor)
    return table, found


def _by_kernel(table: pd.DataFrame) -> pd.DataFrame:
    """A per-kernel summary with an `ID` per kernel (name and launch shape), in file order."""
    keys = [c for c in _SUMMARY_KEYS if c in table.columns]
    if "Kernel Name" not in keys:
        return table  # refused below: no Kernel Name column
    parts = table[keys].astype("string").fillna("")
    joined = parts[keys[0]]
    for k in keys[1:]:
        joined = joined + "\x1f" + parts[k]
    codes, _ = pd.factorize(joined)
    return table.assign(ID=pd.array(codes.astype(str), dtype="string"))


def nothing_profiled(text: str, otherwise: str) -> str:
    """Why ncu's output holds no results, in ncu's own words (its first `==ERROR==` line, or
    `==WARNING== No kernels were profiled.`) when it wrote any; else where ncu wrote them
    instead (`==PROF== Report: x.ncu-rep`, a run with `-o`) when it says; else `otherwise`."""
    said = ncu_error(text)
    if said is None:
        said = next(
            (
                line.strip()
                for line in text.split("\n")
                if line.lstrip(" \t").startswith("==WARNING==")
                and "No kernels were profiled" in line
            ),
            None,
        )
    if said is not None:
        return f"ncu profiled no kernel; it said {values.shown_cell(said, 300)}"
    report = _report_file(text)
    if report is not None:
        return (
            f"ncu wrote its results only to the report {values.shown_cell(report, 300)} "
            "(`==PROF== Report:`), not here: import that .ncu-rep instead"
        )
    return otherwise


def _report_file(text: str) -> str | None:
    """The file of ncu's last `==PROF== Report: FILE` line (a line that starts with it)."""
    mark = "==PROF== Report: "
    line = _line_led_by(text, mark, last=True)
    return None if line is None else line[len(mark) :].strip() or None


def ncu_error(text: str) -> str | None:
    """ncu's first `==ERROR==` line (one that starts with it), stripped; None without one.

    When that line is only ncu's lead-in (`An error was reported by the driver`, `... by the
    counter measurement library:`), the error itself is on the next line that is not blank,
    a `==ERROR==` line of its own: the two are given as one, `LEAD: DETAIL`."""
    first = _line_led_by(text, _ERROR)
    if first is None or not first.startswith(_ERROR_LEAD):
        return first
    detail = _next_line(text, text.find(first) + len(first))
    if detail is None or not detail.startswith(_ERROR):
        return first
    return f"{first.rstrip(':')}: {detail[len(_ERROR) :].strip()}"


_ERROR = "==ERROR=="
_ERROR_LEAD = "==ERROR== An error was reported by"


def _next_line(text: str, at: int) -> str | None:
    """The first line of `text` after the line that holds position `at` that is not blank,
    stripped; None when there is none."""
    end = text.find("\n", at)
    while end >= 0:
        start, end = end + 1, text.find("\n", end + 1)
        line = text[start : len(text) if end < 0 else end].strip()
        if line:
            return line
    return None


def _line_led_by(text: str, mark: str, last: bool = False) -> str | None:
    """The first (`last`: the last) line of `text` that starts with `mark`, after blanks (a line
    of a block that RST or Markdown indents), stripped; None when no line does."""
    at = text.rfind(mark) if last else text.find(mark)
    while at > 0 and not _after_blanks(text, at):
        at = text.rfind(mark, 0, at) if last else text.find(mark, at + 1)
    if at < 0:
        return None
    end = text.find("\n", at)
    return text[at : end if end >= 0 else len(text)].strip()


def _after_blanks(text: str, at: int) -> bool:
    """Whether only blanks stand before `at` on its line (looked at back to the first other
    character: each blank once for the mark after it)."""
    start = at
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    return start == 0 or text[start - 1] == "\n"


def _check_metric_rows(table: pd.DataFrame, origin: Origin) -> None:
    """Refuse a details page whose metric row has a cell after `Metric Value`.

    ncu quotes every cell and fills the rule cells (`Rule Name` ...) only on a rule's own rows,
    whose metric cells are empty. A metric row with a cell there had a cell before it split by
    an unquoted comma (a value `5,856` written without its quotes, by hand or by a tool), and
    every cell after the split moved right: its value would be read from the wrong cell.

    Raises: ParseError naming the launch, the metric and the cell.
    """
    names = list(table.columns)
    after = names[names.index("Metric Value") + 1 :]
    if not after:
        return
    filled = table[after].notna().to_numpy()
    bad = np.flatnonzero(filled.any(axis=1) & table["Metric Name"].notna().to_numpy())
    if len(bad) == 0:
        return
    row = int(bad[0])
    column = after[int(np.argmax(filled[row]))]
    cells = table.iloc[row]
    launch, metric, name, cell = (
        values.shown_cell(x) for x in (cells["ID"], cells["Metric Name"], column, cells[column])
    )
    raise origin.error(
        f"launch {launch}, metric {metric}: its row has a cell after Metric Value ({name}: {cell}),"
        " where ncu leaves metric rows empty; a cell before it was split by an unquoted comma, so"
        " its value cannot be told"
    )


def _details(
    table: pd.DataFrame, origin: Origin, value: str = "Metric Value"
) -> tuple[pd.DataFrame, dict[str, pd.Series]]:
    """The details page: one row per launch and metric, pivoted to one row per launch (the
    per-kernel summary likewise, with `value` its `Average` column).

    The page's cells may be `object` (a million rows are not made `string`): each launch's
    first row, and the rows of the metrics looked for, are made `string` here. The metric
    names are compared as codes, each distinct name once.

    Raises: ParseError when the header has no `Metric Unit` column (ncu writes it beside
        `Metric Name`): a value's unit, and so its number, cannot be told.
    """
    if "Metric Unit" not in table.columns:
        raise origin.error(
            f"its header has {value} and Metric Name but no Metric Unit column, which ncu writes "
            "beside them: the values' units cannot be told"
        )
    launches = table[~table["ID"].duplicated().to_numpy()].reset_index(drop=True)
    launches = launches.astype("string")
    metric_names = ncu_counters.Coded.of(table["Metric Name"])
    code_of = {name: code for code, name in enumerate(metric_names.distinct)}
    codes = metric_names.codes
    found = {}
    for field, (kind, names) in METRICS.items():
        for name in names:
            if name not in code_of:
                continue
            hits = table.iloc[np.flatnonzero(codes == code_of[name])][["ID", "Metric Unit", value]]
            hits = hits[~hits["ID"].duplicated().to_numpy()].astype("string")
            units = hits["Metric Unit"].fillna("").astype(str)
            factors = {u: unit_factor(kind, u, origin.path, name) for u in pd.unique(units)}
            factor = units.map(factors).to_numpy(dtype="float64")
            number = values.numbers(hits[value], origin, name, _RULES[kind], factor)
            by_id = pd.Series(number.to_numpy(), index=hits["ID"].to_numpy())
            found[field] = pd.Series(launches["ID"].map(by_id).to_numpy(dtype="float64"))
            break
    return launches, found


def metrics_table(
    launches: pd.DataFrame,
    found: dict[str, pd.Series],
    stage: str,
    origin: Origin,
    ranges: pd.Series | None = None,
) -> pd.DataFrame:
    """Launches (`ID`, `Kernel Name`, optional `Grid Size`, `Block Size`), their ranges and
    the metric values found for them, by field -> `schema.METRICS`, by launch ID.

    Raises: ParseError for a launch without ID or name, or FLOPs or durations past 2**62.
    """
    if "ID" not in launches or "Kernel Name" not in launches:
        raise origin.error("no ID or Kernel Name column")
    ids = values.numbers(launches["ID"], origin, "ID", values.COUNT)
    if ids.isna().any() or launches["Kernel Name"].isna().any():
        raise origin.error("a row has no launch ID or kernel name (truncated file?)")
    nan = pd.Series(np.nan, index=launches.index)
    get = {f: found.get(f, nan).reset_index(drop=True) for f in METRICS}
    get["fp32_flops"] = 2 * get["ffma"] + get["fadd"] + get["fmul"]
    for field in ("fp32_flops", "duration_ns"):
        if (get[field] >= values.LIMIT).any():
            raise origin.error(f"the {field} of a launch is past 2**62")
        values.check_total(get[field], origin, field)
    labels = {
        "name": launches["Kernel Name"],
        "range": ranges,
        "grid": launches.get("Grid Size"),
        "block": launches.get("Block Size"),
    }
    text = {
        k: pd.NA if v is None else values.cap_names(v.astype("string")) for k, v in labels.items()
    }
    out = pd.DataFrame(
        {
            "stage": stage,
            "kernel_id": ids.astype("int64"),
            **text,
            **{
                f: values.whole(get[f])
                for f in (
                    "fp32_flops",
                    "duration_ns",
                    "dram_read_bytes",
                    "dram_write_bytes",
                    "registers",
                )
            },
            **{
                f: get[f]
                for f in ("sm_throughput_pct", "dram_throughput_pct", "achieved_occupancy_pct")
            },
        }
    )
    out = schema.conform(out.sort_values("kernel_id", kind="stable"), schema.METRICS)
    return schema.validate(out, schema.METRICS)


def unit_factor(kind: str, unit: str, path: Path, column: str) -> float:
    """Nanoseconds (time) or bytes (bytes) per `unit`; 1 for counts and percentages.

    Raises: ParseError for a unit that is not of its kind.
    """
    if kind == "time":
        return csvtext.time_factor(unit, path, column)
    if kind == "bytes":
        return csvtext.byte_factor(unit, path, column)
    return 1
