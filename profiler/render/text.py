"""`profgen show`: one table of a run as text, CSV or JSON.

CSV and JSON use the schema's column names and raw values (durations in integer ns; JSON as
records with missing values as null), for scripts: see `profiler.render.data`. Text is for
people: `gpu_activities` and `api_calls` look like nvprof's summary (`Type  Time(%)  Time  Calls
Avg  Min  Max  Name`, times with units such as `1.2345ms`, a `==PROF== stage ...` line per
stage); `stages` is a table that fits `WIDTH` columns (see `stages_text`); other tables are
aligned columns, durations with units. Run text in it is escaped for a terminal and clipped.
"""

from __future__ import annotations

import textwrap

import pandas as pd

from profiler import schema
from profiler.errors import UsageError
from profiler.render import data, units
from profiler.render.escape import NAME_LIMIT, TEXT_LIMIT, clip, terminal
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
WIDTH = 120  # what `show --table stages` fits in
MIN_TEXT = 16  # the narrowest a text column is clipped to
_PROSE = ("technique", "reason", "comparison")  # paragraphs: reasons are shown below the table
# left to csv and json: the order (the rows are in it), the overhead (profiled over median) and
# the absolute error (the relative one is shown)
_IMPLIED = ("order", "overhead_pct", "max_abs_err")
_SHARED = (
    "role",
    "items",
    "batch",
    "warmup",
    "repeats",
    "timing",
    "timing_range",
    "runtime",
    "topk_mismatches",
)
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
        return data.to_csv(df)
    if fmt == "json":
        return data.to_json(df)
    if fmt != "text":
        raise UsageError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if name in NVPROF_TABLES:
        return nvprof_text(df, NVPROF_TABLES[name], _titles(run))
    if name == schema.STAGES.name:
        return stages_text(df)
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


def nvprof_text(df: pd.DataFrame, kind: str, titles: dict[str, str]) -> str:
    """gpu_activities or api_calls rows as nvprof printed them, one block per stage."""
    blocks = []
    for stage, rows in df.groupby("stage", sort=False):
        title = titles.get(str(stage), "")
        shown = f": {terminal(title)}" if title and title != stage else ""
        lines = [f"==PROF== stage {terminal(stage)}{shown}"]
        cells = [
            [
                f"{kind}:" if i == 0 else "",
                f"{r.time_pct:.2f}%",
                units.nvprof_duration(r.total_ns),
                str(r.calls),
                units.nvprof_duration(r.avg_ns),
                units.nvprof_duration(r.min_ns),
                units.nvprof_duration(r.max_ns),
            ]
            for i, r in enumerate(rows.itertuples(index=False))
        ]
        widths = [
            max([w, *(len(c[j]) + (1 if j == 0 else 2) for c in cells)])
            for j, w in enumerate(_NVPROF_WIDTHS)
        ]
        lines.append(_row(_NVPROF_HEADER, widths) + "  Name")
        lines += [
            _row(c, widths) + f"  {terminal(r.name)}"
            for c, r in zip(cells, rows.itertuples(index=False), strict=True)
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n" if blocks else f"(no {kind} rows)\n"


def aligned_text(df: pd.DataFrame, width: int | None = None) -> str:
    """Any table as aligned columns: durations with units, numbers right-aligned, NA as `-`.

    Args:
        df: the table.
        width: when given, the widest text columns are clipped (down to `MIN_TEXT` characters)
            until a line fits; numbers are never clipped.
    """
    if df.empty:
        return "  ".join(terminal(c) for c in df.columns) + "\n(no rows)\n"
    headers, columns, right = [], [], []
    for col in df.columns:
        is_duration = str(col).endswith("_ns") and col not in _TIMESTAMPS
        headers.append(str(col)[:-3] if is_duration else str(col))
        values = df[col].tolist()
        if is_duration:
            columns.append([units.nvprof_duration(v) for v in values])
        else:
            columns.append([_cell(v, str(col)) for v in values])
        right.append(df[col].dtype.kind in "iufb" or str(df[col].dtype) in ("Int64", "boolean"))
    widths = [max(len(h), *(len(v) for v in vals)) for h, vals in zip(headers, columns)]  # noqa: B905
    if width is not None:
        widths = _fit(widths, right, width)

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if r else clip(c, w, tail=False).ljust(w)
            for c, w, r in zip(cells, widths, right, strict=True)
        ).rstrip()

    out = [line(headers)] + [line(list(row)) for row in zip(*columns, strict=True)]
    return "\n".join(out) + "\n"


