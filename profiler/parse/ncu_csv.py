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
The NVTX columns (`--nvtx`) give `range`: profgen's innermost range, else the user's (`ncu_nvtx`
says which). Units and FLOPs: `ncu_metrics`; the table among other lines: `ncu_csv_bounds`; the
details page: `ncu_details`; ncu's own words when it profiled nothing: `ncu_says`.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import pandas as pd

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import (
    csv_parts,
    csvtext,
    ncu_counters,
    ncu_csv_bounds,
    ncu_details,
    ncu_nvtx,
    values,
)
from profiler.parse.ncu_csv_bounds import EXPECTED
from profiler.parse.ncu_metrics import METRICS, RULES, metrics_table, unit_factor
from profiler.parse.ncu_says import nothing_profiled
from profiler.parse.table_origin import Origin

_SUMMARY_KEYS = ("Kernel Name", "Block Size", "Grid Size", "Device", "Context", "Stream")


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
    if not (ncu_csv_bounds.PROF_LINE.search(head) or ncu_csv_bounds.HEADER.search(head)):
        raise ParseError(path, EXPECTED, "no such header nor ==PROF== line at its start")
    data = csvtext.read_utf8(source, EXPECTED)
    match = ncu_csv_bounds.HEADER_BYTES.search(data)
    if match is None:
        said = nothing_profiled(data.decode("utf-8"), "no such header found")
        raise ParseError(path, EXPECTED, said)
    data = data[: ncu_csv_bounds.fence_line(data, match.start())]
    if not ncu_csv_bounds.ncu_only_before(data, match.start()):  # (a table pasted among other text)
        data = data[: ncu_csv_bounds.prose_line(data, match.start())]
        data = data[: ncu_csv_bounds.tail_line(data, match.start())]
    origin, source_bytes, start = ncu_csv_bounds.table(data, match.start(), path)
    header = csvtext.header_cells(ncu_csv_bounds.line_at(data, match.start()))
    csvtext.check_header(header, path, EXPECTED)
    table = ncu_details.read_page(source_bytes, origin, start, header)
    csvtext.check_last_row(origin, ncu_details.row_cells(header), len(table) - 1, source_bytes)
    if "ID" not in table.columns and "Kernel Time" in table.columns:
        table.insert(0, "ID", ncu_details.launch_ids(table))
    if "Metric Name" in table.columns and "Metric Value" in table.columns:
        ncu_details.check_metric_rows(table, origin)
        counters = csv_parts.begun(  # (its own frame over the same cells, while `details` reads)
            functools.partial(ncu_counters.details, table.copy(deep=False), stage),
            alone=csv_parts.part_count(len(source_bytes) - start) > 1,
        )
        launches, found = ncu_details.details(table, origin)
    elif "Metric Name" in table.columns and "Average" in table.columns:
        table = _by_kernel(table.astype("string"))
        launches, found = ncu_details.details(table, origin, value="Average")
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


def _raw(
    table: pd.DataFrame, units: dict[str, str], origin: Origin
) -> tuple[pd.DataFrame, dict[str, pd.Series]]:
    """The raw page: metric columns, units from the row under the header."""
    found = {}
    for field, (kind, names) in METRICS.items():
        column = next((n for n in names if n in table.columns), None)
        if column is not None:
            factor = unit_factor(kind, units.get(column, ""), origin.path, column)
            found[field] = values.numbers(table[column], origin, column, RULES[kind], factor)
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
