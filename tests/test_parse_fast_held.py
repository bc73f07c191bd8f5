"""Held bytes read as the file holding them (issue 14's speed target).

`import_capture` no longer writes each section of a terminal capture to a temporary file for
the readers to read again: it hands them the section's bytes (`csvtext.Held`). Held here to the
file path it replaced: `csvtext`'s reading functions, `detect` and every reader that takes held
bytes give what they give for a file of those bytes (tables, or the very same error message),
on every text file under tests/data and /work/shared/fixtures and on hostile bytes; and a
capture read through held sections gives what it gave when each was written to a file first.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from test_parse_fast_capture import MADE_CAPTURES, made_capture

from profiler import import_capture, importer
from profiler.errors import ParseError
from profiler.parse import csvtext, detect, fenced_reports, ncu_csv, nsys_capture, nvprof

DATA = Path(__file__).parent / "data"
SHARED = Path("/work/shared/fixtures")
FILES = sorted(
    p
    for root in (DATA, SHARED)
    if root.is_dir()
    for p in root.rglob("*")
    if p.suffix in (".csv", ".log", ".txt", ".md", ".output") and p.is_file()
    if p.stat().st_size < 2_000_000
)
HEAD = csvtext.HEAD_BYTES
HOSTILE = {
    "empty.txt": b"",
    "blank.txt": b" \n\t\n",
    "nul.txt": b"==1== x\n\x00\n",
    "late-nul.txt": b"==1== x\n" + b" " * HEAD + b"\x00\n",
    "utf16.txt": "==1== x\n".encode("utf-16"),
    "latin1.txt": b"==1== caf\xe9\n",
    "bom.txt": b"\xef\xbb\xbf==1== x\n$ nvprof ./a\n",
    "cut-utf8.txt": "==1== é".encode()[:-1],
    "crlf.txt": b"$ nvprof ./a\r\n==1== x\r\n",
    "tabs.txt": b"==1== x\n\t\t  GPU activities:\t100.00%\n",
    "spaces.txt": b"==1== x\n" + b" " * 100_000 + b"x\n",
    "nbsp.txt": "==1== x\n\u00a0 Start  Duration  Name\n".encode(),
    # a character cut by the 64 KiB head, or ending right at it; a file of exactly 64 KiB
    "straddle.txt": b"==1== x\n" + b"a" * (HEAD - 9) + "é\n".encode(),
    "at-head.txt": b"==1== x\n" + b"a" * (HEAD - 10) + "é".encode(),
    "head-size.txt": b"==1== x\n" + b"a" * (HEAD - 9) + b"\n",
}


def outcome(func: Callable[[], Any]) -> Any:
    """What `func` gives, or the message of the ParseError it raises."""
    try:
        return func()
    except ParseError as exc:
        return ("ParseError", str(exc))


CAPTURES = [p for p in FILES if outcome(lambda p=p: detect.detect(p)) == detect.CAPTURE]
# captures made of real outputs, one after another behind prompts: every kind a section may be
# the made-up captures of test_parse_fast_capture, and the first of them with an ncu CSV after it
MADE = {
    **MADE_CAPTURES,
    "nvprof-trace-nsys-ncu-csv.md": [
        *MADE_CAPTURES["nvprof-trace-then-nsys-stats.md"],
        ("$ ncu --csv ./a", "ncu/2025.3.1/raw-metrics.csv"),
    ],
}


def same(a: Any, b: Any) -> None:
    """Equal outcomes: tables (a frame, a dict of frames, reports with their files) alike."""
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b)
    elif isinstance(a, dict) and isinstance(b, dict):
        assert list(a) == list(b)
        for key in a:
            same(a[key], b[key])
    elif isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        for x, y in zip(a, b, strict=True):
            same(x, y)
    else:
        assert a == b


def cases(tmp_path: Path) -> list[Path]:
    out = list(FILES)
    for name, data in HOSTILE.items():
        out.append(tmp_path / name)
        out[-1].write_bytes(data)
    return out


READERS: dict[str, Callable[[Any], Any]] = {
    "head": lambda s: csvtext.read_head(s, "x"),
    "small head": lambda s: csvtext.read_head(s, "x", 7),
    "text": lambda s: csvtext.read_text(s, "x"),
    "utf8": lambda s: csvtext.read_utf8(s, "x"),
    "detect": detect.detect,
}
TABLES: dict[str, Callable[[Any], Any]] = {
    detect.NVPROF: lambda s: nvprof.read_log(s, "s"),
    detect.NSYS_TEXT: lambda s: nsys_capture.read_stats_stdout(s, "s"),
    detect.NCU_CSV: lambda s: ncu_csv.read_metrics(s, "s"),
}


def test_every_kind_a_section_may_be_is_read_held_or_from_a_file():
    readable = {detect.NSYS_TEXT, detect.NCU_CSV, detect.NCU_TEXT, detect.NVPROF}
    assert set(TABLES) == set(importer._READ_HELD) and set(TABLES) < readable


@pytest.mark.parametrize("name", sorted(READERS))
def test_held_bytes_read_as_their_file(name, tmp_path):
    read = READERS[name]
    files = cases(tmp_path)
    assert len(files) > 150
    for path in files:
        same(
            outcome(lambda p=path: read(csvtext.Held(p, p.read_bytes()))),
            outcome(lambda p=path: read(p)),
        )


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_held_bytes_give_their_files_tables(kind, tmp_path):
    read = TABLES[kind]
    every = cases(tmp_path)
    files = [p for p in every if outcome(lambda p=p: detect.detect(p)) == kind]
    assert len(files) >= 4
    # every file of any kind (the hostile ones last): a reader given another kind's file must
    # fail the same way whether it reads the bytes held or the file
    for path in every:
        same(
            outcome(lambda p=path: read(csvtext.Held(p, p.read_bytes()))),
            outcome(lambda p=path: read(p)),
        )


def read_capture(file: Path, raw: Path, read: import_capture.Reader) -> list[import_capture.Found]:
    return import_capture.read_capture(file, "s", raw, read)


def same_runs(got: list[import_capture.Found], want: list[import_capture.Found]) -> None:
    """The same runs of the same sections, giving the same tables."""
    assert [f.sections for f in got] == [f.sections for f in want]
    assert [f.command for f in got] == [f.command for f in want]
    for one, other in zip(got, want, strict=True):
        same(one.tables, other.tables)


def through_files(folder: Path) -> import_capture.Reader:
    """The importer's reader given each section as a file holding its bytes (as before)."""

    def read(kind: str, held: Any, stage: str, raw: Path) -> Any:
        file = folder / held.path.name
        file.write_bytes(held.view())
        assert detect.detect(file) == kind
        return importer._read_stage(kind, file, stage, raw)

    return read


