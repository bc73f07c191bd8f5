"""`nsys_stdout.split_ascii` jumps over runs of plain table rows (`_plain_rows`, checked with
NumPy) instead of trying its pattern after every newline. The blocks are those of the old
walk (`finditer` over every newline, kept here as the oracle) and of `split_stdout` over the
decoded text, on every real capture and on hostile tables: full-width blank rows, rows led by
`*`, a capital, `[`, tabs or a long run of blanks, CRLF, a line of another width inside (or
two lines as wide as a row), special lines and markers between rows, no final newline; with
runs as short as one row.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from test_parse_fast_nsystext import CAPTURES

from profiler.parse import nsys_stdout


def old_matches(text: str | bytes) -> Iterator[Any]:
    return nsys_stdout._pattern(nsys_stdout._BREAK_OR_SPECIAL, text).finditer(text)  # type: ignore[arg-type]


def assert_as_before(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    for run in (1, 2, 3, nsys_stdout.PLAIN_RUN):
        with monkeypatch.context() as m:
            m.setattr(nsys_stdout, "PLAIN_RUN", run)
            got = nsys_stdout.split_ascii(data)
        with monkeypatch.context() as m:
            m.setattr(nsys_stdout, "_matches", old_matches)
            ref = nsys_stdout.split_ascii(data)
        assert got == ref
        assert [b.span for b in got] == [b.span for b in ref]
    assert got == nsys_stdout.split_stdout(data.decode("ascii"))


ODD_ROWS = [
    "",
    " " * 40,
    "\t" + " " * 39,
    "   * starred" + " " * 28,
    "Generating SQLite file x.sqlite" + " " * 9,
    "[1/8] Executing 'cuda_gpu_trace' stats report  ",
    "Zeta row that is no special line            ",
    "[x] bracket row                          ",
    " " * 20 + "deep first byte" + " " * 5,
    " " * 15 + "*" + " " * 24,
    "  1.0  2  short",
    "  1.0  2  " + "x" * 60,
    "   ** CUDA GPU Trace (cuda_gpu_trace):",
    "\r",
    "  1.0 \r  2  mid-row return" + " " * 14,
    "ab\n" + "Generating SQLite file".ljust(37),  # two lines as wide as one row
    "ab\n" + " " * 37,
]


def table(rng: random.Random, rows: int, width: int = 40) -> list[str]:
    out = ["   Start  Duration  Name".ljust(width), " -------  --------  ----".ljust(width)]
    for i in range(rows):
        lead = rng.choice(["", " ", "  ", "\t "])
        row = f"{lead}{i * 0.5:7.1f}  {rng.randrange(10**6):8d}  k{i % 3}"
        out.append(row[:width].ljust(width))
    return out


def hostile(seed: int) -> bytes:
    rng = random.Random(seed)
    lines = table(rng, rng.choice([1, 5, 40, 300]))
    for _ in range(rng.randrange(4)):
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(ODD_ROWS))
    head = rng.choice(["", "Processing [r.sqlite] with [/x/cuda_gpu_trace.py]... \n\n"])
    text = head + "\n".join(lines) + rng.choice(["\n", "", "\n\n", "\n  \n"])
    if rng.random() < 0.2:
        text = text.replace("\n", "\r\n")
    if rng.random() < 0.3:
        text = text + "\n" + text
    return text.encode("ascii")


@pytest.mark.parametrize("seed", range(400))
def test_split_as_before_on_hostile_tables(seed, monkeypatch):
    assert_as_before(hostile(seed), monkeypatch)


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_split_as_before_on_real_captures(path, monkeypatch):
    data = path.read_bytes()
    if data.isascii():
        assert_as_before(data, monkeypatch)


def test_a_long_table_is_jumped_over():
    """The rows of a long table are found plain (else the tests above compare the walk with
    itself), and a line of another width, or a special line, stops the run there."""
    rows = table(random.Random(0), 1000)
    data = ("\n".join(rows) + "\n").encode("ascii")
    assert nsys_stdout._plain_rows(data, 0) == (1002, 41)
    cut = ("\n".join([*rows[:600], "Generating x".ljust(40), *rows[600:]]) + "\n").encode()
    assert nsys_stdout._plain_rows(cut, 0) == (600, 41)
    short = ("\n".join([*rows[:700], "x", *rows[700:]]) + "\n").encode()
    assert nsys_stdout._plain_rows(short, 0) == (700, 41)
    two = "ab\n" + "Generating x".ljust(37)  # two lines, one row wide
    inside = ("\n".join([*rows[:650], two, *rows[650:]]) + "\n").encode()
    assert nsys_stdout._plain_rows(inside, 0) == (650, 41)
    assert nsys_stdout._plain_rows(data[: 41 * 100], 0) == (0, 0)  # fewer than PLAIN_RUN
