"""A short Markdown summary of a run, fit for a CI job's summary page (`$GITHUB_STEP_SUMMARY`).

It holds the staged table (time for all images, spread, speedup against the previous stage,
verdict) and, when the run was compared with a baseline, the counts of verdicts, every
regression and failed stage, and the improvements. Inputs are tables; nothing is decided here.
"""

from __future__ import annotations

from typing import Any, Protocol

import pandas as pd

from profiler import schema
from profiler.analyze.stages import staged_table
from profiler.render.comparison import (
    counts_line,
    describe,
    format_change,
    format_ns,
    format_share,
    format_significance,
)


class RunLike(Protocol):
    """What the summary reads from a run (`store.Run` is one)."""

    meta: dict[str, Any]

    def table(self, name: str) -> pd.DataFrame: ...


def summary_markdown(run: RunLike, regressions: pd.DataFrame) -> str:
    """The Markdown summary of `run` and its comparison with a baseline.

    Args:
        run: the run (its `stages` table and run.json metadata are read).
        regressions: DataFrame with `schema.REGRESSIONS` columns; empty when not compared.

    Returns: Markdown text ending in a newline.
    """
    stages = run.table(schema.STAGES.name)
    parts = [_heading(run), _staged(stages, run.meta), _regressions(regressions)]
    return "\n\n".join(p for p in parts if p) + "\n"


def _heading(run: RunLike) -> str:
    meta = run.meta
    machine = meta.get("machine") or {}
    gpu = next((str(machine[k]) for k in ("gpu", "gpu_name", "name") if machine.get(k)), "")
    title = f"## profgen: {meta.get('model', 'run')}" + (f" on {gpu}" if gpu else "")
    return title + (f"\n\n`{meta['command']}`" if meta.get("command") else "")


def _staged(stages: pd.DataFrame, meta: dict[str, Any]) -> str:
    if stages.empty:
        return "_No stages._"
    staged = staged_table(stages)
    items, unit = int(staged["items"].max()), str(meta.get("unit") or "items")
    lines = [
        f"| # | Stage | Time for {items:,} {unit} | Spread | Speedup vs previous | Verdict |",
        "| ---: | --- | ---: | ---: | ---: | --- |",
    ]
    for row in staged.to_dict("records"):
        ok = row["status"] == schema.PASS
        time = f"{row['median_ns'] / 1e9:.4g}s" if ok and not pd.isna(row["median_ns"]) else "-"
        spread = "-" if pd.isna(row["spread_pct"]) else f"{row['spread_pct']:.1f}%"
        speedup = "-" if pd.isna(row["speedup_prev"]) else f"{row['speedup_prev']:.2f}x"
        verdict = row["status"] if ok else f"**{row['status']}**: {_cell(row['reason'])}"
        lines.append(
            f"| {row['order'] + 1} | `{_cell(row['stage'])}` {_cell(row['title'])} | {time} "
            f"| {spread} | {speedup} | {verdict} |"
        )
    return "\n".join(lines)


def _regressions(regressions: pd.DataFrame) -> str:
    if regressions.empty:
        return "_Not compared with a baseline._"
    checks = ", ".join(f"`{c}`" for c in dict.fromkeys(regressions["check"]))
    out = [f"### Against the baseline\n\n{counts_line(regressions)} (checks: {checks})"]
    bad = regressions[regressions["verdict"] == "regression"]
    if not bad.empty:
        out.append("#### Regressions\n\n" + _rows_table(bad))
    failed = regressions[regressions["verdict"] == "failed"]
    if not failed.empty:
        lines = [
            f"- {_cell(describe(r))}" for r in failed.drop_duplicates("stage").to_dict("records")
        ]
        out.append("#### Failed stages\n\n" + "\n".join(lines))
    good = regressions[regressions["verdict"] == "improvement"]
    if not good.empty:
        out.append("#### Improvements\n\n" + _rows_table(good))
    return "\n\n".join(out)


def _rows_table(rows: pd.DataFrame) -> str:
    lines = [
        "| Check | Stage | Kernel | Before | After | Change | Significance "
        "| Share of stage GPU time |",
        "| --- | --- | --- | ---: | ---: | ---: | --- | ---: |",
    ]
    for r in rows.to_dict("records"):
        name = f"`{_cell(r['name'])}`" if isinstance(r["name"], str) else "(end to end)"
        lines.append(
            f"| `{r['check']}` | `{_cell(r['stage'])}` | {name} | {format_ns(r['base_ns'])} "
            f"| {format_ns(r['new_ns'])} | {format_change(r['ratio'])} "
            f"| {format_significance(r)} | {format_share(r['share_pct'])} |"
        )
    return "\n".join(lines)


def _cell(value: Any) -> str:
    """Text safe inside a Markdown table cell (and a code span): no pipes, backticks, newlines."""
    if value is None or value is pd.NA:
        return ""
    return " ".join(str(value).split()).replace("|", "\\|").replace("`", "'")
