"""The cells of an nvprof gpu trace -> its fields and its table: each column's distinct values
read once and handed on per row (times and sizes with their units, grids and blocks, devices,
names with their correlation ids), Unified Memory rows told apart and left out, and the checks
that every row has its Start, Duration and Name.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from profiler.parse import (
    bounded_names,
    byte_spans,
    cell_quotes,
    csvtext,
    gpuops,
    nvprof_summary_cells,
    reader_notes,
    values,
)
from profiler.parse.table_origin import Origin

# text header word (footnote star dropped) -> field; other columns (Throughput, Context,
# Unified Memory, Virtual Address) are not read
TEXT_FIELDS = {
    "Start": "start",
    "Duration": "duration",
    "Grid Size": "grid",
    "Block Size": "block",
    "Regs": "registers",
    "SSMem": "ssmem",
    "DSMem": "dsmem",
    "Size": "bytes",
    "SrcMemType": "src",
    "DstMemType": "dst",
    "Device": "device",
    "Stream": "stream",
}
_CORR_SUFFIX = re.compile(r"^(?P<name>.*\S) \[(?P<corr>[0-9]{1,18})\]\Z")
UNIFIED = "[Unified Memory"
# A table's fields, the data rows (0-based) they are, and how many data rows it has.
Read = tuple[dict[str, pd.Series], np.ndarray, int]


def note_unified(left_out: int, origin: Origin) -> None:
    """Say (`reader_notes.ReadNote`) that `left_out` Unified Memory rows of the trace at `origin`
    were left out, if any."""
    if left_out:
        rows = f"{left_out} Unified Memory row{'s' if left_out > 1 else ''}"
        reader_notes.read_note(
            f"line {origin.first_line}: nvprof's gpu trace: {rows} (page faults and migrations, "
            "no kernel, copy or memset) left out: profgen has no table for them",
            origin.first_line,
        )


def checked(fields: dict[str, pd.Series], origin: Origin) -> None:
    """Start, Duration and Name in every row; the durations' total in range.

    Raises: ParseError naming the line of the first row without one, or the column."""
    check_present(fields, origin, {"start": "Start", "duration": "Duration", "name": "Name"})
    values.check_total(fields["duration"], origin, "Duration")


def kept(names: pd.Series, codes: np.ndarray) -> np.ndarray:
    """The data rows that are no Unified Memory event."""
    unified = names.astype(str).str.startswith(UNIFIED).to_numpy(dtype=bool)
    return np.flatnonzero(~np.append(unified, False)[codes])


def fixed_cells(
    rows: list[str], columns: dict[str, tuple[int, int]], labels: np.ndarray, origin: Origin
) -> dict[str, tuple[pd.Series, np.ndarray]]:
    """The distinct values and per-row codes of every column profgen reads but Name. Start and
    Duration are cut from every row; the columns between them and Name, which repeat (grids,
    registers, devices, streams), are cut from the distinct middles of the rows only.

    Raises: ParseError as `cells`.
    """
    read = read_columns(columns)
    out = {}
    for column in ("Start", "Duration"):
        a, b = read.pop(column)
        out[column] = cells([row[a : b + 1] for row in rows], b - a, origin, column, labels)
    if not read:
        return out
    low, high = middle(columns, read)
    middles, codes = pd.factorize(np.asarray([row[low:high] for row in rows], dtype=object))[::-1]
    out.update(middle_cells(middles, codes, read, low, labels, origin))
    return out


def read_columns(columns: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """The columns profgen reads (Name aside), by header word."""
    return {c: span for c, span in columns.items() if TEXT_FIELDS.get(c.rstrip("*"))}


def middle(
    columns: dict[str, tuple[int, int]], read: dict[str, tuple[int, int]]
) -> tuple[int, int]:
    """Where the middle of a row starts and ends: from Duration's end to past the last column
    read before Name."""
    return columns["Duration"][1], max(b for a, b in read.values()) + 1


def middle_cells(
    middles: np.ndarray,
    codes: np.ndarray,
    read: dict[str, tuple[int, int]],
    low: int,
    labels: np.ndarray,
    origin: Origin,
) -> dict[str, tuple[pd.Series, np.ndarray]]:
    """The columns `read` (Start and Duration aside) of the distinct row middles `middles`
    (`codes`: each row's), as `cells` gives them per row.

    Raises: ParseError as `cells`.
    """
    out = {}
    firsts = labels[byte_spans.first_rows(codes)]  # (codes numbered as pd.factorize does)
    for column, (a, b) in read.items():
        raw = [middle[a - low : b - low + 1] for middle in middles]
        cats, inner = cells(raw, b - a, origin, column, firsts)
        out[column] = (cats, np.append(inner, -1)[codes])
    return out


def cells(
    raw: list[str], width: int | None, origin: Origin, column: str, rows: np.ndarray
) -> tuple[pd.Series, np.ndarray]:
    """One column's distinct values (stripped; `-` and blank are no value) and each element's
    code into them (-1: no value). `raw` holds each cell with the character after it, which must
    be a space (or the row's end), or for Name (`width` None) the character before it; `rows`
    the data row of each element. The values are indexed by the first row that holds each, so
    that a bad one is named by its line.

    Raises: ParseError naming the line of the first row whose value crosses the column's edge.
    """
    codes, uniques = pd.factorize(np.asarray(raw, dtype=object), use_na_sentinel=False)
    cats = pd.Series(uniques, dtype=object)
    if width is None:
        crossed = (cats.str.len() > 0) & ~cats.str.startswith(" ")
    else:
        crossed = (cats.str.len() > width) & ~cats.str.endswith(" ")
    if crossed.any():
        row = int(_first_rows(codes, rows, len(cats))[crossed.to_numpy(dtype=bool)].min())
        raise origin.error(
            f"line {origin.line(row)}: the row does not line up with the gpu trace header at "
            f"column {column!r} (was it re-spaced?)"
        )
    again, stripped = pd.factorize(cats.str.strip().to_numpy(dtype=object))
    codes = again[codes]
    codes = np.where(np.isin(stripped, ["", "-"])[codes], -1, codes)
    firsts = _first_rows(codes, rows, len(stripped))
    return pd.Series(stripped, index=firsts, dtype=object), codes


def _first_rows(codes: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """The data row (`rows[i]` is element i's) where each of the `n` codes first appears; the
    first row for a code that does not (no message names it)."""
    first = np.zeros(n, dtype="int64")
    seen, at = np.unique(codes, return_index=True)
    ok = seen >= 0
    first[seen[ok]] = at[ok]
    return rows[first] if len(rows) else first


def _whole_rows(per_value: np.ndarray, codes: np.ndarray, index: pd.Index) -> pd.Series:
    """Row i gets `per_value[codes[i]]` rounded, as `values.whole` rounds it; code -1 gets NA.
    (Rounded once per value, then taken per row.)"""
    number = np.append(per_value.astype("float64"), np.nan)
    missing = np.isnan(number)
    ints = np.where(missing, 0, np.rint(number)).astype("int64")
    # code -1 takes the last of them: the NaN appended
    return pd.Series(pd.arrays.IntegerArray(ints[codes], missing[codes]), index=index, copy=False)


def text_field(
    field: str, cats: pd.Series, codes: np.ndarray, index: pd.Index, origin: Origin, column: str
) -> dict[str, pd.Series]:
    """One text column's distinct values and codes -> its fields (`grid` -> `grid_x`, ...).

    Raises: ParseError naming the line and column of a bad cell.
    """
    if field == "device":
        return {field: _categorical(cats.map(_device_ordinal).tolist(), codes, index)}
    if field in ("name", "src", "dst"):
        cat = pd.Categorical.from_codes(codes, categories=pd.Index(cats.to_numpy(), dtype=object))
        series = pd.Series(cat, index=index)
        return {field: bounded_names.cap_names(series) if field == "name" else series}
    if field in ("grid", "block"):
        parts = _dims(cats, origin, column)
        return {
            f"{field}_{axis}": _whole_rows(p, codes, index)
            for axis, p in zip("xyz", parts, strict=True)
        }
    if field in ("start", "duration"):
        per_value = nvprof_summary_cells.times(cats, origin, column).to_numpy(dtype="float64")
    elif field in ("ssmem", "dsmem", "bytes"):
        per_value = _sizes(cats, origin, column)
    else:  # registers, stream
        per_value = values.numbers(cats, origin, column, values.COUNT).to_numpy(dtype="float64")
    return {field: _whole_rows(per_value, codes, index)}


def _dims(cats: pd.Series, origin: Origin, column: str) -> list[np.ndarray]:
    """`(32768 1 1)` -> x, y and z, one array per axis over the distinct values.

    Raises: ParseError naming the line and column of a value that is not three numbers in
        parentheses.
    """
    inner = cats.str.removeprefix("(").str.removesuffix(")").str.split()
    sizes = inner.map(lambda parts: len(parts) if isinstance(parts, list) else 0)
    shape = cats.str.startswith("(") & cats.str.endswith(")") & (sizes == 3)
    bad = np.flatnonzero(~shape.to_numpy(dtype=bool) & ~cats.isin(["", "-"]).to_numpy(dtype=bool))
    if len(bad):
        cell = cell_quotes.shown_cell(str(cats.iloc[bad[0]]))
        raise origin.cell_error(int(cats.index[bad[0]]), column, f"{cell} is not (x y z)")
    parts = inner.where(shape, None)
    return [
        values.numbers(parts.str[axis], origin, column, values.COUNT).to_numpy(dtype="float64")
        for axis in range(3)
    ]


def _sizes(cats: pd.Series, origin: Origin, column: str) -> np.ndarray:
    """`8.0000KB`, `0B`, `254.72MB` -> bytes (binary prefixes), over the distinct values.

    Raises: ParseError naming the line and column of a value without a size unit.
    """
    text = cats.astype(str)
    digits = text.str.rstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    units = [t[len(d) :] for t, d in zip(text, digits, strict=True)]
    factor = np.array([csvtext.BINARY_BYTES.get(u.lower(), np.nan) for u in units])
    missing = cats.isin(["", "-"]).to_numpy(dtype=bool)
    bad = np.flatnonzero(np.isnan(factor) & ~missing)
    if len(bad):
        cell = cell_quotes.shown_cell(str(cats.iloc[bad[0]]))
        raise origin.cell_error(
            int(cats.index[bad[0]]), column, f"{cell} is not a size such as 8.0000KB"
        )
    numbers = digits.where(~missing, None).set_axis(cats.index)
    checked = values.numbers(
        numbers, origin, column, values.SIZE, np.nan_to_num(factor, nan=1.0), cats
    )
    return checked.to_numpy(dtype="float64")


def _device_ordinal(label: object) -> str | None:
    """`TITAN Xp (0)` -> `0`; a label nvprof cut to its column (`Quadro GP100 (0`) keeps its
    ordinal when the digits are there; `Tesla P100-PCIE` has none."""
    text = str(label)
    at = text.rfind("(")
    digits = text[at + 1 :].removesuffix(")") if at >= 0 else ""
    return digits if digits.isdigit() and len(digits) < 6 else None


def check_present(fields: dict[str, pd.Series], origin: Origin, required: dict[str, str]) -> None:
    """Every row has a value in each `required` field (field -> column).

    Raises: ParseError naming the column, and the line of the first row without a value.
    """
    for field, column in required.items():
        if field not in fields:
            raise origin.cell_error(None, column, "the trace has no such column")
        empty = np.flatnonzero(fields[field].isna().to_numpy())
        if len(empty):
            row = int(fields[field].index[empty[0]])
            raise origin.cell_error(row, column, "no value (truncated file?)")


def trace_table(f: pd.DataFrame, stage: str) -> pd.DataFrame:
    names, corr = _split_correlation(f["name"])
    return gpuops.trace_table(f.assign(name=names, corr=f["corr"] if "corr" in f else corr), stage)


def _split_correlation(names: pd.Series) -> tuple[pd.Series, pd.Series]:
    """`kernel(float*) [218]` -> (`kernel(float*)`, 218), by distinct value; the names as a
    categorical (what `gpuops.trace_table` reads them as)."""

    def name_of(v: object) -> str | None:
        match = _CORR_SUFFIX.match(v) if isinstance(v, str) else None
        return match["name"] if match else (v if isinstance(v, str) else None)

    def corr_of(v: object) -> int | None:
        match = _CORR_SUFFIX.match(v) if isinstance(v, str) else None
        return int(match["corr"]) if match else None

    found, codes = gpuops.lookup(names, name_of)
    return _categorical(found, codes, names.index), gpuops.map_ints(names, corr_of)


def _categorical(found: list[object], codes: np.ndarray, index: pd.Index) -> pd.Series:
    """A categorical Series whose row i is `found[codes[i]]`; code -1 or a None value -> NA
    (the values of `gpuops.strings`, without a string per row)."""
    inner, distinct = pd.factorize(pd.Series(found, dtype=object))  # None -> -1
    rows = np.append(inner, -1)[np.where(codes < 0, len(found), codes)]
    categories = pd.Index(distinct, dtype=object)
    return pd.Series(pd.Categorical.from_codes(rows, categories=categories), index=index)
