"""nvprof's text summary read from the table's bytes (`tokens.split_text`, `Table.raw`) gives
what it gave when its lines were split, joined and encoded (`tokens.split`): the same tables and
the same error messages (with their line numbers), on every real nvprof text summary under
tests/data and /work/shared/fixtures and on mutated copies of them (`mutants`: lines dropped,
doubled, re-indented, led by a non-ASCII blank, tabbed, numbers broken, cut short, CRLF), plus
typed rows written without a blank after their `:` and tables without rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_parse_fast_paths import mutants

from profiler.errors import ParseError
from profiler.parse import (
    nvprof,
    nvprof_summary_cells,
    nvprof_summary_text,
    nvprof_tables,
    nvprof_wrapped,
    reader_notes,
    tokens,
    values,
)
from profiler.parse.nvprof_summary_cells import (
    COLUMNS,
    check_shares,
    token_numbers,
    token_shares,
    token_times,
)
from profiler.parse.nvprof_summary_text import _rows_one_by_one
from profiler.parse.table_origin import Origin

DATA = Path(__file__).parent / "data"
SHARED = Path("/work/shared/fixtures")


def reference_text_rows(origin: Origin, section: str) -> pd.DataFrame:
    """`nvprof_summary_text.text_rows` as it was: the lines split, joined again by
    `tokens.split`."""
    lines = str(origin.text).split("\n")[1:]
    cut = tokens.split(lines)
    if cut is None:
        return _rows_one_by_one(lines, section, origin)
    offsets = np.flatnonzero(cut.count > 0)
    cut = cut.rows(offsets)
    initial = cut.codes[cut.start[cut.index(0)]] | 32
    typed = np.flatnonzero((initial >= ord("a")) & (initial <= ord("z"))).tolist()
    sections, changes, skip, wrong = [section], [-1], np.zeros(len(offsets), dtype="int64"), None
    for i in typed:
        kind, sep, rest = lines[offsets[i]].strip().partition(":")
        if not sep or "%" in kind:
            wrong = i
            break
        if rest[:1] and not rest[:1].isspace():
            return _rows_one_by_one(lines, section, origin)
        sections.append(kind.strip())
        changes.append(i)
        skip[i] = len((kind + ":").split())
    cut = cut.rows(np.arange(len(offsets)), skip)
    count = cut.count
    short = np.flatnonzero(count < 7)
    if wrong is not None and (not len(short) or wrong <= short[0]):
        raise origin.error(f"line {origin.first_line + offsets[wrong] + 1}: not a summary row")
    if len(short):
        found = min(int(count[short[0]]), 7)
        raise origin.error(
            f"line {origin.first_line + offsets[short[0]] + 1}: a summary row has 7 fields "
            f"(Time(%), Time, Calls, Avg, Min, Max, Name), this one {found} (truncated file?)"
        )
    which = np.searchsorted(np.array(changes), np.arange(len(offsets)), side="right") - 1
    out = {
        "type": pd.Series(np.asarray(sections, dtype=object)[which], dtype="string"),
        "name": pd.Series(cut.rest(6), dtype="string"),
        "time_pct": token_shares(cut, origin),
        "calls": token_numbers(cut, 2, 0, origin, "Calls", values.COUNT, 1.0),
    }
    for field, k in zip(nvprof_summary_cells.TIMES, (1, 3, 4, 5), strict=True):
        out[field] = token_times(cut, k, origin, nvprof_summary_cells.TIMES[field])
    frame = pd.DataFrame(out, columns=COLUMNS)
    check_shares(frame, origin, resolution=0.01)
    return frame


def summary_files() -> list[Path]:
    found = [
        p
        for root in (DATA, SHARED)
        if root.is_dir()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and p.suffix in (".txt", ".md", ".log")
        and "Time(%)" in p.read_text("utf-8", "replace")
    ]
    return found


def outcome(read, origin: Origin, section: str):
    """The rows and the trimmed tables warned of, or the ParseError's text."""
    try:
        with reader_notes.trimmed() as trimmed:
            rows = read(origin, section)
    except ParseError as error:
        return str(error)
    return rows, [(str(t), t.line) for t in trimmed]


