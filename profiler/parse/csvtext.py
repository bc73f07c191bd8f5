"""Reading profiler text output: files, header units, CSV text.

Every parser reads its input through `read_text` (the whole file, through `profiler.files`) or
`read_head` (its first 64 KiB, to refuse a file early), so a FIFO, a device, a directory, an
empty, binary or unreadable file fails the same way everywhere and before anything blocks: a
`ParseError` naming the file and what was expected. Units are read from the tools' headers and
units rows; `profiler.parse.values` converts and checks the numbers.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import io
import os
import re
import stat
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from profiler import files
from profiler.errors import DataError, ParseError
from profiler.parse.cell_quotes import shown_cell
from profiler.parse.table_origin import Origin

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
_SNIFF_BYTES = 8192
_SOLID = re.compile(rb"[^ \t\n\r\x0b\x0c]")  # a byte `bytes.isspace` does not take as blank
# A line number in pandas' C reader's messages ("Expected 9 fields in line 12, saw 10", "EOF
# inside string starting at row 11").
_PANDAS_LINE = re.compile(r"(in line |starting at row )(\d+)")
HEAD_BYTES = 65536
NOT_UTF8 = "it is not UTF-8 text"  # how a refusal says a file is not UTF-8 (`import_paste`)


@dataclass(frozen=True)
class Held:
    """A file's bytes already in memory (a section of a terminal capture, `import_capture`):
    read here as the file `path` holding them would be, checks and errors alike, without writing
    or opening a file. `path` names it in errors.

    The file's bytes (`view`) are `buffer[span[0]:span[1]]` (all of `buffer` when `span` is
    None): a section of a 200 MB capture is a range of the capture's bytes, not a copy of them
    (a copy costs 0.15 s). `ascii`: all of `buffer` is known to be ASCII without a NUL byte
    (checked once for the whole capture), so a reader that takes the range as it is
    (`held_ascii`) need not check it again.
    """

    path: Path
    buffer: bytes
    span: tuple[int, int] | None = None
    ascii: bool = False

    def view(self) -> bytes | memoryview:
        """The file's bytes, not copied."""
        if self.span is None:
            return self.buffer
        return memoryview(self.buffer)[self.span[0] : self.span[1]]


def source_path(source: str | Path | Held) -> Path:
    """The path that names `source` (a file, or held bytes) in errors."""
    return source.path if isinstance(source, Held) else Path(source)


def read_text(path: str | Path | Held, expected: str) -> str:
    """The whole text of the regular file `path` (or of held bytes), read through
    `profiler.files`.

    Raises: ParseError naming `path` and `expected` when the file is missing, not a regular file
    (a FIFO, a device, a directory), too large, unreadable, empty, binary or not UTF-8 text.
    """
    name = source_path(path)
    return _decode(_file_bytes(path, expected), name, expected, final=True)


def read_utf8(path: str | Path | Held, expected: str) -> bytes:
    """`read_text(path, expected).encode("utf-8")`, without decoding an ASCII file (a check
    of its bytes is enough): for a caller that cuts the bytes up.

    Raises: ParseError as `read_text`.
    """
    return read_utf8_ascii(path, expected)[0]


def read_utf8_ascii(path: str | Path | Held, expected: str) -> tuple[bytes, bool]:
    """`read_utf8`, and whether its bytes are ASCII (a million-row file is checked once).

    Raises: ParseError as `read_text`.
    """
    data = _file_bytes(path, expected)
    if data and data.isascii() and data.find(b"\x00") < 0 and not data.isspace():
        return data, True
    data = _decode(data, source_path(path), expected, final=True).encode("utf-8")
    return data, data.isascii()  # (stops at the first byte that is not)


def held_ascii(source: str | Path | Held) -> tuple[bytes, int, int] | None:
    """`(buffer, start, end)` of held bytes known to be ASCII (`Held.ascii`) that `read_utf8_ascii`
    would give as they are (not empty, not blank): their range of the buffer, not copied. None
    for a file, or bytes not known to be such (read them with `read_utf8_ascii`)."""
    if not isinstance(source, Held) or not source.ascii:
        return None
    start, end = (0, len(source.buffer)) if source.span is None else source.span
    if _SOLID.search(source.buffer, start, end) is None:  # empty or blank: `bytes.isspace`
        return None
    return source.buffer, start, end


def _file_bytes(path: str | Path | Held, expected: str) -> bytes:
    """The bytes of the regular file `path`, read through `profiler.files` (or the bytes held).

    Raises: ParseError as `read_text` for a file that cannot be read.
    """
    if isinstance(path, Held):
        return path.buffer if path.span is None else bytes(path.view())
    path = Path(path)
    try:
        return files.read_bytes(path)
    except DataError as exc:
        raise ParseError(path, expected, _reason(exc, path)) from None


