"""The rows of an nsys column-text table read with NumPy, when they are of the plain form nsys
writes (the fast path of `nsys_text`).

nsys pads every row of a table to one width, so the rows are a 2-D array of bytes and a column
is a slice of it. The rows are worked on a slice of rows at a time (it stays in the cache while
every column is read from it):

- numbers are read by `nsys_numbers`: right-aligned, of one layout per column (`883,936` or
  `883936`, the point at one place in every row), or a blank cell;
- a label (dtype `category`) is hashed from its words; equal hashes are checked byte for byte,
  and only the distinct labels are seen in Python;
- a column profgen does not read, and the blanks between columns, are checked (printable, and
  blank between columns).

Anything else (text outside its column, `None`, a tab, a number with a sign or an exponent, a
column of two layouts, ...) gives None, and the caller reads the rows as before: that path names
the bad cell. What `read` returns is what `nsys_cut.rows` returns for the same rows: the C
reader's frame, numbers already parsed, labels as categories (each from its first non-blank
byte to the last position any row of its column fills, the categories sorted), blank cells
missing; but a float column of whole numbers is Int64 (the same numbers, exact: see
`nsys_numbers.Numbers.result`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from profiler.parse import nsys_numbers

Span = tuple[int, int]
CHUNK_BYTES = 1 << 20  # bytes of rows worked on at once
LABEL_ROWS = 1 << 16  # rows of a label column read at once (its words only: 8 bytes a row each)
_HASH = np.uint64(0x9E3779B97F4A7C15)


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
    readers: list[_Unused | _Labels | nsys_numbers.Numbers] = []
    step = max(1, CHUNK_BYTES // width)
    numbers = nsys_numbers.Numbers(data, table.shape, step)
    named: dict[int, _Labels] = {}
    for i in range(len(columns)):
        a, b = edges[i], max(edges[i], edges[i + 1])
        gap = max(0, min(lefts[i], b) - a) if i else 0
        kind = dtypes.get(i)
        if kind is None:
            readers.append(_Unused(table, a, b, gap))
        elif kind == "category":
            if b - a == 0 or at + b < 8 * nsys_numbers.words(b - a):
                return None
            named[i] = _Labels(data, table.shape, at + b, b - a, gap)
            readers.append(named[i])
        else:
            spec = nsys_numbers.number_column(data, table.shape, at + b, b - a, gap, kind)
            if spec is None:
                return None
            numbers.add(i, spec)
    readers.append(numbers.ready())
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


def _cells(data: bytes, shape: tuple[int, int], end: int, width: int) -> list[np.ndarray]:
    """The 8-byte words (little-endian) that end at `end` in the first row and cover `width`
    bytes before it, one array per word, one element per row (views of `data`)."""
    n, stride = shape
    words = nsys_numbers.words(width)
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
