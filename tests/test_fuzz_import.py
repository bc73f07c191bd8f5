"""`profgen import` on seeded random mutants of every real text and CSV file in tests/data: a
mutant is imported or refused with a ProfgenError (one line for the user), never a crash.

The mutations are what pastes and hand edits do to profiler output: a line deleted, doubled,
cut short or moved; one byte changed (digits, letters, separators, a tab, invalid UTF-8, NUL);
the file cut after some line; a blank doubled; a unit changed; blanks added at a line's end.
Each file gets its own seeded generator, so a failure names its file and mutant and reproduces.
Three crash classes this found are fixed and have tests of their own (a CSV header with
trailing blanks, an nvprof metrics header as the file's last line, a '²' launch number).
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import pytest

from profiler import importer
from profiler.errors import ProfgenError

DATA = Path(__file__).parent / "data"
SKIP_SUFFIXES = {".md", ".sqlite", ".nsys-rep", ".ncu-rep", ".gz", ".zip", ".json", ".npz"}
FILES = sorted(
    p
    for folder in ("nvprof", "ncu", "captures", "nsys")
    for p in (DATA / folder).rglob("*")
    if p.is_file() and p.suffix not in SKIP_SUFFIXES and p.stat().st_size < 400_000
)
MUTANTS = 3  # a file (about 110 files: a few seconds a worker)
BYTES = b"0123456789abcxyz ,.;:|-=%()\t\xc3\xff\x00"


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to four edits of `data`, line by line."""
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 4)):
        lines = lines or [b""]
        i = rng.randrange(len(lines))
        op = rng.randrange(9)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])
        elif op == 2:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        elif op == 3 and lines[i]:
            at = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:at] + bytes([rng.choice(BYTES)]) + lines[i][at + 1 :]
        elif op == 4:
            lines = lines[: rng.randrange(len(lines) + 1)]
        elif op == 5:
            lines[i] = lines[i].replace(b" ", b"  ", 1)
        elif op == 6:
            lines[i] = lines[i].replace(b"us", b"ms").replace(b"ns", b"s", 1)
        elif op == 7:
            lines[i] += b" " * rng.randrange(1, 300)
        elif op == 8:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def test_the_corpus_is_there():
    assert len(FILES) >= 90, len(FILES)


@pytest.mark.parametrize("source", FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_a_mutant_is_imported_or_refused_never_a_crash(tmp_path, source):
    rng = random.Random(zlib.crc32(str(source.relative_to(DATA)).encode()))
    data = source.read_bytes()
    for k in range(MUTANTS):
        mutant = tmp_path / f"{k}-{source.name}"
        mutant.write_bytes(mutate(data, rng))
        out = tmp_path / f"out-{k}"
        out.mkdir()
        try:
            importer.import_run("m", [("s", str(mutant))], {}, out)
        except ProfgenError as exc:
            assert "\n" not in str(exc).strip(), str(exc)  # one line for the user
        except Exception as exc:  # noqa: BLE001 - the point: anything else is a crash
            pytest.fail(f"mutant {k} of {source.name} crashed: {type(exc).__name__}: {exc}")
