"""The fast paths of the text parsers give what the plain ones give (issue 14's speed target).

The million-row text tables are read with NumPy passes over the bytes. Each fast path is held
here to a plain reference (the code it replaced, or Python's own `str` methods): line leads
after runs of blanks of every length, led by a non-ASCII blank, tabbed; token edges and decimal
blocks across slices. The slices the passes work in are made tiny so that every boundary falls
inside the short inputs. (ncu's text reader: tests/test_parse_fast_ncu_text.py.)
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from profiler.parse import lines, nvprof_summary, tokens

# One line's changes that `mutants` makes (None: the line dropped).
EDITS: list[Callable[[str], str | None]] = [
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


def mutants(
    text: str, seed: int, count: int = 30, edits: list[Callable[[str], str | None]] = EDITS
) -> list[str]:
    """`text` and copies of it with one line changed (`edits`), and cut short, and with CRLF
    line ends."""
    rng = random.Random(seed)
    rows = text.split("\n")
    out = [text, text.replace("\n", "\r\n"), text[: len(text) // 2], text[: len(text) * 3 // 4]]
    for _ in range(count):
        i = rng.randrange(len(rows))
        new = rng.choice(edits)(rows[i])
        out.append("\n".join(rows[:i] + ([] if new is None else [new]) + rows[i + 1 :]))
    return out


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


@pytest.mark.parametrize("seed", range(6))
def test_near_leads_across_blocks(seed, monkeypatch):
    """Leads found in one gather of a line's first bytes (`lines._near_leads`, a few lines a
    block) are where `str.lstrip` stops: spaces with other blanks at and around the word edges,
    lines shorter than the gather at the end, no ASCII; and it leaves to the loop only lines
    led past its bytes or by other blanks, or too near the end."""
    monkeypatch.setattr(lines, "_BLOCK", 7)
    rng = random.Random(seed)
    rows = []
    for _ in range(rng.choice([3, 40, 400])):
        lead = [" "] * rng.choice([0, 1, 7, 8, 9, 15, 16, 17, 20, 23, 24, 25, 31, 63, 64, 70])
        if lead and rng.random() < 0.2:
            lead[rng.randrange(len(lead))] = rng.choice(["\t", "\r", "\x0b", "\x1c"])
        rows.append("".join(lead) + rng.choice(["x", "", "\u00e9", "T 1", "\r", " \ty"]))
    text = "\n".join(rows)
    data = text.encode("utf-8")
    for found in (lines.split(data), lines.split_led(data)):
        for i, row in enumerate(text.split("\n")):
            lead, expected = expected_lead(row)
            assert found.lead[i] == expected, repr(row)
            if expected >= 0:
                assert found.first[i] == ord(row[lead]), repr(row)
    todo = np.arange(len(rows))
    start = np.concatenate(([0], lines.newlines(data) + 1))
    scratch = np.zeros(len(rows), dtype=np.int64), np.zeros(len(rows), dtype=np.uint8)
    left = lines._near_leads(data, start, todo, *scratch)
    may_stay = [
        i
        for i, row in enumerate(rows)
        if len(row) - len(row.lstrip(" ")) >= 24  # led past the gather
        or row.lstrip(" ")[:1] in ("\t", "\r", "\x0b", "\x1c")  # by spaces, then blanks
        or start[i] > len(data) - 24  # too near the end for the gather
    ]
    assert set(left.tolist()) <= set(may_stay)


def test_line_leads_of_an_empty_and_a_short_text():
    for data in (b"", b"x", b"\n", b"  -", b" \n\t\nab"):
        found = lines.split(data)
        assert [found.text(i) for i in range(len(found))] == data.decode().split("\n")


@pytest.mark.parametrize("seed", range(4))
def test_space_led_newlines_across_slices_and_spans(seed, monkeypatch):
    """The newlines a blank line can begin after (`lines.space_led_newlines`) are every `\\n`
    from `start` on that a space, tab, `\\r` or `\\n` follows: with slice and span edges inside
    the text, a newline last, and more spans than bytes."""
    monkeypatch.setattr(lines, "_SLICE", 3 + seed)
    rng = random.Random(seed)
    data = "".join(rng.choice(["\n", " ", "\t", "\r", "x", '"', "\u00e9"]) for _ in range(300))
    data = data.encode("utf-8") + b"\n" * (seed % 2)
    for start in (0, 1, 17, len(data) - 1, len(data)):
        expected = [
            i for i in range(start, len(data) - 1) if data[i] == 10 and data[i + 1] in b" \t\r\n"
        ]
        for spans in (1, 2, 5, len(data) + 3):
            found = lines.space_led_newlines(data, start, spans)
            assert found.tolist() == expected, (start, spans)


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
