"""nvprof's text summary read by the keys of its fields (`summary_keys`, `word_fields`), third
round of speed-ups (issue 14), held to `reference_text_rows` (every row split into tokens, every
cell read): the same rows, or the same error, on made-up tables with one fault each and on
hostile ones (runs of spaces before and between fields, tabs, CRLF, blank and blank-looking
lines, NUL bytes, fields of eight and nine bytes, typed rows with a tab after their `:`, the last
row without a newline), the origin's text left to `Origin.cut` as `nvprof_tables.tables` leaves it;
`word_fields.fields` against `str.split` on random rows; and the path is shown to be taken.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import re
from pathlib import Path

import fast_paths
import numpy as np
import pytest
from test_parse_fast_paths import mutants
from test_parse_fast_summary import reference_text_rows
from test_parse_fast_summary2 import HEADER, made_body

from profiler.parse import (
    lines,
    nvprof,
    nvprof_summary_text,
    nvprof_tables,
    summary_keys,
    word_fields,
)
from profiler.parse.nvprof_summary import API, GPU
from profiler.parse.table_origin import Origin


def both(text: str, section: str = GPU) -> tuple[fast_paths.Outcome, fast_paths.Outcome, bool]:
    """`text_rows` by keys (the origin's text cut only when needed) and the reference, and
    whether the keyed path took the table."""
    data = text.encode("utf-8")
    origin = Origin(Path("x.txt"), nvprof.EXPECTED, text, 7)
    if len(data) != len(text):  # not ASCII: no bytes, no lines
        new = fast_paths.outcome(lambda: {"t": nvprof_summary_text.text_rows(origin, section)})
        return new, fast_paths.outcome(lambda: {"t": reference_text_rows(origin, section)}), False
    table = lines.split_led(data)
    lazy = dataclasses.replace(origin, text="", cut=functools.partial(str, text))
    new = fast_paths.outcome(
        lambda: {"t": nvprof_summary_text.text_rows(lazy, section, memoryview(data), table)}
    )
    old = fast_paths.outcome(lambda: {"t": reference_text_rows(origin, section)})
    return new, old, summary_keys.scan(table) is not None


@pytest.mark.parametrize("seed", range(200))
def test_made_up_tables_as_before(seed: int):
    rng = random.Random(seed)
    text = HEADER + "\n" + made_body(rng, rng.choice([1, 2, 5, 30, 200, 2000]))
    new, old, _ = both(text, rng.choice([GPU, API]))
    fast_paths.assert_same(new, old, lambda table: table)


ROW = "  {}  1.0ms  3  1.2345us  928ns  12.345ms  cudaMalloc"
HOSTILE = [
    ROW.format("100.00%"),
    " " * 100 + ROW.format("100.00%"),  # a lead past LEAD_LIMIT
    ROW.format("100.00%").replace("  928ns", " " * 140 + "928ns"),  # more spaces than _SKIPS words
    ROW.format("100.00%").replace("  928ns", " " * 20 + "928ns"),
    ROW.format("100.00%").replace("  928ns", "\t928ns"),
    ROW.format("100.00%").replace("  928ns", " \t 928ns"),
    ROW.format("100.00%").replace("  3  ", "  3\x0b  "),
    ROW.format("100.00%").replace("3  ", "3\x01 "),
    ROW.format("100.00%").replace("1.0ms", "1.00000ms"),  # nine bytes
    ROW.format("100.00%").replace("1.0ms", "100.00ms"),  # eight bytes
    ROW.format("100.00%").replace("cudaMalloc", "cuda Malloc\t x"),
    ROW.format("100.00%").replace("cudaMalloc", "cudaMalloc\0"),
    ROW.format("100.00%").replace("cudaMalloc", "cuda\0Malloc"),
    ROW.format("100.00%").replace("cudaMalloc", "cudaMalloc \r"),
    ROW.format("100.00%").replace("cudaMalloc", "c\u00e9"),
    ROW.format("100.00%").replace("  cudaMalloc", ""),  # a short row
    ROW.format("100.00%").replace("  cudaMalloc", "  "),
    ROW.format("100.00%").replace("928ns", "9x8ns"),
    "  API calls:" + ROW.format("100.00%"),
    "  API calls:\t" + ROW.format("100.00%"),
    "  API calls: " + ROW.format("100.00%"),
    "  API calls:" + ROW.format("100.00%") + "\n  GPU activities:" + ROW.format("100.00%"),
    "  API calls" + ROW.format("100.00%"),
    "  Bad%:" + ROW.format("100.00%"),
    ROW.format("50.00%") + "\n" + ROW.format("50.00%"),
    ROW.format("50.00%") + "\n\n" + ROW.format("50.00%"),
    ROW.format("50.00%") + "\n   \n" + ROW.format("50.00%"),
    ROW.format("50.00%") + "\n\x0c\n" + ROW.format("50.00%"),
    ROW.format("50.00%") + "\n" + ROW.format("49.00%"),
]


@pytest.mark.parametrize("body", HOSTILE)
@pytest.mark.parametrize("end", ["", "\n", "\r\n"])
def test_hostile_tables_as_before(body: str, end: str):
    text = HEADER + "\n" + body.replace("\n", end or "\n") + end
    new, old, _ = both(text, API)
    fast_paths.assert_same(new, old, lambda table: table)


def test_keyed_path_taken():
    """The made-up tables without a fault, and the benchmark's rows, are read by keys."""
    taken = [both(HEADER + "\n" + body)[2] for body in HOSTILE[:4] + HOSTILE[9:11]]
    assert taken == [True, False, False, True, True, True]
    rows = [
        f"  0.00%  {i % 97 + 1}.{i % 89:02d}us  {i % 7 + 1}  1.2345us  928ns  3.7970us  f{i}"
        for i in range(500)
    ]
    text = HEADER + "\n" + "      API calls:  100.00%  1.0ms  9  1.0us  1.0us  1.0us  g\n"
    new, old, keyed = both(text + "\n".join(rows), API)
    assert keyed and new[0] == "ok"
    fast_paths.assert_same(new, old, lambda table: table)


def test_real_tables_taken():
    """Most text summaries under tests/data are read by keys (the rest fall back)."""
    data = Path(__file__).parent / "data"
    found = []
    for path in sorted(data.rglob("*.txt")):
        raw = path.read_bytes()
        if b"Time(%)" not in raw or not raw.isascii():
            continue
        for table in nvprof_tables.tables(raw.decode("ascii"), path, raw):
            if table.kind == "text_summary" and table.lines is not None:
                found.append(summary_keys.scan(table.lines) is not None)
    assert len(found) >= 10 and sum(found) >= len(found) * 3 // 4


CELLS = ["1", "12345678", "123456789", "1.0ms", "a", "%", "x\x01y", "\x7f"]
TAKEN = re.compile(r"(?:[\x21-\x7f]{1,8} {1,120}){3}[\x21-\x7f]")  # what `fields` takes


@pytest.mark.parametrize("seed", range(60))
def test_fields_as_split(seed: int):
    """`word_fields.fields` finds what `str.split` finds in rows it takes, and gives None when
    a row is not such (a field of nine bytes or with a byte below 33, a tab, a newline)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(rng.choice([1, 3, 40, 300])):
        cells = [rng.choice(CELLS[:6] if rng.random() < 0.95 else CELLS) for _ in range(4)]
        gaps = [" " * rng.choice([1, 1, 2, 7, 8, 9, 17, 100]) for _ in cells]
        if rng.random() < 0.05:
            gaps[rng.randrange(4)] = rng.choice(["\t", " \t", "\n", ""])
        rows.append("".join(c + g for c, g in zip(cells, gaps, strict=True)) + rng.choice("x "))
    data = "\n".join(rows).encode("ascii")
    starts = np.cumsum([0] + [len(row) + 1 for row in rows[:-1]])
    got = word_fields.fields(np.frombuffer(data, dtype=np.uint8), starts, 3)
    lines_ = data.decode("ascii").split("\n")
    if not all(TAKEN.match(line) for line in lines_[: len(rows)]) or len(lines_) != len(rows):
        assert got is None
        return
    assert got is not None
    keys, rest = got
    for i, row in enumerate(rows):
        parts = row.split(None, 3)
        assert [k.tobytes().rstrip(b"\0").decode() for k in keys[:, i]] == parts[:3]
        assert data[rest[i] :].decode().split("\n")[0] == parts[3]


def nvprof_files() -> list[Path]:
    data = Path(__file__).parent / "data"
    return [
        p
        for p in sorted(data.rglob("*"))
        if p.is_file() and p.suffix in (".txt", ".md", ".log", ".csv") and "nvprof" in str(p)
    ]


@pytest.mark.parametrize("path", nvprof_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_tables_of_ascii_text_as_of_str(path: Path):
    """`nvprof_tables.tables` finds the same tables in an ASCII file's bytes (`AsciiText`, no `str`
    of the whole text) as in its text, on the file and on mutated copies of it."""
    for variant in mutants(path.read_text("utf-8", "replace"), seed=len(path.name), count=8):
        data = variant.encode("utf-8")
        if not data.isascii():
            continue
        new = nvprof_tables.tables(nvprof.AsciiText(data), path, data)
        old = nvprof_tables.tables(variant, path, None)  # (searched as a `str`, no leads)
        assert [(t.kind, t.section, t.run, t.nvtx, t.at) for t in new] == [
            (t.kind, t.section, t.run, t.nvtx, t.at) for t in old
        ]
        for a, b in zip(new, old, strict=True):
            assert a.full_origin() == b.full_origin() and a.header() == b.header()
            assert bytes(a.raw or b"") == variant[b.at : b.at + len(b.full_origin().text)].encode()
