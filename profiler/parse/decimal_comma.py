"""Numbers with a decimal comma (`81,0`, `33.916.556.517`, `770.760,0`), as nsys prints its
column text in a locale that writes them so (pt_BR, de_DE, ...:
tests/data/nsys/2023.x/adi-gpu-profile-allgpu-ptbr.txt).

A table's commas are decimal commas when one of its numeric cells shows it: a comma with one
or two digits after it (`81,0`: grouping puts three or four there), or more than four
(`256,000000`), a comma after a zero or after more digits than a group holds (`0,016`,
`51859,821`), two points (`33.916.556.517`),
or a point-group and then a comma (`4.521.022,0`). A table comes from one process, in one
locale, so then every numeric cell is read so: its points dropped, its comma made a point
(`1.407` -> 1407, `32,032` -> 32.032). A table whose cells show none of these (`1.407` and
`32,032` alone: C's 1.407 and 32032 as well) is refused, saying so; a table with a cell of
another form (`12.5`: not one locale) is left to the caller.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import pandas as pd

from profiler.errors import ParseError
from profiler.parse import nsys_fields

# No repeat here can backtrack: each group starts with its point, and the digits around a
# comma are one run each.
_POINTS = r"[0-9]{1,3}(?:\.[0-9]{3})+"  # `33.916.556`: digits grouped by points
_NUMBER = rf"(?:{_POINTS}|[0-9]+)(?:,[0-9]+)?"
_DECIDES = (
    rf"(?:{_POINTS}|[0-9]+),[0-9]{{1,2}}"  # a comma with one or two digits after it
    r"|(?:0|[0-9]{5,}),[0-9]+|[0-9]{4},[0-9]{1,3}"  # no group before the comma
    r"|[0-9]+,[0-9]{5,}"  # more digits after the comma than a group holds
    r"|[0-9]{1,3}(?:\.[0-9]{3}){2,}(?:,[0-9]+)?"  # two points
    rf"|{_POINTS},[0-9]+"  # a point-group, then a comma
)


_NUMBER_AT = re.compile(_NUMBER)
_DECIDES_AT = re.compile(_DECIDES)


def is_number(cell: str) -> bool:
    """Whether `cell` is a number as a locale with a decimal comma writes it (`1.407`, `81,0`)."""
    return _NUMBER_AT.fullmatch(cell) is not None


def decides(cell: str) -> bool:
    """Whether `cell` shows a decimal comma (`81,0`, `0,016`, `33.916.556.517`, `4.521,0`)."""
    return _DECIDES_AT.fullmatch(cell) is not None


def as_c(cell: str) -> str:
    """A number written with a decimal comma as C writes it: `770.760,0` -> `770760.0`."""
    return cell.replace(".", "").replace(",", ".")


class Read(NamedTuple):
    """A table's cells read with a decimal comma."""

    cells: pd.DataFrame  # the numeric cells written as C writes them (`770760.0`)
    decided: str  # the first cell that showed the decimal comma
    shares_cut: bool  # every `Time (%)` cell ends in `,0` (nsys cut them down to whole ones)


def read(raw: pd.DataFrame, cols: nsys_fields.Columns, error: ParseError) -> Read | None:
    """`raw` (a table's stripped cells, by header) with its numeric cells written as C writes
    them (`770.760,0` -> `770760.0`), when a cell shows a decimal comma; None when a numeric
    cell is of neither form, or none has a point.

    Args:
        error: why the table's cells could not be read as they are.

    Raises: `error` saying that no cell tells whether the points group digits, when every
        numeric cell is of the form and one has a point (`1.619`), but none shows a decimal
        comma.
    """
    texts: dict[str, pd.Series] = {}
    cell = None
    cut = True
    for col, (field, _) in cols.items():
        if field in nsys_fields.TEXT:
            continue
        text = raw[col].astype("string")
        given = text.notna() & (text != nsys_fields.NONE)
        if not text[given].str.fullmatch(_NUMBER).all():
            return None
        decides = text[given].str.fullmatch(_DECIDES)
        if cell is None and decides.any():
            cell = str(text[given][decides].iloc[0])
        texts[col] = text
        if field == "pct":
            cut = bool(text[given].str.endswith(",0").all())
    if cell is None:
        _undecided(texts, error)
        return None
    out = raw.copy()
    for col, text in texts.items():
        out[col] = text.str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
    return Read(out, cell, cut)


def _undecided(texts: dict[str, pd.Series], error: ParseError) -> None:
    """Raises: `error` saying that no cell tells what the points are, when a cell has one."""
    for text in texts.values():
        pointed = text.str.contains(".", regex=False).fillna(False).astype(bool)
        if pointed.any():
            detail = (
                f"{error.detail}; {text[pointed].iloc[0]!r} has a point that groups digits "
                "or a decimal point, and no cell tells which: print the numbers with LC_ALL=C"
            )
            raise ParseError(error.path, error.expected, detail)
