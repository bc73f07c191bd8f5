"""The fast paths of nvprof's text gpu trace and summaries give what the plain ones give (issue
14's speed target: a million-row text table in under 2 s).

- `nvprof_trace.text_trace` reads an ASCII table whose rows line up with NumPy over its bytes
  (`_fast_fields`) and every other table, or anything wrong, row by row (`_plain_fields`, the
  code it had before). Both are run here on the real text traces under tests/data and on mutated
  copies of them (lines dropped, doubled, re-indented, led by a non-ASCII blank, tabbed, cut
  short, CRLF; and row edits a trace invites: a name with blanks after it, a cell pushed across
  a column's edge, a unit or number broken, a Unified Memory row, a non-ASCII device): the tables
  and the error messages must be equal.
- `nvprof_tables.tables` finds headers, `Profiling result:` / `NVTX result:` lines and table ends
  from the lines' leads when it is given the bytes of an ASCII file; it must find what the
  searches through the whole text find, on every nvprof file under tests/data and their mutants.
- Numbers read once per distinct cell (`_decimals_by_value`, `_fast_times`), values rounded
  once per distinct value (`_whole_rows`) and labels handed on as categoricals (`_categorical`)
  are held to what they replace.
"""

from __future__ import annotations

import random
from pathlib import Path

import fast_paths
import numpy as np
import pandas as pd
import pytest
from test_parse_fast_paths import mutants

from profiler import schema
from profiler.parse import (
    gpuops,
    lines,
    nvprof,
    nvprof_summary_cells,
    nvprof_tables,
    nvprof_trace,
    nvprof_trace_bytes,
    nvprof_trace_cells,
    table_origin,
    tokens,
    values,
)

DATA = Path(__file__).parent / "data"
NVPROF_FILES = sorted(
    p
    for p in DATA.rglob("*")
    if p.is_file()
    and p.suffix in (".txt", ".md", ".csv", ".log")
    and nvprof.looks_like(p.read_text(encoding="utf-8", errors="replace")[:65536])
)
TEXT_TRACES = [p for p in NVPROF_FILES if "gpu-trace" in p.name and p.suffix != ".csv"]


