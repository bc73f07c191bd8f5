"""Checked numbers from tool text: numbers in range, and the `Time(%)` shares of a summary.

Every number a parser takes from a file passes `numbers` (a column) or `scalar` (one cell). A
cell must be a plain decimal number (thousands separators as the tools write them, `6,144`, and
an exponent are allowed), finite and not negative, and after its unit below `LIMIT` = 2**62
(146 years in ns, 4 EiB in bytes: anything larger is no measurement, and the headroom keeps
`start + duration` inside int64; `check_total` keeps a column of durations summable). A count
must be a whole number. So `inf`, `nan`, `1e300`, `2**63`, `-5`, `1.2.3`, `12%`, a 30-digit
call count and a duration past uint64 are refused, with the file, the line and the column's
header.

A summary's `Time(%)` shares (`check_shares`) must not add up to more than 100; a section whose
shares add up to less is the top rows of a table (what people paste): read, and said so with a
`TrimmedTable` warning that the importer gathers (`trimmed`).

Where a table is in its file is `table_origin`'s, how messages quote a cell `cell_quotes`'s, the
warnings a reader gives `reader_notes`' and names of bounded size `bounded_names`'.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiler.parse.cell_quotes import shown_cell
from profiler.parse.reader_notes import TrimmedTable
from profiler.parse.table_origin import Origin

LIMIT = float(2**62)
# Cells that mean "no value" (`n/a` is ncu's spelling, `-` nvprof's); `nan` is not one of them.
MISSING = ("", "n/a", "N/A", "-")
# A plain decimal number (no inf, nan, hex or `1_000`); unambiguous, so it matches in linear time.
# Thousands separators as the tools write them: `6,144`, `2,601,092,896.17` (not `1,2,3`).
_THOUSANDS = r"[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?"
_DECIMAL = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


@dataclass(frozen=True)
class Rule:
    """What a number must be: `what` names it in messages; `whole` asks for a whole number;
    every value must be below `most` once the unit is applied."""

    what: str
    whole: bool = False
    most: float = LIMIT


COUNT = Rule("a count", whole=True)
TIME = Rule("a time")
SIZE = Rule("a size")
VALUE = Rule("a value")
SHARE = Rule("a percentage", most=100.0 + 1e-6)
# What a column of durations or totals may add up to, so that sums downstream stay in int64.
TOTAL_LIMIT = LIMIT


def numbers(
    values: pd.Series,
    origin: Origin,
    column: str,
    rule: Rule,
    factor: float | np.ndarray = 1.0,
    shown: pd.Series | None = None,
) -> pd.Series:
    """A column as float64 in the unit of `factor` (NA for missing cells), every value checked;
    `factor` is one number or one per row; `shown` is the cells as messages quote them (default
    `values`, e.g. `1.8xs` where `values` holds `1.8x`).

    Raises: ParseError naming the line and column of the first cell that is not a number, or
        not what `rule` allows.
    """
    quoted = values if shown is None else shown
    if values.dtype.kind in "iuf":
        number = values.to_numpy(dtype="float64", na_value=np.nan)
    else:
        number = _parse(values)
        present = (values.notna() & ~values.isin(MISSING)).to_numpy(dtype=bool)
        bad = np.flatnonzero(np.isnan(number) & present)
        if len(bad):
            cell = quoted.iloc[bad[0]]
            raise origin.cell_error(
                _row(values, bad[0]), column, f"{shown_cell(cell)} is not a number"
            )
    return checked(number, values.index, origin, column, rule, factor, lambda i: quoted.iloc[i])


def parsed(cells: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Text cells as float64 as `numbers` reads them (NaN where no number), and which cells are
    present (not one of `MISSING`)."""
    series = pd.Series(cells, dtype=object)
    present = (series.notna() & ~series.isin(MISSING)).to_numpy(dtype=bool)
    return _parse(series), present