def read_head(path: str | Path | Held, expected: str, size: int = HEAD_BYTES) -> str:
    """The first `size` bytes of `path` (or of held bytes) as text, checked as `read_text`
    checks a whole file: what a parser looks at before it reads the rest (and refuses a file
    early).

    The file is opened without blocking and refused before a byte is read when it is not a
    regular file, as `profiler.files.read_bytes` does.

    Raises: ParseError as `read_text`.
    """
    if isinstance(path, Held):
        head = bytes(path.view()[:size])
        return _decode(head, path.path, expected, final=len(head) < size)
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ParseError(path, expected, f"cannot read it: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise ParseError(path, expected, "it is a directory, not a file")
        raise ParseError(path, expected, "not a regular file (a FIFO, socket or device)")
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(size)
        except OSError as exc:
            raise ParseError(path, expected, f"cannot read it: {exc.strerror or exc}") from None
    return _decode(data, path, expected, final=len(data) < size)


def _decode(data: bytes, path: Path, expected: str, final: bool) -> str:
    """Text of `data`: not empty, no NUL byte anywhere (no tool writes one into its text),
    UTF-8 (a byte-order mark dropped).

    Raises: ParseError saying which of these it is not.
    """
    if not data or data.isspace():  # (`strip` would copy the whole file)
        raise ParseError(path, expected, "the file is empty")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise ParseError(path, expected, "it is UTF-16 text; convert it to UTF-8 (iconv -f UTF-16)")
    nul = data.find(b"\x00")
    if nul >= 0:
        where = "it is a binary file" if nul < _SNIFF_BYTES else "it holds a NUL byte"
        raise ParseError(path, expected, f"{where} (byte {nul})")
    try:
        return codecs.getincrementaldecoder("utf-8-sig")().decode(data, final=final)
    except UnicodeDecodeError as exc:
        raise ParseError(path, expected, f"{NOT_UTF8} (byte {exc.start})") from None


def _reason(exc: DataError, path: Path) -> str:
    """A DataError's message without the path it starts with."""
    text = str(exc)
    return text[len(str(path)) + 2 :] if text.startswith(f"{path}: ") else text


def split_unit(header: str) -> tuple[str, str]:
    """`Total Time (ns)` -> (`Total Time`, `ns`); `Start(sec)` -> (`Start`, `sec`); else ''."""
    text = header.strip()
    open_at = text.rfind("(")
    if not text.endswith(")") or open_at < 0 or ")" in text[open_at:-1]:
        return text, ""
    return text[:open_at].strip(), text[open_at + 1 : -1].strip()


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
            path,
            "a time unit (ns, us, ms, s)",
            f"column {shown_cell(column, 80)} is in {shown_cell(unit)}",
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
            path,
            "a size unit (B, KB, MB, GB)",
            f"column {shown_cell(column, 80)} is in {shown_cell(unit)}",
        ) from None


