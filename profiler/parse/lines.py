"""The lines of a text as byte offsets, and what each line starts with, found with NumPy.

A parser that walks every line of a million-row file in Python spends seconds on lines it then
ignores. These helpers find, with a few array passes over the bytes, where every line starts and
ends and its first non-blank byte, so that the parser walks only the lines that can matter to
it. A line is the text between two `\\n` bytes, as `str.split("\\n")` cuts it (in UTF-8 a `\\n`
byte is always a newline). Blank is what `str.strip()` strips among ASCII bytes; a line whose
lead is not ASCII, or is blank for more than `LEAD_LIMIT` bytes, has an unknown lead (-1): the
caller must look at it itself.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

LEAD_LIMIT = 64
UNKNOWN = -1
BLANK_LINE = -2
# The ASCII bytes `str.strip()` strips (tab, newline, vertical tab, form feed, carriage return,
# the separators 0x1c-0x1f, space).
_BLANK = np.zeros(256, dtype=bool)
_BLANK[[c for c in range(128) if chr(c).isspace()]] = True
_BLANK_IN_LINE = _BLANK.copy()
_BLANK_IN_LINE[10] = False
_SLICE = 1 << 20
# The bytes that can follow the `\n` a blank line begins after: space, tab, `\r`, `\n`.
_SPACE_OR_BREAK = np.zeros(256, dtype=bool)
_SPACE_OR_BREAK[[9, 10, 13, 32]] = True
_SPACES = np.uint64(int.from_bytes(b" " * 8, "big"))
# A word starts with 8 spaces less as many of these edges as lie at or below it xor `_SPACES`.
_BYTE_EDGES = np.array([1 << (8 * j) for j in range(8)], dtype=np.uint64)
_NEAR = 24  # the bytes from a line's start that `_near_leads` reads at once (a multiple of 8)
_BLOCK = 1 << 15  # the lines `_near_leads` reads at once


@dataclass(frozen=True)
class Lines:
    """Line i of `data` is `data[start[i]:end[i]]` (no newline); `lead[i]` is the offset of its
    first non-blank byte (`BLANK_LINE` for a blank line, `UNKNOWN` when not found) and `first[i]`
    that byte (0 unless `lead[i] >= 0`)."""

    data: bytes | memoryview
    start: np.ndarray
    end: np.ndarray
    lead: np.ndarray
    first: np.ndarray

    def __len__(self) -> int:
        return len(self.start)

    def text(self, i: int) -> str:
        """Line i as text (UTF-8)."""
        return str(self.data[self.start[i] : self.end[i]], "utf-8")

    def part(self, begin: int, stop: int) -> Lines:
        """The lines that start in `[begin, stop)` (a table's, from its header to where it
        ends, `stop` after a newline or at the end), as lines of those bytes alone."""
        lo, hi = np.searchsorted(self.start, [begin, stop])
        return Lines(
            memoryview(self.data)[begin:stop],
            self.start[lo:hi] - begin,
            np.minimum(self.end[lo:hi], stop) - begin,
            self.lead[lo:hi],
            self.first[lo:hi],
        )

    def prefix(self, width: int) -> np.ndarray:
        """Per line, its `width` (<= 8) bytes from its first non-blank one as one unsigned
        integer (bytes past the line's end are 0; 0 for a line without a known lead)."""
        known = self.lead >= 0
        at = np.where(known, self.start + self.lead, 0)
        got = words(self.data, at).astype(np.uint64) >> np.uint64(8 * (8 - width))
        inside = np.minimum(self.end - at, width)  # how many of those bytes are in the line
        mask = ~((np.uint64(1) << (np.uint64(8) * (width - inside).astype(np.uint64))) - 1)
        return np.where(known, got & mask, 0).astype(np.uint64)


def pack(text: bytes) -> int:
    """`text` (at most 8 bytes) as `Lines.prefix(len(text))` gives it."""
    return int.from_bytes(text, "big")


def words(data: bytes | memoryview, offsets: np.ndarray) -> np.ndarray:
    """At each offset, the 8 bytes of `data` from there as one big-endian integer (newlines
    past the end): one gather reads 8 bytes of many lines at once."""
    size = len(data)
    if size < 8:
        tail = [bytes(data[o:]) + b"\n" * 8 for o in offsets.tolist()]
        return np.array([pack(word[:8]) for word in tail], dtype=">u8")
    view = np.ndarray((size - 7,), dtype=">u8", buffer=data, strides=(1,))
    out = view[np.minimum(offsets, size - 8)]
    for j in np.flatnonzero(offsets > size - 8).tolist():  # the last few bytes only
        out[j] = pack((bytes(data[int(offsets[j]) :]) + b"\n" * 8)[:8])
    return out


def newlines(data: bytes | memoryview) -> np.ndarray:
    """The offsets of every `\n` byte, found a cache-sized slice at a time (a third of the
    time of one pass over a large text)."""
    codes = np.frombuffer(data, dtype=np.uint8)
    parts = [
        np.flatnonzero(codes[at : at + _SLICE] == 10) + at for at in range(0, len(codes), _SLICE)
    ]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def space_led_newlines(data: bytes, start: int, spans: int = 1) -> np.ndarray:
    """The offsets, ascending, of every `\n` byte in `data[start:]` that a space, a tab, a `\r`
    or another `\n` follows: where a blank line can begin. Found a cache-sized slice at a time,
    in `spans` even spans of the bytes, each on a thread of its own (NumPy lets go of Python's
    lock while it compares): a regular expression's search for a blank line holds the lock and
    walks every byte, for 300 MB in a third of a second."""
    bounds = [start + (len(data) - start) * k // spans for k in range(spans + 1)]
    if spans < 2:
        return _space_led_in(data, start, len(data))
    with ThreadPoolExecutor(spans) as pool:
        found = list(pool.map(lambda a, b: _space_led_in(data, a, b), bounds[:-1], bounds[1:]))
    return np.concatenate(found)


def _space_led_in(data: bytes, start: int, end: int) -> np.ndarray:
    """`space_led_newlines` of the `\n` bytes in `data[start:end]` (the byte after each read
    from past `end` when it lies there)."""
    codes = np.frombuffer(data, dtype=np.uint8)
    found = [np.zeros(0, dtype=np.int64)]
    for at in range(start, end, _SLICE):
        stop = min(at + _SLICE, end)
        breaks = np.flatnonzero(codes[at:stop] == 10) + at
        breaks = breaks[breaks + 1 < len(codes)]
        found.append(breaks[_SPACE_OR_BREAK[codes[breaks + 1]]])
    return np.concatenate(found)


def split(data: bytes) -> Lines:
    """The lines of `data` (UTF-8 bytes) with their leads."""
    ends = newlines(data)
    start = np.concatenate(([0], ends + 1))
    end = np.concatenate((ends, [len(data)]))
    lead = np.full(len(start), UNKNOWN, dtype=np.int64)
    first = np.zeros(len(start), dtype=np.uint8)
    _find_leads(data, start, np.arange(len(start)), lead, first)
    return Lines(data, start, end, lead, first)


def _find_leads(
    data: bytes | memoryview,
    start: np.ndarray,
    todo: np.ndarray,
    lead: np.ndarray,
    first: np.ndarray,
) -> None:
    """Fill `lead` and `first` of the lines `todo` (indices into `start`), eight bytes a step:
    the first byte that is not a blank ends the lead (a newline: a blank line; past 127 or past
    LEAD_LIMIT: UNKNOWN). Leads are mostly spaces: a word of eight spaces is passed at once, and
    the others are cut by `_stops`. Most leads end in their line's first `_NEAR` bytes, read in
    one gather (`_near_leads`); the loop reads the others' words one step at a time."""
    todo = _near_leads(data, start, todo, lead, first)
    for at in range(0, LEAD_LIMIT, 8):
        if not len(todo):
            break
        word = words(data, start[todo] + at).astype(np.uint64)
        going = word == _SPACES  # the lead goes on past these eight bytes
        ending = np.flatnonzero(~going)
        k, byte = _stops(word[ending])
        stops = k < 8
        going[ending[~stops]] = True
        _ended(lead, first, todo[ending[stops]], k[stops] + at, byte[stops])
        todo = todo[going]


def _ended(
    lead: np.ndarray, first: np.ndarray, done: np.ndarray, at: np.ndarray, byte: np.ndarray
) -> None:
    """The lines `done`, whose leads end at `at` with `byte`: blank lines for a newline, else
    led by that byte when it is ASCII (their lead not known when it is not)."""
    lead[done] = np.where(byte == 10, BLANK_LINE, np.where(byte < 128, at, UNKNOWN))
    first[done] = np.where(byte < 128, byte, 0)


def _near_leads(
    data: bytes | memoryview,
    start: np.ndarray,
    todo: np.ndarray,
    lead: np.ndarray,
    first: np.ndarray,
) -> np.ndarray:
    """`_find_leads` of the lines `todo` whose lead ends in their first `_NEAR` bytes (which
    lie in `data`), read in one gather of that many bytes a line, not a gather per eight, and
    `_BLOCK` lines at a time (their arrays stay in the cache); the other lines of `todo` are
    returned. A table's rows led by 20 spaces cost one gather, not three."""
    size = len(data)
    if size < _NEAR or not len(todo):
        return todo
    window = np.ndarray((size - _NEAR + 1,), dtype=f"V{_NEAR}", buffer=data, strides=(1,))
    rest = np.zeros(len(todo), dtype=bool)
    for a in range(0, len(todo), _BLOCK):
        block = todo[a : a + _BLOCK]
        at = start[block]
        near = at <= size - _NEAR
        rows = window[np.where(near, at, 0)].view(">u8").reshape(len(at), _NEAR // 8)
        k, byte, step = _near_stops(rows.astype(np.uint64))
        ended = near & (k < 8)
        _ended(lead, first, block[ended], k[ended] + step[ended], byte[ended])
        rest[a : a + _BLOCK] = ~ended
    return todo[rest]


def _near_stops(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_stops` of the first word of each row (of big-endian words) that is not eight spaces
    (its last word if none), and how many bytes of spaces come before that word."""
    word = rows[:, -1]
    spaces = np.ones(len(rows), dtype=bool)
    step = np.zeros(len(rows), dtype=np.int64)
    for j in range(rows.shape[1] - 1):
        word = np.where(spaces, rows[:, j], word)  # (the row's first such word, so far)
        spaces &= rows[:, j] == _SPACES
        step += spaces << 3
    word = np.where(spaces, rows[:, -1], word)
    k, byte = _stops(word)
    return k, byte, step


def _stops(word: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per big-endian word, where its lead stops (8: not in it) and the byte there: its leading
    spaces counted with one search of its value, its bytes read one by one only where a space
    is followed by another blank (a tab, a carriage return, ...)."""
    k = 8 - np.searchsorted(_BYTE_EDGES, word ^ _SPACES, side="right")  # leading spaces
    shift = (np.uint64(8) * (7 - np.minimum(k, 7))).astype(np.uint64)
    byte = ((word >> shift) & np.uint64(255)).astype(np.uint8)  # the byte after them
    odd = np.flatnonzero((k < 8) & _BLANK_IN_LINE[byte])
    if len(odd):
        k[odd], byte[odd] = _first_solid(word[odd])
    return k, byte


def _first_solid(word: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per big-endian word, the place of its first byte that is no blank (8 if none) and that
    byte (a newline counts as one: it ends a blank line)."""
    window = word.astype(">u8").view(np.uint8).reshape(-1, 8)
    solid = ~_BLANK_IN_LINE[window]
    k = np.where(solid.any(axis=1), solid.argmax(axis=1), 8)
    return k, window[np.arange(len(k)), np.minimum(k, 7)]


def split_led(data: bytes | memoryview) -> Lines:
    """`split(data)`, each line's lead looked for past its first byte only when that byte is a
    blank: the rows of a large table mostly start with what they hold, so a line costs one
    byte read, not eight per step."""
    ends = newlines(data)
    start = np.concatenate(([0], ends + 1))
    end = np.concatenate((ends, [len(data)]))
    codes = np.frombuffer(data, dtype=np.uint8)
    byte = np.full(len(start), 10, dtype=np.uint8)  # past the end: a newline, as `words` reads
    inside = start < len(codes)
    byte[inside] = codes[start[inside]]
    ascii_byte = byte < 128
    lead = np.where(byte == 10, BLANK_LINE, np.where(ascii_byte, 0, UNKNOWN)).astype(np.int64)
    first = np.where(ascii_byte, byte, 0).astype(np.uint8)
    todo = np.flatnonzero(_BLANK_IN_LINE[byte])
    lead[todo] = UNKNOWN
    first[todo] = 0
    _find_leads(data, start, todo, lead, first)  # as `split`, for the lines led by a blank
    return Lines(data, start, end, lead, first)