def checked(
    number: np.ndarray,
    index: pd.Index,
    origin: Origin,
    column: str,
    rule: Rule,
    factor: float | np.ndarray,
    shown: Callable[[int], object],
) -> pd.Series:
    """Numbers already read (NaN: missing) in the unit of `factor`, checked as `numbers` does;
    `shown(i)` is the cell at position i as messages quote it, `index` numbers the data rows.

    Raises: ParseError naming the line and column of the first value `rule` does not allow.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # 1e300 s in ns: inf, refused below
        scaled = number * factor
    reason = _reasons(number, scaled, rule)
    bad = np.flatnonzero(reason > 0)
    if len(bad):
        cell, why = shown(int(bad[0])), int(reason[bad[0]])
        label = index[bad[0]]
        row = int(label) if isinstance(label, (int, np.integer)) else int(bad[0])
        raise origin.cell_error(row, column, _say(cell, rule, why))
    return pd.Series(scaled, index=index, dtype="float64")


def loose_numbers(cells: pd.Series) -> np.ndarray:
    """Text cells as float64 as `numbers` reads them, NaN where a cell is no number; nothing is
    checked (for cells kept as printed, where no rule applies)."""
    return _parse(cells)


def number_or_nan(text: str) -> float:
    """A cell's number as the tools print one (a plain decimal, thousands separators allowed,
    any sign), NaN when it is none: for cells kept as printed, where no rule applies."""
    clean = text.strip()
    if "," in clean and re.fullmatch(_THOUSANDS, clean):
        clean = clean.replace(",", "")
    return float(clean) if _DECIMAL.match(clean) else math.nan


def scalar(text: str, rule: Rule, factor: float = 1.0) -> float:
    """One cell's number in the unit of `factor`.

    Raises: ValueError saying what is wrong with it (the caller adds file, line and column).
    """
    clean = text.strip()
    if "," in clean and re.fullmatch(_THOUSANDS, clean):
        clean = clean.replace(",", "")
    if not _DECIMAL.match(clean):
        raise ValueError(f"{shown_cell(text)} is not a number")
    number = float(clean)
    reason = _reason(number, number * factor, rule)  # per cell: numpy costs 50 us a call
    if reason:
        raise ValueError(_say(text, rule, int(reason)))
    return number * factor


def integers(
    values: pd.Series, origin: Origin, column: str, rule: Rule, factor: float | np.ndarray = 1.0
) -> pd.Series:
    """A column as nullable Int64 in the unit of `factor`, rounded, every value checked; an
    integer column in its own unit stays exact (timestamps may exceed 2**53).

    Raises: ParseError as `numbers`.
    """
    plain = isinstance(factor, (int, float)) and factor == 1
    if plain and values.dtype.kind in "iu" and not isinstance(values.dtype, pd.CategoricalDtype):
        arr = values.to_numpy(dtype="int64", na_value=0)
        bad = np.flatnonzero((arr < 0) | (arr >= rule.most))
        if len(bad):
            why = 2 if arr[bad[0]] < 0 else 3
            raise origin.cell_error(_row(values, bad[0]), column, _say(str(arr[bad[0]]), rule, why))
        return values.astype("Int64")
    return whole(numbers(values, origin, column, rule, factor))


def check_total(values: pd.Series, origin: Origin, column: str) -> None:
    """A column of durations or totals adds up to less than `TOTAL_LIMIT` ns (2**62: each value
    is in range, but a million of them could still overflow the sums of an analysis).

    Raises: ParseError naming the column.
    """
    got = float(np.nansum(values.to_numpy(dtype="float64", na_value=np.nan)))
    if got >= TOTAL_LIMIT:
        raise origin.cell_error(None, column, f"the values add up to {got:.3g}, past 2**62")


def whole(values: pd.Series) -> pd.Series:
    """Checked float64 values (or int64 ones) rounded to nullable Int64; NA stays NA."""
    if str(values.dtype) == "Int64":
        return values
    if values.dtype.kind in "iu":
        return values.astype("Int64")
    arr = values.to_numpy(dtype="float64")
    mask = np.isnan(arr)
    ints = np.where(mask, 0, np.rint(arr)).astype("int64")
    return pd.Series(pd.arrays.IntegerArray(ints, mask), index=values.index)


def float_integers(
    values: pd.Series, origin: Origin, column: str, rule: Rule, factor: float = 1.0
) -> pd.Series:
    """`integers` of a float64 column (NaN: missing) and one positive `factor`, in a third of
    the passes over it: the values are checked with a few reductions (the least, the largest
    after the unit, whether all are whole), and only a column with a value `rule` does not
    allow goes through `integers`, which names the first bad cell.

    A column of whole numbers already read exactly (`Int64`, as `nsys_numbers` gives them) in
    its own unit needs only its least and largest value checked, and is taken as it is.

    Raises: ParseError as `integers`.
    """
    if isinstance(values.dtype, pd.Int64Dtype) and factor == 1:
        ints = values.to_numpy(dtype="int64", na_value=0)
        if not len(ints) or (ints.min() >= 0 and ints.max() < rule.most):
            return values
        values = values.astype("float64")  # (the float checks name the bad cell)
    number = values.to_numpy()
    if values.dtype != np.float64 or not factor > 0 or not len(number):
        return integers(values, origin, column, rule, factor)
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = number * factor if factor != 1 else number
        least, most = np.fmin.reduce(number), np.fmax.reduce(scaled)  # (NaN: all missing)
        fine = not least < 0 and not most >= rule.most  # (inf: not below `rule.most`)
        if fine and rule.whole:  # (no inf here: x - floor(x) is 0 just for whole x, NaN skipped)
            fraction = np.floor(number)
            fine = not np.fmax.reduce(np.subtract(number, fraction, out=fraction)) > 0
        if not fine:
            return integers(values, origin, column, rule, factor)
        mask = np.isnan(scaled)
        ints = (scaled if factor == 1 and rule.whole else np.rint(scaled)).astype("int64")
    ints[mask] = 0
    return pd.Series(pd.arrays.IntegerArray(ints, mask), index=values.index, copy=False)


def check_shares(
    shares: pd.Series, resolution: float, origin: Origin, label: str, first: int = 0
) -> None:
    """The `Time(%)` of a section's rows (its first, data row `first` as `Origin.line` counts
    them) must add up to 100 beyond what rounding each to `resolution` (0.01 for `20.21%`)
    can explain: less is a trimmed table, read and said so (`TrimmedTable`, a warning), rows
    that all show 0.0 (the tail of a long table) included; more is no table of one run's time.

    Raises: ParseError saying what the rows add up to, when more than 100.
    """
    got = float(shares.sum())
    if not shares.notna().any():
        return  # no share shown (every cell empty): nothing to check
    slack = len(shares) * resolution / 2 + 0.01
    if got > 100.0 + slack:
        raise origin.error(f"the {label} rows add up to {got:.2f}% of the time, more than 100%")
    if got < 100.0 - slack:
        line = origin.line(first)
        said = (
            f"the {label} rows at line {line} cover {got:.2f}% of its time: a trimmed table; "
            "its totals are of the rows shown"
        )
        warnings.warn(TrimmedTable(said, line), stacklevel=2)


def _parse(cells: pd.Series) -> np.ndarray:
    """Text cells as float64 (NaN where they are no number): pandas' parser on the cells as they
    are, and only the few it cannot take again without blanks and thousands separators."""
    plain = pd.Series(np.asarray(cells, dtype=object))  # object: the cells as they are
    number = pd.to_numeric(plain, errors="coerce").to_numpy(dtype="float64", na_value=np.nan).copy()
    retry = np.flatnonzero(np.isnan(number) & plain.notna().to_numpy(dtype=bool))
    if len(retry):
        text = plain.iloc[retry].astype(str).str.strip()
        grouped = text.str.contains(",", regex=False)
        text = text.mask(grouped & ~text.str.fullmatch(_THOUSANDS)).str.replace(",", "")
        again = pd.to_numeric(text.mask(text.isin(MISSING)), errors="coerce")
        number[retry] = again.to_numpy(dtype="float64", na_value=np.nan)
    return number


def _row(values: pd.Series, position: int) -> int:
    """The data row (as read from the file) of `values`' element at `position`: its index label
    when the frame kept the reader's index, else the position."""
    label = values.index[position]
    return int(label) if isinstance(label, (int, np.integer)) else int(position)


