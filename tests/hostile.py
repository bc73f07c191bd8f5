"""Hostile runs for the rendering tests: the committed H100 sample run (or any run) with run text
replaced by what an imported CSV or a user's study could hold: HTML, links, rich markup, terminal
escape codes, Markdown, control characters, megabyte names, a stage key that is a path.

Each edit works on a `store.Run` in memory and keeps the run consistent (a kernel renamed in every
table that names it, a stage key in every table that has a `stage` column).
`write_edited_copy` copies the sample run's CSVs and run.json into a folder, applies edits, and
writes the edited tables back, as a user's hand-edited run would look.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from runfactory import SAMPLE_RUN

from profiler import schema, store, tablecsv
from profiler.store import Run

Edit = Callable[[Run], None]

# what each kind of run text is replaced with
HTML = (
    '<a href="javascript:alert(1)">click</a><img src=x onerror=alert(2)>'
    "<script>alert(3)</script>"
)
MARKUP = "[bold red]loud[/] [link=https://example.com]link[/link]"
# (no carriage return: store's CSV writer does not quote it, and the run would not read back)
ANSI = "\x1b[2J\x1b]0;owned\x07\x1b[31mred\x1b[0m\b\u202egnp.exe"
MARKDOWN = "`</code><img src=x>` [c](javascript:alert(1)) | cell |\n| forged | row |"
# every control character but NUL: a table with a NUL byte is refused as damaged, not rendered
# (tests/test_broken_runs.py)
CONTROL = "".join(chr(c) for c in range(1, 32)) + "\x7f\x85\ufffe"
PLOTLY = "<b>bold</b><br><i>it</i>%{y}%{customdata}<sup>up</sup>$x^2$"
MEGA = "void huge_kernel<" + "int, " * 200_000 + "float>(float*)"  # 1 MB
LONG = MEGA[:50_000] + MEGA[-50_000:]  # 100 kB: for names on thousands of trace rows


def retitle(stage: str, title: str) -> Edit:
    def edit(run: Run) -> None:
        st = run.tables["stages"]
        st.loc[st["stage"] == stage, "title"] = title

    return edit


def set_stage_field(stage: str, **fields: str) -> Edit:
    """Set `stages` columns of one stage (status, reason, technique...)."""

    def edit(run: Run) -> None:
        st = run.tables["stages"]
        for column, value in fields.items():
            st.loc[st["stage"] == stage, column] = value

    return edit


def rename_kernel(old: str, new: str) -> Edit:
    """Rename a kernel (or copy) wherever a table names it."""

    def edit(run: Run) -> None:
        for name in ("gpu_activities", "gpu_trace", "metrics"):
            if name in run.tables:
                df = run.tables[name]
                df.loc[df["name"] == old, "name"] = new

    return edit


def rename_range(old: str, new: str) -> Edit:
    """Rename an NVTX range wherever a table names it."""

    def edit(run: Run) -> None:
        for name, column in (("ranges", "name"), ("range_trace", "name"), ("gpu_trace", "range")):
            if name in run.tables:
                df = run.tables[name]
                df.loc[df[column] == old, column] = new

    return edit


def rekey(old: str, new: str) -> Edit:
    """Rename a stage key in every table and in run.json."""

    def edit(run: Run) -> None:
        for df in run.tables.values():
            if "stage" in df.columns:
                df.loc[df["stage"] == old, "stage"] = new
        for key in ("stages",):
            if isinstance(run.meta.get(key), list):
                run.meta[key] = [new if s == old else s for s in run.meta[key]]

    return edit


def set_meta(**fields: object) -> Edit:
    """Set run.json fields; `machine_gpu=...` sets meta["machine"]["gpu"]."""

    def edit(run: Run) -> None:
        for key, value in fields.items():
            if key.startswith("machine_"):
                run.meta.setdefault("machine", {})[key[len("machine_") :]] = value
            else:
                run.meta[key] = value

    return edit


def edited(run: Run, edits: Iterable[Edit]) -> Run:
    """A copy of `run` with `edits` applied."""
    copy = Run(
        meta=json.loads(json.dumps(run.meta)),
        tables={k: v.copy() for k, v in run.tables.items()},
        path=run.path,
    )
    for edit in edits:
        edit(copy)
    return copy


def write_edited_copy(dest: Path, edits: Iterable[Edit], source: Path = SAMPLE_RUN) -> Path:
    """Copy `source`'s CSVs and run.json (not raw/ nor the report) to `dest`, apply `edits` and
    write back the tables they changed (and run.json). Returns `dest`."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("raw", "report.html"))
    before = store.load_run(dest)
    after = edited(before, edits)
    for name, df in after.tables.items():
        if not df.equals(before.tables[name]):
            tablecsv.write_csv(df, schema.table(name), dest / f"{name}.csv")
    if after.meta != before.meta:
        (dest / store.RUN_JSON).write_text(json.dumps(after.meta, indent=1))
    return dest
