"""`profgen show`: one table of a run as text, CSV or JSON.

CSV and JSON use the schema's column names and raw values (durations in integer ns; JSON as
records with missing values as null), for scripts. Text is for people: `gpu_activities` and
`api_calls` look like nvprof's summary (`Type  Time(%)  Time  Calls  Avg  Min  Max  Name`, times
with units such as `1.2345ms`, a `==PROF== stage ...` line per stage); other tables are aligned
columns, durations with units.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from profiler import schema
from profiler.errors import UsageError
from profiler.store import Run

FORMATS = ("text", "csv", "json")
NVPROF_TABLES = {"gpu_activities": "GPU activities", "api_calls": "API calls"}
_WHERE = {
    "metrics": "Nsight Compute counters are collected by `profgen sweep --metrics` "
    "(or imported from `ncu --csv` output)",
    "regressions": "regression verdicts are written when a sweep is given --baseline",
    "batch_sweep": "batch-size timings are written by `profgen sweep --batch-sizes`",
}
_TIMESTAMPS = {"start_ns", "end_ns", "gpu_start_ns", "gpu_end_ns"}
# nvprof's column widths, Type to Max; Name follows after two spaces.
_NVPROF_HEADER = ("Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max")
_NVPROF_WIDTHS = (16, 9, 10, 10, 10, 10, 10)


def format_table(run: Run, name: str, stage: str | None = None, fmt: str = "text") -> str:
    """One of `run`'s tables, optionally one stage's rows, as `fmt` text ending in a newline.

    Raises: UsageError for an unknown table, format or stage, or a table this run does not have
        (saying how runs get it).
    """
    df = select(run, name, stage)
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "json":
        return json.dumps(records(df), indent=1, default=_plain) + "\n"
    if fmt != "text":
        raise UsageError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if name in NVPROF_TABLES:
        return nvprof_text(df, NVPROF_TABLES[name], _titles(run))
    return aligned_text(df)


def select(run: Run, name: str, stage: str | None) -> pd.DataFrame:
    """The table `name` of `run`, only `stage`'s rows when given.

    Raises: UsageError as `format_table`.
    """
    if name not in schema.TABLES:
        raise UsageError(f"unknown table {name!r}; choose one of: {', '.join(schema.TABLES)}")
    if name not in run.tables:
        have = ", ".join(sorted(run.tables)) or "none"
        why = _WHERE.get(name, "the run was made without it")
        raise UsageError(f"this run has no {name} table ({why}); its tables: {have}")
    df = run.tables[name]
    if stage is None:
        return df
    stages = _stage_keys(run)
    if stage not in stages:
        raise UsageError(f"unknown stage {stage!r}; this run's stages: {', '.join(stages)}")
    return df[(df["stage"] == stage).fillna(False).to_numpy()] if "stage" in df else df


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts of plain Python values, missing values as None."""
    columns = {
        c: [None if _missing(v) else v for v in df[c].astype(object).tolist()] for c in df.columns
    }
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]


def nvprof_time(ns: object) -> str:
    """Nanoseconds the way nvprof prints them: `928ns`, `1.8260ms`, `62.822us`, `8.56944s`
    (five significant digits, six for seconds)."""
    if _missing(ns):
        return "-"
    value = float(ns)  # type: ignore[arg-type]
    if abs(value) < 999.5:
        return f"{value:.0f}ns"
    value = max(value, 1000.0)
    for unit, factor in (("us", 1e3), ("ms", 1e6)):
        shown = f"{value / factor:#.5g}"
        if float(shown) < 1000:
            return shown + unit
    seconds = value / 1e9
    return (f"{seconds:#.6g}" if seconds < 1e5 else f"{seconds:.0f}") + "s"


def nvprof_text(df: pd.DataFrame, kind: str, titles: dict[str, str]) -> str:
    """gpu_activities or api_calls rows as nvprof printed them, one block per stage."""
    blocks = []
    for stage, rows in df.groupby("stage", sort=False):
        title = titles.get(str(stage), "")
        lines = [f"==PROF== stage {stage}" + (f": {title}" if title and title != stage else "")]
        cells = [
            [
                f"{kind}:" if i == 0 else "",
                f"{r.time_pct:.2f}%",
                nvprof_time(r.total_ns),
                str(r.calls),
                nvprof_time(r.avg_ns),
                nvprof_time(r.min_ns),
                nvprof_time(r.max_ns),
            ]
            for i, r in enumerate(rows.itertuples(index=False))
        ]
        widths = [
            max([w, *(len(c[j]) + (1 if j == 0 else 2) for c in cells)])
            for j, w in enumerate(_NVPROF_WIDTHS)
        ]
        lines.append(_row(_NVPROF_HEADER, widths) + "  Name")
        lines += [
            _row(c, widths) + f"  {r.name}"
            for c, r in zip(cells, rows.itertuples(index=False), strict=True)
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n" if blocks else f"(no {kind} rows)\n"


def aligned_text(df: pd.DataFrame) -> str:
    """Any table as aligned columns: durations with units, numbers right-aligned, NA as `-`."""
    if df.empty:
        return "  ".join(df.columns) + "\n(no rows)\n"
    headers, columns, right = [], [], []
    for col in df.columns:
        is_duration = col.endswith("_ns") and col not in _TIMESTAMPS
        headers.append(col[:-3] if is_duration else col)
        values = df[col].tolist()
        if is_duration:
            columns.append([nvprof_time(v) for v in values])
        else:
            columns.append([_cell(v, col) for v in values])
        right.append(df[col].dtype.kind in "iufb" or str(df[col].dtype) in ("Int64", "boolean"))
    widths = [
        max(len(h), *(len(v) for v in vals)) for h, vals in zip(headers, columns, strict=True)
    ]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        ).rstrip()

    out = [line(headers)] + [line(list(row)) for row in zip(*columns, strict=True)]
    return "\n".join(out) + "\n"


def _row(cells: tuple[str, ...] | list[str], widths: list[int]) -> str:
    return "".join(c.rjust(w) for c, w in zip(cells, widths, strict=True))


def _cell(value: object, column: str) -> str:
    if _missing(value):
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}" if column.endswith("_pct") else f"{value:.6g}"
    return str(value)


def _missing(value: object) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def _plain(value: object) -> object:
    item = getattr(value, "item", None)
    return item() if callable(item) else str(value)


def _stage_keys(run: Run) -> list[str]:
    if "stages" in run.tables:
        return [str(s) for s in run.tables["stages"]["stage"]]
    seen: dict[str, None] = {}
    for df in run.tables.values():
        if "stage" in df:
            seen.update(dict.fromkeys(str(s) for s in df["stage"].dropna()))
    return list(seen)


def _titles(run: Run) -> dict[str, str]:
    if "stages" not in run.tables:
        return {}
    stages = run.tables["stages"]
    return {
        str(k): str(t)
        for k, t in zip(stages["stage"], stages["title"], strict=True)
        if not _missing(t)
    }
