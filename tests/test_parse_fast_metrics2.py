"""Round two of the nvprof text metrics speed-up: `_Distinct` checks each distinct row of a slice
once while rows repeat, and spreads the results. Held here to the row-by-row check it skips
(`_check` of every row), on the real metric files, generated tables, the benchmark's repeated
block and mutated copies of all of them, with slices of several sizes (repeats inside a slice
and not), with a hash that makes every row clash, and through `nvprof.read_log` against the code
the first fast path replaced (`test_parse_fast_metrics.old_metrics`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_parse_fast_metrics import DATA, FILES, check, generated, mutants

from profiler.parse import lines, nvprof_metrics_text

BLOCK = (DATA / "nvprof" / "8.x" / "lbp-text-metrics.txt").read_text().splitlines()
REPEATED = "\n".join(BLOCK[:7] + BLOCK[7:15] * 80) + "\n"


def fast_rows(text: str) -> nvprof_metrics_text._Fast | None:
    """`_fast_rows` of the first metric table of `text` (None: no layout or no row fits)."""
    body = text[text.index("Invocations") :] if "Invocations" in text else text
    data = body.encode("utf-8")
    breaks = lines.newlines(data)
    start = breaks + 1  # as read_text_metrics does: no lines below a header that ends the text
    end = np.append(breaks[1:], len(data)) if len(breaks) else breaks
    header = data[: len(data) if not len(breaks) else int(breaks[0])].decode()
    n_values = 4 if header.split()[-1] == "Total" else 3
    layout = nvprof_metrics_text._layout(data, start, end, n_values, "Event Name" in header)
    return None if layout is None else nvprof_metrics_text._fast_rows(data, start, end, layout)


def row_by_row(self, got, shape, names):  # type: ignore[no-untyped-def]
    return nvprof_metrics_text._alone(nvprof_metrics_text._check(got, *shape, names))


def assert_same(got: nvprof_metrics_text._Fast | None, want: nvprof_metrics_text._Fast | None):
    """The same rows, cut the same; `same` (which differs: rows checked one by one are each
    their own) points each row at an earlier or the same row of the same length and cells."""
    assert (got is None) == (want is None)
    if got is None or want is None:
        return
    for fast in (got, want):
        assert (fast.same <= np.arange(len(fast.same))).all()
        for column in (fast.count, fast.metric):
            assert np.array_equal(column[fast.same], column)
    for field in dataclasses.fields(got):
        if field.name == "same":
            continue
        a, b = getattr(got, field.name), getattr(want, field.name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), field.name
        else:
            assert a == b, field.name


def texts() -> list[str]:
    out = [REPEATED, *mutants(REPEATED, seed=11, count=12)]
    for seed in range(3):
        out += mutants(generated(seed, kernels=30), seed, count=4)
    for path in FILES:
        if path.suffix != ".csv":
            out += mutants(path.read_text(encoding="utf-8"), seed=len(path.name), count=3)
    return out


@pytest.mark.parametrize("chunk", [5, 64, 1 << 14])
def test_distinct_rows_checked_once_give_every_row_checked(chunk, monkeypatch):
    monkeypatch.setattr(nvprof_metrics_text, "_CHUNK", chunk)
    spread = 0
    real = nvprof_metrics_text._Distinct.check

    def counted(self, got, shape, names):  # type: ignore[no-untyped-def]
        nonlocal spread
        spread += self.on and len(got) >= 2
        return real(self, got, shape, names)

    for text in texts():
        monkeypatch.setattr(nvprof_metrics_text._Distinct, "check", counted)
        got = fast_rows(text)
        monkeypatch.setattr(nvprof_metrics_text._Distinct, "check", row_by_row)
        assert_same(got, fast_rows(text))
    if chunk > 5:
        assert spread >= 10  # (slices of repeated rows were spread, not only checked per row)


def test_rows_of_one_hash_are_checked_row_by_row(monkeypatch):
    """A hash that keeps a row's last word only: rows that differ share hashes, the byte check
    sees it, and the slice is checked row by row (the same rows)."""
    monkeypatch.setattr(nvprof_metrics_text, "_CHUNK", 64)
    block = BLOCK[7:15]
    other = [row.replace("100.00%     100.00%", " 99.00%     100.00%") for row in block]
    assert other != block  # (a row as long, ending as the other, that differs before)
    text = "\n".join(BLOCK[:7] + (block + other) * 40) + "\n"
    want = fast_rows(text)
    sizes = []
    real = nvprof_metrics_text._check
    monkeypatch.setattr(
        nvprof_metrics_text, "_check", lambda got, *a: sizes.append(len(got)) or real(got, *a)
    )
    monkeypatch.setattr(nvprof_metrics_text, "MIX", np.uint64(0))  # (names keep theirs)
    assert_same(fast_rows(text), want)
    assert max(sizes) == 64  # (a slice was checked row by row)


@pytest.mark.parametrize("chunk", [64, 1 << 14])
def test_repeated_rows_read_as_before(chunk, tmp_path, monkeypatch):
    """The benchmark's repeated block and its mutants, through `read_log`, against the code
    the first fast path replaced."""
    monkeypatch.setattr(nvprof_metrics_text, "_CHUNK", chunk)
    kinds = check(mutants(REPEATED, seed=5, count=4), tmp_path, monkeypatch)
    assert kinds[0] == "metrics"


def test_the_benchmark_block_is_checked_per_distinct_row(monkeypatch):
    calls = []
    real = nvprof_metrics_text._check
    monkeypatch.setattr(
        nvprof_metrics_text, "_check", lambda got, *a: calls.append(len(got)) or real(got, *a)
    )
    assert fast_rows(REPEATED) is not None
    assert calls and max(calls) <= 8  # each of the block's rows once


def walked(text: str) -> nvprof_metrics_text._Lines:
    """`_walk` of every line below the first metric table's header of `text`."""
    body = text[text.index("Invocations") :] if "Invocations" in text else text
    data = body.encode("utf-8")
    breaks = lines.newlines(data)
    start = breaks + 1  # as read_text_metrics does: no lines below a header that ends the text
    end = np.append(breaks[1:], len(data)) if len(breaks) else breaks
    which = np.arange(len(start))
    return nvprof_metrics_text._walk(data, start, end, which, 3, "Event Name" in body[:200])