def _reasons(number: np.ndarray, scaled: np.ndarray, rule: Rule) -> np.ndarray:
    """Per value: 0 fine (or missing), 1 not finite, 2 negative, 3 too large, 4 not whole."""
    with np.errstate(invalid="ignore"):
        missing = np.isnan(number)
        fine = (number >= 0) & (np.abs(scaled) < rule.most)  # (NaN and inf: not fine)
        if rule.whole:
            fine &= np.floor(number) == number
        if (fine | missing).all():  # the common case: one pass, no reasons to pick
            return np.zeros(len(number), dtype=np.int64)
        checks = [
            ~missing & ~np.isfinite(number),
            number < 0,
            ~(np.abs(scaled) < rule.most) & ~missing,
            (np.floor(number) != number) & ~missing if rule.whole else np.zeros(len(number), bool),
        ]
    return np.select(checks, [1, 2, 3, 4], 0)


def _reason(number: float, scaled: float, rule: Rule) -> int:
    """`_reasons` of one value, in plain Python."""
    if math.isnan(number):
        return 0
    if math.isinf(number):
        return 1
    if number < 0:
        return 2
    if not abs(scaled) < rule.most:
        return 3
    return 4 if rule.whole and math.floor(number) != number else 0


def _say(value: object, rule: Rule, reason: int) -> str:
    cell = shown_cell(value)
    return {
        1: f"{cell} is not a finite number",
        2: f"{cell} is negative; {rule.what} cannot be",
        3: f"{cell} is out of range for {rule.what}",
        4: f"{cell} is not a whole number; {rule.what} must be",
    }[reason]
