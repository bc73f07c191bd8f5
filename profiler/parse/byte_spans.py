"""Byte spans of an ASCII text, grouped by value with NumPy: `pd.factorize` of the strings
`data[at[i] : at[i] + size[i]]` without a Python string per span.

A million-row table whose rows repeat a few values (the cells of a trace's middle columns, its
kernel names, its copies' labels) costs seconds when each cell is cut as a string and hashed in
Python. Here the spans are read eight bytes at a time as integers, a few thousand rows at once:
each span gets a hash (its words times random odd multipliers, summed, with its size), spans are
numbered by hash in order of first appearance, as `pd.factorize` numbers strings, and then every
span is compared, byte for byte, with the first span of its number. A hash shared by two
different spans (which the comparison finds) gives None: the caller then cuts the spans as
strings. Spans are grouped by size class (up to 1, 2, 4, ... words), so one long span does not
make every short one read that many words.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

_ROWS, _WORDS = 1 << 14, 1 << 19  # spans read at once (at least, or as many words): their
# words stay in the cache
_MULTIPLIERS = np.random.default_rng(14).integers(1, 2**63, 1 << 12, dtype=np.uint64) | np.uint64(1)
_SIZE_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_KEEP = np.array([(1 << (8 * v)) - 1 for v in range(8)] + [2**64 - 1], dtype=np.uint64)
_SIZES = 8  # spans of up to this many sizes are read a size at a time
_TABLE_WORDS = 64  # size classes up to this many words mask through one table lookup


def cells(codes: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """The `width` bytes of `codes` from each offset, one row each (bytes past the end: 0)."""
    if not len(at):
        return np.zeros((0, width), dtype=np.uint8)
    buffer, base = codes, 0
    if int(at.max()) + width > len(codes):  # the last spans: a padded copy of the end
        base = int(at.min())
        buffer = np.zeros(len(codes) - base + width, dtype=np.uint8)
        buffer[: len(codes) - base] = codes[base:]
    window = np.ndarray((len(buffer) - width + 1,), dtype=f"V{width}", buffer=buffer, strides=(1,))
    out: np.ndarray = window[at - base].view(np.uint8).reshape(len(at), width)
    return out


def first_rows(codes: np.ndarray) -> np.ndarray:
    """Where each code first appears, for codes numbered in order of first appearance (code k
    first appears after codes 0..k-1 did)."""
    if not len(codes):
        return np.zeros(0, dtype=np.int64)
    most = np.maximum.accumulate(codes)
    return np.flatnonzero(np.diff(most, prepend=-1) > 0)


def factorize(
    codes: np.ndarray, at: np.ndarray, size: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """`pd.factorize` of the spans `codes[at[i] : at[i] + size[i]]` (ASCII bytes).

    Returns: each span's code (numbered in order of first appearance) and the first span of
        each code; None when two different spans share a hash (cut them as strings instead).
    """
    n = len(at)
    if not n:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    keys = np.empty(n, dtype=np.int64)
    offset = 0
    for rows, count in _groups(size):
        part = slice(None) if rows is None else rows
        found = _factorized(codes, at[part], size[part], count)
        if found is None:
            return None
        if rows is None:
            return found, first_rows(found)
        keys[rows] = found + offset
        offset += int(found.max()) + 1
    spans, _ = pd.factorize(keys)
    return spans, first_rows(spans)


def _groups(size: np.ndarray) -> list[tuple[np.ndarray | None, int]]:
    """The spans read together (None: all of them) and how many words each reads: spans of one
    size (when there are few sizes: no byte read past a span), else all at once when that
    reads at most twice the words the spans hold, else spans of up to 1, 2, 4, ... words."""
    by_size, sizes = pd.factorize(size)
    if len(sizes) <= _SIZES:
        counts = [max((int(k) + 7) // 8, 1) for k in sizes]
        if len(sizes) == 1:
            return [(None, counts[0])]
        return [(np.flatnonzero(by_size == i), c) for i, c in enumerate(counts)]
    words = np.maximum((size + 7) // 8, 1)
    most = int(words.max())
    if most * len(size) <= 2 * int(words.sum()):
        return [(None, most)]
    size_class = np.ceil(np.log2(words)).astype(np.int64)
    return [(np.flatnonzero(size_class == k), 1 << k) for k in np.unique(size_class).tolist()]


def factorize_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """`factorize` of the rows of a (count, width) byte matrix, each row one span. Rows of up
    to 16 bytes are factorized as one or two integers (no hash)."""
    width = rows.shape[1]
    count = max((width + 7) // 8, 1)
    if not len(rows):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if count <= 2:
        words = _padded(rows, count)
        codes, distinct = pd.factorize(words[:, 0])
        if count == 2:
            second, others = pd.factorize(words[:, 1])
            codes, _ = pd.factorize(codes * len(others) + second)
        return codes, first_rows(codes)
    found = _grouped(lambda a, b: _padded(rows[a:b], count), np.full(len(rows), width), count)
    return None if found is None else (found, first_rows(found))


def _padded(rows: np.ndarray, count: int) -> np.ndarray:
    """The rows as `count` little-endian words each (0 bytes after a row's end)."""
    if rows.shape[1] == count * 8 and rows.flags.c_contiguous:
        return rows.view("<u8")
    out = np.zeros((len(rows), count * 8), dtype=np.uint8)
    out[:, : rows.shape[1]] = rows
    return out.view("<u8")


def _factorized(
    codes: np.ndarray, at: np.ndarray, size: np.ndarray, count: int
) -> np.ndarray | None:
    """`factorize`'s codes of spans of at most `count` words each; None on a shared hash."""
    one = int(size[0]) if len(size) and (size == size[0]).all() else None
    table = None  # masks by size: one row when every span has one size
    if one is not None or count <= _TABLE_WORDS:
        table = _masks(np.arange(count * 8 + 1) if one is None else np.array([one]), count)

    whole = 0 if one is None else one // 8  # words every span fills: nothing to mask

    def words(a: int, b: int) -> np.ndarray:
        out: np.ndarray = cells(codes, at[a:b], count * 8).view("<u8")
        if table is None:
            out &= _masks(size[a:b], count)
        elif one is not None:
            out[:, whole:] &= table[:, whole:]
        else:
            out &= table[size[a:b]]
        return out

    return _grouped(words, size, count)


def _grouped(
    words_of: Callable[[int, int], np.ndarray], size: np.ndarray, count: int
) -> np.ndarray | None:
    """The codes of spans given as `words_of(a, b)` (spans a to b, `count` words each, bytes
    past a span's size 0) and their sizes; None on a shared hash."""
    multipliers = _MULTIPLIERS[np.arange(count) % len(_MULTIPLIERS)]
    local = np.empty(len(size), dtype=np.int64)
    reps, hashes, sizes, total = [], [], [], 0
    step = max(_ROWS, _WORDS // count)
    for a in range(0, len(size), step):
        part = size[a : a + step]
        words = words_of(a, a + len(part))
        hashed = _hashes(words, multipliers) + part.astype(np.uint64) * _SIZE_MULTIPLIER
        inner, distinct = pd.factorize(hashed)
        firsts = first_rows(inner)
        if not _same(words, part, firsts, inner):
            return None
        local[a : a + step] = inner + total
        total += len(firsts)
        reps.append(words[firsts])
        hashes.append(distinct)
        sizes.append(part[firsts])
    rep_words, rep_sizes = np.concatenate(reps), np.concatenate(sizes)
    across, _ = pd.factorize(np.concatenate(hashes))
    if not _same(rep_words, rep_sizes, first_rows(across), across):
        return None
    out: np.ndarray = across[local]
    return out


def _masks(size: np.ndarray, count: int) -> np.ndarray:
    """Per span, its `count` words' masks: the bytes of the span kept, the bytes after it 0."""
    kept = np.clip(size[:, None] - np.arange(0, count * 8, 8), 0, 8)
    out: np.ndarray = _KEEP[kept]
    return out


def _hashes(words: np.ndarray, multipliers: np.ndarray) -> np.ndarray:
    """Per row of `words`, the sum of its words times `multipliers` (mod 2**64): `einsum` sums
    as it multiplies, with no (rows, words) product made first (a quarter of the time)."""
    out: np.ndarray = np.einsum("ij,j->i", words, multipliers)
    return out


def _same(words: np.ndarray, size: np.ndarray, firsts: np.ndarray, codes: np.ndarray) -> bool:
    """Whether every span is, byte for byte, the first span of its code."""
    if not (size == size[firsts][codes]).all():
        return False
    return bool(np.array_equal(words, words[firsts].take(codes, axis=0)))
