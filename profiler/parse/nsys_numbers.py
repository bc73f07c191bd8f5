"""The numeric columns of an nsys column-text table, read with NumPy (for `nsys_rows`).

A number is read from the 8-byte words its cells fill (little-endian, so a word's first byte
is its lowest): a byte's class is found with carry-free arithmetic on all 8 at once, its value
as its digits times their powers of ten (exact: below 2**53 for a float, two parts below
10**9 for an integer). Only right-aligned numbers of one layout per column are taken:
`883,936` (grouped) or `883936`, with the point (`0.355442`, `1,234.5`) at one place in every
row, or a blank cell.

The words of a slice of rows are one 2-D array, a row per word, so that each step is one NumPy
operation over every column at once on contiguous memory. A cell is checked in two parts:

- per byte: each non-blank byte is what its place allows (a digit, the comma, the point), and
  the non-blank bytes of a word are its last ones;
- per cell, from how many non-blank bytes each of its words holds (one table lookup): the
  words before the last hold none or are full after the first that holds some, and the
  number's length does not start it at a comma, reaches its point, has digits that fit, and
  is not blank in an integer column.

The words are in order of their place from the right (every column's last word, then every
second-last, ...) with the columns of most words first, so that a column's value is a sum of
rows of one array, with no gather.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

_GAP, _DIGIT, _COMMA, _DOT = 0, 1, 2, 3
_EXPECTED = {_GAP: 32, _DIGIT: 48, _COMMA: 44, _DOT: 46}
MOST_DIGITS = {"float64": 15, "int64": 18}  # exact in a float64 mantissa, in an int64
MAX_WORDS = 3  # numbers of at most 24 bytes (with the blanks before them)
_FINE, _BLANK, _BAD = 0, 1, 2  # a cell's verdict
_BASE = 9  # a word holds 0 to 8 non-blank bytes
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_SPACES = np.uint64(0x2020202020202020)
_EIGHT, _SEVEN, _BYTE = np.uint64(8), np.uint64(7), np.uint64(0xFF)
_PAIRS, _QUADS = np.uint64(0x00FF00FF00FF00FF), np.uint64(0x0000FFFF0000FFFF)
_TIMES_10, _TIMES_100, _TIMES_10000 = (np.uint64(m) for m in (2561, 6553601, 42949672960001))
_SIXTEEN, _THIRTY_TWO = np.uint64(16), np.uint64(32)


class Column(NamedTuple):
    """A numeric column: it ends at `end` in `data` (first row), is `width` bytes wide, the
    first `gap` of them between columns; `point` is the number of digits after the point (-1:
    none; None: every cell is blank)."""

    end: int
    width: int
    gap: int
    kind: str
    point: int | None


def words(width: int) -> int:
    """The 8-byte words a column of `width` bytes fills."""
    return -(-width // 8)


def number_column(
    data: bytes, shape: tuple[int, int], end: int, width: int, gap: int, kind: str
) -> Column | None:
    """A numeric column's layout, taken from its first number; None when it is not one read
    here."""
    n, stride = shape
    if width == 0 or end - 8 * words(width) < 0 or words(width) > MAX_WORDS:
        return None
    last = np.ndarray((n,), dtype=np.uint8, buffer=data, offset=end - 1, strides=(stride,))
    row = -1
    for a in range(0, n, 1 << 16):
        filled = np.flatnonzero(last[a : a + (1 << 16)] != 32)
        if len(filled):
            row = a + int(filled[0])
            break
    if row < 0:  # every cell blank
        return None if kind == "int64" else Column(end, width, gap, kind, None)
    sample = data[row * stride + end - width : row * stride + end]
    dot = sample.rfind(b".")
    point = width - 1 - dot if dot >= 0 else -1  # digits after the point
    if point == 0 or (point > 0 and kind == "int64"):
        return None
    return Column(end, width, gap, kind, point)


def _layout(column: Column, grouped: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each byte's role in a right-aligned number (`_GAP`, `_DIGIT`, `_COMMA`, `_DOT`) and a
    digit's power of ten (-1 elsewhere); a column of blanks has only `_GAP` bytes."""
    width = column.width
    power = np.full(width, -1, dtype=np.int64)
    if column.point is None:
        return np.full(width, _GAP, dtype=np.int8), power
    point = column.point
    slots = np.full(width, _DIGIT, dtype=np.int8)
    for k in range(width):
        r = width - 1 - k  # from the right
        if point > 0 and r < point:
            power[k] = r
        elif point > 0 and r == point:
            slots[k] = _DOT
        else:
            q = r - point - 1 if point > 0 else r
            if grouped and q % 4 == 3:
                slots[k] = _COMMA
            else:
                power[k] = max(point, 0) + q - (q // 4 if grouped else 0)
    slots[: column.gap] = _GAP
    power[slots != _DIGIT] = -1
    return slots, power


def _verdicts(column: Column, slots: np.ndarray) -> np.ndarray:
    """A cell's verdict (`_FINE`, `_BLANK`, `_BAD`) by how many non-blank bytes each of its
    words holds, the count of its last word first: digit j of the index in base 9 is the count
    of the word j places from the right. The bytes of each word are checked apart."""
    width, count = column.width, words(column.width)
    key = np.arange(_BASE**count)
    held = [key // _BASE**j % _BASE for j in range(count)]  # held[j]: j words from the right
    length = np.sum(held, axis=0)
    bad = held[-1] > width - 8 * (count - 1)  # (the bytes before the column never count)
    for j in range(1, count):
        bad |= (held[j] > 0) & (held[j - 1] < 8)  # a blank after the number's start
    tail = np.append(slots[::-1], _GAP)  # tail[k]: the role of the byte k from the right
    digits = np.concatenate([[0], np.cumsum(tail[:width] == _DIGIT)])  # in the last k
    first = tail[np.minimum(length - 1, width)]  # the role of the number's first byte
    filled = length > 0
    bad |= filled & ((length > width) | (first == _GAP) | (first == _COMMA))
    bad |= digits[np.minimum(length, width)] > MOST_DIGITS[column.kind]
    if column.point is not None and column.point > 0:
        bad |= filled & (length <= column.point)  # too short for its point
    if column.kind == "int64":
        bad |= ~filled
    return np.where(bad, _BAD, np.where(filled, _FINE, _BLANK)).astype(np.uint8)


class Numbers:
    """The numeric columns of a table, read together as the C reader reads each with dtype
    `int64` or `float64` (blank cells NaN). Thousands grouped by commas are tried first, then
    plain digits (for a whole column: one of both layouts is not read here)."""

    def __init__(self, data: bytes, shape: tuple[int, int], step: int) -> None:
        self.data, self.shape, self.step = data, shape, step
        self.positions: list[int] = []
        self.columns: list[Column] = []
        self.grouped: list[bool] = []

    def add(self, position: int, column: Column) -> None:
        self.positions.append(position)
        self.columns.append(column)
        self.grouped.append(column.point is not None)

    def ready(self) -> Numbers:
        n, stride = self.shape
        kinds = [c.kind for c in self.columns]
        whole = [c.kind != "int64" and (c.point or -1) < 0 for c in self.columns]  # no point
        self.ints = [c for c, kind in enumerate(kinds) if kind == "int64"]
        self.wholes = [c for c, is_whole in enumerate(whole) if is_whole]
        self.floats = [c for c, kind in enumerate(kinds) if kind != "int64" and not whole[c]]
        self.int_out = np.empty((len(self.ints), n), dtype=np.int64)
        self.whole_out = np.empty((len(self.wholes), n), dtype=np.int64)
        self.whole_blank = np.empty((len(self.wholes), n), dtype=bool)
        self.float_out = np.empty((len(self.floats), n), dtype=np.float64)
        if not self.columns:
            return self
        # Columns of most words first; per place from the right, the word of each column.
        self.order = sorted(range(len(self.columns)), key=lambda c: -words(self.columns[c].width))
        self.levels = [  # how many columns have a word that many places from the right
            sum(words(c.width) > j for c in self.columns) for j in range(MAX_WORDS)
        ]
        starts = [
            self.columns[c].end - 8 * (j + 1)
            for j, many in enumerate(self.levels)
            for c in self.order[:many]
        ]
        base = min(starts)
        self.view = np.ndarray(
            (max(starts) - base + 1, n), dtype="<u8", buffer=self.data, offset=base,
            strides=(1, stride),
        )  # fmt: skip
        self.index = np.array(starts) - base
        place = {c: i for i, c in enumerate(self.order)}
        self.int_rows = [place[c] for c in self.ints]  # rows of a value array, by output
        self.whole_rows = [place[c] for c in self.wholes]
        self.float_rows = [place[c] for c in self.floats]
        self.points = [(k, float(10 ** (self.columns[c].point or 0))) for k, c in enumerate(
            self.floats) if (self.columns[c].point or 0) > 0]  # fmt: skip
        self._constants()
        return self

    def result(self) -> dict[int, np.ndarray | pd.arrays.IntegerArray]:
        """The columns by position: `int64` ones as int64, `float64` ones as float64 (blank:
        NaN), except those of whole numbers (no point), which are Int64 (blank: NA, its value
        0): the same numbers, exact, so that no one checks them for a fraction again."""
        out: dict[int, np.ndarray | pd.arrays.IntegerArray] = {
            self.positions[c]: self.int_out[k] for k, c in enumerate(self.ints)
        }
        out.update({self.positions[c]: self.float_out[k] for k, c in enumerate(self.floats)})
        for k, c in enumerate(self.wholes):
            out[self.positions[c]] = pd.arrays.IntegerArray(self.whole_out[k], self.whole_blank[k])
        return out

    def read(self, r0: int, r1: int) -> bool:
        if not self.columns:
            return True
        failed = self._read(r0, r1)
        while failed:  # read every row so far again, those columns in plain digits
            for c in failed:
                if not self.grouped[c]:
                    return False
                self.grouped[c] = False
            self._constants()
            failed = next(
                (
                    f
                    for a in range(0, r1, self.step)
                    if (f := self._read(a, min(a + self.step, r1)))
                ),
                [],
            )
        return True

    def _constants(self) -> None:
        """Per word (a column per row of these): the high bit of each byte of its column
        (`high`), the byte each place expects, masks of the bits a digit may have, the power of
        ten of its last digit (`scale`), where a comma or point is taken out (`removals`); per
        column, its verdicts (`verdicts`, from `offset`)."""
        names = ("expected", "off", "ten", "on", "high")
        parts: dict[str, list[np.ndarray]] = {name: [] for name in names}
        scale: list[int] = []
        gaps: list[np.ndarray] = []
        verdicts: list[np.ndarray] = []
        self.offset: list[int] = []
        for j, many in enumerate(self.levels):
            for c in self.order[:many]:
                column = self.columns[c]
                slots, power = _layout(column, self.grouped[c])
                pad = 8 * words(column.width) - column.width
                role = np.concatenate([np.full(pad, -1), slots])[::-1][8 * j : 8 * j + 8][::-1]
                at = np.concatenate([np.full(pad, -1), power])[::-1][8 * j : 8 * j + 8][::-1]
                digit, inside = role == _DIGIT, role >= 0
                expected = [_EXPECTED.get(int(r), 0) for r in role]
                parts["expected"].append(np.array(expected, dtype=np.uint8))
                parts["off"].append(np.where(digit, 0xF0, np.where(inside, 0xFF, 0)))
                parts["ten"].append(np.where(digit, 0x76, 0))
                parts["on"].append(np.where(digit, 0x80, 0))
                parts["high"].append(np.where(inside, 0x80, 0))
                lowest = at[at >= 0].min() if (at >= 0).any() else -1
                scale.append(10 ** min(int(lowest), 18) if lowest >= 0 else 0)
                gaps.append(np.flatnonzero(role >= _COMMA))
        for c in self.order:
            self.offset.append(sum(map(len, verdicts)))
            verdicts.append(
                _verdicts(self.columns[c], _layout(self.columns[c], self.grouped[c])[0])
            )
        self.verdicts = np.concatenate(verdicts)
        masks = {
            k: np.concatenate(v).astype(np.uint8).view("<u8")[:, None] for k, v in parts.items()
        }
        self.expected, self.off, self.ten = masks["expected"], masks["off"], masks["ten"]
        self.on, self.high = masks["on"], masks["high"]
        self.scale = np.array(scale, dtype=np.int64)[:, None]
        self.owner = np.array([c for j, many in enumerate(self.levels) for c in self.order[:many]])
        # Taking out the comma or point at byte k of a word moves the bytes below it up one:
        # v + (v & below) * 255, `below` the bytes up to k (all 0 where a word has no more).
        self.removals = [
            np.array(
                [
                    sum(0xFF << (8 * b) for b in range(int(k[r]) + 1)) if r < len(k) else 0
                    for k in gaps
                ],
                dtype=np.uint64,
            )[:, None]
            for r in range(max(len(k) for k in gaps))
        ]

    def _read(self, r0: int, r1: int) -> list[int]:
        """Rows r0..r1 into the output; the columns with a cell not of their layout (then
        nothing).

        Per word: `solid` marks the bytes that are no blank, `mask` is all ones on them; `z`,
        each solid byte less the byte its place expects (`0`, `,`, `.`), must be 0 off the
        digits and at most 9 on them, where it is the digit's value; no blank may follow a
        solid byte. Per cell: the verdict of how many solid bytes each of its words holds.
        """
        x = self.view[self.index, r0:r1]
        t = x ^ _SPACES
        solid = t & _LOW7
        solid += _LOW7
        solid |= t
        solid &= self.high
        mask = np.right_shift(solid, _SEVEN, out=t)
        mask *= _BYTE
        z = np.bitwise_xor(x, self.expected, out=x)
        z &= mask
        bad = z + self.ten
        bad &= self.on
        bad |= z & self.off
        bad |= (mask << _EIGHT) & ~mask  # a blank after a solid byte
        failed = set(self.owner[bad.any(axis=1)].tolist())
        verdict = self._verdicts(np.bitwise_count(solid))
        failed.update(np.array(self.order)[(verdict == _BAD).any(axis=1)].tolist())
        if failed:
            return sorted(failed)
        value = self._values(z)
        self._store(value, verdict == _BLANK, r0, r1)
        return []

    def _verdicts(self, held: np.ndarray) -> np.ndarray:
        """Per column (in `order`), each cell's verdict from the solid bytes its words hold."""
        key = np.array(self.offset, dtype=np.intp)[:, None] + held[: self.levels[0]]
        at = self.levels[0]
        for j, many in enumerate(self.levels[1:], start=1):
            key[:many] += held[at : at + many].astype(np.intp) * _BASE**j
            at += many
        verdict: np.ndarray = self.verdicts[key]
        return verdict

    def _values(self, z: np.ndarray) -> np.ndarray:
        """Per column (in `order`), each cell's value from its digits (`z`, overwritten)."""
        v = z
        for below in self.removals:
            v += (v & below) * _BYTE
        v *= _TIMES_10
        v >>= _EIGHT
        v &= _PAIRS
        v *= _TIMES_100
        v >>= _SIXTEEN
        v &= _QUADS
        v *= _TIMES_10000
        v >>= _THIRTY_TWO
        scaled = v.view(np.int64)
        scaled *= self.scale
        value = scaled[: self.levels[0]]
        at = self.levels[0]
        for many in self.levels[1:]:
            value[:many] += scaled[at : at + many]
            at += many
        return value

    def _store(self, value: np.ndarray, blank: np.ndarray, r0: int, r1: int) -> None:
        """The values (per column in `order`) into the outputs: floats divided by the power of
        ten of their point, blank cells NaN (whole numbers: marked blank)."""
        if self.ints:
            self.int_out[:, r0:r1] = value[self.int_rows]
        if self.wholes:
            self.whole_out[:, r0:r1] = value[self.whole_rows]  # (0 where blank)
            self.whole_blank[:, r0:r1] = blank[self.whole_rows]
        if not self.floats:
            return
        out = self.float_out[:, r0:r1]
        out[:] = value[self.float_rows]
        for k, power in self.points:
            out[k] /= power
        np.copyto(out, np.nan, where=blank[self.float_rows])
