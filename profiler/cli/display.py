"""Terminal output of a sweep: a live progress table while it runs (on stderr, so the run's
path stays the last line of stdout), and a plain line per stage when stderr is not a terminal."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

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
        self.rows = {key: [title, "waiting", ""] for key, title in stages}
        if self.console.is_terminal:
            self.live = Live(self._table(), console=self.console, refresh_per_second=8)
            self.live.start()

    def event(self, key: str, text: str) -> None:
        if key not in self.rows:
            self.rows[key] = [key, "", ""]
        self.started.setdefault(key, time.monotonic())
        self.rows[key][1:] = ["running", text]
        self._refresh(plain=f"  {key}: {text}" if key == "ceilings" else None)

    def finish(self, key: str, status: str, summary: str) -> None:
        elapsed = time.monotonic() - self.started.pop(key, time.monotonic())
        self.rows.setdefault(key, [key, "", ""])[1:] = [status, f"{summary}  ({elapsed:.0f}s)"]
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
            self.console.print(plain, highlight=False)

    def _table(self) -> Table:
        table = Table(title="profgen sweep", expand=False)
        for name in ("#", "Stage", "Status", ""):
            table.add_column(name)
        for i, (title, status, detail) in enumerate(self.rows.values(), 1):
            style = _STYLE.get(status, "cyan" if status == "running" else "dim")
            table.add_row(str(i), title, f"[{style}]{status}[/]", detail)
        return table


_WIDTH = 160  # the staged table is wide; never wrap it into an unreadable column


def print_staged(stages: Any, items: int, unit: str, title: str = "") -> None:
    """The staged table on stdout."""
    from profiler.render.terminal import staged_rich_table

    Console(width=_WIDTH).print(staged_rich_table(stages, items, unit, title))
