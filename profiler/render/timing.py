"""What a stage's time is, in words: the staged table's time heading and, for an imported
stage, the one line that says which span its time is and what it covers. Every renderer (the
HTML report, the terminal, `profgen show`, the Markdown summary) takes its words from here, so
they say the same thing.

The decisions are made in `profiler.analyze.stages` (each stage's `basis`, `timing` and
`timing_range`); this module only words them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import pandas as pd

from profiler import schema
from profiler.analyze import stages as staged_stages
from profiler.render import units

SPANS = {
    schema.NVTX_RANGE: "NVTX range {range}: its total time",
    schema.GPU_SPAN: "GPU span of the capture (first GPU activity's start to the last one's end)",
    schema.GPU_TIME: "summed GPU activity time (kernels, copies and memsets; work that "
    "overlapped counts twice; the input has no trace to take a span from)",
}
NO_TIME = "no time: the input holds no NVTX range, GPU trace or GPU activity summary"
IMPORTED_LEAD = (
    "Imported stages were not run here: nothing checked their outputs (verdict IMPORTED), and "
    "their times are not the host clock around one repeat but the span each stage's line names."
)


def time_heading(staged: pd.DataFrame, unit: str) -> str:
    """The staged table's time column heading: `Time for 10,000 images`, `Time per repeat`,
    `Whole-program time`, or `Time` when the stages' times are of several kinds.

    Args:
        staged: DataFrame with `profiler.analyze.stages.STAGED` columns.
        unit: what an item is (`images`).
    """
    bases = set(staged["basis"].dropna())
    if bases == {staged_stages.ITEMS}:
        items = set(staged["items"])
        return f"Time for {items.pop():,} {unit}" if len(items) == 1 else f"Time for all {unit}"
    if bases == {staged_stages.REPEAT}:
        return "Time per repeat"
    if bases == {staged_stages.PROGRAM}:
        return "Whole-program time"
    return "Time"


def per_phrase(row: Mapping[Any, Any]) -> str:
    """`per repeat (the total over 10 repeats / 10)`, `whole program (repeats not given)` or,
    for a measured stage, `for all items, one repeat`."""
    basis = row.get("basis")
    if basis == staged_stages.REPEAT:
        return f"per repeat (the total / {int(row['repeats']):,} repeats, as given)"
    if basis == staged_stages.PROGRAM:
        return "whole program (how many repeats it ran was not given: --repeats)"
    return "for all items, one repeat"


def time_note(row: Mapping[Any, Any]) -> str | None:
    """What an imported stage's time is, in one line (None for a measured stage).

    Args:
        row: a record of `profiler.analyze.stages.STAGED`.
    """
    if row.get("status") != schema.IMPORTED:
        return None
    timing = row.get("timing")
    if units.is_missing(timing) or timing not in SPANS:
        return NO_TIME
    span = SPANS[str(timing)].format(range=repr(str(row.get("timing_range"))))
    return f"{span}, {per_phrase(row)}"


def repeat_word(imported: bool, repeats: int) -> str:
    """How per-repeat figures of a stage are labelled: `a repeat`, or `whole program` for an
    imported stage whose repeats were not given (its figures are whole-program totals)."""
    return "whole program" if imported and repeats <= 0 else "a repeat"


SHORT_SPANS = {
    schema.NVTX_RANGE: "NVTX range {range}",
    schema.GPU_SPAN: "GPU span",
    schema.GPU_TIME: "summed GPU time",
}


def time_label(row: Mapping[Any, Any]) -> str | None:
    """An imported stage's time in a few words, for a table cell: `GPU span, whole program`,
    `NVTX range 'infer', per repeat (/ 10)` (None for a measured stage; `no time` when none)."""
    if row.get("status") != schema.IMPORTED:
        return None
    timing = row.get("timing")
    if units.is_missing(timing) or timing not in SHORT_SPANS:
        return "no time"
    span = SHORT_SPANS[str(timing)].format(range=repr(str(row.get("timing_range"))))
    if row.get("basis") == staged_stages.REPEAT:
        return f"{span}, per repeat (/ {int(row['repeats']):,})"
    return f"{span}, whole program"


def breakdown_per(
    stages_shown: Collection[str], imported: Collection[str], whole: Collection[str]
) -> str:
    """What the kernel-time breakdown's absolute times cover, for its axis: `per profiled
    repeat`, `per repeat` (imports with repeats given), `whole program` (imports without), or
    both, naming the exception.

    Args:
        stages_shown: the stages the chart draws.
        imported: the imported stages among them.
        whole: the imported stages whose repeats were not given.
    """
    shown = set(stages_shown)
    whole, imported = shown & set(whole), shown & set(imported)
    if whole == shown:
        return "whole program"
    base = "per repeat" if imported == shown else "per profiled repeat"
    return f"{base} (whole program for {', '.join(sorted(whole))})" if whole else base


def axis_per(per: str) -> str:
    """`breakdown_per`'s phrase short enough for an axis title: the stages an exception names
    are left to the text above the chart."""
    head, sep, _ = per.partition(" (whole program for ")
    return f"{head} or whole program" if sep else per