def trace_edits(row: str) -> list[str]:
    """Edits of one row of a text gpu trace that the fast path must refuse or read alike."""
    return [
        row + "  ",
        row + "\t",
        row + "\r",
        row.replace("[", "[Unified Memory ", 1),
        row.replace("s ", "s", 1),
        row.replace("(", "( ", 1),
        row.replace("MB", "XB", 1),
        row.replace("ms", "s", 1),
        row.replace("us", "xs", 1),
        row.replace("0.", "-", 1),
        row.replace("0.", "00000000000000000.", 1),
        row.replace(".", "", 1),
        row[: len(row) * 3 // 4],
        row.replace(" [", "  [", 1),
        row.replace("Tesla", "T\u00e9sla").replace("GeForce", "G\u00e9Force"),
        row.replace(" ", "\x0c", 1),
    ]


def trace_mutants(text: str, seed: int, count: int = 6) -> list[str]:
    """`mutants`, random rows edited with `trace_edits`, and the first data row of the first
    trace with each of them."""
    rng = random.Random(seed)
    rows = text.split("\n")
    out = mutants(text, seed, count=count)
    header = next(i for i, row in enumerate(rows) if nvprof_tables.is_table_header(row))
    for i in [header + 1] * len(trace_edits("")) + [rng.randrange(len(rows)) for _ in range(count)]:
        edits = trace_edits(rows[i])
        new = edits[len(out) % len(edits)] if i == header + 1 else rng.choice(edits)
        out.append("\n".join(rows[:i] + [new] + rows[i + 1 :]))
    return out


def outcome(path: Path) -> fast_paths.Outcome:
    return fast_paths.outcome(lambda: nvprof.read_log(path, "s"))


def assert_same(fast: fast_paths.Outcome, plain: fast_paths.Outcome) -> None:
    fast_paths.assert_same(fast, plain, lambda t: t)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each call of the fast trace path read its table (True) or left it (False)."""
    calls: list[bool] = []
    real = nvprof_trace_bytes.fast_fields

    def fast_fields(*args, **kwargs):
        got = real(*args, **kwargs)
        calls.append(got is not None)
        return got

    monkeypatch.setattr(nvprof_trace_bytes, "fast_fields", fast_fields)
    return calls


def million_row_rows(n: int) -> str:
    from benchmarks.test_bench_parse import million_row_text_trace  # the benchmark's input

    return million_row_text_trace(n)


@pytest.mark.parametrize(
    "source", [*TEXT_TRACES, "benchmark"], ids=lambda p: getattr(p, "name", str(p))
)
def test_text_trace_fast_path_reads_what_the_plain_path_reads(
    source, tmp_path, counted, monkeypatch
):
    text = million_row_rows(400) if source == "benchmark" else source.read_text(encoding="utf-8")
    path = tmp_path / "trace.txt"
    for variant in trace_mutants(text, seed=len(str(source))):
        path.write_text(variant, encoding="utf-8")
        fast = outcome(path)
        with monkeypatch.context() as plain_only:
            plain_only.setattr(nvprof_trace_bytes, "fast_fields", lambda *a, **k: None)
            plain = outcome(path)
        assert_same(fast, plain)
    assert not all(counted)  # some mutants are left to the plain path
    if source == "benchmark" or "elided" not in source.name:  # (elided: `...` rows, plain)
        assert any(counted)


def test_the_fast_path_reads_the_real_traces():
    """(The comparison above is not between two refusals.)"""
    read = 0
    for path in TEXT_TRACES:
        text = path.read_text(encoding="utf-8")
        tables = nvprof_tables.tables(text, path, text.encode())
        for table in tables:
            origin = table.full_origin()  # (a text trace read from bytes: its text left out)
            if table.kind == "text_trace" and "Grid Size" in str(origin.text)[:400]:
                header = str(origin.text).split("\n", 1)[0]
                columns = nvprof_trace._text_columns(header, origin)
                found = nvprof_trace_bytes.fast_fields(str(origin.text), columns, origin, table.raw)
                read += found is not None and len(found[1]) > 0
    assert read >= 3


def table_keys(tables: list[nvprof.Table]) -> list[tuple]:
    return [(t.kind, t.full_origin(), t.section, t.run, t.nvtx) for t in tables]


@pytest.mark.parametrize("path", NVPROF_FILES, ids=lambda p: p.name)
def test_tables_found_from_line_leads_are_those_found_by_search(path):
    for text in mutants(path.read_text(encoding="utf-8"), seed=len(path.name), count=8):
        data = text.encode("utf-8")
        searched = nvprof_tables.tables(text, path)
        if len(data) != len(text):  # not ASCII: read_log passes no bytes
            continue
        led = nvprof_tables.tables(text, path, data)
        assert table_keys(led) == table_keys(searched)
        for table in led:
            text = str(table.full_origin().text)
            assert table.raw is not None and bytes(table.raw) == text.encode()
            assert table.header() == text.split("\n", 1)[0]


def test_tables_found_from_leads_on_markers_and_ends():
    """Marker lines with odd prefixes, a marker twice on a line, fences, lines led by 70 blanks."""
    body = "   Start  Duration            Grid Size  Name\n0.1s  1.0us  (1 1 1)  k [1]\n"
    text = (
        "== Profiling result:== Profiling result:\n"
        + " " * 70
        + "==1== NVTX result:\n"
        + body
        + "  ```\n"
        + "\tProfiling result: x\n"
        + body
        + "\x0c\n"
        + "==2== Profiling result:\n"
        + body
        + "==3== end\n"
        + " " * 70
        + "Time(%)  Time  Calls  Avg  Min  Max  Name\n"
        + "\t \r\n"
        + body.rstrip("\n")
    )
    path = Path("x.txt")
    assert nvprof_tables.marker_lines(text, "Profiling result:", lines.split(text.encode())) == (
        nvprof_tables.marker_lines(text, "Profiling result:")
    )
    assert table_keys(nvprof_tables.tables(text, path, text.encode())) == table_keys(
        nvprof_tables.tables(text, path)
    )
    assert len(nvprof_tables.tables(text, path)) >= 4


def test_times_read_once_per_cell_are_those_read_per_value():
    rng = random.Random(3)
    shapes = ["0.50000s", "1.8260ms", " 928ns", "  1.2us", "12.345us", "1.2.3s", "-", "1.5xs"]
    cells = [rng.choice(shapes).rjust(9) for _ in range(3000)]
    text = "".join(c + " " for c in cells).encode()
    codes = np.frombuffer(text, dtype=np.uint8)
    start = np.arange(len(cells)) * 10
    plain_cells = [c for c in cells if c.strip() not in ("1.2.3s", "-", "1.5xs")]
    plain_at = np.array([i * 10 for i, c in enumerate(cells) if c in plain_cells])
    got = nvprof_trace_bytes._fast_times(codes, plain_at, [(0, 9)])
    origin = table_origin.Origin(Path("x"), "x")
    want = nvprof_summary_cells.times(pd.Series([c.strip() for c in plain_cells]), origin, "Start")
    assert got is not None and got[0].tolist() == values.whole(want).tolist()
    # the bad cells: the plain path
    assert nvprof_trace_bytes._fast_times(codes, start, [(0, 9)]) is None


def test_decimals_by_value_are_decimals():
    rng = random.Random(5)
    cells = rng.choices(["12", "1.5", ".5", "5.", "1..2", "", "x", "12345678", "123456789"], k=4000)
    text = (" ".join(cells) + " " * 9).encode()
    codes = np.frombuffer(text, dtype=np.uint8)
    sizes = np.array([len(c) for c in cells])
    start = np.cumsum(np.r_[0, sizes[:-1] + 1])
    for stop in (start + sizes, start + np.minimum(sizes, 8)):
        once = nvprof_summary_cells._decimals_by_value(codes, start, stop)
        each = tokens.decimals(codes, start, stop)
        assert np.array_equal(once[0], each[0], equal_nan=True)
        assert (once[1] == each[1]).all()
    short = np.minimum(sizes, 8)
    few = nvprof_summary_cells._decimals_by_value(codes, start[:50], start[:50] + short[:50])
    assert (few[1] == tokens.decimals(codes, start[:50], start[:50] + short[:50])[1]).all()


def test_whole_rows_and_categoricals_are_what_they_replace():
    rng = np.random.default_rng(1)
    per_value = np.array([1.4, 2.5, np.nan, 3.5, 2**40 + 0.5])
    index = pd.Index(np.arange(100) * 3)
    for codes in (rng.integers(-1, 5, 100), rng.integers(0, 2, 100), rng.integers(0, 5, 100)):
        pool = np.append(per_value, np.nan)
        plain = values.whole(pd.Series(pool[np.where(codes < 0, 5, codes)], index=index))
        pd.testing.assert_series_equal(
            nvprof_trace_cells._whole_rows(per_value, codes, index), plain, check_exact=True
        )
        found = ["a", None, "b", "a", "c"]
        as_cat = nvprof_trace_cells._categorical(found, codes, index)
        as_str = gpuops.strings(found, codes, index)
        assert as_cat.astype("string").equals(as_str)
        assert gpuops.map_ints(as_cat, gpuops.device_ordinal).equals(
            gpuops.map_ints(as_str, gpuops.device_ordinal)
        )


def test_a_trace_read_in_order_is_the_sorted_trace(tmp_path):
    path = tmp_path / "trace.txt"
    path.write_text(million_row_rows(50), encoding="utf-8")
    trace = nvprof.read_log(path, "s")["gpu_trace"]
    pd.testing.assert_frame_equal(
        trace, trace.sort_values("start_ns", kind="stable", ignore_index=True), check_exact=True
    )
    schema.validate(trace, schema.GPU_TRACE)
