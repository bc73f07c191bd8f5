"""Round two of the nsys column-text speed-ups change no result; each is held to what it replaced:

- `nsys_stdout.split_ascii` (the patterns over an ASCII capture's bytes, only the blocks
  decoded) cuts what `split_stdout` cuts from the decoded text, and each block's `at` is where
  its text lies in the bytes;
- `read_stdout_reports` (bytes split, rows read from the file's bytes) gives what the decoded
  path gives (the tables, or the error with its line), on every real capture and on mutants;
- `values.float_integers` gives what `values.integers` gives (the column, or the error) on
  float columns with missing, negative, fractional, huge, infinite values and several units.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import fast_paths
import numpy as np
import pandas as pd
import pytest
from test_parse_fast_nsystext import CAPTURES, SPLIT_EDITS, TEXT, mutants

from profiler.errors import ParseError
from profiler.parse import nsys_capture, nsys_stdout, table_origin, values

SHARED = Path("/work/shared/fixtures")
EVERY = CAPTURES + sorted(
    p for p in SHARED.rglob("*") if p.is_file() and p.suffix in (".txt", ".md", ".log")
)


def variants(text: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    rows = text.split("\n")
    out = [text, text.replace("\n", "\r\n"), "\n" + text, text + "\n\n \n", text[:-1]]
    for _ in range(25):
        i = rng.randrange(len(rows))
        new = rng.choice(SPLIT_EDITS)(rows[i])
        out.append("\n".join(rows[:i] + [new] + rows[i + 1 :]))
    return out


@pytest.mark.parametrize("path", EVERY, ids=lambda p: p.name)
def test_split_over_bytes_cuts_what_the_text_split_cuts(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    for variant in variants(text, len(path.name)):
        if not variant.isascii():
            continue
        data = variant.encode("ascii")
        got = nsys_stdout.split_ascii(data)
        ref = nsys_stdout.split_stdout(variant)
        assert got == ref
        for block in got:
            if block.span is not None:
                assert variant[slice(*block.span)] == block.text


def test_split_over_bytes_of_small_texts():
    for text in ("", "\n", "\n\n", " \n\t\n", "Generating x", "\nGenerating x\n\n", "a\n\nb"):
        assert nsys_stdout.split_ascii(text.encode()) == nsys_stdout.split_stdout(text)


def test_blank_pieces_are_what_isspace_says():
    """`_blank` (a pattern over a piece, no copy) is `isspace` of the piece: every ASCII space
    of str, the separators 0x1C-0x1F included, and non-ASCII spaces of a str."""
    alphabet = " \t\n\r\x0b\x0c\x1c\x1f\x1bx"
    rng = random.Random(5)
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    for text in [*texts, "\u00a0 \u2003", " \u00e9 "]:
        a, b = sorted(rng.sample(range(len(text) + 1), 2)) if len(text) > 1 else (0, len(text))
        assert nsys_stdout._blank(text, a, b) == text[a:b].isspace(), repr(text[a:b])
        if text.isascii():
            assert nsys_stdout._blank(text.encode(), a, b) == text[a:b].isspace()
    for text in ("\x1c\x1d\n\nx\n\n\x0b\n", "x\n\n \x1f \nSKIPPED: z\n\t"):
        assert [b.text for b in nsys_stdout.split_ascii(text.encode())] == ["x\n"]


def test_some_blocks_are_one_piece():
    """(Blocks whose rows are read from the file's bytes exist among the captures.)"""
    found = [nsys_stdout.split_ascii(p.read_bytes()) for p in CAPTURES if p.read_bytes().isascii()]
    assert sum(block.at >= 0 for blocks in found for block in blocks) >= 10


def decoded_reports(path: Path) -> dict:
    """`read_stdout_reports` as it was before the bytes split: the decoded text split, each
    block's rows from its own text."""
    real = nsys_stdout.split_ascii
    try:
        nsys_stdout.split_ascii = lambda data: [  # type: ignore[assignment]
            dataclasses.replace(block, at=-1) for block in real(data)
        ]
        return nsys_capture.read_stdout_reports(path)
    finally:
        nsys_stdout.split_ascii = real


def assert_mutants_read_as_decoded(path, tmp_path, seed):
    """Every mutant of `path` (from `seed`) gives from its bytes what its decoded text gives."""
    for k, text in enumerate(mutants(path.read_text(encoding="utf-8"), seed=seed)):
        copy = tmp_path / f"{k}{path.suffix}"
        copy.write_text(text, encoding="utf-8")
        fast = fast_paths.outcome(lambda c=copy: nsys_capture.read_stdout_reports(c))
        plain = fast_paths.outcome(lambda c=copy: decoded_reports(c))
        fast_paths.assert_same(fast, plain, lambda t: t[0])


@pytest.mark.parametrize("path", TEXT, ids=lambda p: p.name)
def test_reports_from_the_bytes_are_the_decoded_reports(path, tmp_path):
    assert_mutants_read_as_decoded(path, tmp_path, seed=7 + len(path.name))


CSV_CAPTURES = [p for p in CAPTURES if p not in TEXT]  # stdout of `--format csv`, mostly


@pytest.mark.parametrize("path", CSV_CAPTURES, ids=lambda p: p.name)
def test_csv_reports_from_the_bytes_are_the_decoded_reports(path, tmp_path):
    """A CSV report of an ASCII capture is read from the file's bytes, not decoded first."""
    assert_mutants_read_as_decoded(path, tmp_path, seed=3 + len(path.name))


def test_csv_captures_have_reports():
    """(The comparisons above are not between two refusals.)"""
    read = [
        fast_paths.outcome(lambda p=p: nsys_capture.read_stdout_reports(p)) for p in CSV_CAPTURES
    ]
    assert sum(kind == "ok" for kind, _, _ in read) >= 2


RULES = [values.COUNT, values.TIME, values.SIZE, values.VALUE, values.SHARE]
FACTORS = [1, 1.0, 1e3, 1e9, 1024.0, 2.0**-10]


def column(rng: random.Random) -> pd.Series:
    n = rng.randint(0, 30)
    kind = rng.random()
    cells = []
    for _ in range(n):
        r = rng.random()
        if r < 0.2:
            cells.append(np.nan)
        elif kind < 0.5 or r < 0.7:
            cells.append(float(rng.randrange(10 ** rng.randint(1, 16))))
        else:
            cells.append(rng.random() * 10 ** rng.randint(-3, 12))
    odd = [-1.0, -0.0, 0.5, np.inf, -np.inf, 2.0**62, 2.0**62 - 512, 1e300, 99.5, 100.0]
    if cells and rng.random() < 0.6:
        cells[rng.randrange(len(cells))] = rng.choice(odd)
    index = pd.RangeIndex(n) if rng.random() < 0.7 else pd.Index(rng.sample(range(100), n))
    return pd.Series(np.array(cells, dtype="float64"), index=index)


def result(func, series, rule, factor):  # type: ignore[no-untyped-def]
    try:
        return "ok", func(series, table_origin.Origin(Path("f"), "x"), "Col", rule, factor)
    except ParseError as exc:
        return "error", str(exc)


@pytest.mark.parametrize("seed", range(300))
def test_float_integers_are_integers(seed):
    rng = random.Random(seed)
    series, rule, factor = column(rng), rng.choice(RULES), rng.choice(FACTORS)
    got = result(values.float_integers, series, rule, factor)
    ref = result(values.integers, series, rule, factor)
    assert got[0] == ref[0], (got, ref)
    if got[0] == "error":
        assert got[1] == ref[1]
    else:
        pd.testing.assert_series_equal(got[1], ref[1], check_exact=True)


@pytest.mark.parametrize("seed", range(100))
def test_exact_whole_numbers_are_the_floats_they_replace(seed):
    """`float_integers` of an Int64 column (`nsys_numbers`' whole numbers, 0 where blank) is
    that of the float64 column the C reader gives for the same cells: result or error."""
    rng = random.Random(seed)
    n = rng.randint(0, 30)
    ints = [rng.randrange(10 ** rng.randint(1, 15)) for _ in range(n)]
    if ints and rng.random() < 0.4:
        ints[rng.randrange(n)] = rng.choice([-1, -(10**12), 2**62, 2**62 + 1, 10**18])
    blank = [rng.random() < 0.2 for _ in range(n)]
    mask = np.array(blank, dtype=bool)
    exact = pd.Series(pd.arrays.IntegerArray(np.where(mask, 0, ints).astype("int64"), mask))
    floats = pd.Series(np.where(mask, np.nan, np.array(ints, dtype="float64")))
    rule, factor = rng.choice(RULES), rng.choice([1, 1, 1, 1e3])
    got = result(values.float_integers, exact, rule, factor)
    ref = result(values.float_integers, floats, rule, factor)
    assert got[0] == ref[0], (got, ref)
    if got[0] == "error":
        assert got[1] == ref[1]
    else:
        pd.testing.assert_series_equal(got[1], ref[1], check_exact=True)


def test_float_integers_of_other_columns_are_integers():
    origin = table_origin.Origin(Path("f"), "x")
    for series in (
        pd.Series([1, 2, 3], dtype="int64"),
        pd.Series(["1", None, "3"], dtype="string"),
        pd.Series([1.0, None], dtype="Float64"),
        pd.Series([], dtype="float64"),
    ):
        got = values.float_integers(series, origin, "c", values.COUNT)
        pd.testing.assert_series_equal(got, values.integers(series, origin, "c", values.COUNT))


@pytest.mark.parametrize("rows", [1, 2, 5])
def test_labels_read_a_few_rows_at_a_time(rows, monkeypatch):
    """Label columns are read `LABEL_ROWS` rows at once across the slices of the numbers: made
    tiny, every boundary falls inside the fixtures, and the frames stay the C reader's."""
    from test_parse_fast_nsystext import Recorder

    from profiler.parse import nsys_rows, nsys_text

    monkeypatch.setattr(nsys_rows, "CHUNK_BYTES", 1 + rows * 97)
    monkeypatch.setattr(nsys_rows, "LABEL_ROWS", rows)
    recorder = Recorder()
    monkeypatch.setattr(nsys_text, "_fast_rows", recorder)
    for path in TEXT:
        fast_paths.outcome(lambda p=path: nsys_capture.read_stdout_reports(p))  # (some refused)
    assert recorder.fast >= 20
