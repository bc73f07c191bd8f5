"""nvprof's `--print-gpu-trace --csv` table -> `schema.GPU_TRACE`:
`"Start","Duration","Grid X",...,"Name"[,"Correlation_ID"]` and a units row under the header
(`s,ms,,,,,,,,B,B,MB,GB/s,...`).
"""

from __future__ import annotations

import pandas as pd

from profiler.parse import bounded_names, csvtext, nvprof_trace_cells, values
from profiler.parse.table_origin import Origin

_CSV_FIELDS = {
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


def csv_trace(origin: Origin, stage: str) -> pd.DataFrame:
    """The `--print-gpu-trace --csv` table: units from the row under the header.

    Returns: DataFrame with `schema.GPU_TRACE` columns (Unified Memory rows dropped).

    Raises: ParseError for a repeated column, a missing units row, a truncated last row or a bad
        cell (named by line and column).
    """
    cells = csvtext.header_cells(str(origin.text).split("\n", 1)[0])
    csvtext.check_header(cells, origin.path, origin.expected)
    labels = ("Name", "Device", "SrcMemType", "DstMemType")
    raw = csvtext.read_csv_text(
        origin.text, origin, dtype={c: "category" if c in labels else "string" for c in _CSV_FIELDS}
    )
    if len(raw) < 1 or "Name" not in raw or not pd.isna(raw["Name"].iloc[0]):
        raise origin.error(f"line {origin.first_line + 1}: no units row under the trace header")
    units = raw.iloc[0].astype("string").fillna("")
    raw = raw.iloc[1:].set_axis(pd.RangeIndex(len(raw) - 1))  # data rows from 0, as in origin
    csvtext.check_last_row(origin, len(cells), len(raw) - 1)
    rows = len(raw)
    raw = raw[
        ~raw["Name"].astype("string").str.startswith(nvprof_trace_cells.UNIFIED).fillna(False)
    ]
    nvprof_trace_cells.note_unified(rows - len(raw), origin)
    fields = {
        _CSV_FIELDS[c]: _csv_column(raw[c], str(units[c]), origin, c)
        for c in raw.columns
        if c in _CSV_FIELDS
    }
    nvprof_trace_cells.check_present(
        fields, origin, {"start": "Start", "duration": "Duration", "name": "Name"}
    )
    values.check_total(fields["duration"], origin, "Duration")
    return nvprof_trace_cells.trace_table(pd.DataFrame(fields, index=raw.index), stage)


def _csv_column(cells: pd.Series, unit: str, origin: Origin, column: str) -> pd.Series:
    field = _CSV_FIELDS[column]
    if field in ("name", "device", "src", "dst"):
        return bounded_names.cap_names(cells)
    if field in ("start", "duration"):
        factor = csvtext.time_factor(unit, origin.path, column)
        return values.integers(cells, origin, column, values.TIME, factor)
    if field in ("ssmem", "dsmem", "bytes"):
        factor = csvtext.byte_factor(unit, origin.path, column, binary=True)
        return values.integers(cells, origin, column, values.SIZE, factor)
    return values.integers(cells, origin, column, values.COUNT)
