"""Terminal output of a sweep: a live progress table while it runs (on stderr, so the run's
path stays the last line of stdout), and a plain line per stage when stderr is not a terminal;
the staged table at the end (`print_staged`), as a box table only when stdout is a terminal.

Stage titles and reasons are run text: escaped for the terminal (`escape.terminal`) and given to
rich as `Text`, never parsed as markup.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

import pandas as pd
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from profiler.render.escape import terminal

WIDTH = 160  # the staged table is wide; never wrap it into an unreadable column

_STYLE = {
    "PASS": "green",
    "FAIL": "bold red",
    "TIMEOUT": "bold red",
    "ERROR": "bold red",
    "SKIPPED": "yellow",
}


class LiveProgress:
    """A `profiler.progress.Progress` that draws the sweep's stages as they run."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.rows: dict[str, list[str]] = {}
        self.started: dict[str, float] = {}
        self.live: Live | None = None

    def begin(self, stages: list[tuple[str, str]]) -> None:
        self.rows = {key: [terminal(title), "waiting", ""] for key, title in stages}
        if self.console.is_terminal:
            self.live = Live(self._table(), console=self.console, refresh_per_second=8)
            self.live.start()

    def event(self, key: str, text: str) -> None:
        if key not in self.rows:
            self.rows[key] = [terminal(key), "", ""]
        self.started.setdefault(key, time.monotonic())
        self.rows[key][1:] = ["running", terminal(text)]
        self._refresh(plain=f"  {terminal(key)}: {terminal(text)}" if key == "ceilings" else None)

    def finish(self, key: str, status: str, summary: str) -> None:
        elapsed = time.monotonic() - self.started.pop(key, time.monotonic())
        status, summary = terminal(status, 16), terminal(summary)
        self.rows.setdefault(key, [terminal(key), "", ""])[1:] = [
            status,
            f"{summary}  ({elapsed:.0f}s)",
        ]
        self._refresh(plain=f"{status:<8} {self.rows[key][0]}: {summary} ({elapsed:.0f}s)")

    def end(self) -> None:
        if self.live is not None:
            self.live.update(self._table())
            self.live.stop()
            self.live = None

    def _refresh(self, plain: str | None) -> None:
        if self.live is not None:
            self.live.update(self._table())
        elif plain:
            self.console.print(Text(plain), highlight=False)

    def _table(self) -> Table:
        table = Table(title="profgen sweep", expand=False)
        for name in ("#", "Stage", "Status", ""):
            table.add_column(name)
        for i, (title, status, detail) in enumerate(self.rows.values(), 1):
            style = _STYLE.get(status, "cyan" if status == "running" else "dim")
            table.add_row(str(i), Text(title), Text(status, style=style), Text(detail))
        return table


def print_staged(
    stages: pd.DataFrame, items: int, unit: str, title: str = "", out: TextIO | None = None
) -> None:
    """Print the staged table to `out` (stdout): a rich box table when it is a terminal, plain
    aligned text otherwise (a pipe, a file, a CI log)."""
    from profiler.render.terminal import staged_plain_text, staged_rich_table

    out = out or sys.stdout
    if out.isatty():
        Console(file=out, width=WIDTH).print(staged_rich_table(stages, items, unit, title))
    else:
        out.write(staged_plain_text(stages, items, unit, title))
        out.flush()


def print_phase_amdahl(run: Any, out: TextIO | None = None) -> None:
    """Print Amdahl by phase (steps, why they differ, the one sentence) after the staged table,
    as plain text; nothing when the study names no phases."""
    from profiler.render.phase_section import analysis, plain_text

    text = plain_text(analysis(run))
    if text:
        out = out or sys.stdout
        out.write("\n" + text)
        out.flush()
