"""The first few space-separated fields of many rows of ASCII bytes, read eight bytes a step.

A text table whose rows start with short fields (a summary's `0.00%  1.2345us  3 ...`) need not
have every byte of its text classified to find them: from each row's start a word of eight bytes
is read for all rows at once, a field's end and the spaces after it are found with a few integer
operations on the words (SWAR: a byte's high bit set by an addition), and the word read at a
field's start, its bytes past the field's end made zero, is the field's key. Rows are read a
cache-sized block at a time, so that each operation's arrays stay in the cache.

Only what `str.split()` cuts the same way is taken: fields of one to eight bytes above 32, each
followed by one or more spaces. Any other byte there (a tab, a newline: a short row, a carriage
return, a longer field) makes `fields` give None, and the caller reads the rows as before.
"""

from __future__ import annotations

import numpy as np

_SPACES = np.uint64(0x2020202020202020)
_HIGH = np.uint64(0x8080808080808080)
_ABOVE_32 = np.uint64(0x5F5F5F5F5F5F5F5F)  # added to a byte below 128: its high bit set iff > 32
_ZERO, _ONE, _SEVEN, _BYTE = np.uint64(0), np.uint64(1), np.uint64(7), np.uint64(255)
_NEXT_EXPONENT = 1 << 52  # added to a float64's bits: its exponent plus one
_BLOCK = 1 << 15  # rows read at once: their words stay in the cache
_SKIPS = 16  # words of spaces passed before a field, at most (more: None)


class Words:
    """Eight bytes of `codes` from any offsets, as little-endian integers (newlines past the
    end: they end every field)."""

    def __init__(self, codes: np.ndarray) -> None:
        self.size = len(codes)
        self.view = np.ndarray((max(self.size - 7, 0),), "<u8", codes, strides=(1,))
        tail = np.full(16, ord("\n"), dtype=np.uint8)
        last = codes[max(self.size - 8, 0) :]
        tail[: len(last)] = last
        self.tail = np.ndarray((9,), "<u8", tail, strides=(1,))
        self.tail_at = self.size - len(last)

    def at(self, offsets: np.ndarray) -> np.ndarray:
        """The words at `offsets` (each at least 0)."""
        if self.size < 8:
            return self.tail[np.minimum(offsets - self.tail_at, 8)]
        if not len(offsets) or int(offsets.max()) <= self.size - 8:  # (all but the last rows)
            inside: np.ndarray = self.view[offsets]
            return inside
        out: np.ndarray = self.view[np.minimum(offsets, self.size - 8)]
        late = np.flatnonzero(offsets > self.size - 8)
        if len(late):
            out[late] = self.tail[np.minimum(offsets[late] - self.tail_at, 8)]
        return out


def _lowest(flags: np.ndarray) -> np.ndarray:
    """Per word, its lowest set bit alone (0 for 0)."""
    low: np.ndarray = flags & (_ZERO - flags)
    return low


def _place(low: np.ndarray) -> np.ndarray:
    """Per word that is one bit, 2 ** b (`_lowest`), the byte that holds it, b // 8; 128 for 0:
    the exponent of its float (which it converts to exactly), plus one, over eight."""
    place: np.ndarray = ((low.astype(np.float64).view(np.int64) + _NEXT_EXPONENT) >> 55) ^ 128
    return place


def fields(codes: np.ndarray, at: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The keys of the first `count` fields of the rows whose first field starts at `at`, one
    row of keys per field, and where each row's rest starts (its first byte after the fields'
    spaces, which must be above 32); None when a row does not have them as `str.split()` would
    cut them (see the module's docstring)."""
    words = Words(codes)
    keys = np.empty((count, len(at)), dtype=np.uint64)
    rest = np.empty(len(at), dtype=np.int64)
    for a in range(0, len(at), _BLOCK):
        found = _block(words, at[a : a + _BLOCK], keys[:, a : a + _BLOCK])
        if found is None:
            return None
        rest[a : a + _BLOCK] = found
    if len(rest) and int((words.at(rest) & _BYTE).min()) <= 32:
        return None  # a row without a rest: a short row
    return keys, rest


def _block(words: Words, at: np.ndarray, keys: np.ndarray) -> np.ndarray | None:
    """`fields` of one block of rows, their keys written into `keys`."""
    found: np.ndarray | None = at
    for j in range(len(keys)):
        if found is None:
            return None
        word = words.at(found)
        low = _lowest(~(word + _ABOVE_32) & _HIGH)  # the first byte of 32 or below
        keys[j] = word & ((low >> _SEVEN) - _ONE)  # (none: eight bytes, or more)
        size = np.minimum(_place(low), 8)
        if size.min() == 0:
            return None  # a field that starts with a byte of 32 or below
        found = _spaces_after(words, found + size)
    return found


def _spaces_after(words: Words, at: np.ndarray) -> np.ndarray | None:
    """Past the spaces from each offset (one at least, at most `_SKIPS` words): None when
    there is none, as after a field ended by a tab or a newline, or by a ninth byte."""
    place = _place(_lowest(words.at(at) ^ _SPACES))
    if place.min() == 0:
        return None
    if place.max() < 8:
        return at + place
    at = at.copy()
    todo = np.arange(len(at))
    for _ in range(_SKIPS):
        found = place < 8
        at[todo[found]] += place[found]
        todo = todo[~found]
        if not len(todo):
            return at
        at[todo] += 8
        place = _place(_lowest(words.at(at[todo]) ^ _SPACES))
    return None
