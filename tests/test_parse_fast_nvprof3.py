"""The third round of the nvprof text gpu trace's fast path gives what the code it replaced
gave (issue 14: the million-row benchmarks with a clear margin under 2 s).

- `nvprof_trace_bytes._times_of` reads a column's time cells once per distinct cell when they
  repeat (durations), else once per layout: held to `_times_of_cells` (the cell-by-cell
  reading) on random cells, good and bad, few distinct or all new, and cells that repeat only
  in the first rows.
- `nvprof_trace_bytes._fast_times` reads Start and Duration from one gather of the rows' bytes: held
  to each column read on its own.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_parse_fast_nvprof2 import time_cells

from profiler.parse import nvprof_trace_bytes


def few_cells(rng: random.Random, count: int, width: int, bad: bool) -> np.ndarray:
    """`count` cells drawn from a pool of a few random time cells."""
    pool = time_cells(rng, 6, width, bad)
    return pool[[rng.randrange(len(pool)) for _ in range(count)]]


def assert_as_per_cell(cells: np.ndarray, width: int) -> None:
    got = nvprof_trace_bytes._times_of(cells, width)
    want = nvprof_trace_bytes._times_of_cells(cells)
    assert (got is None) == (want is None)
    if want is not None:
        assert np.array_equal(got, want)


@pytest.mark.parametrize("bad", [False, True])
def test_times_read_per_value_are_those_read_per_cell(bad):
    rng = random.Random(11 + bad)
    for width in (3, 8, 10, 12, 18):
        for count in (1, 40, 5000, 20000):
            assert_as_per_cell(few_cells(rng, count, width, bad), width)
            assert_as_per_cell(time_cells(rng, count, width, bad), width)


def test_cells_that_repeat_only_at_first_are_read_per_layout(monkeypatch):
    rng = random.Random(5)
    width = 10
    cells = np.concatenate(
        [
            few_cells(rng, nvprof_trace_bytes._SAMPLE, width, False),
            time_cells(rng, 30000, width, False),
        ]
    )
    read: list[int] = []
    real = nvprof_trace_bytes._times_by_layout
    monkeypatch.setattr(
        nvprof_trace_bytes, "_times_by_layout", lambda w, n: read.append(len(w)) or real(w, n)
    )
    assert_as_per_cell(cells, width)
    assert read == [len(cells)]  # (the sample repeats, the column does not)
    read.clear()
    assert_as_per_cell(few_cells(rng, 30000, width, True), width)
    assert read == []


def test_start_and_duration_read_at_once_are_each_read_alone():
    rng = random.Random(8)
    rows = []
    for _ in range(6000):
        start = "".join(rng.choice("0123456789") for _ in range(5))
        duration = rng.choice(["29.925ms", "4.3850ms", "928ns", "1.2us", "34.716ms"])
        rows.append(f"0.{start}s  {duration.rjust(8)}  x\n")
    data = "".join(rows).encode()
    codes = np.frombuffer(data, dtype=np.uint8)
    start = np.arange(len(rows)) * len(rows[0])
    both = nvprof_trace_bytes._fast_times(codes, start, [(0, 8), (8, 18)])
    alone = [nvprof_trace_bytes._fast_times(codes, start, [span]) for span in [(0, 8), (8, 18)]]
    assert both is not None and all(a is not None for a in alone)
    assert [x.tolist() for x in both] == [a[0].tolist() for a in alone if a is not None]
    assert nvprof_trace_bytes._fast_times(codes, start, [(0, 8), (8, 17)]) is None  # no space after
