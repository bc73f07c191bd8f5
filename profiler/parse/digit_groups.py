"""Numbers grouped by four digits (`44,0087,8248`, `32,3999.0`), as nsys prints its column text
in a locale that groups so (a Jetson's: tests/data/nsys/2022.x/jetson-nvtx-four-digit-groups.txt),
or in lakhs and crores (`27,65,96,75,62,725`, `14,244`: three digits last, two before, as in
en_IN: tests/data/nsys/2025.x/deepspeed-parser-test-indian-groups.py), or by three digits with
an apostrophe (`220’092’864`, `73’364’288.0`: a Swiss locale, de_CH or fr_CH, writes `’`, older
glibc `'`; tests/data/nsys/2023.x/jetson-lab-fr-pipe-tables-apostrophe-groups-cut.md). No locale
writes an apostrophe for anything else, so any cell so grouped says the table is.

A cell grouped by two digits before its last three (`6,79,65,697`) can be no decimal comma: then
the table is in lakhs, and its cells so grouped (`14,244` among them) are read without commas.

The commas of a table are grouping, not a decimal comma, when one of its numeric cells shows it:
a cell with two commas, or a comma and then a point, or a point with one or two digits after it
(`53.1`: a locale whose point groups digits puts three or four after it). A table comes from one
process, in one locale, so then every cell of the form `1,3583` is read as 13583. A table whose
cells show neither (`1,3583` and `13` alone: 13583, or 1.3583?) is refused, saying so.
"""

from __future__ import annotations

import pandas as pd

from profiler.errors import ParseError
from profiler.parse import nsys_fields

# No repeat here can backtrack: each group starts with its comma, and the digits are bounded.
_GROUPED = r"[0-9]{1,4}(?:,[0-9]{4})+(?:\.[0-9]+)?"
_DECIDES = (
    r"[0-9]{1,4}(?:,[0-9]{4}){2,}(?:\.[0-9]+)?"  # two commas
    r"|[0-9]{1,4},[0-9]{4}\.[0-9]+"  # a comma, then a point
    r"|[0-9]*\.[0-9]{1,2}"  # a point with one or two digits after it
)
# In lakhs: up to three digits, or groups of two before a last group of three; `_LAKHS` is one
# with a group of two (two commas at least), which no other grouping or decimal comma writes.
_INDIAN = r"[0-9]{1,2}(?:,[0-9]{2})*,[0-9]{3}(?:\.[0-9]+)?"
_LAKHS = r"[0-9]{1,2}(?:,[0-9]{2})+,[0-9]{3}(?:\.[0-9]+)?"
_APOSTROPHES = "\u2019'"  # the right single quotation mark (de_CH, fr_CH), the ASCII one
_SWISS = rf"[0-9]{{1,3}}(?:[{_APOSTROPHES}][0-9]{{3}})+(?:\.[0-9]+)?"


def ungrouped(raw: pd.DataFrame, cols: nsys_fields.Columns, error: ParseError) -> pd.DataFrame:
    """`raw` (a table's stripped cells, by header) with the commas taken out of its numeric
    cells grouped by four digits, when a cell shows that the table's commas are grouping.

    Args:
        error: why the table's cells could not be read as they are.

    Raises: `error` when no numeric cell is grouped by four digits; `error` saying the grouping
        is ambiguous when no cell shows it.
    """
    lakhs = _in_lakhs(raw, cols)
    if lakhs is not None:
        return lakhs
    swiss = _by_apostrophes(raw, cols)
    if swiss is not None:
        return swiss
    grouped: dict[str, tuple[pd.Series, pd.Series]] = {}  # a column's cells, which are grouped
    decided = False
    for col, (field, _) in cols.items():
        if field in nsys_fields.TEXT or raw[col].dtype.kind in "iuf":
            continue
        text = raw[col].astype("string")
        match = text.str.fullmatch(_GROUPED).fillna(False).astype(bool)
        if match.any():
            grouped[col] = (text, match)
        decided = decided or bool(text.str.fullmatch(_DECIDES).fillna(False).any())
    if not grouped:
        raise error
    if not decided:
        cell = next(text[match].iloc[0] for text, match in grouped.values())
        detail = (
            f"{error.detail}; {cell!r} is grouped by four digits or has a decimal comma, and no "
            "cell tells which: print the numbers with LC_ALL=C"
        )
        raise ParseError(error.path, error.expected, detail)
    out = raw.copy()
    for col, (text, match) in grouped.items():
        out[col] = text.mask(match, text.str.replace(",", "", regex=False))
    return out


def _numeric_texts(raw: pd.DataFrame, cols: nsys_fields.Columns) -> dict[str, pd.Series]:
    """The numeric columns of `raw` that a reader left as text, as strings, by header."""
    return {
        col: raw[col].astype("string")
        for col, (field, _) in cols.items()
        if field not in nsys_fields.TEXT and raw[col].dtype.kind not in "iuf"
    }


def _by_apostrophes(raw: pd.DataFrame, cols: nsys_fields.Columns) -> pd.DataFrame | None:
    """`raw` with the apostrophes taken out of its numeric cells grouped by them (`_SWISS`);
    None when no cell is."""
    texts = _numeric_texts(raw, cols)
    matches = {
        col: text.str.fullmatch(_SWISS).fillna(False).astype(bool) for col, text in texts.items()
    }
    if not any(match.any() for match in matches.values()):
        return None
    out = raw.copy()
    for col, text in texts.items():
        out[col] = text.mask(matches[col], text.str.replace(f"[{_APOSTROPHES}]", "", regex=True))
    return out


def _in_lakhs(raw: pd.DataFrame, cols: nsys_fields.Columns) -> pd.DataFrame | None:
    """`raw` with the commas taken out of its numeric cells grouped in lakhs (`_INDIAN`), when a
    cell has a group of two (`_LAKHS`); None when none has."""
    texts = _numeric_texts(raw, cols)
    if not any(text.str.fullmatch(_LAKHS).fillna(False).any() for text in texts.values()):
        return None
    out = raw.copy()
    for col, text in texts.items():
        match = text.str.fullmatch(_INDIAN).fillna(False).astype(bool)
        out[col] = text.mask(match, text.str.replace(",", "", regex=False))
    return out
