"""Tables on disk: `write_csv` writes a table of `profiler.schema` as CSV, and `read_csv` reads
it back into its dtypes without loss, refusing a damaged file by file, column and row.

A run directory stores each table as `<table.name>.csv`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from profiler import files, schema
from profiler.errors import SchemaError
from profiler.schema import Column, Table

# Integers are read as nullable Int64 (never through float64: CUPTI timestamps exceed 2**53).
_CSV_DTYPES = {
    "string": "string",
    "int64": "Int64",
    "Int64": "Int64",
    "float64": "float64",
    "bool": "boolean",
}


def write_csv(df: pd.DataFrame, tbl: Table, path: str | Path) -> None:
    """Validate and write `df` as CSV (missing values as empty cells)."""
    schema.validate(df, tbl).to_csv(path, index=False)


def read_csv(
    path: str | Path,
    tbl: Table,
    upgrade: Callable[[pd.DataFrame, str], pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """Read a CSV written by `write_csv` back into `tbl`'s dtypes. `upgrade(df, name)` renames
    and adds the columns of an older schema version first.

    Raises: DataError when the file cannot be read (a FIFO, too large, not UTF-8: see
    `profiler.files.read_text`); SchemaError naming the file and, where one is to blame, the
    column and row: an empty file, a NUL byte, a header that is not `tbl`'s columns (one
    missing, extra or repeated), a malformed row, or a cell its column cannot hold (1.5 or text
    in an integer column, an integer past 64 bits, an empty required cell, a negative time or
    size).
    """
    content = files.read_text(path)
    try:
        return _parse_csv(content, tbl, upgrade)
    except SchemaError as exc:
        raise SchemaError(f"{path}: {exc}") from None


def _parse_csv(
    content: str, tbl: Table, upgrade: Callable[[pd.DataFrame, str], pd.DataFrame] | None
) -> pd.DataFrame:
    if not content.strip():
        raise SchemaError("empty file (not even a header line)")
    if "\0" in content:
        line = content.count("\n", 0, content.index("\0")) + 1
        raise SchemaError(f"line {line}: a NUL byte; the file is damaged or not a CSV table")
    end = content.find("\n")
    header = next(csv.reader(io.StringIO(content if end < 0 else content[:end])), [])
    _check_columns(sorted({c for c in header if header.count(c) > 1}), "repeated", tbl)
    try:
        df = pd.read_csv(
            io.StringIO(content),
            dtype={c.name: _CSV_DTYPES[c.dtype] for c in tbl.columns},
            keep_default_na=False,
            na_values={c.name: [""] for c in tbl.columns},
        )
    except (ValueError, TypeError, OverflowError) as exc:
        _find_bad_cell(content, tbl, upgrade)  # raises when it finds one
        raise SchemaError(_first_line(exc)) from None
    df = upgrade(df, tbl.name) if upgrade is not None else df
    required = [c.name for c in tbl.columns if not c.added]
    _check_columns([c for c in required if c not in df.columns], "missing", tbl)
    _check_columns([c for c in df.columns if c not in tbl.names], "unexpected", tbl)
    try:
        df = schema.validate(schema.conform(df, tbl), tbl)
    except SchemaError:
        _find_bad_cell(content, tbl, upgrade)
        raise
    for col in tbl.columns:  # a time or a size is never negative
        if col.unit in ("ns", "bytes"):
            _bad(col, df[col.name].astype(str), (df[col.name] < 0).fillna(False), "is negative")
    return df


def _check_columns(names: list[str], problem: str, tbl: Table) -> None:
    if names:
        raise SchemaError(
            f"{problem} column(s) {', '.join(map(repr, names))[:300]} in the header; "
            f"table {tbl.name} has exactly {', '.join(tbl.names)}"
        )


def _find_bad_cell(
    content: str, tbl: Table, upgrade: Callable[[pd.DataFrame, str], pd.DataFrame] | None
) -> None:
    """Raises: SchemaError naming the first cell its column cannot hold; returns when every cell
    is fine (or the CSV itself is malformed, which pandas' own message says)."""
    try:
        raw = pd.read_csv(io.StringIO(content), dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError):
        return
    raw = upgrade(raw, tbl.name) if upgrade is not None else raw
    for col in (c for c in tbl.columns if c.name in raw.columns):
        cells = raw[col.name].astype("string").fillna("").str.strip()
        empty = cells == ""
        if col.dtype == "int64":
            _bad(col, cells, empty, "is empty; this column needs a value in every row")
        if col.dtype in ("int64", "Int64"):
            _bad(col, cells, ~empty & ~cells.str.fullmatch(r"[+-]?\d+"), "is not an integer")
            _bad(col, cells, ~empty & cells.map(_past_int64), "is past the 64-bit integer range")
        elif col.dtype == "float64":
            numbers = pd.to_numeric(cells.where(~empty), errors="coerce")
            _bad(col, cells, ~empty & numbers.isna(), "is not a number")


def _past_int64(cell: str) -> bool:
    """True for an integer's text int64 cannot hold (no int() of thousands of digits)."""
    digits = cell.lstrip("+-")
    return len(digits) > 20 or (len(digits) >= 19 and not -(2**63) <= int(cell) < 2**63)


def _bad(col: Column, cells: pd.Series, mask: pd.Series, problem: str) -> None:
    if mask.any():
        row = int(mask.to_numpy().argmax())
        value = str(cells.iloc[row])
        value = value if len(value) <= 40 else value[:40] + "..."
        raise SchemaError(f"column {col.name!r}, row {row + 1}: {value!r} {problem}")


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
