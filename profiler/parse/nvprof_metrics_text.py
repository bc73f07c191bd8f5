"""nvprof's text `--metrics` / `--events` tables -> `nvprof_metric_rows.Rows`, most cut with NumPy.

A table is a header, then `Device "..."` and `Kernel: ...` lines above each kernel's rows:
`Invocations  Metric Name  Metric Description  Min  Max  Avg` (`Invocations  Event Name  Min  Max
Avg[  Total]` for events). A row is read from both ends: its first two tokens, and its last three
values (four with `Total`), a level with a space (`Low (3)`) as one value.

nvprof right-aligns every column, so nearly every row of a table ends each of these tokens at the
same place. The fast path takes those places from the first row cut as usual, and checks, for all
rows at once, that a row is as long and that each of its windows (the Invocations, the name and
each value, each from the end of the column before) holds blanks and then one token, ASCII only;
the name's window, blanks zeroed, tells names apart without a string per row. A row that is not
so (a wider value, a level, a non-ASCII byte, trailing blanks) and every line of another kind
(`Kernel:`, `Device`, blank) is read on its own with `str` methods, as every line was before; a
`Kernel:` line that repeats the one before is not cut again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from profiler.parse import lines
from profiler.parse.nvprof_metric_rows import MIX, Cells, Clash, Names, Rows, blocks
from profiler.parse.table_origin import Origin

# Per byte: 0 a blank (what `str.split()` splits on), 1 any other ASCII byte, 3 not ASCII.
_KIND = np.where(lines._BLANK, 0, 1).astype(np.int8)
_KIND[128:] = 3
_LAYOUT_ROWS = 64  # the lines looked at for a row to take the columns' places from
_CHUNK = 1 << 14  # rows checked at once: their windows stay in the cache
_VALUES = ("min", "max", "avg")
# said of a row above which no `Kernel:` line stands (a README that kept only the table)
NO_KERNEL = (
    'a metric row with no `Kernel:` line above it (nvprof prints `Device "..."` and '
    "`Kernel: NAME` lines above each kernel's rows; trimmed output?)"
)


# A header whose line runs on into the `Device "..."` (or `Kernel:`) line nvprof printed below it,
# a paste that lost that line break: `...  Max         AvgDevice "Tesla K80 (0)"    Kernel: k`.
_RUN_ON = re.compile(r"(?:Avg|Total)(?=Device \"|Kernel: )")


@dataclass(frozen=True)
class Layout:
    """Where a table's tokens end: `ends` holds the Invocations', the name's, then each
    value's; the first value's window starts at `first` (the end of the description, or of
    the name); a row is `ends[-1]` bytes long, less a final `\\r`."""

    ends: tuple[int, ...]
    first: int

    @property
    def size(self) -> int:
        return self.ends[-1]


@dataclass(frozen=True)
class _Fast:
    """The rows cut all at once: their lines (below the header), where each starts in the
    table's bytes, the length of each of its tokens but the name's (Invocations, Min, Max,
    Avg), each row's name as a code into `names` (first seen first), and for each row an
    earlier (or the same) row of the same bytes, by position among them (`Cells.same`)."""

    offsets: np.ndarray
    base: np.ndarray
    ends: tuple[int, ...]
    count: np.ndarray
    metric: np.ndarray
    names: list[str]
    same: np.ndarray


def text_rows(
    origin: Origin,
    raw: bytes | memoryview | None = None,
    breaks: np.ndarray | None = None,
    above: str = "",
) -> Rows:
    """The rows of one text metric or event table (`origin.text` starts at its header); `raw`,
    when given, is that text in UTF-8 (a view into the file's bytes spares a copy of them, and
    `origin.text` may then be left empty), and `breaks`, when given, its newlines' offsets.
    `above`: the line right above the header; a `Kernel:` line there (a paste that put it
    above the header) is the kernel of the rows right below the header (`_kernel_above`), and
    so is the `Device "..."    Kernel:` line a header runs on into (`AvgDevice "..."`: a paste
    that lost the line break after the header).

    Returns: the table's `Rows`; `at` is each row's line below the header (0 the first).

    Raises: ParseError naming the line of a row that is no metric row or comes before any
        `Kernel:` line, or of a metric listed twice for one kernel.
    """
    text = origin.text
    data = raw if raw is not None else text if isinstance(text, bytes) else text.encode("utf-8")
    if breaks is None:
        breaks = lines.newlines(cast(bytes, data))  # (it reads any buffer)
    start = breaks + 1  # the lines below the header (none when the header ends the text)
    end = np.append(breaks[1:], len(data)) if len(breaks) else breaks
    header = str(data[: len(data) if not len(breaks) else int(breaks[0])], "utf-8")
    run_on = _RUN_ON.search(header)
    if run_on is not None:  # the `Device` and `Kernel:` line the header ran on into
        header, above = header[: run_on.end()], header[run_on.end() :]
    n_values = 4 if header.split()[-1] == "Total" else 3
    events = "Event Name" in header
    layout = _layout(data, start, end, n_values, events)
    fast = None if layout is None else _fast_rows(data, start, end, layout)
    slow = np.ones(len(start), dtype=bool)
    if fast is not None:
        slow[fast.offsets] = False
    walk = _walk(data, start, end, np.flatnonzero(slow), n_values, events)
    _kernel_above(walk, fast, above)
    return _rows(origin, data, fast, walk)


def _kernel_above(walk: _Lines, fast: _Fast | None, above: str) -> None:
    """When the table's first row comes before any `Kernel:` line below the header and the line
    right above the header is a `Kernel:` line (`Device "X"    Kernel: k` included), that
    line names the rows' kernel (and device): added to the walk as if on the line before the
    first. Nothing else is: a row with no such line above it is still refused."""
    body = above.strip()
    device = body.startswith("Device ")
    if device:
        label, _, body = body[7:].partition('"  ')
        body = body.strip()
    firsts = [*walk.rows][:1] + ([] if fast is None or not len(fast.offsets) else [fast.offsets[0]])
    if not body.startswith("Kernel:") or not firsts:
        return
    if walk.kernel_at and walk.kernel_at[0] < min(firsts):
        return  # nvprof's own layout: the rows' `Kernel:` line is below the header
    walk.kernels.insert(0, body[7:].strip())
    walk.kernel_at.insert(0, -1)
    if device:
        walk.devices.insert(1, label.strip().strip('"'))
        walk.device_at.insert(1, -1)


def _layout(
    data: bytes | memoryview, start: np.ndarray, end: np.ndarray, n_values: int, events: bool
) -> Layout | None:
    """The token ends of the first plain row (ASCII, Invocations digits, no level, no trailing
    blank) among the first lines; None when there is none."""
    for a, b in zip(start[:_LAYOUT_ROWS].tolist(), end[:_LAYOUT_ROWS].tolist(), strict=True):
        raw = bytes(data[a:b]).removesuffix(b"\r")
        if not raw.isascii():
            continue
        kind = _KIND[np.frombuffer(raw, dtype=np.uint8)]
        edges = np.flatnonzero(np.diff(np.concatenate(([0], kind, [0])))).tolist()
        spans = list(zip(edges[0::2], edges[1::2], strict=True))
        if len(spans) < n_values + 2 or (events and len(spans) != n_values + 2):
            continue
        plain = raw[spans[0][0] : spans[0][1]].isdigit() and spans[-1][1] == len(raw)
        if plain and b")" not in raw[spans[-n_values][0] :]:
            ends = (spans[0][1], spans[1][1], *(e for _, e in spans[-n_values:]))
            return Layout(ends, spans[-n_values - 1][1])
    return None


def _windows(layout: Layout) -> tuple[list[tuple[int, int]], np.ndarray, np.ndarray]:
    """Each token's window (from the end of the column before to its own end), which bytes
    must be blank (the first of every window but the Invocations', and the byte after the name
    when a description follows), and which pairs of neighbours (byte j, j + 1) lie in one
    window (there, a token may not end)."""
    inv, name, *value_ends = layout.ends
    bounds = [layout.first, *value_ends]
    windows = [(0, inv), (inv, name), *zip(bounds, bounds[1:], strict=False)]
    blank = [a for a, _ in windows[1:]] + ([name] if layout.first > name else [])
    inner = np.zeros(max(layout.size - 1, 0), dtype=bool)
    for a, b in windows:
        inner[a : b - 1] = True
    return windows, np.array(blank, dtype="int64"), inner


def _fast_rows(
    data: bytes | memoryview, start: np.ndarray, end: np.ndarray, layout: Layout
) -> _Fast | None:
    """The rows `layout` fits, cut (see the module's docstring); None when there is none."""
    codes = np.frombuffer(data, dtype=np.uint8)
    length = end - start
    cr = (length > 0) & (codes[np.maximum(end - 1, 0)] == 13)
    candidates = np.flatnonzero(length - cr == layout.size)
    if not len(candidates):
        return None
    rows_of = np.lib.stride_tricks.sliding_window_view(codes, layout.size)
    shape = _windows(layout)
    names = Names(layout.ends[1] - layout.ends[0])
    distinct = _Distinct(layout.size)
    try:
        parts = [
            distinct.check(rows_of[start[candidates[a : a + _CHUNK]]], shape, names)
            for a in range(0, len(candidates), _CHUNK)
        ]
    except Clash:
        return None
    rows = candidates[np.concatenate([p[0] for p in parts])]
    count = np.concatenate([p[1] for p in parts])
    metric = np.concatenate([p[2] for p in parts])
    sizes = np.cumsum([0] + [len(p[1]) for p in parts[:-1]])
    same = np.concatenate([p[3] + size for p, size in zip(parts, sizes, strict=True)])
    ends = layout.ends[:1] + layout.ends[2:5]  # Invocations, Min, Max, Avg
    return _Fast(rows, start[rows], ends, count, metric, names.names, same)


def _check(
    got: np.ndarray,
    windows: list[tuple[int, int]],
    blank: np.ndarray,
    inner: np.ndarray,
    names: Names,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For rows `got` (a row's bytes each): which are printable ASCII and spaces, hold spaces
    then one token in every window, and digits only for Invocations; of those, the length of
    each token but the name's, and the name's code.

    Raises: Clash for two names of one hash.
    """
    ok = (got.min(axis=1, initial=255) >= 32) & (got.max(axis=1, initial=0) < 128)
    solid = got > 32
    ends = solid[:, :-1] & ~solid[:, 1:]  # a token ends at byte j
    ok &= ~ends[:, inner].any(axis=1)  # ... inside a window
    ok &= solid[:, [b - 1 for _, b in windows]].all(axis=1) & ~solid[:, blank].any(axis=1)
    inv, name = windows[1]
    digits = got[:, :inv]
    ok &= ((digits == 32) | (digits - 48 <= 9)).all(axis=1)
    solid = solid[ok]
    count = [b - a - solid[:, a:b].argmax(axis=1) for k, (a, b) in enumerate(windows) if k != 1]
    return ok, np.stack(count, axis=1).astype(np.int32), names.codes(got[ok, inv:name])


class _Distinct:
    """`_check` of each distinct row of a slice once, while rows repeat (a metric with one
    value for many kernels: `100.00%`, `0`): the rows, as 8-byte words, are hashed to one
    number each, every row is compared byte for byte with the first of its hash, and the
    results of the distinct rows are spread to all. Once a slice has mostly distinct rows, the
    next ones are checked row by row (the hashing would cost more than it saves)."""

    def __init__(self, size: int) -> None:
        self.size, self.words, self.on = size, -(-size // 8), True

    def check(
        self,
        got: np.ndarray,
        shape: tuple[list[tuple[int, int]], np.ndarray, np.ndarray],
        names: Names,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`_check(got, *shape, names)`, and for each row that is ok the first row of its
        bytes, by position among those (itself when the rows were checked one by one).

        Raises: Clash as `_check`.
        """
        if not self.on or len(got) < 2:
            return _alone(_check(got, *shape, names))
        padded = np.zeros((len(got), self.words * 8), dtype=np.uint8)
        padded[:, : self.size] = got
        words = padded.view(np.uint64)
        mixed = words[:, 0].copy()
        for k in range(1, self.words):
            mixed *= MIX
            mixed ^= words[:, k]
        local, hashes = pd.factorize(mixed)
        if len(hashes) > len(got) // 2:
            self.on = False
            return _alone(_check(got, *shape, names))
        firsts = np.empty(len(hashes), dtype="int64")
        firsts[local[::-1]] = np.arange(len(local))[::-1]  # (in order of first appearance)
        if not (words == words[firsts][local]).all():
            return _alone(_check(got, *shape, names))  # two rows of one hash (never seen)
        ok, count, codes = _check(got[firsts], *shape, names)
        place = np.cumsum(ok) - 1  # a distinct row's place among those that are ok
        rows_ok = ok[local]
        pick = place[local[rows_ok]]
        kept = np.flatnonzero(rows_ok)
        same = np.searchsorted(kept, firsts[local[kept]])
        return rows_ok, count[pick], codes[pick], same


def _alone(
    checked: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`_check`'s result, each row that is ok the first of its bytes."""
    ok, count, codes = checked
    return ok, count, codes, np.arange(len(count), dtype="int64")


@dataclass
class _Lines:
    """What the walk line by line found among a table's `lines`: devices (`""` before any) and
    kernels with the lines they are on, and each other line's row cut with `_split_row` (None:
    no metric row), in order."""

    lines: int
    devices: list[str]
    device_at: list[int]
    kernels: list[str]
    kernel_at: list[int]
    rows: dict[int, tuple[str, ...] | None]


def _walk(
    data: bytes | memoryview,
    start: np.ndarray,
    end: np.ndarray,
    which: np.ndarray,
    n_values: int,
    events: bool,
) -> _Lines:
    """Lines `which` read one by one: `Device` and `Kernel:` lines, blank lines and rows; but
    for the lines that repeat the first `Kernel:` line, found at once (`_repeats`)."""
    found = _Lines(len(start), [""], [-1], [], [], {})
    kernels, kernel_at = found.kernels, found.kernel_at
    last, name = "\n", ""  # the last `Kernel:` line, and its kernel
    same, first = _repeats(data, start, end, which)
    rest = which[~same]
    for offset, a, b in zip(rest.tolist(), start[rest].tolist(), end[rest].tolist(), strict=True):
        line = str(data[a:b], "utf-8")
        if line == last:
            kernels.append(name)
            kernel_at.append(offset)
            continue
        body = line.strip()
        device = body.startswith("Device ")
        if device:
            label, _, body = body[7:].partition('"  ')  # `Device "X (0)"[    Kernel: k]`
            found.devices.append(label.strip().strip('"'))
            found.device_at.append(offset)
            body = body.strip()
        if body.startswith("Kernel:"):
            kernels.append(body[7:].strip())
            kernel_at.append(offset)
            if not device:
                last, name = line, kernels[-1]
        elif body:
            found.rows[offset] = _split_row(body, n_values, events)
    if first is not None:
        _add_kernels(found, which[same], first)
    return found


_KERNEL_BYTES = 1 << 24  # the most bytes of repeated `Kernel:` lines compared at once
_KERNEL_LOOK = 64  # the walked lines among which the first `Kernel:` line is looked for


def _repeats(
    data: bytes | memoryview, start: np.ndarray, end: np.ndarray, which: np.ndarray
) -> tuple[np.ndarray, str | None]:
    """Which of lines `which` are byte for byte the first `Kernel:` line among their first
    lines (one that names no device), and its kernel (None when there is none): a table
    repeats a few such lines once per kernel launch."""
    same = np.zeros(len(which), dtype=bool)
    first = which[:_KERNEL_LOOK]
    for a, b in zip(start[first].tolist(), end[first].tolist(), strict=True):
        body = str(data[a:b], "utf-8").strip()
        if body.startswith("Kernel:"):
            line = np.frombuffer(data, dtype=np.uint8)[a:b]
            break
    else:
        return same, None
    codes = np.frombuffer(data, dtype=np.uint8)
    sized = np.flatnonzero(end[which] - start[which] == len(line))
    rows_of = np.lib.stride_tricks.sliding_window_view(codes, len(line))
    step = max(1, _KERNEL_BYTES // max(len(line), 1))
    for k in range(0, len(sized), step):
        part = sized[k : k + step]
        same[part[(rows_of[start[which[part]]] == line).all(axis=1)]] = True
    return same, body[7:].strip()


def _add_kernels(found: _Lines, at: np.ndarray, name: str) -> None:
    """Kernel `name` on lines `at` added to the walk's kernels, all in line order."""
    lines_at = np.concatenate((np.array(found.kernel_at, dtype="int64"), at))
    order = np.argsort(lines_at, kind="stable").tolist()
    names = [*found.kernels, *[name] * len(at)]
    found.kernels = [names[i] for i in order]
    found.kernel_at = lines_at[order].tolist()


def _split_row(body: str, n_values: int, events: bool) -> tuple[str, ...] | None:
    """`10  inst_executed  Instructions Executed  3204  3204  3204` -> (invocations, name, Min,
    Max, Avg); values are taken from the right, a level (`Low (3)`) as one value. None: no such
    row."""
    fast = body.rsplit(None, n_values)  # no level among the values: two splits
    if len(fast) == n_values + 1 and ")" not in body[len(fast[0]) :]:
        head, found = fast[0].split(None, 2), fast[:0:-1]
    else:
        head, found = body.split(), []
        while len(found) < n_values and len(head) > 2:
            last = head.pop()
            if last.startswith("(") and last.endswith(")") and len(head) > 2:
                last = f"{head.pop()} {last}"
            found.append(last)
    if len(found) < n_values or len(head) < 2 or (events and len(head) != 2):
        return None
    avg, high, low = found[n_values - 3 :]  # found holds [Total,] Avg, Max, Min
    return head[0], head[1], low, high, avg


def _rows(origin: Origin, data: bytes | memoryview, fast: _Fast | None, walk: _Lines) -> Rows:
    """The rows of both kinds, in the table's order, as `Rows`.

    Raises: as `text_rows`.
    """
    own = np.array(list(walk.rows), dtype="int64")  # (the walk went in order)
    fast_at = np.zeros(0, dtype="int64") if fast is None else fast.offsets
    is_row = np.zeros(walk.lines, dtype=bool)
    is_row[fast_at] = True
    is_row[own] = True
    at = np.flatnonzero(is_row)
    position = np.cumsum(is_row) - 1
    mine, where = position[own], position[fast_at]
    ok = np.ones(len(at), dtype=bool)
    ok[mine] = [walk.rows[o] is not None for o in own.tolist()]
    block = np.searchsorted(np.array(walk.kernel_at, dtype="int64"), at, side="right") - 1
    bad = np.flatnonzero(~ok | (block < 0))
    if len(bad):
        what = "not a metric or event row" if not ok[bad[0]] else NO_KERNEL
        raise origin.error(f"line {origin.first_line + int(at[bad[0]]) + 1}: {what}")
    cut: list[tuple[str, ...]] = list(walk.rows.values())  # type: ignore[arg-type]
    device = np.searchsorted(np.array(walk.device_at, dtype="int64"), at, side="right") - 1
    device_codes, devices = _codes(walk.devices)
    kernel_codes, kernels = _codes(walk.kernels)
    metric, metrics = _metric_codes(len(at), fast, where, mine, cut)
    codes = (device_codes[device], kernel_codes[block], metric)
    starts = np.ones(len(at), dtype=bool)
    starts[1:] = block[1:] != block[:-1]
    base = np.zeros(len(at), dtype="int64")
    same = np.arange(len(at), dtype="int64")
    if fast is not None:
        base[where] = fast.base
        same[where] = where[fast.same]
    cells = {}
    for k, column in enumerate(("invocations", "min", "max", "avg")):
        count = np.zeros(len(at), dtype=np.int32)
        end = 0 if fast is None else fast.ends[k]
        if fast is not None:
            count[where] = fast.count[:, k]
        texts: dict[int, object] = dict(
            zip(mine.tolist(), (c[(0, 2, 3, 4)[k]] for c in cut), strict=True)
        )
        cells[column] = Cells(data, base, end, count, texts, same)
    occurrence = blocks(origin, at, codes, metrics, starts)
    device_of, kernel_of = codes[0], codes[1]
    return Rows(
        origin, at, device_of, devices, kernel_of, kernels, metric, metrics, occurrence, cells
    )


def _codes(names: list[str]) -> tuple[np.ndarray, list[str]]:
    """Each name as a code (equal names one code, first seen first) and the distinct names."""
    seen: dict[str, int] = {}
    codes = np.array([seen.setdefault(n, len(seen)) for n in names], dtype="int64")
    return codes, list(seen)


def _metric_codes(
    n: int,
    fast: _Fast | None,
    fast_pos: np.ndarray,
    own_pos: np.ndarray,
    cut: list[tuple[str, ...]],
) -> tuple[np.ndarray, list[str]]:
    """Each row's metric as a code into the names in order of first appearance, from the fast
    rows' codes (at `fast_pos`) and the names of the rows cut on their own (at `own_pos`)."""
    fast_names = [] if fast is None else fast.names
    own_codes, own_names = _codes([c[1] for c in cut])
    local = np.zeros(n, dtype="int64")
    if fast is not None:
        local[fast_pos] = fast.metric
    local[own_pos] = own_codes + len(fast_names)
    order, seen_local = pd.factorize(local)
    names = fast_names + own_names
    final: dict[str, int] = {}
    remap = np.array([final.setdefault(names[i], len(final)) for i in seen_local.tolist()])
    return remap.astype("int64")[order], list(final)
