"""Checked numbers, capped names and line numbers (profiler.parse.values), the rules every parser
applies to what it reads. Also `deadline`, which the pathological-input tests of the parsers use.
"""

from __future__ import annotations

import contextlib
import importlib.util
import signal
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from profiler.errors import ParseError
from profiler.parse import bounded_names, cell_quotes, reader_notes, table_origin, values
from profiler.parse.table_origin import Origin


class DeadlineExceeded(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail the block when it runs past `seconds`: a watchdog for inputs that took minutes
    before (quadratic patterns), set far above what the fixed code needs. Not a timing
    assertion: the benchmarks time things."""

    def expire(signum: int, frame: object) -> None:
        raise DeadlineExceeded(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


TEXT = "Name,Calls\nk,1\n\nk,2\nk,3\n"  # data rows 0, 1, 2 on lines 2, 4, 5
ORIGIN = Origin(Path("t.csv"), "a test table", TEXT)


@pytest.mark.parametrize(
    "cell, rule, message",
    [
        ("inf", values.TIME, "'inf' is not a finite number"),
        ("-inf", values.TIME, "is not a finite number"),
        ("Infinity", values.COUNT, "is not a finite number"),
        ("nan", values.COUNT, "'nan' is not a number"),
        ("NaN", values.TIME, "'NaN' is not a number"),
        ("1e300", values.TIME, "'1e300' is out of range for a time"),
        (str(2**63), values.COUNT, "out of range"),
        (str(2**63 - 1), values.COUNT, "out of range"),
        (str(2**64), values.TIME, "out of range"),  # a duration past uint64
        ("1" * 30, values.COUNT, "out of range"),  # a 30-digit call count
        ("-5", values.TIME, "'-5' is negative; a time cannot be"),
        ("-1", values.COUNT, "is negative"),
        ("1.2.3", values.COUNT, "'1.2.3' is not a number"),
        ("...%", values.SHARE, "'...%' is not a number"),
        ("0x10", values.COUNT, "is not a number"),
        ("1_000", values.COUNT, "is not a number"),
        ("2.5", values.COUNT, "'2.5' is not a whole number; a count must be"),
        ("100.5", values.SHARE, "out of range for a percentage"),
    ],
)
def test_bad_cell_is_named_by_line_and_column(cell, rule, message):
    series = pd.Series(["1", "2", cell], dtype="string")
    with pytest.raises(ParseError) as exc:
        values.numbers(series, ORIGIN, "Calls", rule)
    text = str(exc.value)
    assert text.startswith("t.csv: expected a test table")
    assert "line 5, column 'Calls'" in text and message in text


def test_numbers_in_range_with_separators_units_and_missing_cells():
    series = pd.Series(["1,024", "", "n/a", "2.5e3", " 7 "], dtype="string")
    got = values.numbers(series, ORIGIN, "c", values.TIME, factor=1e3)
    assert got.tolist()[0] == 1_024_000 and got.isna().tolist() == [False, True, True, False, False]
    assert got.tolist()[3:] == [2_500_000, 7_000]
    per_row = values.numbers(pd.Series(["1", "1"]), ORIGIN, "c", values.TIME, np.array([1, 1e9]))
    assert per_row.tolist() == [1, 1e9]


def test_unit_can_push_a_value_out_of_range():
    with pytest.raises(ParseError, match="out of range for a time"):
        values.numbers(pd.Series(["5e9"]), ORIGIN, "Start", values.TIME, factor=1e9)


def test_numeric_columns_are_checked_too():
    """The fast path hands over float64 and int64 columns read by pandas."""
    with pytest.raises(ParseError, match="line 4, column 'x': 'inf' is not a finite number"):
        values.numbers(pd.Series([1.0, np.inf]), ORIGIN, "x", values.TIME)
    with pytest.raises(ParseError, match="line 2, column 'x': '-3' is negative"):
        values.integers(pd.Series([-3, 4], dtype="int64"), ORIGIN, "x", values.TIME)
    big = pd.Series([1, 2**62, 3], dtype="int64")
    with pytest.raises(ParseError, match="line 4, column 'x'.*out of range"):
        values.integers(big, ORIGIN, "x", values.TIME)
    exact = pd.Series([2**53 + 1, 5], dtype="int64")  # stays exact: no detour through float64
    assert values.integers(exact, ORIGIN, "x", values.TIME).tolist() == [2**53 + 1, 5]


def test_integers_round_scaled_values():
    got = values.integers(pd.Series(["1.5", "", "2.25"]), ORIGIN, "x", values.TIME, factor=1e3)
    assert str(got.dtype) == "Int64" and got.tolist() == [1500, pd.NA, 2250]


def test_summed_column_stays_summable():
    each_fine = pd.Series([float(2**61)] * 3)
    with pytest.raises(ParseError, match="column 'Duration': the values add up"):
        values.check_total(each_fine, ORIGIN, "Duration")
    values.check_total(pd.Series([1.0, np.nan]), ORIGIN, "Duration")


def test_row_labels_survive_filtering():
    """A frame filtered after reading keeps the reader's row labels: the line is still right."""
    series = pd.Series(["1", "x"], index=[0, 2], dtype="string")
    with pytest.raises(ParseError, match="line 5, column 'c'"):
        values.numbers(series, ORIGIN, "c", values.COUNT)


def test_scalar():
    assert values.scalar("1,826.0", values.TIME, 1e3) == 1_826_000
    for cell, message in [
        ("inf", "not a number"),
        ("nan", "not a number"),
        ("1e300", "out of range"),
        ("-2", "negative"),
        ("1.5", "whole"),
        ("", "not a number"),
        (" " * 100_000 + "1x", "not a number"),
    ]:
        with pytest.raises(ValueError, match=message):
            values.scalar(cell, values.COUNT)


def test_line_counts_blank_units_and_dropped_lines():
    text = "H\nunits\nr0\n\nr1\nr2"
    origin = Origin(Path("f"), "x", text, first_line=10, skip=1, dropped=(13, 16))
    # file: 10 H, 11 units, 12 r0, 13 (dropped), 14 blank, 15 r1, 16 (dropped), 17 r2
    assert [origin.line(i) for i in range(3)] == [12, 15, 17]
    assert Origin(Path("f"), "x", text.encode(), skip=1).line(0) == 3  # bytes work too


def test_line_counter_counts_each_newline_once():
    counter = table_origin.LineCounter("a\nb\n\nc\n")
    assert [counter.at(p) for p in (0, 2, 4, 5)] == [1, 2, 3, 4]


def test_shares_must_add_up_to_100_or_less():
    values.check_shares(pd.Series([20.21, 79.78]), 0.01, ORIGIN, "GPU activities")
    with pytest.warns(
        reader_notes.TrimmedTable, match="GPU activities rows at line 2 cover 80.00%"
    ):
        values.check_shares(pd.Series([60.0, 20.0]), 0.01, ORIGIN, "GPU activities")
    with pytest.raises(ParseError, match="GPU activities rows add up to 120.00%.*more than 100%"):
        values.check_shares(pd.Series([60.0, 60.0]), 0.01, ORIGIN, "GPU activities")


def test_rows_that_all_show_no_share_are_a_trimmed_table():
    """The tail of a long table: every row shows 0.0 (was let through unsaid); 99.6 over 8 rows
    shown to 0.1 is whole (each cell may be 0.05 off), 99.5 is not; no share at all is no
    table to check."""
    with pytest.warns(reader_notes.TrimmedTable, match="cuda_api_sum rows at line 2 cover 0.00%"):
        values.check_shares(pd.Series([0.0] * 8), 0.1, ORIGIN, "cuda_api_sum")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values.check_shares(pd.Series([92.6] + [1.0] * 7), 0.1, ORIGIN, "cuda_api_sum")
        values.check_shares(pd.Series([float("nan")] * 3), 0.1, ORIGIN, "cuda_api_sum")
    with pytest.warns(reader_notes.TrimmedTable, match="cover 99.50%"):
        values.check_shares(pd.Series([92.5] + [1.0] * 7), 0.1, ORIGIN, "cuda_api_sum")


def string_storages() -> list[str]:
    """pandas' `string` storages here: python, and pyarrow where it is installed (pandas 3.0
    with pyarrow failed to set a masked list into a pyarrow-backed column)."""
    return ["python", *(["pyarrow"] if importlib.util.find_spec("pyarrow") else [])]


@pytest.mark.parametrize("storage", string_storages())
def test_long_names_are_capped_and_stay_distinct(storage):
    a, b = "k" * 5_000_000 + "a", "k" * 5_000_000 + "b"
    given = pd.Series([a, b, "short", None], dtype=f"string[{storage}]")
    capped = bounded_names.cap_names(given)
    assert given[0] == a and given[1] == b  # the caller's column is left as it was
    assert capped.dtype == f"string[{storage}]"
    assert capped[2] == "short" and capped.isna()[3]
    every = bounded_names.cap_names(
        pd.Series([a, b], dtype=f"string[{storage}]")
    )  # every name long
    assert every.tolist() == capped[:2].tolist()
    assert capped[0] != capped[1]
    for name in capped[:2]:
        assert len(name) < bounded_names.MAX_NAME + 80
        assert (
            name.startswith("k" * bounded_names.MAX_NAME)
            and "5,000,001 characters, sha256 " in name
        )
    cats = bounded_names.cap_names(pd.Series([a, "short", a]).astype("category"))
    assert cats[0] == cats[2] == capped[0] and cats[1] == "short"
    exact = "x" * bounded_names.MAX_NAME
    assert bounded_names.cap_name(exact) == exact


def test_deadline_stops_a_runaway_pattern():
    import re

    with pytest.raises(DeadlineExceeded), deadline(0.2):
        re.match(r"^\s*(?:a:)?\s*b", " " * 200_000 + "x")  # quadratic: about a minute


def test_thousands_separators_only_where_the_tools_put_them():
    got = values.numbers(pd.Series(["6,144", "2,601,092,896.17"]), ORIGIN, "c", values.VALUE)
    assert got.tolist() == [6144, 2_601_092_896.17]
    for cell in ("1,2,3", "1,0000", ",5"):
        with pytest.raises(ParseError, match="is not a number"):
            values.numbers(pd.Series([cell]), ORIGIN, "c", values.VALUE)
        with pytest.raises(ValueError, match="is not a number"):
            values.scalar(cell, values.VALUE)


def test_messages_quote_huge_cells_briefly():
    huge = "9" * 100_000
    with pytest.raises(ParseError) as exc:
        values.numbers(pd.Series([huge]), ORIGIN, "c" * 10_000, values.COUNT)
    assert len(str(exc.value)) < 400 and "(100,000 characters)" in str(exc.value)


@pytest.mark.parametrize("rule", [values.COUNT, values.TIME, values.SHARE])
@pytest.mark.parametrize("factor", [1.0, 1e9])
def test_one_value_is_judged_as_a_column_is(rule, factor):
    cells = [0.0, 1.5, -1.0, 2.0, 99.9, 100.0, 101.0, 1e300, float("inf"), float("nan"), 4.6e18]
    number = np.array(cells)
    with np.errstate(over="ignore"):
        column = values._reasons(number, number * factor, rule)
    one = [values._reason(n, n * factor, rule) for n in cells]
    assert one == column.tolist()


def test_listed_names_a_few_of_many():
    assert cell_quotes.listed([]) == ""
    assert cell_quotes.listed(["a", "b", "c"]) == "a, b, c"
    assert cell_quotes.listed(["a", "b", "c", "d"]) == "a, b, c, ..."
    assert cell_quotes.listed((n for n in range(8)), 6) == "0, 1, 2, 3, 4, 5, ..."


def test_coded_strings_refer_to_their_names_whatever_the_default_storage():
    """Each row is its name, not a copy of its bytes (pyarrow's storage copies every row's):
    the column is kept in Python's storage even where pyarrow's is the default."""
    codes = np.array([1, 0, -1, 1, 1])
    with pd.option_context("mode.string_storage", "pyarrow"):  # (pyarrow need not be installed)
        column = bounded_names.coded_strings(codes, ["conv", "gemm"])
    assert column.dtype == "string[python]"
    assert column.tolist()[:2] == ["gemm", "conv"] and column.isna().tolist()[2]
    assert column.iloc[0] is column.iloc[3] is column.iloc[4]  # one object, not three copies
