"""What the fast-path tests compare: a parser's outcome (its tables and the trimmed tables it
warned of, or its error's text) with its fast path on and off."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from profiler.errors import ParseError
from profiler.parse import reader_notes

Outcome = tuple[str, object, list[str]]


def outcome(read: Callable[[], dict]) -> Outcome:
    """("ok", the tables `read()` returns, the `reader_notes.TrimmedTable` warnings it gave) or
    ("error", its ParseError's text, [])."""
    try:
        with reader_notes.trimmed() as trimmed:
            tables = read()
    except ParseError as exc:
        return "error", str(exc), []
    return "ok", tables, [f"{t} (line {t.line})" for t in trimmed]


def assert_same(fast: Outcome, plain: Outcome, frame: Callable[[object], pd.DataFrame]) -> None:
    """The same error text, or the same tables (`frame` takes a table's DataFrame out of what
    the parser returns for it), exactly."""
    assert fast[0] == plain[0], (fast, plain)
    if fast[0] == "error":
        assert fast[1] == plain[1]
        return
    assert fast[2] == plain[2]
    assert isinstance(fast[1], dict) and isinstance(plain[1], dict)
    assert fast[1].keys() == plain[1].keys()
    for name, table in fast[1].items():
        pd.testing.assert_frame_equal(frame(table), frame(plain[1][name]), check_exact=True)
