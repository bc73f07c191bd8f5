"""tokens: rows cut all at once must cut as `str.split` does, and numbers read as pandas reads
them (the nvprof text parsers rely on both for values identical to the row-by-row code)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from profiler.parse import tokens, values

BLANKS = [" ", "  ", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1f"]
WORDS = ["1", "20.21%", "1.8260ms", "cudaMemcpy", "Low", "(3)", "x", "=", "\x01", "\x1b", ")"]


def random_rows(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        parts = [rng.choice(BLANKS) if rng.random() < 0.5 else "" for _ in range(1)]
        for _ in range(rng.randint(0, 9)):
            parts += [rng.choice(WORDS), "".join(rng.choices(BLANKS, k=rng.randint(1, 3)))]
        rows.append("".join(parts[: rng.randint(0, len(parts))]))
    return rows


@pytest.mark.parametrize("seed", range(5))
def test_rows_are_cut_as_str_split_cuts_them(seed):
    rows = random_rows(seed, 400)
    cut = tokens.split(rows)
    assert cut is not None
    assert cut.count.tolist() == [len(row.split()) for row in rows]
    for k in (0, 1, 2, -1, -3):
        expected = []
        for row in rows:
            words = row.split()
            expected.append(words[k] if -len(words) <= k < len(words) else "")
        assert cut.cells(k) == expected
    for k in (0, 2, 6):
        expected = []
        for row in rows:
            fields = row.strip().split(None, k)
            expected.append(fields[k] if len(fields) > k else "")
        assert cut.rest(k) == expected


def test_rows_skip_their_first_tokens():
    cut = tokens.split(["GPU activities:  1%  2ms", "  3%  4ms", ""])
    assert cut is not None
    rest = cut.rows(np.array([0, 1]), np.array([2, 0]))
    assert rest.cells(0) == ["1%", "3%"] and rest.cells(1) == ["2ms", "4ms"]
    assert rest.count.tolist() == [2, 2]


def test_rows_that_are_not_ascii_are_left_to_the_caller():
    assert tokens.split(["kernel  é"]) is None
    cut = tokens.split([])
    assert cut is not None and len(cut.count) == 0


def test_decimals_read_as_pandas_reads_them():
    rng = random.Random(7)
    cells = ["0", "12", "1.2345", ".5", "5.", "00012.50", "9" * 15, "9" * 16, "1.2.3", "-5", "1e5"]
    cells += ["6,144", "", "-", "abc", "+5", "0.1", "123456789012345", "." + "1" * 14]
    for _ in range(3000):
        cells.append("".join(rng.choices("0123456789.", k=rng.randint(1, 18))))
        cells.append(f"{rng.random() * 10 ** rng.randint(0, 12):.{rng.randint(0, 8)}f}")
    text = " ".join(cells)
    start = np.cumsum([0] + [len(c) + 1 for c in cells[:-1]])
    end = start + np.array([len(c) for c in cells])
    codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    number, read = tokens.decimals(codes, start, end)
    expected, _ = values.parsed(cells)
    assert read.sum() > len(cells) // 2  # most cells take the fast path
    slow = ("9" * 16, "1.2.3", "-5", "1e5", "6,144", "", "-")
    assert not read[[cells.index(c) for c in slow]].any()
    np.testing.assert_array_equal(number[read], expected[read])  # bit for bit
    assert np.isnan(number[~read]).all()
