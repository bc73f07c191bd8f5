"""`nsys_numbers` takes exactly the cells of its layouts: each cell, alone under a first row
every layout reads, is held to what it should give (a right-aligned number grouped by commas or
plain, blank only in a float column, its point in place, digits that fit; anything else: the
C reader's path, `read` giving None). Every cell of narrow columns over a small alphabet, and
random cells of columns of two and three words."""

from __future__ import annotations

import itertools
import random
import re

import numpy as np
import pandas as pd
import pytest

from profiler.parse import nsys_numbers, nsys_rows


def expected(cell: str, gap: int, kind: str, point: int) -> float | None | str:
    """What the cell should read as: its value, None for a blank float, "refused"."""
    body = cell.lstrip(" ")
    if not body:
        return "refused" if kind == "int64" else None
    if cell[:gap].strip() or " " in body:
        return "refused"
    tail = rf"\.\d{{{point}}}" if point > 0 else ""
    lead = r"(?:\d{1,3}(?:,\d{3})*)" if "," in body else r"\d+"
    lead = rf"(?:{lead})?" if point > 0 else lead
    if not re.fullmatch(lead + tail, body):
        return "refused"
    digits = sum(ch.isdigit() for ch in body)
    if digits > nsys_numbers.MOST_DIGITS[kind]:
        return "refused"
    whole = int(body.replace(",", "").replace(".", ""))
    return whole if kind == "int64" else whole / 10**point if point > 0 else float(whole)


def read(cell: str, first: str, kind: str, gap: int) -> list[float] | None:
    """The cell under `first`, in a column `gap` blanks after a label column and before
    another: the number column's values (as the C reader gives them), or None."""
    width = len(cell)
    rule = "-" + " " * gap + "-" * (width - gap) + "  -"
    rows = ["K" + "N".rjust(width) + "  L", rule, "k" + first.rjust(width) + "  k"]
    data = ("\n".join([*rows, "k" + cell + "  k"]) + "\n").encode("ascii")
    columns = [(0, 1), (1 + gap, 1 + width), (width + 3, width + 4)]
    dtypes = {0: "category", 1: kind, 2: "category"}
    got = nsys_rows.read(data, 2 * len(rule) + 2, columns, dtypes)
    if got is None:
        return None
    column = got["c1"]
    whole = kind == "float64" and "." not in first
    assert isinstance(column.dtype, pd.Int64Dtype) == whole  # (Int64: whole numbers, exact)
    return (column.astype("float64") if whole else column).tolist()


def check(cell: str, gap: int, kind: str, point: int) -> None:
    first = "1" if point <= 0 else "1." + "0" * point
    want = expected(cell, gap, kind, point)
    got = read(cell, first, kind, gap)
    if want == "refused":
        assert got is None, (cell, got)
        return
    assert got is not None, (cell, want)
    value = got[1]
    assert np.isnan(value) if want is None else value == want, (cell, got, want)
    if want is not None:
        assert type(value) is (int if kind == "int64" else float)


LAYOUTS = [("int64", 6, 2, -1), ("float64", 6, 2, -1), ("float64", 6, 1, 2), ("int64", 5, 0, -1)]


@pytest.mark.parametrize(("kind", "width", "gap", "point"), LAYOUTS)
def test_every_narrow_cell(kind, width, gap, point):
    """Every cell over blank, two digits, the comma, the point (and `x` between columns)."""
    for lead in itertools.product(" x", repeat=gap):
        for body in itertools.product(" 07,.", repeat=width - gap):
            check("".join(lead + body), gap, kind, point)


def random_cell(rng: random.Random, width: int, gap: int, point: int) -> str:
    digits = rng.randint(0, 19)
    whole = str(rng.randrange(10**digits)) if digits else ""
    if rng.random() < 0.5 and whole:
        whole = f"{int(whole):,}"
    number = whole + ("." + "5" * point if point > 0 and rng.random() < 0.8 else "")
    chars = list(number.rjust(width))
    for _ in range(rng.choice([0, 0, 1, 2])):  # an edit: a blank, a comma, a digit, a point
        chars[rng.randrange(width)] = rng.choice(" ,9.")
    return "".join(chars)[-width:]


@pytest.mark.parametrize("seed", range(6))
def test_random_cells_of_several_words(seed):
    rng = random.Random(seed)
    for _ in range(400):
        kind = rng.choice(["int64", "float64"])
        width = rng.randint(9, 24)
        gap = rng.choice([0, 2])
        point = rng.choice([-1, 3]) if kind == "float64" else -1
        check(random_cell(rng, width, gap, point), gap, kind, point)
