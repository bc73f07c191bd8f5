"""The fast path of nsys column text (`nsys_rows`) gives what the C-reader path gives.

`nsys_text.read_table` reads rows of one width with NumPy (`nsys_rows.read`) and hands anything
else to the path it replaced (`nsys_cut.rows`, pandas' C reader). Both are run here on every
real column-text capture under tests/data, on mutated copies of them (a cell changed, moved into
the gap between columns, blanked, made `None`, a tab, a non-ASCII byte, a sign, an exponent, a
digit too many, a row re-indented, doubled or dropped, CRLF line ends, cut short) and on random
tables of every layout `nsys_rows` reads: the raw frames (dtypes and categories too), the
tables, and the errors with their line numbers must be the same. The slices of rows it works in
are made tiny so that every boundary falls inside the short fixtures.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import fast_paths
import numpy as np
import pandas as pd
import pytest

from profiler.errors import ParseError
from profiler.parse import nsys_capture, nsys_cut, nsys_rows, nsys_rule, nsys_stdout, nsys_text
from profiler.parse.table_origin import LineCounter

DATA = Path(__file__).parent / "data"
CAPTURES = sorted(  # every nsys stdout capture (CSV or column text)
    p
    for p in [*(DATA / "nsys").rglob("*"), *(DATA / "captures").rglob("*")]
    if p.is_file() and p.suffix in (".txt", ".md", ".output", ".log")
)
CANDIDATES = [
    *(DATA / "nsys").rglob("*"),
    DATA / "captures" / "nsys-stats-true-prompts.md",
]
TEXT = sorted(  # the captures that hold column text (a rule under a header)
    p
    for p in CANDIDATES
    if p.is_file()
    and p.suffix in (".txt", ".md", ".output", ".log")
    and any(nsys_rule.is_rule(line) for line in p.read_text(encoding="utf-8").splitlines())
)


def slow(*_args: object, **_kwargs: object) -> None:
    return None


def outcome(path: Path) -> fast_paths.Outcome:
    return fast_paths.outcome(lambda: nsys_capture.read_stdout_reports(path))


def assert_same(fast: fast_paths.Outcome, plain: fast_paths.Outcome) -> None:
    fast_paths.assert_same(fast, plain, lambda t: t[0])


def both(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The capture read with the fast path and without it: the same frames or error."""
    fast = outcome(path)
    with monkeypatch.context() as m:
        m.setattr(nsys_rows, "read", slow)
        plain = outcome(path)
    assert_same(fast, plain)


def assert_raw_same(got: pd.DataFrame, ref: pd.DataFrame) -> None:
    """The fast path's frame is the C reader's, but for float columns of whole numbers, which it
    gives as Int64 (a blank cell's value 0): the same numbers."""
    got, ref = as_read(got), as_read(ref)
    pd.testing.assert_frame_equal(got, ref, check_exact=True)
    for col in got:
        assert got[col].dtype == ref[col].dtype
        if isinstance(got[col].dtype, pd.CategoricalDtype):
            assert got[col].cat.categories.dtype == ref[col].cat.categories.dtype
            assert got[col].cat.categories.tolist() == ref[col].cat.categories.tolist()


