#!/usr/bin/env python3
"""A fuzz of the commands that read stored runs (`show`, `report`, `compare`, `baseline`):
seeded random mutants of one file of a recorded run directory, or of a baseline file, in
parallel, until a time is up. Each mutant run is shown (every table it lists), reported,
compared with the run it came from both ways (writing the Markdown summary, the JUnit file and
CSV), and written as a baseline; a mutant baseline file is compared with the first run directory
given, both ways. A command may succeed or refuse with a ProfgenError (one line for the user);
anything else is a crash, whose file and traceback are kept.

The mutations are tests/test_fuzz_import.py's (a line deleted, doubled, cut, moved; a byte
changed; the file cut; blanks added), once or three times over, applied to one of the run's
files (run.json or a table; the raw/ folder and report.html are left out of the copy).
tests/test_broken_runs.py holds the broken runs CI checks; this looks for more.

    python3 scripts/fuzz_runs.py --out /tmp/crashes --seconds 400 --workers 15 RUN... [BASE.json...]

Prints the commands run and one line per kind of crash; exits 1 when there was any.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import random
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fuzz_import import pooled, said  # noqa: E402
from test_fuzz_import import mutate  # noqa: E402

from profiler.cli import build_parser  # noqa: E402
from profiler.errors import ProfgenError  # noqa: E402


def mutated_copy(source: Path, into: Path, rng: random.Random) -> Path:
    """A copy of the run `source` under `into` with one of its files mutated (or, `source` a
    baseline file, a mutated copy of it): the file."""
    if source.is_file():
        victim = into / source.name
        shutil.copyfile(source, victim)
    else:
        run = into / source.name
        shutil.copytree(source, run, ignore=shutil.ignore_patterns("raw", "report.html"))
        victim = rng.choice(sorted(p for p in run.iterdir() if p.is_file()))
    data = victim.read_bytes()
    for _ in range(rng.choice((1, 1, 3))):
        data = mutate(data, rng)
    victim.write_bytes(data)
    return victim


def commands(source: Path, run: Path, scratch: Path, partner: Path) -> list[list[str]]:
    """Every command the fuzz runs on the mutant `run` of `source` (a run directory, or a
    baseline file compared with the run `partner` both ways)."""
    outputs = ["--summary", str(scratch / "summary.md"), "--junit", str(scratch / "junit.xml")]
    if source.is_file():
        return [
            ["compare", str(run), str(partner), "--allow-mismatch", *outputs],
            ["compare", str(partner), str(run), "--format", "json"],
        ]
    try:
        tables = json.loads((source / "run.json").read_text())["tables"]
    except (KeyError, ValueError):
        tables = ["stages"]
    shows = [["show", str(run), "--table", name] for name in tables]
    return [
        *shows,
        ["report", str(run), "-o", str(scratch / "report.html")],
        ["compare", str(source), str(run), *outputs],
        ["compare", str(run), str(source), "--format", "csv"],
        ["baseline", str(run), "-o", str(scratch / "baseline.json")],
    ]


def call(argv: list[str]) -> None:
    """One command in this process, its output dropped; a ProfgenError is a clean refusal."""
    args = build_parser().parse_args(argv)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                args.handler(args)
            except ProfgenError:
                pass


def fuzz(job: tuple[str, float, list[str], int]) -> tuple[int, list[str]]:
    """Mutants of runs picked at random from `runs`, until the deadline: the commands run, and a
    line per crash (the mutated file and the traceback written under `out`)."""
    out, deadline, runs, seed = job
    partner = next(r for r in runs if Path(r).is_dir())
    rng = random.Random(seed)
    done, crashes = 0, []
    while time.time() < deadline:
        source = Path(rng.choice(runs))
        with tempfile.TemporaryDirectory() as tmp:
            victim = mutated_copy(source, Path(tmp), rng)
            mutant = victim if source.is_file() else victim.parent
            for argv in commands(source, mutant, Path(tmp), Path(partner)):
                done += 1
                try:
                    call(argv)
                except Exception as exc:  # noqa: BLE001 - the point: anything else is a crash
                    name = f"{seed}-{done}-{argv[0]}-{source.name}-{victim.name}"
                    (Path(out) / name).write_bytes(victim.read_bytes())
                    (Path(out) / f"{name}.txt").write_text(f"{argv}\n{traceback.format_exc()}")
                    crashes.append(f"{crash_kind(argv[0], exc)} | {str(exc)[:120]} ({name})")
    return done, crashes


def crash_kind(command: str, exc: Exception) -> str:
    """The command, the exception's type and the deepest line of profgen's own code it passed."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/profiler/" in f.filename]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    return f"{command}: {type(exc).__name__} at {where}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="recorded run directories and baseline files")
    parser.add_argument("--out", required=True, help="folder for crashing mutants")
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--workers", type=int, default=multiprocessing.cpu_count())
    parser.add_argument("--seed", type=int, default=0, help="another seed, other mutants")
    args = parser.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    deadline = time.time() + args.seconds
    workers = max(1, args.workers)
    jobs = [(args.out, deadline, args.runs, args.seed * 1000 + k) for k in range(workers)]
    total, kinds = pooled(fuzz, jobs, workers, lambda line: line.split(" | ")[0])
    print(f"{total} commands on mutants of {len(args.runs)} runs; {len(kinds)} kinds of crash")
    return said(kinds)


if __name__ == "__main__":
    sys.exit(main())
