"""nvprof's GPU trace (`--print-gpu-trace`), as text and as `--csv`, -> `schema.GPU_TRACE`.

- `--csv`: `"Start","Duration","Grid X",...,"Name"[,"Correlation_ID"]` and a units row under the
  header (`s,ms,,,,,,,,B,B,MB,GB/s,...`).
- text: a fixed-width table. Every column but `Name` is right-aligned and ends where its header
  word ends; `Name` starts where its header word starts. A cell may hold single spaces
  (`(32768 1 1)`, `TITAN Xp (0)`, `PC 0x4034d6`), so rows are cut at the header's column edges,
  never at spaces, and a row whose cells cross an edge (a re-spaced paste) is refused by line.
  Times and sizes carry their units (`308.93ms`, `1.7920us`, `8.0000KB`, `254.72MB`); `-` is
  no value. The device column is cut to its width (`Quadro GP100 (0`): the ordinal is read when
  it is there, else left missing.

Unified Memory rows (page faults, migrations, thrashes) are not GPU activities and are dropped.
Kernel names carry their correlation id in both layouts of older nvprof and in the text layout
(`kernel(float*) [218]`); it is moved into `correlation_id`. Sizes use binary prefixes (a
40000-byte copy is `39.0625KB`). Distinct cell values are parsed once, so a million-row trace
costs a few passes over its columns.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from profiler.parse import csvtext, gpuops, nvprof_summary, values
from profiler.parse.values import Origin

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
# text header word (footnote star dropped) -> field; other columns (Throughput, Context,
# Unified Memory, Virtual Address) are not read
_TEXT_FIELDS = {
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
_HEADER_CELL = re.compile(r"\S+(?: \S+)*")  # words joined by single spaces: linear, unambiguous
_CORR_SUFFIX = re.compile(r"^(?P<name>.*\S) \[(?P<corr>[0-9]{1,18})\]\Z")
_UNIFIED = "[Unified Memory"


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
        origin.text,
        origin.path,
        origin.expected,
        dtype={c: "category" if c in labels else "string" for c in _CSV_FIELDS},
    )
    if len(raw) < 1 or "Name" not in raw or not pd.isna(raw["Name"].iloc[0]):
        raise origin.error(f"line {origin.first_line + 1}: no units row under the trace header")
    units = raw.iloc[0].astype("string").fillna("")
    raw = raw.iloc[1:].set_axis(pd.RangeIndex(len(raw) - 1))  # data rows from 0, as in origin
    csvtext.check_last_row(origin, len(cells), len(raw) - 1)
    raw = raw[~raw["Name"].astype("string").str.startswith(_UNIFIED).fillna(False)]
    fields = {
        _CSV_FIELDS[c]: _csv_column(raw[c], str(units[c]), origin, c)
        for c in raw.columns
        if c in _CSV_FIELDS
    }
    _check_present(fields, origin, {"start": "Start", "duration": "Duration", "name": "Name"})
    values.check_total(fields["duration"], origin, "Duration")
    return _trace_table(pd.DataFrame(fields, index=raw.index), stage)


def _csv_column(cells: pd.Series, unit: str, origin: Origin, column: str) -> pd.Series:
    field = _CSV_FIELDS[column]
    if field in ("name", "device", "src", "dst"):
        return values.cap_names(cells)
    if field in ("start", "duration"):
        factor = csvtext.time_factor(unit, origin.path, column)
        return values.integers(cells, origin, column, values.TIME, factor)
    if field in ("ssmem", "dsmem", "bytes"):
        factor = csvtext.byte_factor(unit, origin.path, column, binary=True)
        return values.integers(cells, origin, column, values.SIZE, factor)
    return values.integers(cells, origin, column, values.COUNT)


def text_trace(origin: Origin, stage: str) -> pd.DataFrame:
    """The text `--print-gpu-trace` table (`origin.text` starts at its header).

    Returns: DataFrame with `schema.GPU_TRACE` columns (Unified Memory rows dropped); empty
        when every row is a Unified Memory one.

    Raises: ParseError naming the line of a row that does not line up with the header, or the
        line and column of a bad cell.
    """
    header, *lines = str(origin.text).split("\n")
    columns = _text_columns(header, origin)
    rows = [ln.rstrip("\r") for ln in lines if ln.strip()]  # data rows, as Origin counts them
    start = columns["Name"][0] - 1  # a space, then the name to the end of the row
    names, codes = _cells([row[start:] for row in rows], None, origin, "Name", np.arange(len(rows)))
    unified = names.astype(str).str.startswith(_UNIFIED).to_numpy(dtype=bool)
    keep = np.flatnonzero(~np.append(unified, False)[codes])
    kept = [rows[i] for i in keep] if len(keep) < len(rows) else rows
    fields = _text_field("name", names, codes[keep], pd.Index(keep), origin, "Name")
    for column, cells in _fixed_cells(kept, columns, keep, origin).items():
        fields.update(
            _text_field(_TEXT_FIELDS[column.rstrip("*")], *cells, pd.Index(keep), origin, column)
        )
    _check_present(fields, origin, {"start": "Start", "duration": "Duration", "name": "Name"})
    values.check_total(fields["duration"], origin, "Duration")
    return _trace_table(pd.DataFrame(fields, index=pd.Index(keep)), stage)


def _fixed_cells(
    rows: list[str], columns: dict[str, tuple[int, int]], labels: np.ndarray, origin: Origin
) -> dict[str, tuple[pd.Series, np.ndarray]]:
    """The distinct values and per-row codes of every column profgen reads but Name. Start and
    Duration are cut from every row; the columns between them and Name, which repeat (grids,
    registers, devices, streams), are cut from the distinct middles of the rows only.

    Raises: ParseError as `_cells`.
    """
    read = {c: span for c, span in columns.items() if _TEXT_FIELDS.get(c.rstrip("*"))}
    out = {}
    for column in ("Start", "Duration"):
        a, b = read.pop(column)
        out[column] = _cells([row[a : b + 1] for row in rows], b - a, origin, column, labels)
    if not read:
        return out
    low = columns["Duration"][1]
    high = max(b for a, b in read.values()) + 1
    middles, codes = pd.factorize(np.asarray([row[low:high] for row in rows], dtype=object))[::-1]
    firsts = _first_rows(codes, labels, len(middles))
    for column, (a, b) in read.items():
        raw = [middle[a - low : b - low + 1] for middle in middles]
        cats, inner = _cells(raw, b - a, origin, column, firsts)
        out[column] = (cats, np.append(inner, -1)[codes])
    return out


def _text_columns(header: str, origin: Origin) -> dict[str, tuple[int, int]]:
    """Header word -> (start, end) of its cells: from the previous column's end to its own end
    (right-aligned); for `Name`, (its start, -1): to the end of the row.

    Raises: ParseError when the header does not end with `Name` or repeats a column.
    """
    words = [(m.group(), m.start(), m.end()) for m in _HEADER_CELL.finditer(header.rstrip("\r"))]
    if not words or words[-1][0] != "Name":
        raise origin.error(f"line {origin.first_line}: a gpu trace header ends with Name")
    csvtext.check_header([w for w, _, _ in words], origin.path, origin.expected)
    spans, edge = {}, 0
    for word, _, end in words[:-1]:
        spans[word] = (edge, end)
        edge = end
    spans["Name"] = (words[-1][1], -1)
    return spans


def _cells(
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


def _per_row(per_value: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Row i gets `per_value[codes[i]]`; code -1 gets NaN."""
    pool = np.append(per_value.astype("float64"), np.nan)
    return pool[np.where(codes < 0, len(per_value), codes)]


