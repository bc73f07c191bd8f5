"""An `ncu --csv` details page (`--page details`: one row per launch and metric): read by
distinct cell (`read_page`), its rows checked (`check_metric_rows`, `row_cells`), its launches
numbered when it has no `ID` column (nv-nsight-cu-cli 2019.1-2019.3: `launch_ids`), and pivoted
to one row per launch (`details`, which reads a per-kernel summary likewise)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from profiler.parse import cell_quotes, csv_parts, csvtext, ncu_counters, values
from profiler.parse.ncu_metrics import METRICS, RULES, unit_factor
from profiler.parse.table_origin import Origin

# A details page's columns that nothing reads. pandas reads their cells as one byte each, not
# a string each, and they are dropped; it still counts every row's cells, so a row with more
# cells than the header is still refused (pandas' own `usecols` would drop the extra cells).
_UNREAD = frozenset(
    ("Process ID", "Process Name", "Host Name", "Context", "Stream", "Device", "CC")
)


def read_page(data: bytes, origin: Origin, start: int, header: list[str]) -> pd.DataFrame:
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
    """How `read_page` reads a details page's column: one byte a cell (unread), objects (the
    values, mostly distinct) or categories (every other column, each repeating)."""
    if column in _UNREAD:
        return "S1"
    return object if column == "Metric Value" else "category"


def launch_ids(table: pd.DataFrame) -> np.ndarray:
    """The launch IDs of a details page without an `ID` column (nv-nsight-cu-cli 2019.1-2019.3,
    whose header starts `"Kernel Name","Kernel Time"`): ncu writes a launch's rows together,
    so a launch starts where the kernel name or its time (to the second) changes; numbered in
    file order from 0, as strings like the IDs ncu writes."""
    key = table["Kernel Name"].astype(str) + "\x00" + table["Kernel Time"].astype(str)
    starts = (key != key.shift()).to_numpy()
    return (np.cumsum(starts) - 1).astype(str).astype(object)


def row_cells(header: list[str]) -> int:
    """The cells a whole last row has: a details page's metric rows stop after `Metric Value`
    (ncu writes its cells, then one comma: the `Rule Name` cell, empty) and only rule rows fill
    every column, so a page whose last launch's last section has no rule ends with a short
    row; any other page's rows have every header cell."""
    return header.index("Rule Name") + 1 if "Rule Name" in header else len(header)


def check_metric_rows(table: pd.DataFrame, origin: Origin) -> None:
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
        cell_quotes.shown_cell(x)
        for x in (cells["ID"], cells["Metric Name"], column, cells[column])
    )
    raise origin.error(
        f"launch {launch}, metric {metric}: its row has a cell after Metric Value ({name}: {cell}),"
        " where ncu leaves metric rows empty; a cell before it was split by an unquoted comma, so"
        " its value cannot be told"
    )


def details(
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
            number = values.numbers(hits[value], origin, name, RULES[kind], factor)
            by_id = pd.Series(number.to_numpy(), index=hits["ID"].to_numpy())
            found[field] = pd.Series(launches["ID"].map(by_id).to_numpy(dtype="float64"))
            break
    return launches, found
