"""Notes a person wrote after the rows of an nsys column-text table, cut off its names.

nsys sizes a table's last column, the name, to its longest name, and its rule to match: no row
it prints runs past the rule. Rows that do, with a `#` note after the name (`cudaMalloc
# 显存分配 API ...`, a course's annotated copy of `nsys profile --stats=true`), carry notes their
author added to explain them: the name is the text before the note. A note says they were cut
off, once for a file (`said_once`), naming each table's line. A `#` inside a name that keeps
to its rule is the name's (`step #3`).
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Iterator

import pandas as pd

from profiler.parse import cell_quotes, nsys_fields, reader_notes
from profiler.parse.table_origin import Origin

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
    column, `width` wide in the rule, when it is a text field; warns (`reader_notes.ReadNote`) when
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
    warnings.warn(NotesCut([origin.line(0)], next(iter(kept))), stacklevel=2)
    return out


class NotesCut(reader_notes.ReadNote):
    """Notes cut off the names of the tables whose first rows are at file lines `lines`, such
    as `example` (a name with its note)."""

    def __init__(self, lines: list[int], example: str) -> None:
        shown = ", ".join(map(str, lines))
        said = (
            f"{'line' if len(lines) == 1 else 'lines'} {shown}: rows run past the table's rule "
            f"with a `#` note after the name (notes added by hand, such as "
            f"{cell_quotes.shown_cell(example, 60)!s}): the notes are cut off the names"
        )
        super().__init__(said, lines[0])
        self.lines, self.example = lines, example


@contextlib.contextmanager
def said_once() -> Iterator[None]:
    """The `NotesCut` warnings of the tables read in the block said as one, naming every
    table's line (once for a file, as the other notes of a file are); any other warning is
    passed on as it was, even when the block raises."""
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", NotesCut)
            yield
    finally:
        _pass_on(caught)


def _pass_on(caught: list[warnings.WarningMessage]) -> None:
    """Warn `caught` again as they came, their `NotesCut` as one, after the others."""
    cut = [w.message for w in caught if isinstance(w.message, NotesCut)]
    for w in caught:
        if not isinstance(w.message, NotesCut):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    if cut:
        lines = [line for note in cut for line in note.lines]
        warnings.warn(NotesCut(lines, cut[0].example), stacklevel=4)