def as_read(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame with its Int64 columns (whole numbers `nsys_numbers` read) as the C reader gives
    them (float64, blank NaN); their values where blank are 0."""
    out = frame.copy()
    for col in frame:
        if isinstance(frame[col].dtype, pd.Int64Dtype):
            blank = frame[col].isna().to_numpy()
            assert (frame[col].array._data[blank] == 0).all()
            out[col] = frame[col].astype("float64")
    return out


class Recorder:
    """Wraps `nsys_text._fast_rows`: each frame it gives is held to `_rows` on the same rows."""

    def __init__(self) -> None:
        self.fast = 0
        self.from_file = 0  # frames read from the file's bytes (no copy of the block)
        self.real = nsys_text._fast_rows

    def __call__(self, data, at, end, columns, cells, cols):  # type: ignore[no-untyped-def]
        got = self.real(data, at, end, columns, cells, cols)
        if data.count(b"\n", 0, at) > 2:  # the file's bytes, not the block's (header, rule)
            head = data.rfind(b"\n", 0, data.rfind(b"\n", 0, at - 1)) + 1  # header, rule
            copied = self.real(bytes(data[head:end]), at - head, end - head, columns, cells, cols)
            assert (got is None) == (copied is None)
            if got is not None:
                self.from_file += 1
                assert_raw_same(got, copied)
        if got is not None:
            self.fast += 1
            rows = data[at:end].decode("ascii")
            origin = nsys_text.Origin(Path("x"), "x", rows, 1)
            ref = nsys_cut.rows(rows, columns, cells, cols, origin)
            assert_raw_same(got, ref)
        return got


def fast_rows(block: str, at, columns, cells, cols):  # type: ignore[no-untyped-def]
    """`nsys_text._fast_rows` of a block's rows (None for a block that is not ASCII, as
    `read_table` passes it none)."""
    if not block.isascii():
        return None
    return nsys_text._fast_rows(block.encode("ascii"), at, len(block), columns, cells, cols)


EDITS = [
    lambda s: None,
    lambda s: f"{s}\n{s}",
    lambda s: " " * 80 + s,
    lambda s: "\u00a0" + s[1:],
    lambda s: s.replace(" ", "\t", 1),
    lambda s: s.replace("1", "x", 1),
    lambda s: s.replace("0", "-", 1),
    lambda s: s.replace(",", "", 1),
    lambda s: s.replace(",", " ", 1),
    lambda s: s.replace(".", ",", 1),
    lambda s: s.replace(".", " ", 1),
    lambda s: s.replace("0 ", "0e", 1),
    lambda s: s.replace("  1", " 11", 1),
    lambda s: s.replace("1  ", "  1", 1),
    lambda s: s.replace("  ", " 9", 1),
    lambda s: s.replace("  ", "9 ", 1),
    lambda s: s.replace(" 1", "11", 1),
    lambda s: s.replace("     ", " None", 1),
    lambda s: s.replace("1", " ", 1),
    lambda s: s[::-1],
    lambda s: s.rstrip()[: len(s.rstrip()) // 2],
    lambda s: s[:-3],
    lambda s: s.replace(" ", "", 3),
]


def mutants(text: str, seed: int, count: int = 14) -> list[str]:
    """`text` and copies of it with a line changed (a table row, mostly), and cut short, and
    with CRLF line ends."""
    rng = random.Random(seed)
    rows = text.split("\n")
    table = [i for i, row in enumerate(rows) if row[:1] == " " and any(c.isdigit() for c in row)]
    out = [text, text.replace("\n", "\r\n"), text[: len(text) // 2], text[: len(text) * 3 // 4]]
    for _ in range(count):
        i = rng.choice(table) if table and rng.random() < 0.9 else rng.randrange(len(rows))
        new = rng.choice(EDITS)(rows[i])
        out.append("\n".join(rows[:i] + ([] if new is None else [new]) + rows[i + 1 :]))
    return out


@pytest.mark.parametrize("path", TEXT, ids=lambda p: p.name)
def test_fast_path_reads_what_the_c_reader_read(path, tmp_path, monkeypatch):
    monkeypatch.setattr(nsys_rows, "CHUNK_BYTES", 1)  # a slice of one row at a time
    recorder = Recorder()
    monkeypatch.setattr(nsys_text, "_fast_rows", recorder)
    for k, text in enumerate(mutants(path.read_text(encoding="utf-8"), seed=len(path.name))):
        copy = tmp_path / f"{k}{path.suffix}"
        copy.write_text(text, encoding="utf-8")
        both(copy, monkeypatch)


def test_fixtures_take_the_fast_path(monkeypatch):
    """(The comparisons above are not between two slow paths.)"""
    recorder = Recorder()
    monkeypatch.setattr(nsys_text, "_fast_rows", recorder)
    for path in TEXT:
        outcome(path)
    assert recorder.fast >= 20 and recorder.from_file >= 20


def number(rng: random.Random, kind: str, point: int, grouped: bool) -> str:
    digits = rng.choice([1, 1, 2, 3, 4, 6, 7, 9, 10, 12] + ([13, 15] if kind == "i" else []))
    whole = str(rng.randrange(10 ** (digits - 1) if digits > 1 else 0, 10**digits))
    if grouped:
        whole = f"{int(whole):,}"
    return whole if point <= 0 else f"{whole}.{rng.randrange(10**point):0{point}d}"


def random_table(seed: int) -> str:
    """A column-text gpu trace whose columns have random widths and layouts (numbers of at most
    15 digits, columns of at most 24 bytes: what `nsys_rows` reads)."""
    rng = random.Random(seed)
    layouts = {
        "Start (ns)": ("i", -1, rng.random() < 0.5),
        "Duration (ns)": ("i", -1, rng.random() < 0.5),
        "CorrId": ("f", -1, rng.random() < 0.5),
        "GrdX": ("f", -1, False),
        "Bytes (MB)": ("f", rng.choice([1, 3]), rng.random() < 0.5),
        "Strm": ("f", -1, True),
    }
    labels = ["Device", "SrcMemKd", "Name"]
    rows: list[dict[str, str]] = []
    for _ in range(rng.randint(1, 40)):
        row = {}
        for name, (kind, point, grouped) in layouts.items():
            blank = kind == "f" and rng.random() < 0.2
            row[name] = "" if blank else number(rng, kind, point, grouped)
        for name in labels:
            pick = rng.choice(["", "Pinned", "[CUDA memcpy HtoD]", "k(int *, float)", " x", "z"])
            row[name] = "" if name == "Name" and not pick else pick
        row["Name"] = row["Name"] or "kernel"
        rows.append(row)
    names = [*layouts, *labels]
    width = {n: max([len(n)] + [len(r[n]) for r in rows]) + rng.randint(0, 3) for n in names}
    right = set(layouts)

    def line(cells: dict[str, str]) -> str:
        parts = [
            cells[n].rjust(width[n]) if n in right else cells[n].ljust(width[n]) for n in names
        ]
        return "  ".join(parts)

    header = line({n: n for n in names}).rstrip().ljust(len(line(rows[0])))
    rule = "  ".join("-" * width[n] for n in names)
    body = [line(r) for r in rows]
    return "\n".join([header, rule, *body]) + "\n"


@pytest.mark.parametrize("seed", range(40))
def test_random_layouts(seed, monkeypatch):
    monkeypatch.setattr(nsys_rows, "CHUNK_BYTES", 1 + seed * 37)
    text = random_table(seed)
    variants = [text] + [m for m in mutants(text, seed, 12)[4:] if m.endswith("\n")]
    for block in variants:
        header, rule, at = nsys_rule.three_parts(block)
        columns = nsys_rule.spans(rule)
        if len(columns) != 9 or not nsys_rule.is_rule(rule):
            continue
        cells = nsys_rule.header_cells(header, columns)
        origin = nsys_text.Origin(Path("x"), "x", block, 1, 1)
        try:
            cols = nsys_text.nsys_fields.columns(cells, "cuda_gpu_trace", origin)
        except ParseError:
            continue  # (the header was changed)
        got = fast_rows(block, at, columns, cells, cols)
        try:
            ref = nsys_cut.rows(block[at:], columns, cells, cols, origin)
        except ParseError:
            assert got is None
            continue
        if block is text:
            assert got is not None, "a plain table falls back"
        if got is not None:
            assert_raw_same(got, ref)


def test_numbers_past_a_float_mantissa_and_into_int64():
    """18-digit integers are exact; 16 digits in a float column go to the C reader."""
    rows = ["        Start (ns)  Duration (ns)  Name", "-" * 18 + "  -------------  ----"]
    rows += ["999999999999999999              1  k   ", "      123456789012              1  k   "]
    block = "\n".join(rows) + "\n"
    header, rule, at = nsys_rule.three_parts(block)
    columns = nsys_rule.spans(rule)
    cells = nsys_rule.header_cells(header, columns)
    origin = nsys_text.Origin(Path("x"), "x", block, 1, 1)
    cols = nsys_text.nsys_fields.columns(cells, "cuda_gpu_trace", origin)
    got = fast_rows(block, at, columns, cells, cols)
    assert got is not None
    assert got["c0"].tolist() == [999_999_999_999_999_999, 123_456_789_012]
    assert np.array_equal(
        got["c0"], nsys_cut.rows(block[at:], columns, cells, cols, origin)["c0"]
    )


# -- nsys_stdout.split_stdout: one pass over the newlines, held to the two passes it replaced --

_PARAGRAPH_BREAK = re.compile(r"\n[\n \t\r]*\n")  # (a fence line is a marker: _SPECIAL_LINE)
_SPECIAL_AFTER_NEWLINE = re.compile(r"\n(?P<line>" + nsys_stdout._SPECIAL_LINE + ")")


def reference_split(text: str) -> list[nsys_stdout.Block]:
    """split_stdout as it was: paragraph breaks found first, then the special lines of each
    paragraph."""
    lines = LineCounter(text)
    blocks: list[nsys_stdout.Block] = []
    pending: list[tuple[str | None, dict[str, str]]] = [(None, {})]
    start = 0
    for brk in [*_PARAGRAPH_BREAK.finditer(text), None]:
        end = len(text) if brk is None else brk.start() + 1
        specials = []
        first = nsys_stdout._SPECIAL.match(text, start, end)
        if first is None:  # (since indented headings are markers)
            first = nsys_stdout._INDENTED_HEADING.match(text, start, end)
        if first is not None:
            specials.append((first.start(), first.end(), first["marker"] is not None))
        for found in _SPECIAL_AFTER_NEWLINE.finditer(text, start, end):
            specials.append((found.start("line"), found.end("line"), found["marker"] is not None))
        nsys_stdout._paragraph(text, start, end, lines, pending, blocks, specials)
        start = len(text) if brk is None else brk.end()
    return blocks


SPLIT_EDITS = [
    lambda s: "",
    lambda s: " \t\r",
    lambda s: f"{s}\n\n\n",
    lambda s: f"\n{s}",
    lambda s: f"  ** Banner (cuda_gpu_trace):\n{s}",
    lambda s: f"Processing [r.sqlite] with [/r/cuda_api_sum.py]...\n{s}",
    lambda s: f"SKIPPED: r.sqlite does not contain CUDA trace data.\n{s}",
    lambda s: f"CUDA Kernel Statistics:\n\n{s}",
    lambda s: "Generating " + s,
    lambda s: "\t" + s,
    lambda s: f"```\n{s}",
    lambda s: f"{s}\n~~~ text",
]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_split_in_one_pass_cuts_what_two_passes_cut(path):
    text = path.read_text(encoding="utf-8")
    rng = random.Random(len(path.name))
    rows = text.split("\n")
    variants = [text, text.replace("\n", "\r\n"), "\n" + text, text + "\n\n \n", text[:-1]]
    for _ in range(30):
        i = rng.randrange(len(rows))
        new = rng.choice(SPLIT_EDITS)(rows[i])
        variants.append("\n".join(rows[:i] + [new] + rows[i + 1 :]))
    for variant in variants:
        assert nsys_stdout.split_stdout(variant) == reference_split(variant)


def test_split_of_blank_and_marker_only_texts():
    for text in ("", "\n", "\n\n", " \n\t\n", "Generating x", "\nGenerating x\n\n", "a\n\nb"):
        assert nsys_stdout.split_stdout(text) == reference_split(text)


def test_captures_have_blocks():
    """(The comparison above is not between empty lists.)"""
    found = [nsys_stdout.split_stdout(p.read_text(encoding="utf-8")) for p in CAPTURES]
    assert sum(len(blocks) for blocks in found) >= 20
    assert sum(block.report is not None for blocks in found for block in blocks) >= 10
