"""Run the `profgen` command in-process and judge how it refused: the broken-input corpus tests
(tests/test_broken_*.py) hold every command to one line on stderr, the right exit code and no
traceback."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest


@dataclass
class Outcome:
    code: int
    out: str
    err: str


def profgen(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> Outcome:
    """`profgen ARGV` in this process; argparse's own exits are caught and returned."""
    from profiler.cli import main

    capsys.readouterr()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse: --help, or a usage error
        code = exc.code if isinstance(exc.code, int) else 2
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


def assert_refused(result: Outcome, code: int, *fragments: str) -> None:
    """A clean refusal: exit `code`, exactly one line on stderr naming every fragment, and no
    traceback anywhere."""
    lines = result.err.strip().splitlines()
    assert result.code == code, (result.code, result.err)
    assert "Traceback" not in result.err + result.out, result.err
    assert len(lines) == 1, result.err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