def kernel_lines() -> list[str]:
    """The benchmark's block with its `Kernel:` line repeated, changed to one of the same
    length, prefixed by a `Device` label, cut, with a CR, and moved around."""
    kernel = BLOCK[7]
    other = kernel.replace("void", "VOID")
    device = f'Device "GeForce GTX 1070 (0)"{kernel}'
    edits = [kernel, other, device, kernel + "\r", kernel[:-1], "  " + kernel.strip()]
    out = []
    for k, line in enumerate(edits):
        rows = BLOCK[:7] + BLOCK[7:15] * 6
        rows[7 + 8 * (k % 6)] = line
        out.append("\n".join(rows[:7] + rows[7 + 8 * k % 3 :]) + "\n")
    return out + [REPEATED, *texts()]


@pytest.mark.parametrize("chunk", [1, 300, 1 << 24])
def test_kernel_lines_found_at_once_are_those_walked(chunk, monkeypatch):
    """Lines that repeat the first `Kernel:` line (`_repeats`, compared `chunk` bytes at a
    time) give the kernels that the walk line by line gives."""
    monkeypatch.setattr(nvprof_metrics_text, "_KERNEL_BYTES", chunk)
    for text in kernel_lines():
        got = walked(text)
        with monkeypatch.context() as patch:
            none = lambda data, start, end, which: (np.zeros(len(which), dtype=bool), None)  # noqa: E731
            patch.setattr(nvprof_metrics_text, "_repeats", none)
            want = walked(text)
        assert dataclasses.astuple(got) == dataclasses.astuple(want)
    body = REPEATED[REPEATED.index("Invocations") :].encode()
    breaks = lines.newlines(body)
    start, end = breaks + 1, np.append(breaks[1:], len(body))
    same, name = nvprof_metrics_text._repeats(body, start, end, np.arange(len(start)))
    assert same.sum() == 80 and name == BLOCK[7].strip()[len("Kernel:") :].strip()
