"""Rows of a text table cut into whitespace-separated tokens with NumPy, all rows at once.

`str.split` per row costs a few microseconds and a million rows cost seconds; here the rows are
joined once and the token edges of every row are found with a few array passes over the
characters. Whitespace is what `str.split()` splits on. Only ASCII rows are cut this way
(`split` returns None otherwise, and the caller cuts its rows one by one as before): in ASCII a
character's place in the string is its place in the bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

# The ASCII characters `str.split()` splits on (tab, newline, vertical tab, form feed, carriage
# return, the four separators 0x1c-0x1f, space).
_SOLID = np.ones(256, dtype=np.int8)
_SOLID[[c for c in range(128) if chr(c).isspace()]] = 0


@dataclass(frozen=True)
class Tokens:
    """The tokens of every row: `text` is the rows joined by newlines; token j of the whole text
    spans `text[start[j]:end[j]]`; row i holds `count[i]` tokens from token `first[i]` on;
    `codes` is the text as bytes."""

    def rows(self, which: np.ndarray, skip: np.ndarray | int = 0) -> Tokens:
        """The tokens of rows `which` only, less the first `skip` of each."""
        return replace(self, first=self.first[which] + skip, count=self.count[which] - skip)

    text: str
    codes: np.ndarray
    start: np.ndarray
    end: np.ndarray
    first: np.ndarray
    count: np.ndarray

    def index(self, k: int) -> np.ndarray:
        """Per row, the token number of its k-th token (k < 0: from the right, -1 the last);
        -1 where the row has too few tokens."""
        at = self.first + k if k >= 0 else self.first + self.count + k
        have = self.count > k if k >= 0 else self.count >= -k
        return np.where(have, at, -1)

    def cells(self, k: int) -> list[str]:
        """Per row, its k-th token (as `index`); '' where it has too few."""
        at = self.index(k)
        text = self.text
        starts = np.where(at >= 0, self.start[at], 0).tolist()
        ends = np.where(at >= 0, self.end[at], 0).tolist()
        return [text[a:b] for a, b in zip(starts, ends, strict=True)]

    def rest(self, k: int) -> list[str]:
        """Per row, the text from its k-th token to its end, trailing blanks dropped (as
        `str.split(None, k)[k]`); '' where it has too few tokens."""
        at = self.index(k)
        last = self.first + self.count - 1
        starts = np.where(at >= 0, self.start[at], 0).tolist()
        ends = np.where(at >= 0, self.end[np.maximum(last, 0)], 0).tolist()
        text = self.text
        return [text[a:b] for a, b in zip(starts, ends, strict=True)]


def split(rows: list[str]) -> Tokens | None:
    """The tokens of `rows` (strings without newlines); None when a row is not ASCII."""
    text = "\n".join(rows)
    if not text.isascii():
        return None
    codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows)) + 1
    return _tokens(text, codes, np.cumsum(lengths) - lengths)  # newlines part the rows


def split_text(text: str, raw: memoryview | bytes | None = None) -> Tokens | None:
    """`split` of the text's lines, without splitting, joining and (given `raw`, the text's
    bytes when it is ASCII) encoding them; None when the text is not ASCII."""
    if raw is not None and len(raw) == len(text):  # ASCII: one byte per character
        codes = np.frombuffer(raw, dtype=np.uint8)
    elif text.isascii():
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    else:
        return None
    return _tokens(text, codes, np.append(0, np.flatnonzero(codes == ord("\n")) + 1))


def split_lines(text: str, raw: memoryview | bytes | None = None) -> Tokens | None:
    """`split_text`, the lines' starts and first tokens found in the pass that finds the tokens'
    edges (no second pass over the bytes for the newlines, no search of every line's start)."""
    if raw is not None and len(raw) == len(text):
        codes = np.frombuffer(raw, dtype=np.uint8)
    elif text.isascii():
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    else:
        return None
    parts, firsts, before, done = [], [np.zeros(1, dtype=np.int64)], 0, 0  # done: edges so far
    for at in range(0, len(codes), _SLICE):
        part = codes[at : at + _SLICE]
        solid = np.empty(len(part) + 1, dtype=np.int8)
        solid[0] = before
        solid[1:] = part > 32
        low = np.flatnonzero(part < 28)
        solid[low + 1] = _SOLID[part[low]]
        edges = np.flatnonzero(solid[1:] != solid[:-1]) + at
        lines = low[part[low] == ord("\n")] + (at + 1)  # where the next lines start
        firsts.append((done + np.searchsorted(edges, lines) + 1) // 2)  # starts before: ceil
        parts.append(edges)
        done += len(edges)
        before = int(solid[-1])
    if before:
        parts.append(np.array([len(codes)]))
    edges = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    start, end = edges[0::2], edges[1::2]
    first = np.concatenate(firsts)
    return Tokens(text, codes, start, end, first, np.diff(np.append(first, len(start))))


def _tokens(text: str, codes: np.ndarray, row_starts: np.ndarray) -> Tokens:
    """The tokens of `text` (ASCII, as `codes`) whose rows start at `row_starts`."""
    edges = _edges(codes)  # a token's start, then its end, and so on
    start, end = edges[0::2], edges[1::2]
    first = np.searchsorted(start, row_starts)
    count = np.diff(np.append(first, len(start)))
    return Tokens(text, codes, start, end, first, count)


def _edges(codes: np.ndarray) -> np.ndarray:
    """Where the characters turn from blank to solid or back (a token's start, then its end),
    found a cache-sized slice at a time (a third of the time of whole-text passes)."""
    parts, before = [], 0  # whether the byte before the slice is solid
    for at in range(0, len(codes), _SLICE):
        part = codes[at : at + _SLICE]
        solid = np.empty(len(part) + 1, dtype=np.int8)  # 1 for a character that is no blank
        solid[0] = before
        solid[1:] = part > 32
        low = np.flatnonzero(part < 28)  # newlines, tabs, ...: few; a lookup of every byte
        solid[low + 1] = _SOLID[part[low]]  # costs more (NumPy widens the bytes to indices)
        parts.append(np.flatnonzero(solid[1:] != solid[:-1]) + at)  # bool: NumPy counts fast
        before = int(solid[-1])
    if before:
        parts.append(np.array([len(codes)]))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


_SLICE = 1 << 20
_ROWS = 1 << 16  # rows read at once by `decimals`: its arrays stay in the cache
_WIDE = 15  # digits of a number read here: below 2**53, so exact in a float64


def decimals(
    codes: np.ndarray, start: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The numbers in `codes[start[i]:end[i]]` (ASCII bytes) that are plain decimals (`12`,
    `1.2345`, `.5`, `5.`) of at most 15 digits, and which cells were read; the others (NaN) are
    left to `values.parsed`. A number is its digits as an integer divided by a power of ten:
    both are exact in float64 and the division rounds correctly, as pandas' parser does."""
    if len(start) <= _ROWS:
        return _decimals(codes, start, end)
    parts = [
        _decimals(codes, start[a : a + _ROWS], end[a : a + _ROWS])
        for a in range(0, len(start), _ROWS)
    ]
    return np.concatenate([n for n, _ in parts]), np.concatenate([ok for _, ok in parts])


def _decimals(
    codes: np.ndarray, start: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    width = end - start
    size = int(width.max(initial=0))
    size = min(size, _WIDE + 1)
    mantissa = np.zeros(len(start), dtype="int64")
    digits = np.zeros(len(start), dtype="int64")
    after = np.zeros(len(start), dtype="int64")  # digits after the point
    dots = np.zeros(len(start), dtype="int64")
    other = width > _WIDE + 1
    for k in range(size):
        inside = k < width
        char = codes[np.minimum(start + k, len(codes) - 1)]
        digit = char.astype("int64") - 48
        is_digit = inside & (digit >= 0) & (digit <= 9)
        is_dot = inside & (char == 46)
        other |= inside & ~is_digit & ~is_dot
        mantissa = np.where(is_digit, mantissa * 10 + digit, mantissa)
        digits += is_digit
        after += is_digit & (dots > 0)
        dots += is_dot
    ok = ~other & (dots <= 1) & (digits >= 1) & (digits <= _WIDE) & (width > 0)
    number = np.where(ok, mantissa / np.power(10.0, after), np.nan)
    return number, ok