def text_tables(text: str, path: Path) -> list[nvprof.Table]:
    data = text.encode("utf-8")
    tables = nvprof_tables.tables(text, path, data if len(data) == len(text) else None)
    return [t for t in tables if t.kind == "text_summary"]


def same(new, old) -> None:
    if isinstance(old, str) or isinstance(new, str):
        assert new == old
    else:
        assert new[1] == old[1]
        pd.testing.assert_frame_equal(new[0], old[0], check_exact=True)


FILES = summary_files()


def test_real_summaries_found():
    assert len(FILES) >= 10
    assert sum(len(text_tables(p.read_text("utf-8"), p)) for p in FILES) >= 10


def reference(origin: Origin, section: str):
    """`reference_text_rows`'s outcome; for a table it refuses, that of its rows read below
    a units row (`nvprof -u ms`: `_unit_rows`), or else of the table with the names a log broke
    joined and ended at its last row (`nvprof_wrapped`), when that is read."""
    old = outcome(reference_text_rows, origin, section)
    if isinstance(old, str):
        unit_rows = outcome(nvprof_summary_text._unit_rows, origin, section)
        if isinstance(unit_rows, str) or unit_rows[0] is not None:
            return unit_rows
    mended = nvprof_wrapped.joined(origin) if isinstance(old, str) else None
    if mended is None:
        return old
    again = outcome(reference_text_rows, mended, section)
    return old if isinstance(again, str) else again


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_text_rows_from_bytes_as_before(path: Path):
    text = path.read_text("utf-8", "replace")
    for variant in mutants(text, seed=len(path.name), count=12):
        for table in text_tables(variant, path):
            origin = table.full_origin()  # (a table read from bytes leaves its text to `cut`)
            new = outcome(
                lambda o, s, t=table: nvprof_summary_text.text_rows(o, s, t.raw),
                origin,
                table.section,
            )
            same(new, reference(origin, table.section))
            same(outcome(nvprof_summary_text.text_rows, origin, table.section), new)
            keyed = outcome(  # by the keys of the fields (`summary_keys`), the text cut lazily
                lambda o, s, t=table: nvprof_summary_text.text_rows(o, s, t.raw, t.lines),
                table.origin,
                table.section,
            )
            same(keyed, new)


@pytest.mark.parametrize(
    "body",
    [
        "",
        "\n",
        "API calls:100.00%  1.0ms  1  1.0ms  1.0ms  1.0ms  cudaMalloc\n",
        "  API calls:  100.00%  1.0ms  1  1.0ms  1.0ms  1.0ms  cudaMalloc\n\n",
        "  GPU activities:  100.00%  1.0ms  1  1.0ms  1.0ms  1.0ms  k(int)\n"
        "      API calls:  100.00%  1.0ms  1  1.0ms  1.0ms  1.0ms  cudaMalloc",
        "  Range: 100.00%  1.0ms  1  1.0ms  1.0ms  1.0ms  r\n  oops\n",
        "  Range: 100.00%  1.0ms  1  1.0ms  1.0ms  1.0ms  r\n     oops\n",
        "  100.00%  1.0ms  1  1.0ms  1.0ms  1.0ms  k\u00e9\n",
        "  100.00%  1.0ms  1  1.0ms  1.0ms\n",
        "  Bad%: 100.00%  1.0ms  1  1.0ms  1.0ms  1.0ms  k\n",
    ],
)
def test_small_tables_as_before(body: str):
    header = "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name"
    text = header + ("\n" + body if body else "")
    data = text.encode("utf-8")
    origin = Origin(Path("x.txt"), nvprof.EXPECTED, text, 7)
    raw = memoryview(data) if len(data) == len(text) else None
    new = outcome(lambda o, s: nvprof_summary_text.text_rows(o, s, raw), origin, "GPU activities")
    same(new, reference(origin, "GPU activities"))
