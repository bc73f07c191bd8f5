"""Reading a large CSV page in parts, on threads.

pandas' C reader holds one core for a 300 MB `ncu --csv` details page (about 2 s), yet it lets
go of Python's lock while it splits and converts the cells: parts of the page read on threads
at once take less than half that on a machine with four cores or more. The page is cut only
where a record starts, and the parts are read exactly as the whole page would be (the same
names and dtypes; categories joined and sorted as pandas sorts them), so the frame is the same;
any part that fails makes the caller read the whole page, whose error names the right line.

A record starts after a newline where the quotes before it pair up: ncu quotes every cell and
doubles a quote inside one, so an odd count means the newline lies inside a quoted cell (a
rule's description spans lines). Only a page whose header is quoted as ncu writes it is cut.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from profiler.parse import csvtext

PART_BYTES = 32 << 20  # a part's least size: below it, threads cost more than they save
_BLOCK = 1 << 22  # bytes compared at once when quotes are counted
_QUOTE = ord('"')
MIN_CORES = 4  # on two cores the parts saved 7% idle and cost time busy (measured on a 2-core VM)
MAX_PARTS = 8  # beyond 4-8 parts the cores wait on Python's lock (measured on an H100 host)

T = TypeVar("T")
# Reads one part: bytes -> frame; raises whatever pandas raises.
ReadPart = Callable[[bytes], pd.DataFrame]


def part_count(size: int, cores: int | None = None) -> int:
    """How many parts a page of `size` bytes is read in: one per `PART_BYTES`, at most one per
    core this process may run on (unless `cores` is given) and `MAX_PARTS`; 1 reads it whole,
    as on a machine of fewer than `MIN_CORES` (on two busy cores the threads cost time)."""
    cores = usable_cores() if cores is None else cores
    if cores < MIN_CORES:
        return 1
    return max(1, min(size // PART_BYTES, cores, MAX_PARTS))


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the system says), else all."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def read_rows(
    data: bytes, start: int, header: list[str], dtypes: dict[str, object], lead: bytes
) -> pd.DataFrame | None:
    """A large page's rows after its header line at byte `start`, read in parts on threads
    (`part_count` of them), named `header` and read as `dtypes` say (`csvtext.csv_options`);
    None when it is to be read whole: a page under two parts' size, a header line that ends
    inside a quoted name, or a part that fails (the whole page's read then names the line). A
    part starts at a line whose first bytes are `lead`'s after its newline (`record_starts`)."""
    rows = data.find(b"\n", start) + 1
    parts = part_count(len(data) - start)
    if parts < 2 or rows == 0 or data.count(b'"', start, rows) % 2:
        return None
    cuts = record_starts(data, rows, parts, lead)
    options = csvtext.csv_options(dtypes, names=header, header=None)
    return read_in_parts(data, cuts, lambda part: csvtext.read_part(part, options))


def record_starts(data: bytes, start: int, parts: int, lead: bytes = b'\n"') -> list[int]:
    """Where `parts` parts of the records in `data[start:]` begin (`start` first; fewer when
    the page has fewer places to cut): the first line start at or after each even share of
    the bytes that `lead` (a newline and the line's first bytes: `\\n"` for ncu, which quotes
    every cell) finds and that has an even count of quotes before it.

    The quotes before each share's first byte are counted on threads, a share each (NumPy lets
    go of Python's lock while it compares), so that only the bytes from there to the cut are
    counted one after another."""
    bounds = [
        max(start, start + (len(data) - start) * share // parts - 1) for share in range(1, parts)
    ]
    before = quotes_before(data, start, bounds)
    cuts, counted, quotes = [start], start, 0
    for bound, known in zip(bounds, before, strict=True):
        if bound > counted:
            counted, quotes = bound, known
        at = data.find(lead, max(bound, cuts[-1]))
        while at >= 0:
            quotes += quotes_in(data, counted, at)
            counted = at
            if quotes % 2 == 0:
                break
            at = data.find(lead, at + 1)
        if at < 0:
            break
        cuts.append(at + 1)
    return cuts


def quotes_before(data: bytes, start: int, bounds: Sequence[int]) -> list[int]:
    """How many quotes `data[start:bound]` holds for each of the ascending `bounds`, each span
    between two bounds counted on a thread of its own."""
    edges = [start, *bounds]
    with ThreadPoolExecutor(max(1, len(bounds))) as pool:
        spans = list(pool.map(lambda a, b: quotes_in(data, a, b), edges[:-1], edges[1:]))
    return np.cumsum(spans, dtype=np.int64).tolist()


def quotes_in(data: bytes, start: int, end: int) -> int:
    """How many quotes `data[start:end]` holds: NumPy compares a block at a time (three times
    `bytes.count`'s speed, without a mask of the whole page)."""
    cells = np.frombuffer(data, np.uint8, end - start, start)
    return sum(
        int(np.count_nonzero(cells[at : at + _BLOCK] == _QUOTE))
        for at in range(0, len(cells), _BLOCK)
    )


def read_in_parts(data: bytes, cuts: Sequence[int], read: ReadPart) -> pd.DataFrame | None:
    """The records of `data` from `cuts[0]` on, each part `data[cuts[i]:cuts[i+1]]` read by
    `read` on a thread of its own and the frames joined; None when any part fails (the caller
    then reads the page whole). pandas' warnings are `csvtext.reader_warnings`' while the parts
    are read: a row with more cells than the header fails its part."""
    ends = [*cuts[1:], len(data)]
    with csvtext.reader_warnings(), ThreadPoolExecutor(len(cuts)) as pool:
        futures = [
            pool.submit(_read_span, read, data, a, b) for a, b in zip(cuts, ends, strict=True)
        ]
        try:
            frames = [future.result() for future in futures]
        except Exception:  # noqa: BLE001 (any failure: the whole page is read, and says it)
            return None
    return joined(frames)


def begun(work: Callable[[], T], alone: bool) -> Callable[[], T]:
    """`work`'s result, to be had by a call: `work` begun now on a thread of its own when
    `alone` (the caller goes on with other work meanwhile; the call waits for it and raises
    what it raised), else run by the call."""
    if not alone:
        return work
    pool = ThreadPoolExecutor(1)
    future = pool.submit(work)
    pool.shutdown(wait=False)
    return future.result


def _read_span(read: ReadPart, data: bytes, start: int, end: int) -> pd.DataFrame:
    """`read` of `data[start:end]`, copied on the part's own thread (copied by the thread that
    hands the parts out, the later parts would wait for the lock the first ones hold)."""
    return read(data[start:end])


def joined(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The parts' frames one under the other, as one read would give them: a category column's
    categories joined and sorted (pandas sorts those it infers), every other column concatenated."""
    columns = {}
    for name in frames[0].columns:
        cells = [frame[name] for frame in frames]
        if isinstance(cells[0].dtype, pd.CategoricalDtype):
            columns[name] = pd.Series(union_categoricals(_alike(cells), sort_categories=True))
        else:
            columns[name] = pd.concat(cells, ignore_index=True)
    return pd.DataFrame(columns, copy=False)


def _alike(cells: list[pd.Series]) -> list[pd.Series]:
    """A category column's parts, those with no categories (every cell of the part empty, which
    pandas gives `object` categories) given the others' kind of categories, so they can join."""
    filled = next((c for c in cells if len(c.cat.categories)), None)
    if filled is None:
        return cells
    none = pd.Index([], dtype=filled.cat.categories.dtype)
    return [c if len(c.cat.categories) else c.cat.set_categories(none) for c in cells]
