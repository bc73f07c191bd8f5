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
from pathlib import Path

import numpy as np
import pandas as pd

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import csvtext, gpuops

EXPECTED = (
    "nvprof output: a summary with `GPU activities:`/`API calls:`, `nvprof --csv` or "
    "`nvprof --csv --print-gpu-trace`"
)
GPU, API = "GPU activities", "API calls"

_TEXT_HEADER = re.compile(r"^\s*(?:Type\s+)?Time\(%\)\s+Time\s+Calls\s+Avg\s+Min\s+Max\s+Name\s*$")
_CSV_SUMMARY = re.compile(r'^(?:"Type",)?"Time\(%\)","Time","Calls","Avg","Min","Max","Name"\s*$')
_CSV_TRACE = re.compile(r'^"Start","Duration",')
_TEXT_TRACE = re.compile(r"^\s*Start\s+Duration\s+(Grid Size|Name)")
_SECTION = re.compile(r"^==\d+== (?P<what>.*?):?\s*$")
_ROW = re.compile(
    r"^\s*(?:(?P<type>[A-Za-z][^:%]*):)?\s*(?P<pct>[\d.]+)%\s+(?P<total>\S+)\s+(?P<calls>\d+)"
    r"\s+(?P<avg>\S+)\s+(?P<min>\S+)\s+(?P<max>\S+)\s+(?P<name>\S.*?)\s*$"
)
_TIME = re.compile(r"^(?P<value>[\d.]+)(?P<unit>s|ms|us|ns)$")
_CORR_SUFFIX = re.compile(r"^(?P<name>.*\S) \[(?P<corr>\d+)\]$")
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

    Raises: ParseError when the file holds none of these layouts or a table is malformed.
    """
    path = Path(path)
    text = csvtext.read_text(path, EXPECTED)
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _CSV_TRACE.match(line):
            return {"gpu_trace": _csv_trace(lines, i, stage, path)}
        if _CSV_SUMMARY.match(line) or _TEXT_HEADER.match(line):
            rows = (
                _csv_summary(lines, path)
                if _CSV_SUMMARY.match(line)
                else _text_summary(lines, path)
            )
            return _summaries(rows, stage, path)
        if _TEXT_TRACE.match(line):
            raise ParseError(
                path, EXPECTED, "this is a text gpu trace; run nvprof with --csv for it"
            )
    raise ParseError(path, EXPECTED, "no nvprof table header found")


def is_table_header(line: str) -> bool:
    """True for the header line of a table nvprof writes (summary, CSV summary, CSV trace)."""
    return bool(_CSV_TRACE.match(line) or _CSV_SUMMARY.match(line) or _TEXT_HEADER.match(line))


def parse_time(text: str, path: Path) -> float:
    """`1.8260ms` -> 1826000.0 ns.

    Raises: ParseError for text that is not a number with a time unit.
    """
    match = _TIME.match(text)
    if match is None:
        raise ParseError(path, EXPECTED, f"{text!r} is not a time such as 1.8260ms")
    return float(match["value"]) * csvtext.NS_PER_UNIT[match["unit"]]


def _text_summary(lines: list[str], path: Path) -> list[dict[str, object]]:
    """Rows of the text summary: (type, pct, total, calls, avg, min, max, name), times in ns."""
    rows: list[dict[str, object]] = []
    section: str | None = None
    for line in lines:
        head = _SECTION.match(line)
        if head:
            what = head["what"].lower()
            section = GPU if what == "profiling result" else API if what == "api calls" else None
            continue
        row = _ROW.match(line) if section else None
        if row is None:
            continue
        section = row["type"].strip() if row["type"] else section
        rows.append(
            {
                "type": section,
                "time_pct": float(row["pct"]),
                "calls": int(row["calls"]),
                "name": row["name"],
                **{k: parse_time(row[k], path) for k in ("total", "avg", "min", "max")},
            }
        )
    return rows


def _csv_summary(lines: list[str], path: Path) -> list[dict[str, object]]:
    """Rows of every `nvprof --csv` summary table in the file, times converted by the units row."""
    rows: list[dict[str, object]] = []
    section = GPU
    for i, line in enumerate(lines):
        head = _SECTION.match(line)
        if head and head["what"].lower() == "api calls":
            section = API
        if not _CSV_SUMMARY.match(line):
            continue
        block = _block(lines, i)
        table = csvtext.read_csv_text("\n".join(block) + "\n", path, EXPECTED)
        if len(table) < 1:
            raise ParseError(path, EXPECTED, f"line {i + 2}: the units row is missing")
        units, table = table.iloc[0].fillna(""), table.iloc[1:]
        factors = {
            c: csvtext.time_factor(str(units[c]), path, c) for c in ("Time", "Avg", "Min", "Max")
        }
        types = table["Type"] if "Type" in table else pd.Series(section, index=table.index)
        for (_, r), kind in zip(table.iterrows(), types, strict=True):
            rows.append(
                {
                    "type": kind,
                    "name": r["Name"],
                    "time_pct": _number(r["Time(%)"], path),
                    "calls": int(_number(r["Calls"], path)),
                    **{
                        k: _number(r[c], path) * factors[c]
                        for k, c in (
                            ("total", "Time"),
                            ("avg", "Avg"),
                            ("min", "Min"),
                            ("max", "Max"),
                        )
                    },
                }
            )
    return rows


def _summaries(rows: list[dict[str, object]], stage: str, path: Path) -> dict[str, pd.DataFrame]:
    if not any(r["type"] == GPU for r in rows):
        raise ParseError(path, EXPECTED, "no GPU activities rows")
    df = pd.DataFrame(
        rows, columns=["type", "time_pct", "total", "calls", "avg", "min", "max", "name"]
    ).astype({k: "float64" for k in ("time_pct", "total", "avg", "min", "max")})
    if df["name"].isna().any():
        raise ParseError(path, EXPECTED, "a summary row has no name (truncated file?)")
    df = df.assign(
        stage=stage,
        avg_ns=df["avg"],
        total_ns=df["total"].round(),
        min_ns=df["min"].round(),
        max_ns=df["max"].round(),
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


def _csv_trace(lines: list[str], i: int, stage: str, path: Path) -> pd.DataFrame:
    """The `--print-gpu-trace` CSV table starting at line `i`."""
    block = _block(lines, i)
    dtypes = {
        "Name": "category",
        "Device": "category",
        "SrcMemType": "category",
        "DstMemType": "category",
    }
    raw = csvtext.read_csv_text(
        "\n".join(block) + "\n",
        path,
        EXPECTED,
        dtype={c: dtypes.get(c, "string") for c in _TRACE_FIELDS},
    )
    if len(raw) < 1 or not pd.isna(raw.iloc[0].get("Name")):
        raise ParseError(path, EXPECTED, f"line {i + 2}: no units row under the trace header")
    units = raw.iloc[0].astype("string").fillna("")
    raw = raw.iloc[1:].reset_index(drop=True)
    raw = raw[~raw["Name"].astype("string").str.startswith("[Unified Memory").fillna(False)]
    fields = {
        _TRACE_FIELDS[c]: _trace_column(raw[c], str(units[c]), path, c)
        for c in raw.columns
        if c in _TRACE_FIELDS
    }
    if (
        any(fields[k].isna().any() for k in ("start", "duration", "name") if k in fields)
        or "name" not in fields
    ):
        raise ParseError(
            path, EXPECTED, "a trace row has no start, duration or name (truncated file?)"
        )
    return _trace_table(pd.DataFrame(fields, index=raw.index), stage)


def _trace_column(values: pd.Series, unit: str, path: Path, column: str) -> pd.Series:
    field = _TRACE_FIELDS[column]
    if field in ("name", "device", "src", "dst"):
        return values
    number = csvtext.numbers(values, path, column)
    if field in ("start", "duration"):
        return csvtext.scaled(number, csvtext.time_factor(unit, path, column))
    if field in ("ssmem", "dsmem", "bytes"):
        return csvtext.scaled(number, csvtext.byte_factor(unit, path, column, binary=True))
    return csvtext.scaled(number, 1)


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


def _block(lines: list[str], i: int) -> list[str]:
    """Lines `i`.. up to the first blank line or `==PID==` line."""
    end = i + 1
    while end < len(lines) and lines[end].strip() and not lines[end].startswith("=="):
        end += 1
    return lines[i:end]


def _number(text: object, path: Path) -> float:
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        raise ParseError(path, EXPECTED, f"{text!r} is not a number") from None