def variants(text: str, seed: int) -> list[str]:
    """The capture, and copies with CRLF line ends, a line dropped or doubled, a row broken."""
    rng = random.Random(seed)
    rows = text.split("\n")
    out = [text, text.replace("\n", "\r\n")]
    for _ in range(4):
        copy = list(rows)
        i = rng.randrange(len(copy))
        copy[i : i + 1] = rng.choice([[], [copy[i]] * 2, [copy[i].replace("  ", " x ", 1)]])
        out.append("\n".join(copy))
    return out


def capture_text(name: str) -> str:
    real = [p for p in CAPTURES if p.name == name]
    if real:
        return real[0].read_text(encoding="utf-8")
    return made_capture(name, MADE)


@pytest.mark.parametrize("name", [p.name for p in CAPTURES] + sorted(MADE))
def test_a_capture_read_held_is_the_capture_read_through_files(name, tmp_path):
    assert len(CAPTURES) >= 3
    for number, text in enumerate(variants(capture_text(name), len(name))):
        file = tmp_path / f"v{number}{Path(name).suffix}"
        file.write_text(text, encoding="utf-8", newline="")
        (tmp_path / "files").mkdir(exist_ok=True)
        got = outcome(lambda f=file: read_capture(f, tmp_path, importer._read_stage))
        want = outcome(lambda f=file: read_capture(f, tmp_path, through_files(tmp_path / "files")))
        if isinstance(want, tuple):
            assert got == want
            continue
        same_runs(got, want)


# A section of one run of lines is held as a range of the capture's bytes (`Held.span`), which
# nvprof reads in place (`csvtext.held_ascii`, a ranged `nvprof.AsciiText`). Held here to the
# copy of the range it replaced.


def copied_sections(path: Path) -> tuple[bytes, list[tuple[Any, csvtext.Held]]]:
    """`import_capture._held` as it was: every section's bytes copied out, nothing known (the
    sections cut as `_held` cuts them: one run's fenced reports joined, `fenced_reports`)."""
    data = csvtext.read_utf8(path, detect.EXPECTED)
    out = []
    pieces = fenced_reports.joined(import_capture.capture.cut(data), data)
    for number, section in enumerate(pieces):
        joined = b"".join(data[a:b] for a, b in section.spans)
        out.append((section, csvtext.Held(Path(f"section{number}{path.suffix}"), joined)))
    return data, out


