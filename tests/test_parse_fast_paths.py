"""The fast paths of the text parsers give what the plain ones give (issue 14's speed target).

The million-row text tables are read with NumPy passes over the bytes, and only the lines that
can matter are walked in Python. Each fast path is held here to a plain reference (the code it
replaced, or Python's own `str` methods) on the real captures under tests/data and on mutated
copies of them: lines dropped, doubled, re-indented past the 64 bytes `parse.lines` looks at, led
by a non-ASCII blank, tabbed, cut short, CRLF line ends. The slices the passes work in are made
tiny so that every boundary falls inside the short fixtures.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from profiler.errors import ParseError
from profiler.parse import lines, ncu_text, nvprof_summary, tokens

DATA = Path(__file__).parent / "data"
NCU_TEXT = sorted(p for p in (DATA / "ncu").rglob("*") if p.suffix in (".txt", ".output", ".log"))


def mutants(text: str, seed: int, count: int = 30) -> list[str]:
    """`text` and copies of it with one line changed, and cut short, and with CRLF line ends."""
    rng = random.Random(seed)
    rows = text.split("\n")
    edits = [
        lambda s: None,
        lambda s: f"{s}\n{s}",
        lambda s: " " * 80 + s,
        lambda s: "\u00a0" + s,
        lambda s: s.replace(" ", "\t", 1),
        lambda s: s.replace("1", "x", 1),
        lambda s: s.replace(".", ",", 1),
        lambda s: s.rstrip()[: len(s.rstrip()) // 2],
        lambda s: s.replace(" ", "", 3),
    ]
    out = [text, text.replace("\n", "\r\n"), text[: len(text) // 2], text[: len(text) * 3 // 4]]
    for _ in range(count):
        i = rng.randrange(len(rows))
        new = rng.choice(edits)(rows[i])
        out.append("\n".join(rows[:i] + ([] if new is None else [new]) + rows[i + 1 :]))
    return out


def reference_kernels(text: str, path: Path) -> list[ncu_text.Launch]:
    """ncu_text's walk as it was before it was sped up: every line, one by one."""
    kernels: list[ncu_text.Launch] = []
    widths = None
    header_next = False
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        launch = ncu_text._launch(line)
        if launch is not None:
            kernels.append(launch)
            widths = None
            continue
        if not kernels:
            continue
        stripped = line.strip()
        if stripped.startswith("Section:"):
            widths = None
        elif ncu_text._is_rule(stripped):
            runs = [len(run) for run in stripped.split()]
            if widths is None and len(runs) == 3:
                widths, header_next = (runs[0], runs[1], runs[2]), False
            elif widths is not None and not header_next:
                widths = None
            header_next = False
        elif widths is not None and stripped:
            if stripped.startswith("Metric Name") and stripped.endswith("Metric Value"):
                header_next = True
                continue
            ncu_text._metric(line, widths, number, kernels[-1], path)
    return kernels


def outcome(func, *args):
    try:
        return "ok", func(*args)
    except ParseError as exc:
        return "error", str(exc)


@pytest.mark.parametrize("path", NCU_TEXT, ids=lambda p: p.name)
def test_ncu_walk_reads_what_the_line_by_line_walk_read(path, monkeypatch):
    monkeypatch.setattr(lines, "_SLICE", 61)
    for text in mutants(path.read_text(encoding="utf-8"), seed=len(path.name)):
        fast = outcome(ncu_text._kernels, text, path)
        assert fast == outcome(reference_kernels, text, path)


@pytest.mark.parametrize("path", NCU_TEXT, ids=lambda p: p.name)
def test_ncu_rows_seen_again_are_read_as_the_first_time(path):
    """A row seen again is taken as it was cut before (`ncu_text._Seen`, by line and table
    widths): the capture three times over, one line of one copy changed (a rule, a row, a
    kernel line), is read as the line-by-line walk reads it."""
    text = "\n".join([path.read_text(encoding="utf-8")] * 3)
    for changed in mutants(text, seed=len(path.name) + 1, count=40):
        fast = outcome(ncu_text._kernels, changed, path)
        assert fast == outcome(reference_kernels, changed, path)


def test_ncu_row_seen_again_under_other_widths_is_cut_by_them():
    """One row in tables of two kernels whose rules differ: each cut by its own table."""
    row = "    Duration            usecond   12.50"
    for unit, value in [(a, b) for a in range(12) for b in range(3, 9)]:
        text = "".join(
            f"k{i} (1, 1, 1)x(1, 1, 1), Context 1, Stream 7, Device 0, CC 8.6\n"
            f"    Section: S\n    {rule}\n    Metric Name Metric Unit Metric Value\n"
            f"    {rule}\n{row}\n    {rule}\n"
            for i, rule in enumerate(
                [
                    "-" * 8 + " " + "-" * 9 + " " + "-" * 5,
                    "-" * 8 + " " + "-" * unit + " " + "-" * value,
                ]
            )
        )
        assert outcome(ncu_text._kernels, text, Path("x")) == outcome(
            reference_kernels, text, Path("x")
        )


def test_ncu_fixtures_have_kernels():
    """(The comparison above is not between two empty lists.)"""
    read = [ncu_text._kernels(p.read_text(encoding="utf-8"), p) for p in NCU_TEXT]
    assert sum(len(k) for k in read) >= 10
    assert sum(len(k.values) for found in read for k in found) >= 30


