"""Notes a person wrote after the rows of an nsys column-text table, cut off its names.

nsys sizes a table's last column, the name, to its longest name, and its rule to match: no row
it prints runs past the rule. Rows that do, with a `#` note after the name (`cudaMalloc
# 显存分配 API ...`, a course's annotated copy of `nsys profile --stats=true`), carry notes their
author added to explain them: the name is the text before the note. A note says they were cut
off. A `#` inside a name that keeps to its rule is the name's (`step #3`).
"""

from __future__ import annotations

import re

import pandas as pd

from profiler.parse import nsys_fields, values
from profiler.parse.values import Origin

_NOTE = re.compile(r"[ \t]+#")  # where a note starts: blanks, then `#`
_NOTED = r"[ \t]#"  # the same, as pandas searches for it


def without_notes(
    raw: pd.DataFrame,
    cells: list[str],
    width: int,
    cols: nsys_fields.Columns,
    origin: Origin,
) -> pd.DataFrame:
    """`raw` (stripped text cells by header) with the notes cut off the names of its last
    column, `width` wide in the rule, when it is a text field; warns (`values.ReadNote`) when
    it cut any. Only the distinct names are looked at (a categorical's categories)."""
    name = cells[-1] if cells else ""
    if name not in raw.columns or cols.get(name, ("", ""))[0] not in nsys_fields.TEXT:
        return raw
    series = raw[name]
    names = series.cat.categories if isinstance(series.dtype, pd.CategoricalDtype) else series
    names = names.astype("string")
    noted = (names.str.len() > width) & names.str.contains(_NOTED, regex=True)
    if not noted.fillna(False).any():
        return raw
    kept = {text: _NOTE.split(text, 1)[0] for text in names[noted.fillna(False)].unique()}
    out = raw.copy()
    out[name] = series.astype("string").replace(kept)
    line = origin.line(0)
    said = (
        f"line {line}: rows run past the table's rule with a `#` note after the name (notes "
        f"added by hand, such as {values.shown_cell(next(iter(kept)), 60)!s}): the notes are "
        "cut off the names"
    )
    values.read_note(said, line)
    return out
