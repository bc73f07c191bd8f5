"""Where rendered files go, and the inputs they must never overwrite.

Every file a renderer writes goes through `profiler.files` (atomic, exclusive temporaries that
follow no link, regular files only). A command refuses an output that is one of its own inputs
(`profgen report RUN -o RUN/stages.csv`, `compare --summary BASELINE.json`), before any work.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from profiler import files
from profiler.errors import UsageError
from profiler.store import RUN_JSON, Run


def run_files(path: str | Path) -> list[Path]:
    """The files a run or baseline is read from: `path` itself when it is a file, else the run
    directory's run.json and table CSVs."""
    path = Path(path)
    if not path.is_dir():
        return [path]
    return [path / RUN_JSON, *sorted(path.glob("*.csv"))]


def run_inputs(run: Run) -> list[Path]:
    """The files `run` was read from (none for a run built in memory)."""
    return run_files(run.path) if run.path is not None else []


def check_ci_outputs(
    summary: Path | None, junit: Path | None, inputs: Iterable[str | Path] = ()
) -> None:
    """Refuse, before any work, CI outputs that cannot be written where asked.

    Raises: UsageError when one is a directory, a device or another non-regular file, one of
        `inputs`, or when both name the same file.
    """
    inputs = list(inputs)
    if summary is not None:
        files.check_output_file(summary, inputs, "--summary")
    if junit is not None:
        files.check_output_file(junit, inputs, "--junit")
    if summary is not None and junit is not None and _same(summary, junit):
        raise UsageError(f"--summary and --junit are the same file ({summary}); give two")


def write_ci_outputs(
    run: Run,
    regressions: pd.DataFrame,
    summary: Path | None,
    junit: Path | None,
    inputs: Sequence[str | Path] = (),
) -> None:
    """Write the Markdown summary and the JUnit file when asked for (each replaced atomically).

    Raises: UsageError (see `check_ci_outputs`); OutputError when the disk refuses.
    """
    from profiler.render.junit import junit_xml
    from profiler.render.markdown import summary_markdown

    check_ci_outputs(summary, junit, inputs)
    if summary is not None:
        files.write_text(summary, summary_markdown(run, regressions), inputs, "--summary")
    if junit is not None:
        files.write_text(junit, junit_xml(regressions), inputs, "--junit")


def _same(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()