def hostile_captures() -> dict[str, str]:
    """Captures of an nvprof trace and nsys output with what a paste does to them."""
    trace = (DATA / "nvprof/9.x/cheby-text-gpu-trace.txt").read_text()
    nsys = (DATA / "nsys/2025.3.1/demo/nsys-stats-stdout.txt").read_text()
    two = f"$ nvprof --print-gpu-trace ./a\n{trace}$ nsys stats r\n{nsys}"
    rows = two.split("\n")
    return {
        "plain": two,
        "crlf": two.replace("\n", "\r\n"),
        "tabs": two.replace("    ", "\t"),
        "spaces": two.replace("\n$ nsys", "\n" + " " * 100_000 + "\n$ nsys"),
        "blank-lines": two.replace("\n$ nsys", "\n" * 1_000 + "$ nsys"),
        "non-ascii": two.replace("./a", "./é").replace("cheby", "chébý"),
        "non-ascii-later": two + "résumé\n",
        "odd-width": "\n".join(r + " " * (i % 3) for i, r in enumerate(rows)),
        "elided": two.replace("\n$ nsys", "\n...\n$ nsys"),
        "no-end-newline": two.rstrip("\n"),
        "trace-only-blank": f"$ nvprof ./a\n  \n\t\n$ nsys stats r\n{nsys}",
        "at-start": f"{trace}$ nsys stats r\n{nsys}",
    }


def capture_cases(tmp_path: Path) -> list[Path]:
    out = []
    for name in [p.name for p in CAPTURES] + sorted(MADE):
        for number, text in enumerate(variants(capture_text(name), len(name))):
            out.append(tmp_path / f"{Path(name).stem}-v{number}{Path(name).suffix}")
            out[-1].write_text(text, encoding="utf-8", newline="")
    for name, text in hostile_captures().items():
        out.append(tmp_path / f"{name}.txt")
        out[-1].write_text(text, encoding="utf-8", newline="")
    return out


def test_a_capture_read_in_place_is_the_capture_read_from_copies(tmp_path, monkeypatch):
    files = capture_cases(tmp_path)
    ranged = []
    real_held = import_capture._held

    def spying(path: Path) -> tuple[bytes, list[tuple[Any, csvtext.Held]]]:
        data, out = real_held(path)
        ranged.extend(h for _, h in out if h.span is not None and h.ascii)
        return data, out

    for file in files:
        monkeypatch.setattr(import_capture, "_held", spying)
        got = outcome(lambda f=file: read_capture(f, tmp_path, importer._read_stage))
        monkeypatch.setattr(import_capture, "_held", copied_sections)
        want = outcome(lambda f=file: read_capture(f, tmp_path, importer._read_stage))
        if isinstance(want, tuple):
            assert got == want, file.name
            continue
        same_runs(got, want)
    assert len(ranged) > len(files)  # the ranges were read in place (and not only the first)


def test_ranged_ascii_text_searches_as_the_bytes_of_its_range():
    rng = random.Random(14)
    whole = b"".join(rng.choice([b"\n", b"ab", b"==1== ", b" ", b"x\r\n"]) for _ in range(400))
    needles = ["\n", "a", "==", "b\n", "x\r", "zz", "ab"]
    for _ in range(300):
        start = rng.randrange(len(whole) + 1)
        end = rng.randrange(start, len(whole) + 1)
        part = whole[start:end]
        ranged, copied = nvprof.AsciiText(whole, start, end), nvprof.AsciiText(part)
        assert len(ranged) == len(part) and str(ranged) == str(copied)
        for _ in range(20):
            sub = rng.choice(needles)
            a = rng.choice([None, rng.randrange(-len(part) - 3, len(part) + 4)])
            b = rng.choice([None, rng.randrange(-len(part) - 3, len(part) + 4)])
            args = (0 if a is None else a, b)
            assert ranged.find(sub, *args) == part.find(sub.encode(), *args), (start, end, args)
            assert ranged.rfind(sub, *args) == part.rfind(sub.encode(), *args), (start, end, args)
            assert ranged[a:b] == part[a:b].decode()


HELD_RANGES = {
    "trace": (DATA / "nvprof/9.x/cheby-text-gpu-trace.txt").read_bytes(),
    "summary": (DATA / "nvprof/9.x/cuda-stream-summary.txt").read_bytes(),
    "blank": b" \n\t\n\r\n\x0b\x0c",
    "empty": b"",
    "spaces": b"==1== x\n" + b" " * 100_000 + b"x\n",
    "crlf": (DATA / "nvprof/9.x/cheby-text-gpu-trace.txt").read_bytes().replace(b"\n", b"\r\n"),
    "sep": b"==1== x\n\x1c\x1f\n",
}


@pytest.mark.parametrize("name", sorted(HELD_RANGES))
def test_nvprof_reads_a_range_of_held_bytes_as_a_copy_of_it(name):
    body = HELD_RANGES[name]
    for before, after in [(b"", b""), (b"$ nvprof ./a\n", b"$ ls\nx\n"), (b"x" * 9, b"\n" * 3)]:
        buffer = before + body + after
        span = (len(before), len(before) + len(body))
        ranged = csvtext.Held(Path("s.txt"), buffer, span, ascii=buffer.isascii())
        copied = csvtext.Held(Path("s.txt"), body)
        for read in [*READERS.values(), TABLES[detect.NVPROF]]:
            got = outcome(lambda r=read, h=ranged: r(h))
            same(got, outcome(lambda r=read, h=copied: r(h)))
