"""How a message quotes what a reader read: a cell cut to a width with its length said, the first
few of many items, and how to fix a number written with a decimal comma.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

# A quoted cell with a decimal comma: `'81,0'`, `'4.521.022,0'`, `'12 837 852,30'` (bounded)
_COMMA_DECIMAL = re.compile(r"'[0-9 .]{0,40},[0-9]{1,2}'")


def locale_hint(detail: str) -> str | None:
    """`detail` (a message that quotes the cell it could not read) with how to fix a decimal
    comma, when the cell it quotes has one: a tool run in a locale that writes `10,55`; None
    when it quotes none."""
    if _COMMA_DECIMAL.search(detail) is None:
        return None
    return f"{detail}; numbers with a decimal comma: print them with LC_ALL=C"


def listed(items: Iterable[object], limit: int = 3) -> str:
    """The first `limit` items, comma-separated, and `, ...` when there are more: how a message
    names a few of many (`cuda_api_sum, cuda_gpu_trace, nvtx_sum, ...`)."""
    shown = list(items)
    return ", ".join(map(str, shown[:limit])) + (", ..." if len(shown) > limit else "")


def shown_cell(cell: object, width: int = 40) -> str:
    """A cell as messages quote it: its repr, cut to `width` characters with its length said
    (a 100 MB cell must not make a 100 MB message)."""
    if isinstance(cell, str):
        text = cell
    elif cell is None or cell is pd.NA or cell is pd.NaT:
        text = ""  # an empty cell that a reader kept as missing
    else:
        text = format(float(cell), "g")  # type: ignore[arg-type]
    if len(text) <= width:
        return repr(text)
    return f"{text[:width]!r}... ({len(text):,} characters)"
