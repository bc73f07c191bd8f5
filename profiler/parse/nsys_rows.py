"""The rows of an nsys column-text table read with NumPy, when they are of the plain form nsys
writes (the fast path of `nsys_text`).

nsys pads every row of a table to one width, so the rows are a 2-D array of bytes and a column
is a slice of it. The rows are worked on a slice of rows at a time (it stays in the cache while
every column is read from it):

- a number is read from the 8-byte words its cells fill, a byte's class found with carry-free
  arithmetic on all 8 at once, its value as its digits times their powers of ten (exact: below
  2**53 for a float, two parts below 10**9 for an integer). Only right-aligned numbers of one
  layout per column are taken: `883,936` (grouped) or `883936`, with the point (`0.355442`,
  `1,234.5`) at one place in every row, or a blank cell;
- a label (dtype `category`) is hashed from its words; equal hashes are checked byte for byte,
  and only the distinct labels are seen in Python;
- a column profgen does not read, and the blanks between columns, are checked (printable, and
  blank between columns).

Anything else (text outside its column, `None`, a tab, a number with a sign or an exponent, a
column of two layouts, ...) gives None, and the caller reads the rows as before: that path names
the bad cell. What `read` returns is what `nsys_text._rows` returns for the same rows: the C
reader's frame, numbers already parsed, labels as categories (each from its first non-blank
byte to the last position any row of its column fills, the categories sorted), blank cells
missing.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

Span = tuple[int, int]
CHUNK_BYTES = 1 << 20  # bytes of rows worked on at once
LABEL_ROWS = 1 << 16  # rows of a label column read at once (its words only: 8 bytes a row each)
_GAP, _DIGIT, _COMMA, _DOT = 0, 1, 2, 3
_EXPECTED = {_GAP: 32, _DIGIT: 48, _COMMA: 44, _DOT: 46}
_MOST_DIGITS = {"float64": 15, "int64": 18}  # exact in a float64 mantissa, in an int64
_MAX_WORDS = 3  # numbers of at most 24 bytes (with the blanks before them)
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_HIGH = np.uint64(0x8080808080808080)
_LAST = np.uint64(0x8000000000000000)  # the high bit of a word's last byte
_SPACES = np.uint64(0x2020202020202020)
_EIGHT, _SEVEN, _TOP, _BYTE = np.uint64(8), np.uint64(7), np.uint64(56), np.uint64(0xFF)
_HASH = np.uint64(0x9E3779B97F4A7C15)
_DIGITS, _PAIRS, _QUADS = (
    np.uint64(m) for m in (0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF)
)
_TIMES_10, _TIMES_100, _TIMES_10000 = (np.uint64(m) for m in (2561, 6553601, 42949672960001))
_SIXTEEN, _THIRTY_TWO = np.uint64(16), np.uint64(32)


def read(
    data: bytes, at: int, columns: list[Span], dtypes: dict[int, str], end: int | None = None
) -> pd.DataFrame | None:
    """The rows `data[at:end]` (ASCII; every line of one width, its newline last) cut at the
    columns (the rule's dash runs), `dtypes` giving the columns read (by position) and the
    dtype of each (`int64`, `float64` or `category`); None when they are not of the plain form
    read here. Columns are named `c0`, `c1`, ... by position."""
    end = len(data) if end is None else end
    size = end - at
    width = data.find(b"\n", at, end) - at + 1
    if width < 2 or size % width or not columns:
        return None
    table = np.frombuffer(data, dtype=np.uint8, count=size, offset=at).reshape(-1, width)
    n, last = len(table), width - 1
    edges = [0] + [min(end, last) for _, end in columns[:-1]] + [last]
    lefts = [0] + [min(start, last) for start, _ in columns[1:]]
    readers: list[_Unused | _Labels | _Numbers] = []
    numbers = _Numbers(data, table.shape)
    named: dict[int, _Labels] = {}
    for i in range(len(columns)):
        a, b = edges[i], max(edges[i], edges[i + 1])
        gap = max(0, min(lefts[i], b) - a) if i else 0
        kind = dtypes.get(i)
        if kind is None:
            readers.append(_Unused(table, a, b, gap))
        elif kind == "category":
            if b - a == 0 or at + b < 8 * _words(b - a):
                return None
            named[i] = _Labels(data, table.shape, at + b, b - a, gap)
            readers.append(named[i])
        else:
            spec = _number_column(data, table.shape, at + b, b - a, gap, kind)
            if spec is None:
                return None
            numbers.add(i, spec)
    readers.append(numbers.ready())
    step = max(1, CHUNK_BYTES // width)
    for r0 in range(0, n, step):
        r1 = min(n, r0 + step)
        if not (table[r0:r1, last] == 10).all():
            return None
        if not all(reader.read(r0, r1) for reader in readers):
            return None
    out: dict[str, object] = {}
    for i, labels in named.items():
        got = labels.result()
        if got is None:
            return None
        out[f"c{i}"] = got
    out.update({f"c{i}": got for i, got in numbers.result().items()})
    out = {f"c{i}": out[f"c{i}"] for i in range(len(columns)) if f"c{i}" in out}  # file order
    return pd.DataFrame(out, index=pd.RangeIndex(n), copy=False)  # (no copy into one block)


def _words(width: int) -> int:
    return -(-width // 8)


def _cells(data: bytes, shape: tuple[int, int], end: int, width: int) -> list[np.ndarray]:
    """The 8-byte words (little-endian) that end at `end` in the first row and cover `width`
    bytes before it, one array per word, one element per row (views of `data`)."""
    n, stride = shape
    words = _words(width)
    return [
        np.ndarray((n,), dtype="<u8", buffer=data, offset=end - 8 * (words - j), strides=(stride,))
        for j in range(words)
    ]


def _word(values: np.ndarray, words: int) -> list[np.uint64]:
    """One byte per byte of a column (which ends with the last word; the bytes before it 0) as
    little-endian words."""
    full = np.zeros(words * 8, dtype=np.uint8)
    full[len(full) - len(values) :] = values
    raw = full.tobytes()
    return [np.uint64(int.from_bytes(raw[8 * j : 8 * j + 8], "little")) for j in range(words)]


def _nonzero(x: np.ndarray) -> np.ndarray:
    """Per byte of each word, its high bit set where the byte is not zero (no carries)."""
    return (((x & _LOW7) + _LOW7) | x) & _HIGH


class _Unused:
    """A column profgen does not read: printable, and blank between columns."""

    def __init__(self, table: np.ndarray, a: int, b: int, gap: int) -> None:
        self.table, self.a, self.b, self.gap = table, a, b, gap

    def read(self, r0: int, r1: int) -> bool:
        region = self.table[r0:r1, self.a : self.b]
        return not ((region[:, : self.gap] != 32).any() or (region[:, self.gap :] < 32).any())


class _Labels:
    """A text column read as the C reader reads it with dtype `category`."""

    def __init__(self, data: bytes, shape: tuple[int, int], end: int, width: int, gap: int):
        self.width, self.gap = width, gap
        self.cells = _cells(data, shape, end, width)
        self.inside = _word(np.full(width, 0xFF, dtype=np.uint8), len(self.cells))
        self.codes = np.empty(shape[0], dtype=np.int64)
        self.ids: dict[bytes, int] = {}
        self.done, self.rows = 0, shape[0]  # rows read so far, and in all

    def read(self, r0: int, r1: int) -> bool:
        """Rows up to r1 (those left from slices before, then these), `LABEL_ROWS` at least at
        once (the last slice: all that are left): each step's cost is mostly per call."""
        if r1 - self.done < LABEL_ROWS and r1 < self.rows:
            return True
        r0, self.done = self.done, r1
        part = [c[r0:r1] & m for c, m in zip(self.cells, self.inside, strict=True)]
        hashed = part[0].copy()
        for x in part[1:]:
            hashed *= _HASH
            hashed ^= x
        codes, uniques = pd.factorize(hashed)
        first = np.zeros(len(uniques), dtype=np.int64)
        first[codes] = np.arange(len(hashed))
        if not all((x == x[first][codes]).all() for x in part):
            return False  # two labels with one hash: read the slow way
        distinct = np.stack([x[first] for x in part], axis=1)
        ids = np.empty(len(uniques), dtype=np.int64)
        for k in range(len(uniques)):
            ids[k] = self.ids.setdefault(distinct[k].tobytes(), len(self.ids))
        self.codes[r0:r1] = ids[codes]
        return True

    def result(self) -> pd.Categorical | None:
        cut = len(self.cells) * 8 - self.width  # bytes before the column
        raw = b"".join(key[cut:] for key in self.ids)
        distinct = np.frombuffer(raw, dtype=np.uint8).reshape(len(self.ids), self.width)
        if (distinct < 32).any() or (distinct > 126).any() or (distinct[:, : self.gap] != 32).any():
            return None
        solid = np.flatnonzero((distinct != 32).any(axis=0))
        if not len(solid):  # no label at all (the C reader's categories are then objects)
            none = pd.CategoricalDtype(pd.Index([], dtype=object))
            return pd.Categorical.from_codes(np.full(len(self.codes), -1), dtype=none)
        end = int(solid[-1]) + 1  # the last position a row fills
        names = [bytes(row[:end]).decode("ascii").lstrip(" ") for row in distinct]
        order = sorted({name for name in names if name})
        place = {name: k for k, name in enumerate(order)}
        recode = np.array([place.get(name, -1) for name in names], dtype=np.int64)
        dtype = pd.CategoricalDtype(pd.Index(order))
        return pd.Categorical.from_codes(recode[self.codes], dtype=dtype)


class _Column(NamedTuple):
    """A numeric column: it ends at `end` in `data` (first row), is `width` bytes wide, the
    first `gap` of them between columns; `point` is the number of digits after the point (-1:
    none; None: every cell is blank)."""

    end: int
    width: int
    gap: int
    kind: str
    point: int | None


def _number_column(
    data: bytes, shape: tuple[int, int], end: int, width: int, gap: int, kind: str
) -> _Column | None:
    """A numeric column's layout, taken from its first number; None when it is not one read
    here."""
    n, stride = shape
    words = _words(width)
    if width == 0 or end - 8 * words < 0 or words > _MAX_WORDS:
        return None
    last = np.ndarray((n,), dtype=np.uint8, buffer=data, offset=end - 1, strides=(stride,))
    row = -1
    for a in range(0, n, 1 << 16):
        filled = np.flatnonzero(last[a : a + (1 << 16)] != 32)
        if len(filled):
            row = a + int(filled[0])
            break
    if row < 0:  # every cell blank
        return None if kind == "int64" else _Column(end, width, gap, kind, None)
    sample = data[row * stride + end - width : row * stride + end]
    dot = sample.rfind(b".")
    point = width - 1 - dot if dot >= 0 else -1  # digits after the point
    if point == 0 or (point > 0 and kind == "int64"):
        return None
    return _Column(end, width, gap, kind, point)


def _layout(column: _Column, grouped: bool) -> tuple[np.ndarray, np.ndarray]:
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


class _Numbers:
    """The numeric columns of a table, read together as the C reader reads each with dtype
    `int64` or `float64` (blank cells NaN). Each column's cells are the 8-byte words that end
    where it ends (little-endian; the bytes before the column masked off); all the words of a
    slice of rows are one 2-D array, so that each step below is one NumPy operation for every
    column. Thousands grouped by commas are tried first, then plain digits (for a whole column:
    one of both layouts is not read here)."""

    def __init__(self, data: bytes, shape: tuple[int, int]) -> None:
        self.data, self.shape = data, shape
        self.step = max(1, CHUNK_BYTES // shape[1])
        self.positions: list[int] = []
        self.columns: list[_Column] = []
        self.grouped: list[bool] = []

    def add(self, position: int, column: _Column) -> None:
        self.positions.append(position)
        self.columns.append(column)
        self.grouped.append(column.point is not None)

    def ready(self) -> _Numbers:
        n, stride = self.shape
        self.out = [np.empty(n, dtype=c.kind) for c in self.columns]
        starts = [
            c.end - 8 * (_words(c.width) - j) for c in self.columns for j in range(_words(c.width))
        ]
        if not starts:
            return self
        base = min(starts)
        self.view = np.ndarray(
            (n, max(starts) - base + 1), dtype="<u8", buffer=self.data, offset=base,
            strides=(stride, 1),
        )  # fmt: skip
        self.index = np.array(starts) - base
        self._constants()
        return self

    def result(self) -> dict[int, np.ndarray]:
        return dict(zip(self.positions, self.out, strict=True))

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
        """Per word: the high bit of each byte of its column (`high`), the byte each place
        expects, masks of the bits a digit, comma or point may have, `cont_next`/`cont_prev`
        (all ones where the next/previous word is of the same column), and the weights of every
        digit byte into each column's value (a float column: one value; an integer: its digits
        below 10**9 and above)."""
        names = ("expected", "off", "ten", "on", "comma", "dot", "high")
        bytes_: dict[str, list[np.ndarray]] = {name: [] for name in names}
        owner: list[int] = []
        powers: list[np.ndarray] = []
        roles: list[np.ndarray] = []
        self.last_word, self.dot_word, self.count = [], [], []
        for c, column in enumerate(self.columns):
            slots, power = _layout(column, self.grouped[c])
            size = _words(column.width) * 8
            pad = size - column.width

            def full(values: np.ndarray, pad: int = pad) -> np.ndarray:
                return np.concatenate([np.zeros(pad, dtype=np.uint8), values.astype(np.uint8)])

            digit = slots == _DIGIT
            bytes_["expected"].append(full(np.array([_EXPECTED[s] for s in slots.tolist()])))
            bytes_["off"].append(full(np.where(digit, 0xF0, 0xFF)))
            bytes_["ten"].append(full(np.where(digit, 0x76, 0)))
            bytes_["on"].append(full(np.where(digit, 0x80, 0)))
            bytes_["comma"].append(full(np.where(slots == _COMMA, 0x80, 0)))
            bytes_["dot"].append(full(np.where(slots == _DOT, 0x80, 0)))
            bytes_["high"].append(full(np.full(column.width, 0x80)))
            powers.append(np.concatenate([np.full(pad, -1), power]))
            roles.append(np.concatenate([np.full(pad, _GAP), slots]))
            first = len(owner)
            owner += [c] * (size // 8)
            self.last_word.append(len(owner) - 1)
            dots = np.flatnonzero(slots == _DOT)
            self.dot_word.append(first + (pad + int(dots[0])) // 8 if len(dots) else -1)
            if int(digit.sum()) > _MOST_DIGITS[column.kind]:
                self.count.append(c)
        self.owner = np.array(owner)
        masks = {name: np.concatenate(parts).view("<u8") for name, parts in bytes_.items()}
        self.expected, self.off, self.ten = masks["expected"], masks["off"], masks["ten"]
        self.on, self.comma, self.dot, self.high = (
            masks[k] for k in ("on", "comma", "dot", "high")
        )
        total = len(owner)
        self.notlast = np.full(total, _HIGH)
        self.notlast[self.last_word] = _HIGH ^ _LAST
        same = self.owner[1:] == self.owner[:-1]
        self.cont_next = np.where(np.append(same, False), ~np.uint64(0), np.uint64(0))
        self.cont_prev = np.where(np.insert(same, 0, False), ~np.uint64(0), np.uint64(0))
        self.has_comma = bool(self.comma.any())
        # Values: per word, the bytes of commas and points taken out (the bytes before them
        # move one place to the right), then its 8 bytes read as an 8-digit number (three
        # multiplications, as simdjson does), times the power of ten of its last digit.
        slots_of = np.concatenate(roles)
        removals = [np.flatnonzero(slots_of[8 * t : 8 * t + 8] >= _COMMA) for t in range(total)]
        self.removals = []
        for r in range(max((len(k) for k in removals), default=0)):
            after = [
                sum(0xFF << (8 * b) for b in range(8) if b > k[r]) if r < len(k) else (1 << 64) - 1
                for k in removals
            ]
            mask = np.array(after, dtype=np.uint64)
            self.removals.append((mask, ~mask))
        at = np.concatenate(powers).reshape(total, 8)
        lowest = np.where(at >= 0, at, 10**6).min(axis=1)  # the power of a word's last digit
        self.scale = np.where(lowest < 10**6, 10 ** np.minimum(lowest, 18), 0).astype(np.int64)
        spans = [np.flatnonzero(self.owner == c) for c in range(len(self.columns))]
        self.parts = [  # per column, its k-th word (`total`: a word of zeros)
            np.array([own[k] if k < len(own) else total for own in spans])
            for k in range(max(len(own) for own in spans))
        ]

    def _read(self, r0: int, r1: int) -> list[int]:
        """Rows r0..r1 into `out`; the columns with a cell not of their layout (then nothing).

        Per word: `solid` marks the bytes that are no blank; `z`, each solid byte less the byte
        its place expects (`0`, `,`, `.`), must be 0 off the digits and at most 9 on them, where
        it is the digit's value. The solid bytes must run to the column's end, a comma must not
        come first, and the number of a column with a point must reach it.
        """
        x = self.view[r0:r1][:, self.index]
        solid = _nonzero(x ^ _SPACES) & self.high
        z = (x ^ self.expected) & ((solid >> _SEVEN) * _BYTE)
        bad = (z & self.off) | ((z + self.ten) & self.on)  # a byte out of place, no digit
        ahead = solid >> _EIGHT  # per byte: whether the next one is solid
        ahead[:, :-1] |= (solid[:, 1:] << _TOP) & self.cont_next[:-1]
        bad |= solid & ~ahead & self.notlast  # a blank after the number's start
        if self.has_comma:
            behind = solid << _EIGHT  # whether the byte before is solid
            behind[:, 1:] |= (solid[:, :-1] >> _TOP) & self.cont_prev[1:]
            bad |= solid & self.comma & ~behind  # a comma first
        failed = set(self.owner[bad.any(axis=0)].tolist()) if bad.any() else set()
        empty = (solid[:, self.last_word] & _LAST) == 0
        for c, column in enumerate(self.columns):
            word = self.dot_word[c]
            if word >= 0 and (~empty[:, c] & ((solid[:, word] & self.dot[word]) == 0)).any():
                failed.add(c)  # a number too short for its point
            if column.kind == "int64" and empty[:, c].any():
                failed.add(c)
        for c in self.count:
            own = np.flatnonzero(self.owner == c)
            many = np.bitwise_count(solid[:, own] & self.on[own]).sum(axis=1)
            if (many > _MOST_DIGITS[self.columns[c].kind]).any():
                failed.add(c)
        if failed:
            return sorted(failed)
        v = z
        for after, before in self.removals:
            v = (v & after) | ((v & before) << _EIGHT)
        v = ((v & _DIGITS) * _TIMES_10) >> _EIGHT
        v = ((v & _PAIRS) * _TIMES_100) >> _SIXTEEN
        v = ((v & _QUADS) * _TIMES_10000) >> _THIRTY_TWO
        scaled = np.zeros((len(v), len(self.scale) + 1), dtype=np.int64)
        np.multiply(v.view(np.int64), self.scale, out=scaled[:, :-1])
        value = scaled[:, self.parts[0]]
        for part in self.parts[1:]:
            value += scaled[:, part]
        for c, column in enumerate(self.columns):
            if column.kind == "int64":
                self.out[c][r0:r1] = value[:, c]
            else:
                number = value[:, c].astype(np.float64)  # below 10**15: exact
                if (column.point or 0) > 0:
                    number /= float(10 ** (column.point or 0))
                number[empty[:, c]] = np.nan
                self.out[c][r0:r1] = number
        return []
