"""nvprof's `--print-api-trace --csv` table: one row per CUDA runtime or driver call.

nvprof prints the header `"Start","Duration","Name","Correlation_ID"` (CUDA 9 on; before, no
`Correlation_ID`), then a units row (`us,us,,`), then a row per call: its start and duration in
those units, its name (`cuDeviceGetCount`) and its correlation id.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from profiler import schema
from profiler.parse import bounded_names, cell_quotes, csvtext, values
from profiler.parse.table_origin import Origin

COLUMNS = ("Start", "Duration", "Name")  # every API trace's; `Correlation_ID` may follow


def is_api_header(cells: list[str]) -> bool:
    """Whether a CSV trace header's `cells` are an API trace's (no launch or copy columns)."""
    return tuple(cells[:3]) == COLUMNS and set(cells[3:]) <= {"Correlation_ID"}


def api_trace(origin: Origin, stage: str) -> pd.DataFrame:
    """The table whose header `origin.text` starts with.

    Returns: DataFrame with `schema.API_TRACE` columns (thread unknown).

    Raises: ParseError for a missing units row, a truncated last row, a bad cell (named by
        line and column), or a row that is no CUDA call (`[CUDA memcpy HtoD]`, a kernel: a gpu
        trace cut down to these columns, which nvprof never prints).
    """
    cells = csvtext.header_cells(str(origin.text).split("\n", 1)[0])
    csvtext.check_header(cells, origin.path, origin.expected)
    raw = csvtext.read_csv_text(origin.text, origin)
    if len(raw) < 1 or not pd.isna(raw["Name"].iloc[0]):
        raise origin.error(f"line {origin.first_line + 1}: no units row under the trace header")
    units = raw.iloc[0].astype("string").fillna("")
    raw = raw.iloc[1:].set_axis(pd.RangeIndex(len(raw) - 1))
    csvtext.check_last_row(origin, len(cells), len(raw) - 1)
    _check_calls(raw["Name"].astype("string"), origin)
    start, duration = (
        values.integers(
            raw[c], origin, c, values.TIME, csvtext.time_factor(str(units[c]), origin.path, c)
        )
        for c in ("Start", "Duration")
    )
    ids = raw.get("Correlation_ID", pd.Series(pd.NA, index=raw.index, dtype="string"))
    rows = raw.index
    trace = pd.DataFrame(
        {
            "stage": pd.Series(stage, index=rows, dtype="string"),
            "repeat": np.full(len(rows), -1, dtype="int64"),
            "name": bounded_names.cap_names(raw["Name"]).astype("string"),
            "start_ns": start.astype("int64"),
            "end_ns": (start + duration).astype("int64"),
            "duration_ns": duration.astype("int64"),
            "thread": pd.Series(pd.NA, index=rows, dtype="Int64"),
            "correlation_id": values.integers(ids, origin, "Correlation_ID", values.COUNT),
        },
        index=rows,
    )
    return schema.validate(trace, schema.API_TRACE)


def _check_calls(names: pd.Series, origin: Origin) -> None:
    """Every row names a CUDA runtime or driver call (`cuda...`, `cu...`).

    Raises: ParseError naming the first row that does not."""
    bad = np.flatnonzero(~names.str.startswith("cu").fillna(False).to_numpy(dtype=bool))
    if len(bad):
        raise origin.error(
            f"line {origin.first_line + 2 + int(bad[0])}: a table with an API trace's columns "
            f"(Start, Duration, Name) whose rows are no CUDA calls "
            f"({cell_quotes.shown_cell(str(names.iloc[bad[0]]), 60)}): no trace nvprof prints"
        )
