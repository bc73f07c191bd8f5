"""nvprof's `--csv` summary table -> rows of checked numbers (`csv_rows`), times converted by
its units row (`,%,ms,,us,us,ms,`).
"""

from __future__ import annotations

import pandas as pd

from profiler.parse import csvtext, nvprof_summary_cells, values
from profiler.parse.nvprof_summary_cells import COLUMNS
from profiler.parse.table_origin import Origin


def csv_rows(origin: Origin, section: str) -> pd.DataFrame:
    """The rows of one `nvprof --csv` summary table, times converted by its units row
    (`,%,ms,,us,us,ms,`).

    Returns: DataFrame with `COLUMNS`, as `text_rows`.

    Raises: ParseError for a repeated column, a missing units row, a truncated last row or a
        bad cell (named by line and column).
    """
    header = csvtext.header_cells(str(origin.text).split("\n", 1)[0])
    csvtext.check_header(header, origin.path, origin.expected)
    raw = csvtext.read_csv_text(origin.text, origin)
    if len(raw) < 1 or str(raw["Time(%)"].iloc[0]).strip() != "%":
        raise origin.error(f"line {origin.first_line + 1}: no units row (`,%,ms,,us,...`)")
    units, raw = raw.iloc[0].fillna(""), raw.iloc[1:].reset_index(drop=True)
    csvtext.check_last_row(origin, len(header), len(raw) - 1)
    out = {
        "type": raw["Type"] if "Type" in raw else pd.Series(section, index=raw.index),
        "name": raw["Name"],
        "time_pct": values.numbers(raw["Time(%)"], origin, "Time(%)", values.SHARE),
        "calls": values.numbers(raw["Calls"], origin, "Calls", values.COUNT),
    }
    for field, column in nvprof_summary_cells.TIMES.items():
        factor = csvtext.time_factor(str(units[column]), origin.path, column)
        out[field] = values.numbers(raw[column], origin, column, values.TIME, factor)
    rows = pd.DataFrame(out, columns=COLUMNS)
    nvprof_summary_cells.check_shares(rows, origin, resolution=1e-6)
    return rows
