"""Parsing time is linear in the input: no regular expression backtracks on runs of spaces.

Two checks:

- every pattern in `profiler.parse` (each module-level compiled pattern) is read with Python's
  own regex parser: an unbounded repeat that can match a blank may not sit inside another
  repeat (unless that one is possessive: it never gives back what it took), nor follow another
  such repeat directly (`[ \\t]*\\s+`), since either shape lets the engine try every way of
  splitting a run of blanks. This is exact and needs no clock.
- every text parser is given real files with a run of blanks 10 times longer than in a
  smaller copy (a 50,000-space cell, a 50,000-space line): whether it reads or refuses them,
  the larger must not cost more than a generous multiple of the smaller (a quadratic pattern
  costs 100 times more; the old nvprof row pattern took 44 s on 100 KB). CPU time, the best
  of three, with a floor, so that a loaded machine does not fail it.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import re._compiler as sre_compile  # type: ignore[import-not-found]
import re._parser as sre_parse  # type: ignore[import-not-found]
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import profiler.parse
from profiler.errors import ParseError
from profiler.parse import ncu_text, nsys_csv, nvprof

DATA = Path(__file__).parent / "data"
REPEATS = (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT)
BOUND = 100  # a repeat of at most this many is bounded work per attempt


def patterns() -> Iterator[tuple[str, re.Pattern[str]]]:
    for info in pkgutil.iter_modules(profiler.parse.__path__):
        module = importlib.import_module(f"profiler.parse.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                yield f"{info.name}.{name}", value


def blank_repeat(op: object, av: object, state: object) -> bool:
    """An unbounded greedy or lazy repeat whose element can match a space or a tab."""
    if op not in REPEATS or av[1] <= BOUND:  # type: ignore[index]
        return False
    element = sre_parse.SubPattern(state, list(av[2]))  # type: ignore[index]
    compiled = sre_compile.compile(element, 0)
    return bool(compiled.fullmatch(" ") or compiled.fullmatch("\t"))


def problems(items: list, state: object, inside: bool = False) -> list[str]:
    """The risky shapes in a parsed pattern: nested and adjacent blank repeats."""
    found = []
    previous_blank = False
    for op, av in items:
        blank = blank_repeat(op, av, state)
        if blank and inside:
            found.append("a repeat of blanks inside another repeat")
        if blank and previous_blank:
            found.append("two repeats of blanks side by side")
        previous_blank = blank
        if op in REPEATS:
            found += problems(list(av[2]), state, inside or av[1] > BOUND)
        elif op == sre_parse.POSSESSIVE_REPEAT:
            found += problems(list(av[2]), state, False)
        elif op == sre_parse.SUBPATTERN:
            found += problems(list(av[3]), state, inside)
        elif op == sre_parse.BRANCH:
            for branch in av[1]:
                found += problems(list(branch), state, inside)
        elif op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT, sre_parse.ATOMIC_GROUP):
            found += problems(list(av[1] if op != sre_parse.ATOMIC_GROUP else av), state, inside)
    return found


def shapes(pattern: str | re.Pattern[str]) -> list[str]:
    text = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
    parsed = sre_parse.parse(text, pattern.flags if isinstance(pattern, re.Pattern) else 0)
    return problems(list(parsed), parsed.state)


@pytest.mark.parametrize("name, pattern", list(patterns()), ids=lambda v: str(v)[:40])
def test_no_pattern_backtracks_on_blanks(name, pattern):
    assert shapes(pattern) == [], name


@pytest.mark.parametrize(
    "text, risky",
    [
        (r"(?:[ \t]*\n)+", True),  # the splitter's old paragraph pattern
        (r"^\s*(\S+)\s+(\S+)\s*$", False),
        (r"[ \t]*\s+x", True),
        (r"(?:[ \t]*\n)*+", False),  # possessive: gives nothing back
        (r"(?: \S+)*", False),  # a literal blank between repeats of non-blanks
        (r"(\s+|x)*", True),
        (r"[ ]{0,40}x", False),  # bounded
    ],
)
def test_the_check_finds_risky_shapes(text, risky):
    assert bool(shapes(text)) is risky


def cpu(parse: Callable[[Path], object], path: Path) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        try:
            parse(path)
        except ParseError:
            pass  # refused is fine: only how long it took matters
        best = min(best, time.process_time() - start)
    return best


def widened(source: Path, anchor: str, blanks: int, where: str) -> str:
    """`source`'s text with `blanks` spaces after the first `anchor` (`cell`) or as a line of
    their own after the line holding it (`line`)."""
    text = source.read_text()
    at = text.index(anchor) + len(anchor)
    if where == "line":
        at = text.index("\n", at) + 1
        return text[:at] + " " * blanks + "\n" + text[at:]
    return text[:at] + " " * blanks + text[at:]


CASES = {
    "nvprof summary": (nvprof.read_log, "nvprof/9.x/cuda-stream-summary.txt", "cudaMemcpy"),
    "nvprof text trace": (nvprof.read_log, "nvprof/9.x/cheby-text-gpu-trace.txt", "Start"),
    "nvprof metrics": (nvprof.read_log, "nvprof/8.x/lbp-text-metrics.txt", "Invocations"),
    "nsys column text": (
        nsys_csv.read_stats_stdout, "nsys/2020.4.3/omp-offload-stats.txt", "[CUDA memcpy HtoD]",
    ),
    "nsys stdout": (nsys_csv.read_stats_stdout, "nsys/2025.3.1/demo/nsys-stats-stdout.txt", "Name"),
    "ncu text": (ncu_text.read_metrics, "ncu/2023.x/ppc-max-flops.txt", "Duration"),
}  # fmt: skip


@pytest.mark.parametrize("where", ["cell", "line"])
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_a_long_run_of_blanks_costs_linear_time(tmp_path, case, where):
    read, source, anchor = case

    def parse(path: Path) -> object:
        return read(path, "s")

    small, large = tmp_path / "small.txt", tmp_path / "large.txt"
    small.write_text(widened(DATA / source, anchor, 5_000, where))
    large.write_text(widened(DATA / source, anchor, 50_000, where))
    t_small, t_large = cpu(parse, small), cpu(parse, large)
    assert t_large < max(20 * t_small, 0.5), (t_small, t_large)