def read_csv_text(
    source: str | bytes, origin: Origin, start: int = 0, **kwargs: object
) -> pd.DataFrame:
    """pandas' C reader over CSV text (from its byte `start` on: a table at the end of a large
    file is read where it lies, not copied), every cell a string unless `dtype` (a dict for some
    columns) says otherwise; `usecols` selects columns after the whole table is read.

    A row with more cells than the header is an error: pandas would otherwise take the first
    cells as an index, or (with its own `usecols`) drop the last ones, and either way shift
    every column. So is a number too large for its dtype.

    `origin` is the table's place in its file, its header the text's line from `start` on:
    pandas counts its lines from there, and a message names the file's (`Origin.text_line`).

    Raises: ParseError naming the origin's file when the CSV is malformed (e.g. a truncated
        quoted field).
    """
    usecols = kwargs.pop("usecols", None)
    options = csv_options(kwargs.pop("dtype", "string"), **kwargs)
    data = source.encode("utf-8") if isinstance(source, str) else source
    try:
        with reader_warnings():
            frame = read_part(data, options, start)
        return frame if usecols is None else frame[list(usecols)]  # type: ignore[call-overload]
    except pd.errors.ParserWarning as exc:
        raise origin.error(f"a row has more cells than the header: {exc}") from None
    except (ValueError, OverflowError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        said = _file_lines(_first_line(exc), origin.text_line)
        raise origin.error(f"malformed CSV: {said}") from None


@contextlib.contextmanager
def reader_warnings() -> Iterator[None]:
    """pandas' reader's warnings while it reads: its `ParserWarning` (a row with more cells
    than the header) raised, NumPy's `RuntimeWarning` (`inf` cast to int64, which the checks
    after the read refuse) silenced. The filters are the process's: set them once around
    threads that read, not in each."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.ParserWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _file_lines(message: str, lines: Callable[[int], int]) -> str:
    """pandas' message with its line numbers (counted from where it began to read: `in line N`,
    1-based, and `starting at row N`, 0-based) made file lines (`lines` of the 1-based); a
    quoted cell left open is said to start at a line, as it is."""

    def file_line(match: re.Match[str]) -> str:
        if match.group(1) == "in line ":
            return f"in line {lines(int(match.group(2)))}"
        return f"starting at line {lines(int(match.group(2)) + 1)}"

    return _PANDAS_LINE.sub(file_line, message)


def csv_options(dtype: object, **kwargs: object) -> dict[str, object]:
    """`read_csv_text`'s options for pandas: every cell a string unless `dtype` (a dict for some
    columns) says otherwise, an empty cell missing and no other, no index column; `kwargs` added."""
    options: dict[str, object] = {
        "dtype": defaultdict(lambda: "string", dtype) if isinstance(dtype, dict) else dtype,
        "keep_default_na": False,
        "na_values": [""],
        "engine": "c",
        "index_col": False,
        "encoding": "utf-8-sig",
    }
    return {**options, **kwargs}


def read_part(data: bytes, options: dict[str, object], start: int = 0) -> pd.DataFrame:
    """pandas' C reader over `data` from its byte `start` on (the bytes shared, not copied), with
    `csv_options`' `options`; its column names without the blanks around them."""
    handle = io.BytesIO(data)
    handle.seek(start)
    frame: pd.DataFrame = pd.read_csv(handle, **options)  # type: ignore[call-overload]
    frame.columns = header_names(frame.columns)
    return frame


def header_cells(line: str) -> list[str]:
    """The cells of one CSV header line (quotes removed, and the blanks around a name, as
    `header_names`); a line the csv module refuses (a NUL, a cell over its size limit) is split
    at every comma."""
    try:
        return header_names(next(csv.reader([line]), []))
    except csv.Error:
        return header_names(cell.strip('"') for cell in line.split(","))


def header_names(names: Iterable[object]) -> list[Any]:
    """Column names without the blanks around them: a header pasted with trailing blanks
    (`"Max","Name"   `) names the column `Name`, not `Name   `."""
    return [name.strip() if isinstance(name, str) else name for name in names]


def check_header(cells: list[str], path: str | Path, expected: str) -> None:
    """A header must name each column once: a repeated name would shift or hide a column.

    Raises: ParseError naming the repeated column.
    """
    seen: set[str] = set()
    for cell in cells:
        name = cell.strip()
        if name in seen:
            raise ParseError(
                path, expected, f"column {shown_cell(name, 80)} appears twice in the header"
            )
        seen.add(name)


def check_last_row(
    origin: Origin, n_cells: int, last: int, text: str | bytes | None = None
) -> None:
    """The last data row (`last`, 0-based; -1 when there is none) has the header's `n_cells`
    cells: pandas fills a row cut mid-way with missing values, which must not pass as data.
    `text` is the table's text, or a text that ends with it (default `origin.text`).

    Raises: ParseError naming the row's line.
    """
    if last >= 0 and last_row_cells(origin.text if text is None else text) < n_cells:
        raise origin.error(
            f"line {origin.line(last)}: the last row has fewer than the header's {n_cells} "
            "cells (truncated file?)"
        )


def last_row_cells(text: str | bytes) -> int:
    """How many CSV cells the last non-blank line of `text` has (0 when there is none): a row
    with fewer cells than the header at the end of a table is where a truncated file was cut."""
    window = text[-_SNIFF_BYTES:]  # (`rstrip` of all of it would copy a million rows)
    last = _last_line(window, whole=len(window) == len(text))
    if last is None:  # the window is blank, or one line: look at all of it
        last = _last_line(text, whole=True) or ""
    line = last.decode("utf-8", "replace") if isinstance(last, bytes) else last
    return len(header_cells(line)) if line else 0


def _last_line(text: str | bytes, whole: bool) -> str | bytes | None:
    """The last non-blank line of `text`, without the blanks after it; None when `text` is the
    end of a longer text (not `whole`) that need not hold all of that line."""
    data: str | bytes
    if isinstance(text, bytes):
        data = text.rstrip(b"\r\n \t")
        newline = data.rfind(b"\n")
    else:
        data = text.rstrip("\r\n \t")
        newline = data.rfind("\n")
    return None if newline < 0 and not whole else data[newline + 1 :]


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
