"""A short Markdown summary of a run, fit for a CI job's summary page (`$GITHUB_STEP_SUMMARY`).

It holds the staged table (time for all items, spread, speedup against the previous stage,
verdict), Amdahl by phase when the study names its phases (`profiler.render.phase_section`),
and, when the run was compared with a baseline, the counts of verdicts, every
regression and failed stage, and the improvements. Inputs are tables; nothing is decided here.

Every piece of run text goes through `profiler.render.escape`: code spans (`markdown_code`) no
backtick can close, prose (`markdown_text`) in which no HTML, link or image can form, one line
each, bounded in length. GitHub renders job summaries with raw HTML allowed, so this matters.
"""

from __future__ import annotations

from typing import Any, Protocol

import pandas as pd

from profiler import schema
from profiler.analyze.stages import staged_table
from profiler.render import phase_section, timing, units
from profiler.render.comparison import counts_line, describe, format_share, format_significance
from profiler.render.escape import TEXT_LIMIT, markdown_code, markdown_text


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
    phases = phase_section.markdown(phase_section.analysis(run))
    parts = [_heading(run), _staged(stages, run.meta), phases, _regressions(regressions)]
    return "\n\n".join(p for p in parts if p) + "\n"


def _heading(run: RunLike) -> str:
    meta = run.meta
    machine = meta.get("machine") or {}
    if not isinstance(machine, dict):
        machine = {}
    gpu = next((machine[k] for k in ("gpu", "gpu_name", "name") if machine.get(k)), "")
    title = f"## profgen: {markdown_text(meta.get('model') or 'run')}"
    title += f" on {markdown_text(gpu)}" if gpu else ""
    command = markdown_code(meta.get("command"), TEXT_LIMIT, in_table=False)
    return title + (f"\n\n{command}" if command else "")


def _staged(stages: pd.DataFrame, meta: dict[str, Any]) -> str:
    if stages.empty:
        return "_No stages._"
    staged = staged_table(stages)
    heading = markdown_text(timing.time_heading(staged, str(meta.get("unit") or "items")))
    lines = [
        f"| # | Stage | {heading} | Spread | Speedup vs previous | Verdict |",
        "| ---: | --- | ---: | ---: | ---: | --- |",
    ]
    for row in staged.to_dict("records"):
        ok = row["status"] in (schema.PASS, schema.IMPORTED)
        time = units.seconds(row["median_ns"]) if ok else units.MISSING
        status = markdown_text(row["status"])
        note = timing.time_note(row)  # IMPORTED: neither a pass nor a failure, and its time's span
        if note is not None:
            verdict = f"{status}: time is the {markdown_text(note, TEXT_LIMIT)}"
        else:
            verdict = status if ok else f"**{status}**: {markdown_text(row['reason'], TEXT_LIMIT)}"
        lines.append(
            f"| {row['order'] + 1} | {markdown_code(row['stage'])} {markdown_text(row['title'])} "
            f"| {time} | {units.pct(row['spread_pct'], 1)} | {units.speedup(row['speedup_prev'])} "
            f"| {verdict} |"
        )
    return "\n".join(lines)


def _regressions(regressions: pd.DataFrame) -> str:
    if regressions.empty:
        return "_Not compared with a baseline._"
    checks = ", ".join(
        markdown_code(c, in_table=False) for c in dict.fromkeys(regressions["check"])
    )
    out = [f"### Against the baseline\n\n{counts_line(regressions)} (checks: {checks})"]
    bad = regressions[regressions["verdict"] == "regression"]
    if not bad.empty:
        out.append("#### Regressions\n\n" + _rows_table(bad))
    failed = regressions[regressions["verdict"] == "failed"]
    if not failed.empty:
        lines = [
            f"- {markdown_text(describe(r), TEXT_LIMIT)}"
            for r in failed.drop_duplicates("stage").to_dict("records")
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
        name = markdown_code(r["name"]) if isinstance(r["name"], str) else "(end to end)"
        lines.append(
            f"| {markdown_code(r['check'])} | {markdown_code(r['stage'])} | {name} "
            f"| {units.duration(r['base_ns'])} | {units.duration(r['new_ns'])} "
            f"| {units.gain(r['ratio'])} | {format_significance(r)} "
            f"| {format_share(r['share_pct'])} |"
        )
    return "\n".join(lines)