def _fit(widths: list[int], right: list[bool], width: int) -> list[int]:
    """Column widths whose line fits `width`, narrowing the widest text column first."""
    widths = list(widths)
    while sum(widths) + 2 * (len(widths) - 1) > width:
        text_cols = [i for i, r in enumerate(right) if not r and widths[i] > MIN_TEXT]
        if not text_cols:
            break
        widest = max(text_cols, key=lambda i: widths[i])
        excess = sum(widths) + 2 * (len(widths) - 1) - width
        widths[widest] = max(MIN_TEXT, widths[widest] - excess)
    return widths


def stages_text(stages: pd.DataFrame, width: int = WIDTH) -> str:
    """The stages table for people, in `width` columns: a line of the settings every stage
    shares (items, batch, warm-ups, repeats...; one that no stage has is left out), a table of
    what differs (in study order, titles clipped to fit, without the techniques, which are
    paragraphs, the overhead, which is the profiled time over the median, and the absolute error:
    `--format csv` or `json` has them, nor columns no stage has a value in), then one line per
    stage that did not PASS saying why (imported stages share one note, wrapped to `width`: what
    their times are; and each has one per thing its tables lack: `_partial`).

    An imported stage has no items, batch or warm-ups, and repeats only when the user said how
    many the program ran: those show as missing, never as 0."""
    df = _not_applicable(stages.drop(columns=[c for c in (*_PROSE, *_IMPLIED) if c in stages]))
    empty = [c for c in df.columns if c not in _KEYS and all(map(_missing, df[c]))]
    df = df.drop(columns=empty)  # a column no stage has a value in says nothing (an import's min)
    shared = [
        c for c in _SHARED if c in df.columns and len(df) > 1 and df[c].nunique(dropna=False) == 1
    ]
    said = [c for c in shared if not _missing(df[c].iloc[0])]
    head = ", ".join(f"{c} {_cell(df[c].iloc[0], c)}" for c in said)
    body = aligned_text(df.drop(columns=shared), width)
    notes = [
        clip(f"{terminal(r['status'], 16)} {terminal(r['stage'])}: {terminal(r['reason'])}", width)
        for r in stages.to_dict("records")
        if r["status"] not in (schema.PASS, schema.IMPORTED) and not _missing(r["reason"])
    ]
    if (stages["status"] == schema.IMPORTED).any():
        # wrapped, never clipped: it is what says what an imported time is
        notes.append(textwrap.fill(f"{schema.IMPORTED}: {IMPORTED_NOTE}", width))
        notes += _partial(stages, width)
    return (f"{head}\n" if head else "") + body + "".join(f"{n}\n" for n in notes)


def _partial(stages: pd.DataFrame, width: int) -> list[str]:
    """One note per thing an imported stage's tables lack (`schema.PARTIAL` in its technique:
    rows a paste elided, a table of its top rows only), wrapped, never clipped: its time is
    not the whole program's."""
    imported = stages[stages["status"] == schema.IMPORTED]
    return [
        textwrap.fill(f"partial {terminal(r['stage'])}: {terminal(said, TEXT_LIMIT)}", width)
        for r in imported.to_dict("records")
        for said in str(r.get("technique") or "").split(schema.PARTIAL)[1:]
    ]


_KEYS = ("stage", "title", "status")
IMPORTED_NOTE = (
    "made from profiler output found elsewhere (profgen import); not checked against a "
    "reference. timing says what the time is: nvtx_range (that range's total), gpu_span (first "
    "GPU start to last end), gpu_time (summed GPU activity time); per repeat when repeats is "
    "given, else for the whole program"
)


def _not_applicable(df: pd.DataFrame) -> pd.DataFrame:
    """Imported stages' items, batch and warm-ups, and repeats not said, as missing."""
    imported = (df["status"] == schema.IMPORTED).to_numpy() if "status" in df else None
    if imported is None or not imported.any():
        return df
    out = df.copy()
    for col in ("items", "batch", "warmup", "repeats"):
        if col in out:
            values = out[col].astype("Int64")
            unknown = imported if col != "repeats" else imported & (values == 0).to_numpy()
            out[col] = values.mask(unknown)
    return out


def _row(cells: tuple[str, ...] | list[str], widths: list[int]) -> str:
    return "".join(c.rjust(w) for c, w in zip(cells, widths, strict=True))


def _cell(value: object, column: str) -> str:
    if _missing(value):
        return "-"
    if isinstance(value, float):
        if column.endswith("_pct"):
            return f"{value:.2f}"
        return f"{value:.3g}" if column.endswith("_err") else f"{value:.6g}"
    return terminal(value, NAME_LIMIT)


def _missing(value: object) -> bool:
    return units.is_missing(value)


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
