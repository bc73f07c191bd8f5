"""nvprof's summary tables (text and `--csv`) -> rows of checked numbers -> profgen's tables
(`gpu_activities`, `api_calls`, and `ranges` from NVTX range summaries), for `nvprof`. The rows
come from `nvprof_summary_text` and `nvprof_summary_csv`, their numbers from
`nvprof_summary_cells`; this module makes them profgen's tables.

Every line of a table (from its header to the blank, `==` or code fence line that ends it) must
be a row; every number is checked (see `profiler.parse.values`) and named by line and column when
it is wrong. A row cut mid-way (it lacks fields or a time unit) is refused. A table of the top
rows only (what people paste) has shares that add up to less than 100% per row type: its rows
are read, and a `reader_notes.TrimmedTable` warning per row type says how much of the time they
cover, since its totals understate the stage; shares above 100% are refused.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import bounded_names, gpuops, reader_notes, values
from profiler.parse.nvprof_summary_text import Names
from profiler.parse.table_origin import Origin


class NoRows(ParseError):
    """A summary whose tables have no rows: a file cut after a header, or a run nvprof found
    nothing to list in (`nvprof.read_log` then quotes nvprof's own words)."""


GPU, API = "GPU activities", "API calls"


def summary_tables(
    parts: list[tuple[Origin, pd.DataFrame]],
    stage: str,
    file: Origin,
    names: list[Names | None] | None = None,
) -> dict[str, pd.DataFrame]:
    """The rows of a run's summary tables (each with its table's origin) -> `gpu_activities`
    (GPU rows) and `api_calls` (API rows), each only when it has rows.

    `names`, per table, its names' `Names` when `nvprof_summary_text.text_rows_named` gave them.

    Returns: DataFrames with `schema.GPU_ACTIVITIES` and `schema.API_CALLS` columns.

    Raises: ParseError (naming `file`) for tables without rows, a row without a name, totals
        past the int64 range, or GPU activities in several tables (one per device).
    """
    typed = [_row_types(rows["type"]) for _, rows in parts]  # row types, first seen first
    _check_one_summary(parts, file, [kinds for _, kinds in typed])
    rows = _joined([p for _, p in parts])
    if rows.empty:
        line = parts[0][0].first_line
        raise NoRows(
            file.path, file.expected, f"the summary at line {line} has no rows (truncated?)"
        )
    known = names[0] if names is not None and len(parts) == 1 else None  # names all there
    if known is None and rows["name"].isna().any():
        raise file.error("a summary row has no name (truncated file?)")
    sizes_all = _name_sizes(rows["name"]) if known is None else known.sizes
    codes, kinds = typed[0] if len(parts) == 1 else _row_types(rows["type"])
    total = rows["total"].to_numpy(dtype="float64", na_value=np.nan)
    for k, row_type in enumerate(kinds):  # as `groupby("type", sort=False)`
        values.check_total(pd.Series(total[codes == k]), file, f"Time of {row_type}")
    out = {}
    for row_type, name, tbl in (
        (GPU, "gpu_activities", schema.GPU_ACTIVITIES),
        (API, "api_calls", schema.API_CALLS),
    ):
        at = [k for k, kind in enumerate(kinds) if kind == row_type]
        if not at:
            continue
        which = np.flatnonzero(codes == at[0])
        if row_type == GPU:  # its names change (copies are relabelled): sorted as they are then
            out[name] = _conform(_gpu_kinds(_in_ns(_taken(rows, which), stage)), tbl)
        else:
            sizes = None if sizes_all is None else sizes_all[which]
            if sizes is not None and int(sizes.max()) > bounded_names.MAX_NAME:
                sizes = None  # names capped: measured again
            text = None if known is None or sizes is None else known.text[which]
            out[name] = _conform(_in_ns(_taken(rows, which), stage, sizes), tbl, sizes, text)
    return out


def _row_types(types: pd.Series) -> tuple[np.ndarray, list]:
    """`pd.factorize(types)`: each row's code and the types in order of first appearance, read
    per run of rows of one type (a text table's rows come in runs) when no type is missing."""
    if not isinstance(types.dtype, pd.StringDtype) or not len(types):
        codes, kinds = pd.factorize(types.array)
        return codes, list(kinds)
    cells = types.to_numpy(dtype=object)
    try:
        runs = np.flatnonzero(np.append(True, cells[1:] != cells[:-1]))
    except TypeError:  # bool(NA): a type is missing
        codes, kinds = pd.factorize(types.array)
        return codes, list(kinds)
    codes, kinds = pd.factorize(cells[runs])
    return np.repeat(codes, np.diff(np.append(runs, len(cells)))), list(kinds)


def _joined(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The tables' rows one after another, numbered from 0 (one table: itself, not a copy)."""
    if len(frames) == 1 and frames[0].index.equals(pd.RangeIndex(len(frames[0]))):
        return frames[0]
    return pd.concat(frames, ignore_index=True)


def _name_sizes(names: pd.Series) -> np.ndarray | None:
    """The length of each name (`string` names, none missing), or None for other names."""
    if not isinstance(names.dtype, pd.StringDtype):
        return None
    return np.fromiter(map(len, names.to_numpy(dtype=object)), np.int64, len(names))


def _taken(rows: pd.DataFrame, at: np.ndarray) -> pd.DataFrame:
    """`rows.iloc[at]` (`at` ascending), a slice when `at` is a run of rows (no copy)."""
    if len(at) and int(at[-1]) - int(at[0]) == len(at) - 1:
        return rows.iloc[int(at[0]) : int(at[-1]) + 1]
    return rows.iloc[at]


def range_table(parts: list[tuple[Origin, pd.DataFrame]], stage: str) -> pd.DataFrame:
    """NVTX range summaries (`Range:`, `GPU activities:`, `API calls:` rows under `NVTX result:`
    and `Range "name"` lines) -> a row per range: its CPU time from the `Range:` row, its GPU
    time and operations summed over its GPU activities.

    Returns: DataFrame with `schema.RANGES` columns.

    Raises: ParseError for a table without one `Range:` row.
    """
    out = []
    for origin, rows in parts:
        found = rows[rows["type"] == "Range"]
        if len(found) != 1:
            raise origin.error(
                f"line {origin.first_line}: an NVTX range summary has one Range: row"
            )
        gpu = rows[rows["type"] == GPU]
        out.append(
            found.assign(
                gpu_total_ns=float(gpu["total"].sum()) if len(gpu) else np.nan,
                gpu_ops=float(gpu["calls"].sum()) if len(gpu) else np.nan,
            )
        )
    rows = pd.concat(out, ignore_index=True)
    df = _in_ns(rows, stage).assign(
        gpu_total_ns=values.whole(rows["gpu_total_ns"].round()),
        gpu_ops=values.whole(rows["gpu_ops"]),
    )
    return schema.validate(schema.conform(df, schema.RANGES), schema.RANGES)


def _in_ns(rows: pd.DataFrame, stage: str, sizes: np.ndarray | None = None) -> pd.DataFrame:
    """Summary rows with the stage, capped names and the `*_ns` columns (whole but the mean);
    `sizes`, the names' lengths when known, spares measuring them again."""
    names = rows["name"].astype("string")
    short = sizes is not None and int(sizes.max(initial=0)) <= bounded_names.MAX_NAME
    return rows.assign(
        stage=stage,
        name=names if short else bounded_names.cap_names(names),
        avg_ns=rows["avg"],
        total_ns=rows["total"].round(),
        min_ns=rows["min"].round(),
        max_ns=rows["max"].round(),
    )


_SAME = ["type", "name", "time_pct", "total", "calls"]  # what a quoted-again row repeats


def requoted(parts: list[tuple[Origin, pd.DataFrame]], per_device: list[bool]) -> list[int]:
    """The tables of a run's summary (`parts`) whose every row repeats a row of a table kept
    above them (notes that quote a run's summary whole, then its GPU activities and API calls
    again, each to explain), each said (`reader_notes.read_note`): the readers leave them out. A
    table under a `Device "..."` line (`per_device`: `--print-summary-per-gpu`) is never one. Only a
    table whose first row's time is among a kept table's is compared row by row."""
    keep, out = [0] if parts else [], []
    for j in range(1, len(parts)):
        rows = parts[j][1]
        first = rows["total"].iloc[0] if len(rows) else np.nan
        again = next((k for k in keep if _repeats(rows, parts[k][1], first)), None)
        if again is None or per_device[j]:
            keep.append(j)
            continue
        line, was = parts[j][0].first_line, parts[again][0].first_line
        reader_notes.read_note(
            f"line {line}: a summary whose {len(rows)} rows all repeat the summary at line {was} "
            "(quoted again): left out",
            line,
        )
        out.append(j)
    return out


def _repeats(rows: pd.DataFrame, above: pd.DataFrame, first: float) -> bool:
    """Whether every row of `rows` is a row of `above` (`_SAME` cells), looked at only when
    `above` has a row of time `first`."""
    if not len(rows) or not (above["total"].to_numpy() == first).any():
        return False
    seen = set(above[_SAME].astype("string").itertuples(index=False, name=None))
    return all(
        row in seen for row in rows[_SAME].astype("string").itertuples(index=False, name=None)
    )


def _check_one_summary(
    parts: list[tuple[Origin, pd.DataFrame]], file: Origin, kinds: list[list[str]]
) -> None:
    """`kinds`: each table's row types.

    Raises: ParseError when several tables of one run have GPU activities (per device, as
    `--print-summary-per-gpu` writes them): their shares would add up to more than 100%."""
    lines = [origin.first_line for (origin, _), got in zip(parts, kinds, strict=True) if GPU in got]
    if len(lines) > 1:
        shown = ", ".join(str(n) for n in lines[:8])
        raise file.error(
            f"one run with {len(lines)} GPU activity summaries (lines {shown}; one per device?); "
            "profgen reads one summary per stage"
        )


def _gpu_kinds(gpu: pd.DataFrame) -> pd.DataFrame:
    """GPU activity rows with their kind, copy direction and display name (`gpuops.copy_name`),
    from the label."""
    names = gpu["name"].astype("string")
    direction = names.map(gpuops.copy_direction).astype("string")
    memset = names.map(gpuops.is_memset_label).astype(bool)
    kind = np.select(
        [direction.notna().to_numpy(), memset.to_numpy()],
        [schema.MEMCPY, schema.MEMSET],
        schema.KERNEL,
    )
    copies = direction.notna().to_numpy()
    label = names.copy()
    label[copies] = names[copies].map(gpuops.copy_name).astype("string")
    return gpu.assign(kind=kind, copy_kind=direction, name=label)


def _conform(
    df: pd.DataFrame,
    tbl: schema.Table,
    sizes: np.ndarray | None = None,
    text: np.ndarray | None = None,
) -> pd.DataFrame:
    """`df`'s rows in `_order` (`sizes`, `text`: its names' lengths and bytes, if known) as
    `tbl`."""
    order = _order(df, sizes, text)
    stage = pd.array(df["stage"].iloc[:1].to_numpy(), dtype="string")  # not taken row by row
    df = df[[c for c in df.columns if c in tbl.names and c != "stage"]].iloc[order]
    df = df.assign(stage=stage.take(np.zeros(len(df), dtype=np.intp)))
    return schema.validate(
        schema.conform(df, tbl, fill=("bytes",) if "bytes" in tbl.names else ()), tbl
    )


def _order(
    df: pd.DataFrame, sizes: np.ndarray | None = None, text: np.ndarray | None = None
) -> np.ndarray:
    """The rows by total time, longest first, then by name (stable), as `sort_values` orders
    them: the names as fixed-width NumPy text (compared in C, code point by code point) when
    that is small and exact (no name ends with a NUL, which NumPy drops), else as objects."""
    total = df["total_ns"].to_numpy(dtype="float64", na_value=np.nan)
    if text is not None and len(text) == len(total):  # the names as bytes already (`Names`)
        return _by_total(total, np.argsort(text, kind="stable"))
    names = df["name"].astype("string")
    if sizes is None or not len(sizes):  # else the names are all there
        plain = names.to_numpy(dtype=object) if len(names) and names.notna().all() else None
        sizes = None if plain is None else np.fromiter(map(len, plain), np.int64, len(plain))
    else:
        plain = names.to_numpy(dtype=object)
    if sizes is None or int(sizes.max()) * 4 * len(names) > 256 * 2**20:
        return _sorted_by_pandas(df)
    text = np.array(plain, dtype=f"U{max(int(sizes.max()), 1)}")
    if (np.strings.str_len(text) != sizes).any():  # a name ended with a NUL, which NumPy drops
        return _sorted_by_pandas(df)
    return _by_total(total, np.argsort(text, kind="stable"))  # `lexsort((text, -total))`


def _by_total(total: np.ndarray, by_name: np.ndarray) -> np.ndarray:
    """The rows in `by_name` order (by name, stable) sorted again by total, longest first,
    stably. Whole totals less than 2**53 apart are sorted as distinct integer keys (how far each
    is below the longest, then its place in `by_name`), which need no stable sort: a faster
    one (45 of the 110 ms of a 1,000,000-row table). Other totals (NaN, fractions) are sorted
    stably."""
    count = len(total)
    if count and np.isfinite(total).all() and (total == np.round(total)).all():
        high, spread = float(total.max()), float(total.max() - total.min())
        if spread < 2.0**53 and (spread + 1) * count < 2.0**62:  # exact, and no overflow
            key = np.empty(count, dtype=np.int64)
            below = (high - total[by_name]).astype(np.int64)  # whole and exact
            key[by_name] = below * count + np.arange(count, dtype=np.int64)
            order: np.ndarray = np.argsort(key)
            return order
    return by_name[np.argsort(-total[by_name], kind="stable")]


def _sorted_by_pandas(df: pd.DataFrame) -> np.ndarray:
    by = df.reset_index(drop=True)
    order = by.sort_values(["total_ns", "name"], ascending=[False, True], kind="stable")
    return order.index.to_numpy()
