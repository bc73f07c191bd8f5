"""Parsing time is linear in the input: no regular expression backtracks on runs of spaces.

Every pattern in `profiler.parse` (each module-level compiled pattern) is read with Python's own
regex parser: an unbounded repeat that can match a blank may not sit inside another repeat
(unless that one is possessive: it never gives back what it took), nor follow another such
repeat directly (`[ \\t]*\\s+`), since either shape lets the engine try every way of splitting
a run of blanks. This is exact and needs no clock; what real files with 50,000-blank runs cost
each text parser is timed by tests/benchmarks/test_bench_parse.py, never asserted here.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import re._compiler as sre_compile  # type: ignore[import-not-found]
import re._parser as sre_parse  # type: ignore[import-not-found]
from collections.abc import Iterator

import pytest

import profiler.parse

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
