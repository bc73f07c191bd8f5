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

import numpy as np
import pandas as pd

Span = tuple[int, int]
CHUNK_BYTES = 1 << 20  # bytes of rows worked on at once
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


def read(data: bytes, at: int, columns: list[Span], dtypes: dict[int, str]) -> pd.DataFrame | None:
    """The rows `data[at:]` (ASCII; every line of one width, its newline last) cut at the
    columns (the rule's dash runs), `dtypes` giving the columns read (by position) and the
    dtype of each (`int64`, `float64` or `category`); None when they are not of the plain form
    read here. Columns are named `c0`, `c1`, ... by position."""
    size = len(data) - at
    width = data.find(b"\n", at) - at + 1
    if width < 2 or size % width or not columns:
        return None
    table = np.frombuffer(data, dtype=np.uint8, count=size, offset=at).reshape(-1, width)
    n, last = len(table), width - 1
    edges = [0] + [min(end, last) for _, end in columns[:-1]] + [last]
    lefts = [0] + [min(start, last) for start, _ in columns[1:]]
    readers: list[_Unused | _Labels | _Numbers] = []
    for i in range(len(columns)):
        a, b = edges[i], max(edges[i], edges[i + 1])
        gap = max(0, min(lefts[i], b) - a) if i else 0
        kind = dtypes.get(i)
        if kind is None:
            readers.append(_Unused(table, a, b, gap))
        elif kind == "category":
            if b - a == 0 or at + b < 8 * _words(b - a):
                return None
            readers.append(_Labels(data, table.shape, at + b, b - a, gap))
        else:
            number = _numbers(data, table.shape, at + b, b - a, gap, kind)
            if number is None:
                return None
            readers.append(number)
    step = max(1, CHUNK_BYTES // width)
    for r0 in range(0, n, step):
        r1 = min(n, r0 + step)
        if not (table[r0:r1, last] == 10).all():
            return None
        if not all(reader.read(r0, r1) for reader in readers):
            return None
    out: dict[str, object] = {}
    for i, reader in enumerate(readers):
        if isinstance(reader, _Unused):
            continue
        got = reader.result()
        if got is None:
            return None
        out[f"c{i}"] = got
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

    def read(self, r0: int, r1: int) -> bool:
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


def _numbers(
    data: bytes, shape: tuple[int, int], end: int, width: int, gap: int, kind: str
) -> _Numbers | None:
    """The reader of a numeric column (it ends at `end` in the first row, `width` bytes wide,
    the first `gap` of them between columns), its layout taken from its first number."""
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
        return None if kind == "int64" else _Numbers(data, shape, end, width, gap, kind, None)
    sample = data[row * stride + end - width : row * stride + end]
    dot = sample.rfind(b".")
    point = width - 1 - dot if dot >= 0 else -1  # digits after the point
    if point == 0 or (point > 0 and kind == "int64"):
        return None
    return _Numbers(data, shape, end, width, gap, kind, point)


class _Numbers:
    """A numeric column read as the C reader reads it with dtype `int64` or `float64` (blank
    cells NaN). Thousands grouped by commas are tried first, then plain digits (for the whole
    column: a column of both is not read here). `point` is the number of digits after the
    point (-1: none; None: every cell is blank)."""

    def __init__(
        self,
        data: bytes,
        shape: tuple[int, int],
        end: int,
        width: int,
        gap: int,
        kind: str,
        point: int | None,
    ) -> None:
        self.cells = _cells(data, shape, end, width)
        self.width, self.gap, self.kind, self.point = width, gap, kind, point
        self.step = max(1, CHUNK_BYTES // shape[1])
        self.out = np.empty(shape[0], dtype=kind)
        self.layouts = [True, False] if point is not None else []
        self.blank = point is None
        self.high = _word(np.full(width, 0x80, dtype=np.uint8), len(self.cells))
        if not self.blank:
            self._layout(self.layouts.pop(0))

    def result(self) -> np.ndarray:
        return self.out

    def read(self, r0: int, r1: int) -> bool:
        if self._read(r0, r1):
            return True
        while self.layouts:  # read every row so far again in the next layout
            self._layout(self.layouts.pop(0))
            if all(self._read(a, min(a + self.step, r1)) for a in range(0, r1, self.step)):
                return True
        return False

    def _layout(self, grouped: bool) -> None:
        """Each byte's role (`_GAP`, `_DIGIT`, `_COMMA`, `_DOT`) and a digit's weight."""
        width, point = self.width, self.point or -1
        slots = np.full(width, _DIGIT, dtype=np.int8)
        power = np.full(width, -1, dtype=np.int64)
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
        slots[: self.gap] = _GAP
        power[slots != _DIGIT] = -1
        words = len(self.cells)
        digit = slots == _DIGIT

        def mask(where: np.ndarray, byte: int) -> list[np.uint64]:
            return _word(np.where(where, byte, 0).astype(np.uint8), words)

        self.expected = _word(np.array([_EXPECTED[s] for s in slots.tolist()], np.uint8), words)
        self.off_digits = [~m for m in mask(digit, 0x0F)]
        self.ten = mask(digit, 0x76)
        self.on_digits = mask(digit, 0x80)
        self.commas = mask(slots == _COMMA, 0x80)
        self.dots = mask(slots == _DOT, 0x80)
        self.count = int(digit.sum()) > _MOST_DIGITS[self.kind]
        at = np.full(words * 8, -1, dtype=np.int64)
        at[len(at) - width :] = power
        if self.kind == "float64":  # every partial sum is a whole number below 2**53: exact
            self.weights = np.where(at >= 0, 10.0 ** np.maximum(at, 0), 0.0)[:, None]
        else:  # each part below 10**9, joined as integers
            low = np.where((at >= 0) & (at < 9), 10.0 ** np.clip(at, 0, 9), 0.0)
            upper = np.where(at >= 9, 10.0 ** np.clip(at - 9, 0, 9), 0.0)
            self.weights = np.stack([low, upper], axis=1)

    def _read(self, r0: int, r1: int) -> bool:
        """Rows r0..r1 into `out`; False when a cell is not of the layout.

        Per word: `solid` marks the bytes that are no blank; `z`, each solid byte less the byte
        its place expects (`0`, `,`, `.`), must be 0 off the digits and at most 9 on them, where
        it is the digit's value. The solid bytes must run to the column's end, a comma must not
        come first, and the number of a column with a point must reach it.
        """
        part = [c[r0:r1].copy() for c in self.cells]
        rows, words = r1 - r0, len(part)
        solid = [_nonzero(x ^ _SPACES) & m for x, m in zip(part, self.high, strict=True)]
        if self.blank:
            return not any(s.any() for s in solid) and self._store(r0, r1, None, solid)
        bad = np.zeros(rows, dtype=np.uint64)
        has_dot = np.zeros(rows, dtype=bool)
        many = np.zeros(rows, dtype=np.uint8)
        value = np.zeros((rows, self.weights.shape[1]))
        for j, x in enumerate(part):
            z = (x ^ self.expected[j]) & ((solid[j] >> _SEVEN) * _BYTE)
            bad |= z & self.off_digits[j]  # a byte out of place
            bad |= (z + self.ten[j]) & self.on_digits[j]  # no digit
            ahead = solid[j] >> _EIGHT  # per byte: whether the next one is solid
            if j + 1 < words:
                ahead |= solid[j + 1] << _TOP
                bad |= solid[j] & ~ahead  # a blank after the number's start
            else:
                bad |= solid[j] & ~ahead & ~_LAST
            if self.commas[j]:
                behind = solid[j] << _EIGHT  # whether the byte before is solid
                if j:
                    behind |= solid[j - 1] >> _TOP
                bad |= solid[j] & self.commas[j] & ~behind  # a comma first
            if self.dots[j]:
                has_dot |= (solid[j] & self.dots[j]) != 0
            if self.count:
                many += np.bitwise_count(solid[j] & self.on_digits[j])
            digits = z.view(np.uint8).reshape(rows, 8).astype(np.float64)
            value += digits @ self.weights[8 * j : 8 * j + 8]
        if bad.any() or (self.count and (many > _MOST_DIGITS[self.kind]).any()):
            return False
        empty = (solid[-1] & _LAST) == 0
        if (self.point or 0) > 0 and (~empty & ~has_dot).any():
            return False  # a number too short for its point
        return self._store(r0, r1, value, solid)

    def _store(self, r0: int, r1: int, value: np.ndarray | None, solid: list[np.ndarray]) -> bool:
        empty = (solid[-1] & _LAST) == 0
        if value is None:
            self.out[r0:r1] = np.nan
        elif self.kind == "int64":
            if empty.any():
                return False
            upper = value[:, 1].astype(np.int64) * 1_000_000_000
            self.out[r0:r1] = value[:, 0].astype(np.int64) + upper
        else:
            number = value[:, 0]
            if (self.point or 0) > 0:
                number /= float(10 ** (self.point or 0))
            number[empty] = np.nan
            self.out[r0:r1] = number
        return True
