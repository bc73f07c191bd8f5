#!/usr/bin/env python3
"""A longer fuzz of `profgen import` than CI's: seeded random mutants of many files, in parallel,
until a time is up. A mutant is imported or refused with a ProfgenError (one line for the user);
anything else is a crash, whose bytes and traceback are kept.

The mutations are tests/test_fuzz_import.py's (what pastes and hand edits do: a line deleted,
doubled, cut, moved; a byte changed; the file cut; blanks added), applied once or three times
over, plus two whole-file edits: the file rotated at a random byte, and CRLF line ends. CI runs
3 mutants of each of about 110 files; this runs up to --per-file mutants of every file given.

    python3 scripts/fuzz_import.py --out /tmp/crashes --seconds 400 --workers 15 [--seed N] FILE...

Prints the mutants run and one line per kind of crash; exits 1 when there was any.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import tempfile
import time
import traceback
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_fuzz_import import mutate  # noqa: E402

from profiler import importer  # noqa: E402
from profiler.errors import ProfgenError  # noqa: E402


def mutant_of(data: bytes, rng: random.Random) -> bytes:
    """`mutate` once or three times over, or a whole-file edit."""
    way = rng.randrange(6)
    if way == 0:
        return mutate(mutate(mutate(data, rng), rng), rng)
    if way == 1:
        cut = rng.randrange(len(data) + 1)
        return data[cut:] + data[:cut]
    if way == 2:
        return data.replace(b"\n", b"\r\n")
    return mutate(data, rng)


def fuzz_file(job: tuple[str, float, str, int, int]) -> tuple[int, list[str]]:
    """Up to `per_file` mutants of one file, until the deadline: the count run, and a line per
    crash (its bytes and traceback written under `out`)."""
    out, deadline, path, per_file, seed = job
    rng = random.Random(zlib.crc32(path.encode()) + seed)
    data = Path(path).read_bytes()
    crashes: list[str] = []
    done = 0
    with tempfile.TemporaryDirectory() as tmp:
        while done < per_file and time.time() < deadline:
            body = mutant_of(data, rng)
            mutant = Path(tmp) / f"{done}-{Path(path).name}"
            mutant.write_bytes(body)
            run_dir = Path(tmp) / f"run-{done}"
            run_dir.mkdir()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    importer.import_run("m", [("s", str(mutant))], {}, run_dir)
            except ProfgenError:
                pass
            except Exception as exc:  # noqa: BLE001 - the point: anything else is a crash
                name = f"{zlib.crc32(body):08x}-{Path(path).name}"
                (Path(out) / name).write_bytes(body)
                (Path(out) / f"{name}.txt").write_text(f"{path}\n{traceback.format_exc()}")
                crashes.append(f"{type(exc).__name__}: {str(exc)[:150]} ({path})")
            done += 1
    return done, crashes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--out", required=True, help="folder for crashing mutants")
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--workers", type=int, default=multiprocessing.cpu_count())
    parser.add_argument("--per-file", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0, help="another seed, other mutants")
    args = parser.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    deadline = time.time() + args.seconds
    jobs = [(args.out, deadline, f, args.per_file, args.seed) for f in args.files]
    total, kinds = pooled(fuzz_file, jobs, args.workers, lambda line: line.split(" (")[0][:80])
    print(f"{total} mutants of {len(args.files)} files; {len(kinds)} kinds of crash")
    return said(kinds)


def pooled(
    work: Callable[[Any], tuple[int, list[str]]],
    jobs: list[Any],
    workers: int,
    kind: Callable[[str], str],
) -> tuple[int, dict[str, list[str]]]:
    """`work` over `jobs` in `workers` processes: the count they ran, and their crash lines by
    kind (`kind` of a line)."""
    total, kinds = 0, {}
    with multiprocessing.Pool(workers) as pool:
        for done, crashes in pool.imap_unordered(work, jobs):
            total += done
            for line in crashes:
                kinds.setdefault(kind(line), []).append(line)
    return total, kinds


def said(kinds: dict[str, list[str]]) -> int:
    """Prints one line per kind of crash (how many, the first); the exit status: 1 when any."""
    for lines in kinds.values():
        print(f"{len(lines)} x {lines[0]}")
    return 1 if kinds else 0


if __name__ == "__main__":
    sys.exit(main())
