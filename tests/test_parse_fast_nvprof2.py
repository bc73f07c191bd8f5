"""The second round of the nvprof text gpu trace's fast path gives what the code it replaced
gave (issue 14's speed target: a million-row text table in under 2 s).

- `byte_spans.factorize` / `factorize_rows` group byte spans with NumPy (hashed words, every span
  then compared with its group's first): held to `pd.factorize` of the spans cut as bytes, on
  random spans of every size (empty, one word, many words, uneven sizes across size classes,
  spans at the very end of the buffer, more spans than one chunk), and to None when hashes are
  made to collide.
- `nvprof_trace_bytes._times_by_layout` reads time cells once per layout: held to `_times_of_cells`
  (the cell-by-cell reading it replaces) on random cells, good and bad.
- `nvprof_trace_bytes._names_and_middles` groups row tails with `byte_spans`: held to the code it
  replaced (kept below verbatim) on the benchmark's rows and the real text traces; the whole
  trace read with `byte_spans` refusing everything is the trace read with it.
- `nvprof.Table.breaks` are the newlines of the table's bytes.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from test_parse_fast_nvprof import DATA, TEXT_TRACES, million_row_rows, trace_mutants

from profiler.parse import (
    byte_spans,
    lines,
    nvprof,
    nvprof_tables,
    nvprof_trace,
    nvprof_trace_bytes,
    nvprof_trace_cells,
)


def plain_factorize(data: bytes, at: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cut = [data[a : a + n] for a, n in zip(at.tolist(), size.tolist(), strict=True)]
    codes, distinct = pd.factorize(np.asarray(cut, dtype=object))
    _, firsts = np.unique(codes, return_index=True)
    return codes, firsts


def random_spans(rng: random.Random, count: int, sizes: list[int]) -> tuple[bytes, list[tuple]]:
    """A text of `count` spans (few distinct ones, some differing in one byte only), each with
    where it starts and its size."""
    pool = []
    for _ in range(6):
        n = rng.choice(sizes)
        word = bytes(rng.choice(b" ab.()0123456789") for _ in range(n))
        pool.append(word)
        if n:
            k = rng.randrange(n)
            pool.append(word[:k] + bytes([word[k] ^ 1]) + word[k + 1 :])  # one byte apart
            pool.append(word[: k + 1])  # a prefix of another
    spans, parts, at = [], [], 0
    for _ in range(count):
        word = rng.choice(pool)
        gap = bytes(rng.choice(b" \nxyz") for _ in range(rng.randrange(3)))
        parts.append(word + gap)
        spans.append((at, len(word)))
        at += len(word) + len(gap)
    return b"".join(parts), spans


@pytest.mark.parametrize(
    "sizes",
    [[0, 1, 3], [8], [5, 8, 9, 16, 17], [30, 31, 40], [3, 200], [1, 700, 9]],
    ids=str,
)
def test_spans_grouped_with_numpy_are_those_factorized_as_strings(sizes):
    rng = random.Random(sum(sizes))
    for count in (1, 7, 3000, byte_spans._ROWS + 5):
        data, spans = random_spans(rng, count, sizes)
        codes = np.frombuffer(data, dtype=np.uint8)
        at = np.array([a for a, _ in spans], dtype=np.int64)
        size = np.array([n for _, n in spans], dtype=np.int64)
        found = byte_spans.factorize(codes, at, size)
        assert found is not None
        want = plain_factorize(data, at, size)
        assert np.array_equal(found[0], want[0]) and np.array_equal(found[1], want[1])
    assert [x.tolist() for x in byte_spans.factorize(codes, at[:0], size[:0])] == [[], []]


def test_rows_grouped_with_numpy_are_those_factorized_as_strings():
    rng = np.random.default_rng(2)
    for width in (1, 5, 8, 10, 16, 17, 24, 40):
        for count in (1, 50, byte_spans._ROWS + 3):
            pool = rng.integers(30, 60, size=(5, width), dtype=np.uint8)
            rows = pool[rng.integers(0, 5, size=count)]
            found = byte_spans.factorize_rows(rows)
            assert found is not None
            want = plain_factorize(rows.tobytes(), np.arange(count) * width, np.full(count, width))
            assert np.array_equal(found[0], want[0]) and np.array_equal(found[1], want[1])
            wide = byte_spans.cells(
                np.ascontiguousarray(rows).ravel(), np.arange(count) * width, width
            )
            assert np.array_equal(wide, rows)  # (the last rows: from a padded copy)


def test_a_hash_shared_by_different_spans_is_refused(monkeypatch):
    data = b"abc abd abc xyz"
    codes = np.frombuffer(data, dtype=np.uint8)
    at, size = np.array([0, 4, 8, 12]), np.array([3, 3, 3, 3])
    monkeypatch.setattr(byte_spans, "_MULTIPLIERS", np.zeros(4096, dtype=np.uint64))
    assert byte_spans.factorize(codes, at, size) is None  # every hash alike: caught
    same = byte_spans.factorize(codes, np.array([0, 8]), np.array([3, 3]))
    assert same is not None and same[0].tolist() == [0, 0]
    rows = np.array([[1] * 20, [2] * 20], dtype=np.uint8)
    assert byte_spans.factorize_rows(rows) is None


def time_cells(rng: random.Random, count: int, width: int, bad: bool) -> np.ndarray:
    shapes = ["0.50000s", "1.8260ms", "928ns", "1.2us", "12.345us", "34.716ms", "5.s", ".5ms"]
    shapes += ["123456789012345ns", "1234567890123456ns", "9" * 12 + "s"]
    if bad:
        shapes += ["1.2.3s", "-", "1.5xs", "1 2s", "s", "1.0", "ms"]
    out = []
    for _ in range(count):
        shape = rng.choice(shapes)
        cell = "".join(rng.choice("0123456789") if c.isdigit() else c for c in shape)
        out.append(cell[-width:].rjust(width))
    return np.frombuffer("".join(out).encode(), dtype=np.uint8).reshape(count, width)


@pytest.mark.parametrize("bad", [False, True])
def test_times_read_per_layout_are_those_read_per_cell(bad):
    rng = random.Random(int(bad))
    for width in (3, 8, 10, 12, 18):
        for count in (1, 40, 5000):
            cells = time_cells(rng, count, width, bad)
            wide = np.zeros((count, -(-width // 8) * 8), dtype=np.uint8)
            wide[:, :width] = cells
            wide[:, width:] = rng.choice(b" 1(")
            per_layout = nvprof_trace_bytes._times_by_layout(wide, width)
            per_cell = nvprof_trace_bytes._times_of_cells(cells)
            assert (per_layout is None) == (per_cell is None), (width, count)
            if per_cell is not None:
                assert np.array_equal(per_layout, per_cell)


def test_times_of_few_layouts_are_not_read_cell_by_cell(monkeypatch):
    """(The layouts' reading is not its own check's fallback to the cell-by-cell one.)"""
    cells = time_cells(random.Random(7), 5000, 10, bad=False)
    sizes: list[int] = []
    real = nvprof_trace_bytes._times_of_cells

    def times_of_cells(cell):
        sizes.append(len(cell))
        return real(cell)

    monkeypatch.setattr(nvprof_trace_bytes, "_times_of_cells", times_of_cells)
    wide = np.zeros((5000, 16), dtype=np.uint8)
    wide[:, :10] = cells
    assert np.array_equal(nvprof_trace_bytes._times_by_layout(wide, 10), real(cells))
    assert sizes and max(sizes) < 100


def test_many_layouts_are_read_cell_by_cell():
    cells = np.array(
        [list(f"{'1' * k}.{'2' * (12 - k)}s".encode()) for k in range(1, 12)] * 10, np.uint8
    )
    many = np.repeat(cells, 7, axis=0)
    assert np.array_equal(
        nvprof_trace_bytes._times_by_layout(many, 14), nvprof_trace_bytes._times_of_cells(many)
    )


# The code `_names_and_middles` replaced, verbatim (with the name it had).
_SAMPLE = 4096


def old_names_and_middles(
    text: str, start: np.ndarray, end: np.ndarray, spans: tuple[int, int, int]
) -> tuple[tuple[np.ndarray, list[str]], Callable[[np.ndarray], tuple[np.ndarray, list[str]]]]:
    low, high, name_at = spans
    at, stop = start.tolist(), end.tolist()
    sample = len({text[a + low : b] for a, b in zip(at[:_SAMPLE], stop[:_SAMPLE], strict=True)})
    if sample > min(len(at), _SAMPLE) // 4:
        names = _factorized([text[a + name_at : b] for a, b in zip(at, stop, strict=True)])

        def middles(keep: np.ndarray) -> tuple[np.ndarray, list[str]]:
            return _factorized([text[a + low : a + high] for a in start[keep].tolist()])

        return names, middles
    tail_codes, tails = _factorized([text[a + low : b] for a, b in zip(at, stop, strict=True)])
    names = _renumbered(tail_codes, [tail[name_at - low :] for tail in tails])

    def middles_of_tails(keep: np.ndarray) -> tuple[np.ndarray, list[str]]:
        return _renumbered(tail_codes[keep], [tail[: high - low] for tail in tails])

    return names, middles_of_tails


def _factorized(cells: list[str]) -> tuple[np.ndarray, list[str]]:
    codes, distinct = pd.factorize(np.asarray(cells, dtype=object))
    return codes, distinct.tolist()


def _renumbered(codes: np.ndarray, values: list[str]) -> tuple[np.ndarray, list[str]]:
    value_codes, distinct = _factorized(values)
    rows, order = pd.factorize(value_codes[codes])
    return rows, [distinct[i] for i in order.tolist()]


def trace_rows(text: str) -> list[tuple[str, np.ndarray, np.ndarray, tuple[int, int, int]]]:
    """Per text gpu trace in `text` that the fast path can cut: its text, rows and spans."""
    out = []
    for table in nvprof_tables.tables(text, nvprof.Path("x"), text.encode()):
        body = str(table.full_origin().text)
        if table.kind != "text_trace" or "Grid Size" not in body.split("\n", 1)[0]:
            continue
        columns = nvprof_trace._text_columns(body.split("\n", 1)[0], table.origin)
        data = body.encode()
        rows = nvprof_trace_bytes._row_spans(data, np.frombuffer(data, dtype=np.uint8))
        read = nvprof_trace_cells.read_columns(columns)
        read.pop("Start"), read.pop("Duration")
        name_at = columns["Name"][0]
        if rows is None or not read or int((rows[1] - rows[0]).min()) <= name_at:
            continue
        low, high = nvprof_trace_cells.middle(columns, read)
        out.append((body, rows[0], rows[1], (low, high, name_at)))
    return out


@pytest.mark.parametrize(
    "source", [*TEXT_TRACES, "benchmark"], ids=lambda p: getattr(p, "name", str(p))
)
def test_names_and_middles_are_those_of_the_code_replaced(source):
    text = million_row_rows(9000) if source == "benchmark" else source.read_text(encoding="utf-8")
    found = 0
    for body, start, end, spans in trace_rows(text):
        codes = np.frombuffer(body.encode(), dtype=np.uint8)
        old_names, old_middles = old_names_and_middles(body, start, end, spans)
        as_text = nvprof_trace_bytes.Text
        for cells in (as_text(body, b""), as_text(None, body.encode())):
            new_names, new_middles = nvprof_trace_bytes._names_and_middles(
                cells, codes, start, end, spans
            )
            assert np.array_equal(new_names[0], old_names[0]) and new_names[1] == old_names[1]
            for keep in (np.arange(len(start)), np.arange(len(start))[::3], np.arange(0)):
                new, old = new_middles(keep), old_middles(keep)
                assert np.array_equal(new[0], old[0]) and new[1] == old[1]
        found += 1
    assert found or "elided" in str(source)  # (elided: `...` rows, cut by the plain path)


@pytest.mark.parametrize("source", TEXT_TRACES[:3], ids=lambda p: p.name)
def test_a_trace_whose_spans_numpy_cannot_group_is_read_alike(source, tmp_path, monkeypatch):
    path = tmp_path / "trace.txt"
    for variant in trace_mutants(source.read_text(encoding="utf-8"), seed=4, count=3)[:8]:
        path.write_text(variant, encoding="utf-8")
        grouped = _outcome(path)
        with monkeypatch.context() as refused:
            refused.setattr(byte_spans, "factorize", lambda *a: None)
            refused.setattr(byte_spans, "factorize_rows", lambda *a: None)
            cut = _outcome(path)
        assert grouped[0] == cut[0]
        if grouped[0] == "error":
            assert grouped[1] == cut[1]
        else:
            pd.testing.assert_frame_equal(grouped[1], cut[1], check_exact=True)


def _outcome(path):
    try:
        return "ok", nvprof.read_log(path, "s")["gpu_trace"]
    except Exception as exc:  # noqa: BLE001 (a ParseError's text is compared)
        return "error", str(exc)


@pytest.mark.parametrize("source", TEXT_TRACES, ids=lambda p: p.name)
def test_table_breaks_are_the_newlines_of_its_bytes(source):
    text = source.read_text(encoding="utf-8")
    data = text.encode()
    if len(data) != len(text):
        pytest.skip("not ASCII: no bytes are passed")
    for table in nvprof_tables.tables(text, source, data):
        raw = bytes(table.raw)
        want = [i for i, c in enumerate(raw) if c == 10]
        assert table.breaks is not None and table.breaks.tolist() == want


def same_lines(a: lines.Lines, b: lines.Lines) -> bool:
    return all(
        np.array_equal(getattr(a, f), getattr(b, f)) for f in ("start", "end", "lead", "first")
    )


def test_lines_led_by_their_first_byte_are_the_lines_split():
    rng = random.Random(1)
    parts = [" ", "\t", "\n", "\r", "\x0c", "\x1c", "a", "0", "\u00e9", "=", " " * 70, "\n\n"]
    for _ in range(3000):
        data = "".join(rng.choice(parts) for _ in range(rng.randrange(0, 60))).encode()
        assert same_lines(lines.split_led(data), lines.split(data)), data
    for path in sorted(DATA.rglob("*")):
        if path.is_file() and path.stat().st_size < 4_000_000:
            data = path.read_bytes()
            assert same_lines(lines.split_led(data), lines.split(data)), path


@pytest.mark.parametrize(
    "source", [*TEXT_TRACES, "benchmark"], ids=lambda p: getattr(p, "name", str(p))
)
def test_a_trace_read_from_its_bytes_alone_is_read_as_from_its_text(source, tmp_path, monkeypatch):
    """A text trace of an ASCII file is read without its text (`Table.whole`: cut only for the
    plain path or a message): tables and messages as when its text is cut first."""
    text = million_row_rows(300) if source == "benchmark" else source.read_text(encoding="utf-8")
    path = tmp_path / "trace.txt"
    real = nvprof_tables.tables
    for variant in trace_mutants(text, seed=9, count=8):
        path.write_text(variant, encoding="utf-8")
        from_bytes = _outcome(path)
        with monkeypatch.context() as text_only:
            text_only.setattr(nvprof_tables, "tables", lambda text, path, *_: real(text, path))
            from_text = _outcome(path)
        assert from_bytes[0] == from_text[0]
        if from_bytes[0] == "error":
            assert from_bytes[1] == from_text[1]
        else:
            pd.testing.assert_frame_equal(from_bytes[1], from_text[1], check_exact=True)
