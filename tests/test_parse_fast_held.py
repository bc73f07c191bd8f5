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

from profiler import import_capture, importer
from profiler.errors import ParseError
from profiler.parse import csvtext, detect, ncu_csv, nsys_csv, nvprof

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
MADE = {
    "nvprof-trace-nsys-ncu-csv.md": [
        ("$ nvprof --print-gpu-trace ./cheby", "nvprof/9.x/cheby-text-gpu-trace.txt"),
        ("user@box:~/d$ nsys stats r.nsys-rep", "nsys/2025.3.1/demo/nsys-stats-stdout.txt"),
        ("$ ncu --csv ./a", "ncu/2025.3.1/raw-metrics.csv"),
    ],
    "nvprof-summary-ncu-text-nsys.log": [
        ("% nvprof ./cuda-stream", "nvprof/9.x/cuda-stream-summary.txt"),
        ("(venv) [me@host x]$ ncu ./a", "ncu/2023.x/ppc-max-flops.txt"),
        ("", "nsys/2023.2.3/derivative-stats.txt"),
    ],
    "two-nvprof-runs.txt": [
        ("$ nvprof ./lbp", "nvprof/8.x/lbp-text-metrics.txt"),
        ("$ nvprof --print-gpu-trace ./b", "nvprof/9.x/bfs-text-gpu-trace-unified-memory-only.txt"),
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
    detect.NSYS_TEXT: lambda s: nsys_csv.read_stats_stdout(s, "s"),
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
    # its own kind's files, then every seventh file of any kind and the hostile ones
    for path in files + every[::7] + every[-len(HOSTILE) :]:
        same(
            outcome(lambda p=path: read(csvtext.Held(p, p.read_bytes()))),
            outcome(lambda p=path: read(p)),
        )


def read_capture(file: Path, raw: Path, read: import_capture.Reader) -> import_capture.Found:
    return import_capture.read_capture(file, "s", raw, read)


def through_files(folder: Path) -> import_capture.Reader:
    """The importer's reader given each section as a file holding its bytes (as before)."""

    def read(kind: str, held: Any, stage: str, raw: Path) -> Any:
        file = folder / held.path.name
        file.write_bytes(held.data)
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
    return "".join(f"{prompt}\n{(DATA / file).read_text()}\n" for prompt, file in MADE[name])


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
        assert got.sections == want.sections
        same(got.tables, want.tables)