def _text_field(
    field: str, cats: pd.Series, codes: np.ndarray, index: pd.Index, origin: Origin, column: str
) -> dict[str, pd.Series]:
    """One text column's distinct values and codes -> its fields (`grid` -> `grid_x`, ...).

    Raises: ParseError naming the line and column of a bad cell.
    """
    if field == "device":
        return {field: gpuops.strings(cats.map(_device_ordinal).tolist(), codes, index)}
    if field in ("name", "src", "dst"):
        cat = pd.Categorical.from_codes(codes, categories=pd.Index(cats.to_numpy(), dtype=object))
        series = pd.Series(cat, index=index)
        return {field: values.cap_names(series) if field == "name" else series}
    if field in ("grid", "block"):
        parts = _dims(cats, origin, column)
        return {
            f"{field}_{axis}": values.whole(pd.Series(_per_row(p, codes), index=index))
            for axis, p in zip("xyz", parts, strict=True)
        }
    if field in ("start", "duration"):
        per_value = nvprof_summary.times(cats, origin, column).to_numpy(dtype="float64")
    elif field in ("ssmem", "dsmem", "bytes"):
        per_value = _sizes(cats, origin, column)
    else:  # registers, stream
        per_value = values.numbers(cats, origin, column, values.COUNT).to_numpy(dtype="float64")
    return {field: values.whole(pd.Series(_per_row(per_value, codes), index=index))}


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
        cell = values.shown_cell(str(cats.iloc[bad[0]]))
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
        cell = values.shown_cell(str(cats.iloc[bad[0]]))
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


def _check_present(fields: dict[str, pd.Series], origin: Origin, required: dict[str, str]) -> None:
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
