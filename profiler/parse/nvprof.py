"""Legacy nvprof output -> profgen's tables.

Three layouts, as nvprof wrote them (examples in tests/data/nvprof/, from public repositories):

- the text summary after `==PID== Profiling result:`: `Type  Time(%)  Time  Calls  Avg  Min  Max
  Name` with `GPU activities:` and `API calls:` rows (CUDA 9 and later), or the older table
  without `Type` followed by a separate `==PID== API calls:` table; times with units
  (`1.8260ms`, `928ns`, `8.56944s`);
- `nvprof --csv` summary: `"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"` and a units
  row (`,%,ms,,us,us,ms,`);
- `nvprof --csv --print-gpu-trace`: `"Start","Duration","Grid X",...,"Name"[,"Correlation_ID"]`
  and a units row (`s,ms,,,,,,,,B,B,MB,GB/s,...`). Unified Memory rows are not GPU activities
  and are dropped. Old traces append the correlation id to kernel names (`kernel(...) [218]`);
  it is moved into `correlation_id`.

nvprof's sizes use binary prefixes (a 40000-byte copy is `39.0625` KB).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import csvtext, gpuops, nvprof_summary, values
from profiler.parse.values import LineCounter, Origin

EXPECTED = (
    "nvprof output: a summary with `GPU activities:`/`API calls:`, `nvprof --csv` or "
    "`nvprof --csv --print-gpu-trace`"
)
GPU, API = "GPU activities", "API calls"

# Every pattern runs in linear time: single character classes, no nested quantifiers; a summary
# row is cut into fields with str.split, never with a pattern (the old row pattern took 44 s on
# a 100 KB run of spaces).
_HEADER = re.compile(
    r'^(?:(?P<csv_trace>"Start","Duration",)'
    r'|(?P<csv_summary>(?:"Type",)?"Time\(%\)","Time","Calls","Avg","Min","Max","Name"[ \t\r]*$)'
    r"|(?P<text_summary>[ \t]*(?:Type[ \t]+)?Time\(%\)[ \t]+Time[ \t]+Calls[ \t]+Avg[ \t]+Min"
    r"[ \t]+Max[ \t]+Name[ \t\r]*$)"
    r"|(?P<text_trace>[ \t]*Start[ \t]+Duration[ \t]+(?:Grid Size|Name)))",
    re.MULTILINE,
)
_PID_LINE = re.compile(r"^==[0-9]+== ", re.MULTILINE)
_API_SECTION = re.compile(r"^==[0-9]+== API calls:")
# A table ends at a blank line or at a line starting `==`.
_TABLE_END = re.compile(r"\n(?:[ \t\r]*(?:\n|\Z)|==)")
_TIME_UNITS = ("ns", "us", "ms", "s")  # two-letter units first: `ms` also ends with `s`
_CORR_SUFFIX = re.compile(r"^(?P<name>.*\S) \[(?P<corr>[0-9]{1,18})\]\Z")
_TRACE_FIELDS = {
    "Start": "start",
    "Duration": "duration",
    "Grid X": "grid_x",
    "Grid Y": "grid_y",
    "Grid Z": "grid_z",
    "Block X": "block_x",
    "Block Y": "block_y",
    "Block Z": "block_z",
    "Registers Per Thread": "registers",
    "Static SMem": "ssmem",
    "Dynamic SMem": "dsmem",
    "Size": "bytes",
    "SrcMemType": "src",
    "DstMemType": "dst",
    "Device": "device",
    "Stream": "stream",
    "Name": "name",
    "Correlation_ID": "corr",
}


def read_log(path: str | Path, stage: str) -> dict[str, pd.DataFrame]:
    """Read one nvprof output file (text summary, CSV summary or CSV gpu trace).

    Args:
        path: the file, with whatever nvprof and the program printed around its tables.
        stage: the stage key written into every table.

    Returns: for a summary `gpu_activities` (and `api_calls` when the file has API rows), for a
        gpu trace `gpu_trace`; DataFrames with the `schema` tables of those names.

    Raises: ParseError when the file's first 64 KiB have neither an `==PID==` line nor a table
        header, it holds none of these layouts, a table is malformed or truncated, or a cell is
        no number in range (naming its line and column).
    """
    path = Path(path)
    head = csvtext.read_head(path, EXPECTED)
    if not (_PID_LINE.search(head) or _HEADER.search(head)):
        raise ParseError(path, EXPECTED, "no nvprof table header nor ==PID== line at its start")
    text = csvtext.read_text(path, EXPECTED)
    first = next(_headers(text), None)
    if first is None:
        raise ParseError(path, EXPECTED, "no nvprof table header found")
    if first["text_trace"]:
        raise ParseError(path, EXPECTED, "this is a text gpu trace; run nvprof with --csv for it")
    if first["csv_trace"]:
        return {"gpu_trace": _csv_trace(_tables(text, path, "csv_trace")[0][0], stage)}
    kind = "csv_summary" if first["csv_summary"] else "text_summary"
    read = nvprof_summary.csv_rows if kind == "csv_summary" else nvprof_summary.text_rows
    parts = [read(origin, section) for origin, section in _tables(text, path, kind)]
    return _summaries(pd.concat(parts, ignore_index=True), stage, path)


def is_table_header(line: str) -> bool:
    """True for the header line of a table nvprof writes (summary, CSV summary, CSV trace)."""
    found = _HEADER.match(line)
    return found is not None and not found["text_trace"]


def parse_time(text: str, path: Path) -> float:
    """`1.8260ms` -> 1826000.0 ns.

    Raises: ParseError for text that is not a number in range with a time unit.
    """
    try:
        unit = next(u for u in _TIME_UNITS if text.endswith(u))
        return values.scalar(text[: -len(unit)], values.TIME, csvtext.NS_PER_UNIT[unit])
    except (StopIteration, ValueError):
        raise ParseError(
            path, EXPECTED, f"{values.shown_cell(text)} is not a time such as 1.8260ms"
        ) from None


def _headers(text: str) -> Iterator[re.Match[str]]:
    """Every table header in the text, in order. Lines are picked by the words every header
    holds (`Time(%)`, `Duration`) with str.find, then matched whole: a `^` pattern tried at
    every position of a 100 MB text would take seconds."""
    starts = set()
    for word in ("Time(%)", "Duration"):
        at = text.find(word)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            line_end = text.find("\n", at)
            at = -1 if line_end < 0 else text.find(word, line_end)
    for start in sorted(starts):
        match = _HEADER.match(text, start)
        if match is not None:
            yield match


def _tables(text: str, path: Path, kind: str) -> list[tuple[Origin, str]]:
    """Every table of `kind` in the text: its origin (text from the header to the blank or
    `==` line that ends it) and its section (GPU, or API under an `==PID== API calls:` line)."""
    lines = LineCounter(text)
    found = []
    for match in _headers(text):
        if not match[kind]:
            continue
        start = match.start()
        end_match = _TABLE_END.search(text, start)
        end = len(text) if end_match is None else end_match.start() + 1
        above = text[text.rfind("\n", 0, max(start - 1, 0)) + 1 : max(start - 1, 0)]
        section = API if _API_SECTION.match(above) else GPU
        skip = 1 if kind.startswith("csv") else 0  # the units row
        found.append((Origin(path, EXPECTED, text[start:end], lines.at(start), skip), section))
    return found


def _summaries(rows: pd.DataFrame, stage: str, path: Path) -> dict[str, pd.DataFrame]:
    """Summary rows (`nvprof_summary.COLUMNS`) -> `gpu_activities` and `api_calls`."""
    if not (rows["type"] == GPU).any():
        raise ParseError(path, EXPECTED, "no GPU activities rows")
    if rows["name"].isna().any():
        raise ParseError(path, EXPECTED, "a summary row has no name (truncated file?)")
    for row_type, group in rows.groupby("type", sort=False):
        values.check_total(group["total"], Origin(path, EXPECTED), f"Time of {row_type}")
    df = rows.assign(
        stage=stage,
        name=values.cap_names(rows["name"].astype("string")),
        avg_ns=rows["avg"],
        total_ns=rows["total"].round(),
        min_ns=rows["min"].round(),
        max_ns=rows["max"].round(),
    )
    out = {}
    gpu = df[df["type"] == GPU]
    names = gpu["name"].astype("string")
    direction = names.map(gpuops.copy_direction).astype("string")
    memset = names.map(gpuops.is_memset_label).astype(bool)
    kind = np.select(
        [direction.notna().to_numpy(), memset.to_numpy()],
        [schema.MEMCPY, schema.MEMSET],
        schema.KERNEL,
    )
    label = direction.map(schema.copy_label, na_action="ignore").fillna(names)
    gpu = gpu.assign(kind=kind, copy_kind=direction, name=label)
    out["gpu_activities"] = _conform(gpu, schema.GPU_ACTIVITIES)
    api = df[df["type"] == API]
    if not api.empty:
        out["api_calls"] = _conform(api, schema.API_CALLS)
    return out


def _conform(df: pd.DataFrame, tbl: schema.Table) -> pd.DataFrame:
    df = df.sort_values(["total_ns", "name"], ascending=[False, True], kind="stable")
    return schema.validate(
        schema.conform(df, tbl, fill=("bytes",) if "bytes" in tbl.names else ()), tbl
    )


def _csv_trace(origin: Origin, stage: str) -> pd.DataFrame:
    """The `--print-gpu-trace` CSV table: units from the row under the header."""
    cells = csvtext.header_cells(str(origin.text).split("\n", 1)[0])
    csvtext.check_header(cells, origin.path, EXPECTED)
    labels = ("Name", "Device", "SrcMemType", "DstMemType")
    raw = csvtext.read_csv_text(
        origin.text,
        origin.path,
        EXPECTED,
        dtype={c: "category" if c in labels else "string" for c in _TRACE_FIELDS},
    )
    if len(raw) < 1 or "Name" not in raw or not pd.isna(raw["Name"].iloc[0]):
        raise origin.error(f"line {origin.first_line + 1}: no units row under the trace header")
    units = raw.iloc[0].astype("string").fillna("")
    raw = raw.iloc[1:].set_axis(pd.RangeIndex(len(raw) - 1))  # data rows from 0, as in origin
    csvtext.check_last_row(origin, len(cells), len(raw) - 1)
    raw = raw[~raw["Name"].astype("string").str.startswith("[Unified Memory").fillna(False)]
    fields = {
        _TRACE_FIELDS[c]: _trace_column(raw[c], str(units[c]), origin, c)
        for c in raw.columns
        if c in _TRACE_FIELDS
    }
    for field, column in (("start", "Start"), ("duration", "Duration"), ("name", "Name")):
        empty = np.flatnonzero(fields[field].isna().to_numpy()) if field in fields else [0]
        if len(empty):
            row = int(raw.index[empty[0]]) if len(raw) else None
            raise origin.cell_error(row, column, "no value (truncated file?)")
    values.check_total(fields["duration"], origin, "Duration")
    return _trace_table(pd.DataFrame(fields, index=raw.index), stage)


def _trace_column(cells: pd.Series, unit: str, origin: Origin, column: str) -> pd.Series:
    field = _TRACE_FIELDS[column]
    if field in ("name", "device", "src", "dst"):
        return values.cap_names(cells)
    if field in ("start", "duration"):
        factor = csvtext.time_factor(unit, origin.path, column)
        return values.integers(cells, origin, column, values.TIME, factor)
    if field in ("ssmem", "dsmem", "bytes"):
        factor = csvtext.byte_factor(unit, origin.path, column, binary=True)
        return values.integers(cells, origin, column, values.SIZE, factor)
    return values.integers(cells, origin, column, values.COUNT)


def _trace_table(f: pd.DataFrame, stage: str) -> pd.DataFrame:
    names, corr = _split_correlation(f["name"])
    return gpuops.trace_table(f.assign(name=names, corr=f["corr"] if "corr" in f else corr), stage)


def _split_correlation(names: pd.Series) -> tuple[pd.Series, pd.Series]:
    """`kernel(float*) [218]` -> (`kernel(float*)`, 218), by distinct value."""

    def name_of(v: object) -> str | None:
        match = _CORR_SUFFIX.match(v) if isinstance(v, str) else None
        return match["name"] if match else (v if isinstance(v, str) else None)

    def corr_of(v: object) -> int | None:
        match = _CORR_SUFFIX.match(v) if isinstance(v, str) else None
        return int(match["corr"]) if match else None

    return gpuops.map_strings(names, name_of), gpuops.map_ints(names, corr_of)
