"""What a reader read past or assumed that its user should know (`ReadNote`, `TrimmedTable`),
warned where it is found and gathered by the importer (`trimmed`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator


class ReadNote(UserWarning):
    """What a reader read past or assumed that its user should know, at file line `line`; the
    importer records it (`trimmed`) as a warning, and when `partial` (the tables may lack rows)
    in the stage's technique too."""

    def __init__(self, message: str, line: int, partial: bool = False) -> None:
        super().__init__(message)
        self.line, self.partial = line, partial


def read_note(said: str, line: int = 0) -> None:
    """Warn `said` as a `ReadNote` of file line `line` (0: of the whole file)."""
    warnings.warn(ReadNote(said, line), stacklevel=2)


class TrimmedTable(ReadNote):
    """A summary section whose `Time(%)` shares add up to less than 100: the top rows of a
    table (what people paste). Its rows are read and this warning says which section, its file
    line (`line`) and how much of the time they cover."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message, line, partial=True)


@contextlib.contextmanager
def trimmed() -> Iterator[list[ReadNote]]:
    """The `ReadNote` warnings (`TrimmedTable` among them) of the block, each once and in
    order, in the list it gives (filled when the block ends); any other warning is passed on as
    it was."""
    found: list[ReadNote] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReadNote)
        yield found
    said: dict[str, ReadNote] = {}
    for w in caught:
        if isinstance(w.message, ReadNote):
            said.setdefault(str(w.message), w.message)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    found.extend(said.values())
