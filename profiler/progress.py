"""How a long sweep reports progress: a small protocol the pipeline calls and the CLI draws.

The pipeline never prints; it tells a Progress what happens. `NullProgress` ignores it
(library use, tests); `profiler.cli.display.LiveProgress` draws a live table in the terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class Progress(Protocol):
    def begin(self, stages: list[tuple[str, str]]) -> None:
        """The sweep is about to run these (key, title) stages, in order."""

    def event(self, key: str, text: str) -> None:
        """Stage `key` reached a step (`warm-up`, `timed 3/10`, `profiling`, ...)."""

    def finish(self, key: str, status: str, summary: str) -> None:
        """Stage `key` ended with `status`; `summary` is one short line (time or reason)."""

    def end(self) -> None:
        """The sweep's collection is over."""


class NullProgress:
    """A Progress that shows nothing."""

    def begin(self, stages: list[tuple[str, str]]) -> None:
        pass

    def event(self, key: str, text: str) -> None:
        pass

    def finish(self, key: str, status: str, summary: str) -> None:
        pass

    def end(self) -> None:
        pass


def event_sink(progress: Any, key: str) -> Callable[[str], None]:
    """A one-argument callback that forwards worker events of stage `key` to `progress`."""
    return lambda text: progress.event(key, text)
