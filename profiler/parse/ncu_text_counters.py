"""Nsight Compute's text tables, every row as ncu printed it -> `schema.COUNTERS` (`ncu_counters`
says what a row holds).

A row of an open table (`ncu_walk` with `every`) is cut from its right end by its table's column
widths, as `ncu_text` cuts a mapped metric's row; its section is the `Section:` line above it.
Rows repeat from launch to launch: each distinct row (line and table widths) is cut once, and
each distinct section line read once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from profiler.parse import bounded_names, byte_spans, ncu_walk, values
from profiler.parse.ncu_counters import frame

# A row of ncu's text cut by its table's widths: name, unit, value cell, and a per-kernel
# summary's Minimum and Maximum cells (None in a table of three columns).
TextRow = tuple[str, str, str, str | None, str | None]


def text(
    walk: ncu_walk.Walk,
    launches: tuple[list[int], list[str]],
    stage: str,
    printed: Mapping[int, str] | None = None,
) -> pd.DataFrame:
    """Every row of ncu's text tables (`walk` with `every`) that fits its table's columns, in
    file order, with the section it is under.

    Args:
        walk: the text's walk (`ncu_walk.walk(..., every=True)`).
        launches: each launch's ID and kernel name (as `metrics` has them).
        stage: the stage key of every row.
        printed: the lines the walk's text holds rewritten (`ncu_comma`), as the file printed
            them, by line index: their `text` is their cell as printed (`1,23`, not `1.23`).

    Returns: DataFrame with `schema.COUNTERS` columns; a per-kernel summary's rows give the
        Average as `value`, with Minimum, Maximum and the launches summed up (`Invocations`).
    """
    pair, _ = pd.factorize(walk.line * max(len(walk.widths), 1) + walk.table)
    firsts = byte_spans.first_rows(pair)
    cuts = [
        cut_row(walk.texts[line], walk.widths[table])
        for line, table in zip(walk.line[firsts].tolist(), walk.table[firsts].tolist(), strict=True)
    ]
    fits = np.array([c is not None for c in cuts] + [False], dtype=bool)
    kept = np.flatnonzero(fits[pair])
    code = pair[kept]
    rows: list[TextRow] = [c if c is not None else ("", "", "", None, None) for c in cuts]
    ids, names = launches
    launch = walk.launch[kept]
    got = {
        "kernel_id": np.asarray(ids, dtype="int64")[launch],
        "name": bounded_names.coded_strings(
            launch, bounded_names.cap_names(pd.Series(names, dtype="string")).tolist()
        ),
        "section": _sections(walk, kept),
        "metric": bounded_names.coded_strings(code, [r[0] for r in rows]),
        "unit": bounded_names.coded_strings(code, [r[1] or pd.NA for r in rows]),
        "value": _cell_numbers([r[2] for r in rows])[code],
        "text": _texts(walk, kept, code, [r[2] for r in rows], printed or {}),
        "invocations": None if np.isnan(walk.counts).all() else walk.counts[launch],
        "min": None
        if all(r[3] is None for r in rows)
        else _cell_numbers([r[3] for r in rows])[code],
        "max": None
        if all(r[4] is None for r in rows)
        else _cell_numbers([r[4] for r in rows])[code],
    }
    return frame(got, stage)


def _texts(
    walk: ncu_walk.Walk,
    kept: np.ndarray,
    code: np.ndarray,
    cells: list[str],
    printed: Mapping[int, str],
) -> pd.Series:
    """The value cell of each kept row (`code`: its distinct row's, of `cells`), cut from its
    line as printed where `printed` holds it, each distinct printed row cut once."""
    if not printed:
        return bounded_names.coded_strings(code, cells)
    lines = walk.rows[kept]
    own = np.flatnonzero(np.isin(lines, np.fromiter(printed, dtype=np.int64, count=len(printed))))
    code = code.copy()
    cut: dict[tuple[str, int], int] = {}
    for i in own.tolist():
        key = (printed[int(lines[i])], int(walk.table[kept[i]]))
        if key not in cut:
            row = cut_row(key[0], walk.widths[key[1]])
            cut[key] = len(cells)
            cells.append(cells[code[i]] if row is None else row[2])
        code[i] = cut[key]
    return bounded_names.coded_strings(code, cells)


def cut_row(line: str, widths: tuple[int, ...]) -> TextRow | None:
    """A row of an open table cut from its right end by the table's column widths (name left-
    aligned, the rest right-aligned, one blank between columns; `ncu_walk.row_texts` says from
    which text); None for a row that does not fit them (advice, a wrapped line). A table of one
    width (its rule one dash run) is cut at the row's runs of blanks (`ncu_walk.blank_cells`)."""
    if len(widths) == 1:
        cells = ncu_walk.blank_cells(line)
        return None if cells is None else (*cells, None, None)
    for row in ncu_walk.row_texts(line, widths):
        cut = cut_text(row, widths)
        if cut is not None:
            return cut
    return None


def cut_text(row: str, widths: tuple[int, ...]) -> TextRow | None:
    """`row` cut from its right end by `widths`, or None when it does not fit them."""
    cells, end = [], len(row)
    for width in reversed(widths[1:]):
        start = end - width
        if start < 1 or row[start - 1] != " ":
            return None
        cells.append(row[start:end].strip())
        end = start - 1
    name = row[:end].strip()
    if not name:
        return None
    *values_, unit = cells  # (cells hold the value, [Maximum, Minimum,] then the unit)
    if len(values_) == 3:
        average, maximum, minimum = values_
        return name, unit, average, minimum, maximum
    return name, unit, values_[0], None, None


def _sections(walk: ncu_walk.Walk, kept: np.ndarray) -> pd.Series:
    """Each kept row's section: the last `Section:` line above it in its launch (missing when
    none), each distinct section line read once."""
    heads = walk.section_lines
    if not len(heads):  # rows under a kernel line but no `Section:` line (a paste cut it out)
        return bounded_names.coded_strings(np.full(len(kept), -1), [])
    above = np.searchsorted(heads, walk.rows[kept], side="right") - 1
    line = np.where(above >= 0, heads[np.maximum(above, 0)], -1)
    inside = line > walk.kernel_lines[walk.launch[kept]]
    used, which = np.unique(walk.section_texts[np.maximum(above, 0)], return_inverse=True)
    titles = [walk.texts[t].strip().removeprefix("Section:").strip() or pd.NA for t in used]
    return bounded_names.coded_strings(np.where(inside, which, -1), titles)


def _cell_numbers(cells: list[str | None]) -> np.ndarray:
    """Each cell's number (NaN: none or no number), with one more NaN at the end."""
    got = [math.nan if c is None else values.number_or_nan(c) for c in cells]
    return np.array(got + [math.nan], dtype="float64")
