"""Reading profiler text output: files, header units, numbers with separators, `n/a`.

Every parser reads its input through `read_text`, so an empty, binary or unreadable file fails
the same way everywhere: a `ParseError` naming the file and what was expected. Units are read
from the tools' headers and units rows and converted here, once: times to integer nanoseconds,
sizes to integer bytes.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from profiler.errors import ParseError

# Time units as the tools spell them -> nanoseconds.
NS_PER_UNIT: dict[str, float] = {
    unit: factor
    for factor, units in (
        (1, "ns nsec nsecond nanosecond"),
        (1e3, "us usec usecond microsecond"),
        (1e6, "ms msec msecond millisecond"),
        (1e9, "s sec second"),
    )
    for unit in units.split()
}
# Size units -> bytes. nsys and ncu use SI prefixes (nsys's `Bytes (MB)` of a 16 MiB copy reads
# 16.777); nvprof uses binary ones (its 40000-byte copy reads 39.0625 KB).
_IEC = {"kib": 2.0**10, "mib": 2.0**20, "gib": 2.0**30, "tib": 2.0**40}
SI_BYTES: dict[str, float] = {
    "b": 1, "byte": 1, "bytes": 1, "kb": 1e3, "kbyte": 1e3, "mb": 1e6, "mbyte": 1e6,
    "gb": 1e9, "gbyte": 1e9, "tb": 1e12, "tbyte": 1e12, **_IEC,
}  # fmt: skip
BINARY_BYTES: dict[str, float] = {
    "b": 1, "byte": 1, "bytes": 1, "kb": 2**10, "mb": 2**20, "gb": 2**30, "tb": 2**40, **_IEC,
}  # fmt: skip
MISSING = ("", "n/a", "N/A", "-", "nan", "NaN")

_UNIT_RE = re.compile(r"^(?P<name>.*?)\s*\((?P<unit>[^()]*)\)\s*$")
_SNIFF_BYTES = 8192


def read_text(path: str | Path, expected: str) -> str:
    """The whole text of `path`.

    Raises: ParseError naming `path` and `expected` when the file is missing, unreadable,
    empty, binary or not UTF-8 text.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ParseError(path, expected, f"cannot read it: {exc.strerror or exc}") from exc
    if not data.strip():
        raise ParseError(path, expected, "the file is empty")
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise ParseError(path, expected, "it is a binary file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError(path, expected, f"it is not UTF-8 text (byte {exc.start})") from exc


def read_head(path: str | Path, expected: str, size: int = 65536) -> str:
    """The first `size` bytes of `path` as text, checked as `read_text` checks a whole file.

    For big files that pandas then reads itself (`read_csv_text` with a Path).

    Raises: ParseError as `read_text`.
    """
    path = Path(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(size)
    except OSError as exc:
        raise ParseError(path, expected, f"cannot read it: {exc.strerror or exc}") from exc
    if not data.strip():
        raise ParseError(path, expected, "the file is empty")
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise ParseError(path, expected, "it is a binary file")
    try:
        return codecs.getincrementaldecoder("utf-8-sig")().decode(data, final=len(data) < size)
    except UnicodeDecodeError as exc:
        raise ParseError(path, expected, f"it is not UTF-8 text (byte {exc.start})") from exc


def split_unit(header: str) -> tuple[str, str]:
    """`Total Time (ns)` -> (`Total Time`, `ns`); `Start(sec)` -> (`Start`, `sec`); else ''."""
    match = _UNIT_RE.match(header.strip())
    if match is None:
        return header.strip(), ""
    return match["name"].strip(), match["unit"].strip()


def time_factor(unit: str, path: str | Path, column: str) -> float:
    """Nanoseconds per `unit`; an empty unit means nanoseconds (nsys's default `--timeunit`).

    Raises: ParseError for a unit that is not a time.
    """
    if not unit:
        return 1
    try:
        return NS_PER_UNIT[unit.strip().lower()]
    except KeyError:
        raise ParseError(
            path, "a time unit (ns, us, ms, s)", f"column {column!r} is in {unit!r}"
        ) from None


def byte_factor(unit: str, path: str | Path, column: str, binary: bool = False) -> float:
    """Bytes per `unit` (SI prefixes unless `binary`); an empty unit means bytes.

    Raises: ParseError for a unit that is not a size.
    """
    table = BINARY_BYTES if binary else SI_BYTES
    if not unit:
        return 1
    try:
        return table[unit.strip().lower()]
    except KeyError:
        raise ParseError(
            path, "a size unit (B, KB, MB, GB)", f"column {column!r} is in {unit!r}"
        ) from None


def numbers(series: pd.Series, path: str | Path, column: str) -> pd.Series:
    """Parse a column of numbers as float64: thousands separators, `n/a` and empty cells allowed.

    Raises: ParseError naming the column and the first value that is not a number.
    """
    if series.dtype.kind in "iuf":
        return series.astype("float64")
    text = series.astype("string").str.strip().str.replace(",", "", regex=False)
    text = text.mask(text.isin(MISSING))
    out = pd.to_numeric(text, errors="coerce")
    bad = out.isna() & text.notna()
    if bad.any():
        raise ParseError(path, f"numbers in column {column!r}", f"found {text[bad].iloc[0]!r}")
    return out.astype("float64")


def scaled(values: pd.Series, factor: float) -> pd.Series:
    """float or integer values times `factor`, rounded to nullable Int64 (NA stays NA)."""
    if str(values.dtype) == "Int64" and factor == 1:
        return values
    if factor == 1 and values.dtype.kind in "iu":
        return values.astype("Int64")
    arr = values.astype("float64").to_numpy() * factor
    mask = np.isnan(arr)
    ints = np.where(mask, 0, np.rint(arr)).astype("int64")
    return pd.Series(pd.arrays.IntegerArray(ints, mask), index=values.index)


def read_csv_text(
    source: str | Path, path: str | Path, expected: str, **kwargs: object
) -> pd.DataFrame:
    """pandas' C reader over CSV text (a str) or a whole file (a Path), every cell a string
    unless `dtype` says otherwise.

    Raises: ParseError naming `path` when the CSV is malformed (e.g. a truncated quoted field).
    """
    options: dict[str, object] = {
        "dtype": "string",
        "keep_default_na": False,
        "na_values": [""],
        "engine": "c",
    }
    options.update(kwargs)
    if isinstance(source, Path):
        options["encoding"] = "utf-8-sig"
    handle = source if isinstance(source, Path) else io.StringIO(source)
    try:
        frame: pd.DataFrame = pd.read_csv(handle, **options)  # type: ignore[call-overload]
        return frame
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ParseError(path, expected, f"malformed CSV: {_first_line(exc)}") from exc


def header_cells(line: str) -> list[str]:
    """The cells of one CSV header line (quotes removed)."""
    return next(csv.reader([line]), [])


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
