"""The rows of an ASCII nvprof text summary read from its bytes by the keys of their fields.

A row is `[type:] Time(%) Time Calls Avg Min Max Name`. With its lines' leads known (`parse.lines`,
found once for the whole file), the six fields of every row are read eight bytes a step
(`word_fields`): each field's key is its bytes as an integer, so that a column is grouped by
value without a string or a token table per row, and the name is the rest of the row, trailing
blanks dropped. What this path does not take as it is (a short row, a tab between fields, a
field longer than eight bytes, a typed row it cannot place, a NUL in a name) gives None: the
caller then reads the table as before, which also says what is wrong with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from profiler.parse import lines, tokens, word_fields

FIELDS = 6  # Time(%), Time, Calls, Avg, Min, Max
_BLANK = np.zeros(256, dtype=bool)  # what `str.split()` splits on, among ASCII bytes
_BLANK[[c for c in range(128) if chr(c).isspace()]] = True
_SLOT = 9  # bytes a field takes in `field_tokens`' text: its key's eight, then a space


@dataclass(frozen=True)
class KeyedRows:
    """The data rows of a summary table (its non-blank lines after the header).

    Attributes:
        keys: (FIELDS, rows) field keys: the field's bytes, little-endian, zero past its end.
        name_start: where each row's name starts in the table's bytes.
        name_end: where it ends (its last byte that is no blank, plus one).
        offsets: each row's line, counted from the line after the header.
        types: (row, type) of each row that starts with its type (`GPU activities:`).
    """

    keys: np.ndarray
    name_start: np.ndarray
    name_end: np.ndarray
    offsets: np.ndarray
    types: list[tuple[int, str]]


def scan(table: lines.Lines) -> KeyedRows | None:
    """The rows of the summary whose lines (header first) are `table`, or None (see the
    module's docstring)."""
    codes = np.frombuffer(table.data, dtype=np.uint8)
    lead = table.lead[1:]
    if (lead == lines.UNKNOWN).any():
        return None  # a line led by many blanks, or not by ASCII: read as before
    offsets = np.flatnonzero(lead != lines.BLANK_LINE)
    at = table.start[1:][offsets] + lead[offsets]
    initial = table.first[1:][offsets] | 32  # lower case
    types = []
    for row in np.flatnonzero((initial >= ord("a")) & (initial <= ord("z"))).tolist():
        found = _typed(table, int(offsets[row]) + 1)
        if found is None:
            return None
        types.append((row, found[0]))
        at[row] = found[1]
    fields = word_fields.fields(codes, at, FIELDS)
    if fields is None:
        return None
    keys, name_start = fields
    name_end = _trimmed(codes, table.end[1:][offsets])
    return KeyedRows(keys, name_start, name_end, offsets, types)


def _typed(table: lines.Lines, line: int) -> tuple[str, int] | None:
    """A row that starts with its type (`  API calls:  100.00%`): the type, and where its
    fields start (after the `:` and spaces); None when it is no such row as the old path reads
    it."""
    begin = int(table.start[line] + table.lead[line])
    text = str(table.data[begin : int(table.end[line])], "ascii")
    kind, sep, rest = text.partition(":")
    if not sep or "%" in kind or not rest[:1].isspace():
        return None
    return kind.strip(), begin + len(text) - len(rest.lstrip(" "))  # (a tab there: not taken)


def _trimmed(codes: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Each line's end less the blanks before it (the line holds a byte that is none)."""
    end = end.copy()
    todo = np.flatnonzero(_BLANK[codes[end - 1]])
    while len(todo):
        end[todo] -= 1
        todo = todo[_BLANK[codes[end[todo] - 1]]]
    return end


def field_tokens(keys: np.ndarray, rows: np.ndarray | None) -> tokens.Tokens:
    """The fields of `rows` (all rows for None) as `tokens.Tokens` of FIELDS tokens a row, their
    text made from their keys: what the token readers read, and quote in a message."""
    chosen = keys if rows is None else keys[:, rows]
    count = chosen.shape[1]
    slots = np.full((count, FIELDS, _SLOT), ord(" "), dtype=np.uint8)
    slots[:, :, :8] = np.ascontiguousarray(chosen.T, "<u8").view(np.uint8).reshape(count, FIELDS, 8)
    width = 8 - np.count_nonzero(slots[:, :, :8] == 0, axis=2)  # (a field holds no NUL)
    start = np.arange(count * FIELDS, dtype=np.int64) * _SLOT
    first = np.arange(count, dtype=np.int64) * FIELDS
    codes = slots.ravel()
    text = str(codes.tobytes(), "ascii")
    return tokens.Tokens(text, codes, start, start + width.ravel(), first, np.full(count, FIELDS))