def random_lines(seed: int, n: int) -> str:
    rng = random.Random(seed)
    pieces = [" ", "\t", "\x0b", "\x0c", "\r", "\x1c", "\x1f", "a", "-", "Section:", "é", "\u3000"]
    rows = []
    for _ in range(n):
        width = rng.choice([0, 1, 7, 8, 9, 70])
        lead = "".join(rng.choices([" ", "\t", "\x1f", "\u00a0"], k=width))
        rows.append(lead + "".join(rng.choices(pieces, k=rng.randint(0, 12))))
    return "\n".join(rows)


def expected_lead(row: str) -> tuple[int, int]:
    """Where `row`'s ASCII blanks end, and the lead `lines` gives it."""
    lead = next((k for k, c in enumerate(row) if not (c.isascii() and c.isspace())), len(row))
    if lead >= lines.LEAD_LIMIT:
        return lead, lines.UNKNOWN
    if lead == len(row):
        return lead, lines.BLANK_LINE
    return lead, lead if row[lead].isascii() else lines.UNKNOWN


def test_line_leads_after_runs_of_spaces():
    """Leads of spaces are counted from a word's value (`lines._find_leads`): every run length
    up to past LEAD_LIMIT, followed by a solid byte, another blank, a newline or no ASCII."""
    ends = ["x", "\t", "\r", "\x0b", "\x1f", "\u00e9", "", " \ty", "\r\n"]
    rows = [" " * n + end for n in range(lines.LEAD_LIMIT + 10) for end in ends]
    data = "\n".join(rows).encode("utf-8")
    for found in (lines.split(data), lines.split_led(data)):
        got = found.lead.tolist()
        firsts = found.first.tolist()
        for i, row in enumerate("\n".join(rows).split("\n")):
            lead, expected = expected_lead(row)
            assert got[i] == expected, repr(row)
            if expected >= 0:
                assert firsts[i] == ord(row[lead]), repr(row)


@pytest.mark.parametrize("seed", range(4))
def test_line_leads_are_where_lstrip_stops(seed, monkeypatch):
    monkeypatch.setattr(lines, "_SLICE", 13)
    text = random_lines(seed, 600)
    found = lines.split(text.encode("utf-8"))
    rows = text.split("\n")
    assert len(found) == len(rows)
    prefix = found.prefix(8).tolist()
    for i, row in enumerate(rows):
        assert found.text(i) == row
        lead, expected = expected_lead(row)
        assert found.lead[i] == expected, repr(row)
        if expected >= 0:
            assert found.first[i] == ord(row[lead])
            word = row[lead:].encode("utf-8")[:8].ljust(8, b"\0")
            assert prefix[i] == lines.pack(word), repr(row)
        else:
            assert prefix[i] == 0


def test_line_leads_of_an_empty_and_a_short_text():
    for data in (b"", b"x", b"\n", b"  -", b" \n\t\nab"):
        found = lines.split(data)
        assert [found.text(i) for i in range(len(found))] == data.decode().split("\n")


@pytest.mark.parametrize("seed", range(3))
def test_token_edges_across_slices(seed, monkeypatch):
    monkeypatch.setattr(tokens, "_SLICE", 5 + seed)
    rng = random.Random(seed)
    rows = [
        "".join(rng.choices([" ", "\t", "\x1c", "ab", "1.5", "\x01"], k=rng.randint(0, 9)))
        for _ in range(300)
    ]
    cut = tokens.split(rows)
    assert cut is not None
    got = [
        [cut.text[cut.start[j] : cut.end[j]] for j in range(f, f + c)]
        for f, c in zip(cut.first.tolist(), cut.count.tolist(), strict=True)
    ]
    assert got == [row.split() for row in rows]


def test_decimals_in_blocks_of_rows_read_as_at_once(monkeypatch):
    rng = random.Random(7)
    cells = rng.choices(["12", "1.5", ".5", "5.", "1..2", "", "x", "1" * 15, "1" * 16], k=5000)
    text = " ".join(cells).encode()
    sizes = np.array([len(c) for c in cells])
    start = np.cumsum(np.r_[0, sizes[:-1] + 1])
    whole = tokens._decimals(np.frombuffer(text, np.uint8), start, start + sizes)
    monkeypatch.setattr(tokens, "_ROWS", 37)
    blocks = tokens.decimals(np.frombuffer(text, np.uint8), start, start + sizes)
    assert np.array_equal(whole[0], blocks[0], equal_nan=True)
    assert (whole[1] == blocks[1]).all() and whole[1].sum() > 1000


@pytest.mark.parametrize(
    "names",
    [
        ["b", "a", "c", "a", "b\x00", "b"],
        ["cudaMemcpy", "cudaFree", "cudaMemcpy ", "ä", "z", "cudaFree"],
        [f"k{i % 13}" for i in range(200)],
    ],
)
def test_summary_order_is_sort_values_order(names):
    rng = random.Random(len(names))
    df = pd.DataFrame(
        {
            "name": pd.Series(names, dtype="string"),
            "total_ns": [float(rng.choice([1, 2, 2, 3])) for _ in names],
        }
    )
    assert nvprof_summary._order(df).tolist() == nvprof_summary._sorted_by_pandas(df).tolist()
