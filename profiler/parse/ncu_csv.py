"""Nsight Compute `ncu --csv` output -> `schema.METRICS`, one row per profiled kernel launch.

Both CSV pages are read:

- `--page raw` (profgen's own collection): one row per launch, one column per metric, and a
  units row (`,,,"ns","byte",...`) under the header;
- `--page details` (ncu's default): one row per launch and metric with `Section Name`,
  `Metric Name`, `Metric Unit`, `Metric Value` columns, pivoted here; section display names
  (`Duration`, `DRAM Throughput`, ...) are understood as well as raw metric names.

ncu writes its `==PROF==` lines and the program's own stdout before the header; numbers carry
thousands separators inside quotes (`"6,144"`, `"2,601,092,896.17"`); `n/a` means no value.
Units are converted (`usecond` -> ns, `Kbyte` -> bytes with SI prefixes, as ncu uses). A metric
the file lacks is NA, not an error. The NVTX column packs every open range as
`"domain:range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"`, outermost first; the innermost
profgen range becomes `range`.

FP32 FLOPs are 2 * ffma + fadd + fmul thread instructions executed (predicated on).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import csvtext, gpuops
from profiler.ranges import DOMAIN

EXPECTED = 'Nsight Compute CSV (ncu --csv; a header starting "ID","Process ID")'

_SASS = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
# field -> (unit kind, names it goes by: raw metric names first, then details-page names)
METRICS = {
    "duration_ns": ("time", ("gpu__time_duration.sum", "Duration")),
    "dram_read_bytes": ("bytes", ("dram__bytes_read.sum",)),
    "dram_write_bytes": ("bytes", ("dram__bytes_write.sum",)),
    "ffma": ("count", (_SASS.format("ffma"),)),
    "fadd": ("count", (_SASS.format("fadd"),)),
    "fmul": ("count", (_SASS.format("fmul"),)),
    "sm_throughput_pct": (
        "pct",
        ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "Compute (SM) Throughput"),
    ),
    "dram_throughput_pct": (
        "pct",
        (
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "DRAM Throughput",
        ),
    ),
    "achieved_occupancy_pct": (
        "pct",
        ("sm__warps_active.avg.pct_of_peak_sustained_active", "Achieved Occupancy"),
    ),
    "registers": ("count", ("launch__registers_per_thread", "Registers Per Thread")),
}
_HEADER = re.compile(r'^"?ID"?,"?Process ID"?,', re.MULTILINE)
_QUOTED = re.compile(r'"([^"]*)"')
_SAME_MSG = re.compile(r"^(?P<domain>[^:]*):(?P<name>.*):[^:]*:[^:]*:[^:]*:[^:]*:[^:]*:(?P=name)$")
_ANY_MSG = re.compile(
    r"^(?P<domain>[^:]*):(?P<name>.*):[^:]*:[^:]*:[^:]*:[^:]*:"
    r"(?:REGISTERED|ASCII|UNICODE|UNKNOWN|NONE):.*$"
)


def read_metrics(path: str | Path, stage: str) -> pd.DataFrame:
    """Read an `ncu --csv` file (raw or details page).

    Args:
        path: the CSV file, with whatever ncu and the program printed before the header.
        stage: the stage key written into every row.

    Returns: DataFrame with `schema.METRICS` columns, one row per kernel launch, by launch ID.

    Raises: ParseError when the file has no ncu CSV header, is malformed or truncated.
    """
    path = Path(path)
    text = csvtext.read_text(path, EXPECTED)
    match = _HEADER.search(text)
    if match is None:
        raise ParseError(path, EXPECTED, "no such header found")
    body = "\n".join(ln for ln in text[match.start() :].splitlines() if not ln.startswith("=="))
    table = csvtext.read_csv_text(body + "\n", path, EXPECTED)
    if "Metric Name" in table.columns and "Metric Value" in table.columns:
        launches, values = _details(table, path)
    else:
        launches, values = _raw(table, path)
    return _metrics(launches, values, stage, path)


def innermost_range(cell: object, domain: str = DOMAIN) -> str | None:
    """The innermost range of `domain` in one packed ncu NVTX cell, or None."""
    if not isinstance(cell, str):
        return None
    found = None
    for segment in _QUOTED.findall(cell):
        match = _SAME_MSG.match(segment) or _ANY_MSG.match(segment)
        if match and match["domain"] == domain:
            found = match["name"]
    return found


def _raw(table: pd.DataFrame, path: Path) -> tuple[pd.DataFrame, dict[str, pd.Series]]:
    """The raw page: metric columns, units in the first row (whose ID is empty)."""
    units = {}
    if len(table) and pd.isna(table["ID"].iloc[0]):
        units = {c: ("" if pd.isna(u) else str(u)) for c, u in table.iloc[0].items()}
        table = table.iloc[1:].reset_index(drop=True)
    values = {}
    for field, (kind, names) in METRICS.items():
        column = next((n for n in names if n in table.columns), None)
        if column is not None:
            number = csvtext.numbers(table[column], path, column)
            values[field] = number * _factor(kind, units.get(column, ""), path, column)
    return table, values


def _details(table: pd.DataFrame, path: Path) -> tuple[pd.DataFrame, dict[str, pd.Series]]:
    """The details page: one row per launch and metric, pivoted to one row per launch."""
    rows = table[table["Metric Name"].notna()]
    launches = table.drop_duplicates("ID").reset_index(drop=True)
    values = {}
    for field, (kind, names) in METRICS.items():
        for name in names:
            hits = rows[rows["Metric Name"] == name].drop_duplicates("ID")
            if hits.empty:
                continue
            number = csvtext.numbers(hits["Metric Value"], path, name)
            units = hits["Metric Unit"].fillna("").astype(str)
            factor = units.map(lambda u, k=kind, n=name: _factor(k, u, path, n)).astype("float64")
            by_id = pd.Series((number * factor).to_numpy(), index=hits["ID"].to_numpy())
            values[field] = pd.Series(launches["ID"].map(by_id).to_numpy(dtype="float64"))
            break
    return launches, values


def _metrics(
    launches: pd.DataFrame, values: dict[str, pd.Series], stage: str, path: Path
) -> pd.DataFrame:
    if "ID" not in launches or "Kernel Name" not in launches:
        raise ParseError(path, EXPECTED, "no ID or Kernel Name column")
    ids = csvtext.numbers(launches["ID"], path, "ID")
    if ids.isna().any() or launches["Kernel Name"].isna().any():
        raise ParseError(path, EXPECTED, "a row has no launch ID or kernel name (truncated file?)")
    nan = pd.Series(np.nan, index=launches.index)
    get = {f: values.get(f, nan).reset_index(drop=True) for f in METRICS}
    nvtx = next((c for c in launches.columns if "Push/Pop_Range" in c), None)
    out = pd.DataFrame(
        {
            "stage": stage,
            "kernel_id": ids.astype("int64"),
            "name": launches["Kernel Name"],
            "range": (gpuops.map_strings(launches[nvtx], innermost_range) if nvtx else pd.NA),
            "grid": launches.get("Grid Size", pd.NA),
            "block": launches.get("Block Size", pd.NA),
            "fp32_flops": csvtext.scaled(2 * get["ffma"] + get["fadd"] + get["fmul"], 1),
            **{
                f: csvtext.scaled(get[f], 1)
                for f in ("duration_ns", "dram_read_bytes", "dram_write_bytes", "registers")
            },
            **{
                f: get[f]
                for f in ("sm_throughput_pct", "dram_throughput_pct", "achieved_occupancy_pct")
            },
        }
    )
    out = schema.conform(out.sort_values("kernel_id", kind="stable"), schema.METRICS)
    return schema.validate(out, schema.METRICS)


def _factor(kind: str, unit: str, path: Path, column: str) -> float:
    if kind == "time":
        return csvtext.time_factor(unit, path, column)
    if kind == "bytes":
        return csvtext.byte_factor(unit, path, column)
    return 1
