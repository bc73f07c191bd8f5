"""The staged table as the terminal shows it at the end of `profgen sweep` and `profgen run`: a
rich box table for a person at a terminal, plain aligned text for a pipe or a log file.

Both come from the same rows (`staged_rows`). Run text (titles, reasons) is escaped for a
terminal (`escape.terminal`: no escape code reaches it) and handed to rich as `Text`, which rich
never parses as markup, so a title such as `[bold]x[/]` shows as written.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from rich.console import Group
from rich.table import Table
from rich.text import Text

from profiler import schema
from profiler.analyze.stages import ITEMS, staged_table
from profiler.render import timing, units
from profiler.render.escape import TEXT_LIMIT, terminal

# IMPORTED is neither a pass nor a failure: a neutral colour, not green, not red
STYLES = {schema.PASS: "green", schema.SKIPPED: "yellow", schema.IMPORTED: "blue"}
FAILED_STYLE = "bold red"
TITLE_WIDTH = 48  # characters of a stage title in the table


@dataclass(frozen=True)
class StagedRows:
    """The staged table as text: headers, right-alignment per column, rows (the last cell is
    the verdict), and one note per stage that did not PASS, with its status."""

    headers: tuple[str, ...]
    right: tuple[bool, ...]
    rows: list[tuple[str, ...]]
    notes: list[tuple[str, str]]  # (status, text)


def staged_rows(stages: pd.DataFrame, items: int, unit: str) -> StagedRows:
    """Title, time for all items (median, min-max), speedups against the previous stage and the
    baseline, max relative error and verdict of every stage, formatted by `units`.

    Args:
        stages: DataFrame with `schema.STAGES` columns.
        items: the number of items each stage inferred, and `unit` what one is (for the header).
    """
    staged = staged_table(stages)
    measured = set(staged["basis"]) == {ITEMS}
    heading = (
        f"Time ({items:,} {terminal(unit, 40)})" if measured else timing.time_heading(staged, unit)
    )
    headers = (
        "Stage",
        heading,
        "min-max",
        "vs previous",
        "vs baseline",
        "max rel err",
        "Verdict",
    )
    rows: list[tuple[str, ...]] = []
    notes: list[tuple[str, str]] = []
    for row in staged.to_dict("records"):
        status = terminal(row["status"], 16)
        rows.append(
            (
                terminal(row["title"], TITLE_WIDTH),
                units.seconds(row["median_ns"]),
                f"{units.seconds(row['min_ns'])}-{units.seconds(row['max_ns'])}",
                units.speedup(row["speedup_prev"]),
                units.speedup(row["speedup_baseline"]),
                units.sci(row["max_rel_err"]),
                status,
            )
        )
        note = timing.time_note(row)  # what an imported stage's time is
        if note is not None:
            notes.append((status, f"{status} {terminal(row['title'])}: time is the {note}"))
        elif status != schema.PASS and not units.is_missing(row["reason"]):
            text = f"{status} {terminal(row['title'])}: {terminal(row['reason'], TEXT_LIMIT)}"
            notes.append((status, text))
    right = (False, True, True, True, True, True, False)
    return StagedRows(headers, right, rows, notes)


def staged_rich_table(stages: pd.DataFrame, items: int, unit: str, title: str = "") -> Group:
    """The staged table as a rich box table, then one line per stage that did not PASS."""
    staged = staged_rows(stages, items, unit)
    table = Table(title=Text(_heading(title, items, unit)) if title else None)
    for name, right in zip(staged.headers, staged.right, strict=True):
        table.add_column(name, justify="right" if right else "left", no_wrap=True)
    for row in staged.rows:
        style = STYLES.get(row[-1], FAILED_STYLE)
        table.add_row(*(Text(cell) for cell in row[:-1]), Text(row[-1], style=style))
    notes = [Text(text, style=STYLES.get(status, FAILED_STYLE)) for status, text in staged.notes]
    return Group(table, *notes)


def staged_plain_text(stages: pd.DataFrame, items: int, unit: str, title: str = "") -> str:
    """The staged table as aligned plain text (no box, no colour), for a pipe or a log."""
    staged = staged_rows(stages, items, unit)
    table = [staged.headers, *staged.rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(staged.headers))]
    lines = [_heading(title, items, unit)] if title else []
    for r in table:
        cells = zip(r, widths, staged.right, strict=True)
        lines.append("  ".join(c.rjust(w) if right else c.ljust(w) for c, w, right in cells))
    lines = [line.rstrip() for line in lines] + [text for _, text in staged.notes]
    return "\n".join(lines) + "\n"


def _heading(title: str, items: int, unit: str) -> str:
    return f"{terminal(title)}, {items:,} {terminal(unit, 40)}"
