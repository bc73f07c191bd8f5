"""Amdahl by phase, as the report, the terminal and the Markdown summary show it: the steps
between consecutive custom stages (phases changed, P, S, predicted and measured gain, why they
differ), the one-sentence answer, and the per-block table. `profiler.analyze.phase_amdahl`
decides every number; this module only lays them out.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from profiler.analyze import phase_amdahl
from profiler.analyze.phase_amdahl import EXPLAIN_PP, PhaseAmdahl
from profiler.render import units
from profiler.render.escape import TEXT_LIMIT, markdown_code, markdown_text, terminal
from profiler.render.records import records, shown

AGREES = f"agrees within {EXPLAIN_PP:g} pp"


def analysis(run: Any) -> PhaseAmdahl | None:
    """The phase-level Amdahl analysis of `run` (anything with `meta` and `table(name)`), or
    None when fewer than two custom stages name their phases."""
    return phase_amdahl.analyse(
        run.table("ranges"), run.table("gpu_trace"), run.table("stages"), run.meta.get("model")
    )


def phase_section(result: PhaseAmdahl | None, titles: Mapping[str, str]) -> dict[str, Any] | None:
    """The report's section: records for `_phase_amdahl.html.j2`; None without an analysis."""
    if result is None:
        return None
    steps = records(result.steps)
    for s in steps:
        s["prev_title"] = titles.get(s["prev_stage"], s["prev_stage"])
        s["title"] = titles.get(s["stage"], s["stage"])
        s["why"] = s["explanation"] or AGREES
        s["agrees"] = not s["explanation"]
        per = s["forwards"] or 1.0
        s["before_per_forward_ns"] = s["prev_changed_ns"] / per
        s["after_per_forward_ns"] = s["changed_ns"] / per
    return {
        "sentence": shown(result.sentence) if result.sentence else None,
        "case": shown(result.case["stage"]) if result.case is not None else None,
        "steps": steps,
        "unverified": int(result.steps["unverified"].sum()),
        "explain_pp": EXPLAIN_PP,
        "blocks": _blocks(result),
    }


def _blocks(result: PhaseAmdahl) -> dict[str, Any] | None:
    table = result.blocks
    if table.empty:
        return None
    stages = [shown(s) for s in result.phases.stages]
    steps = [shown(s) for s in result.steps["stage"]]
    rows = []
    for block, row in table.iterrows():
        rows.append({
            "block": shown(block),
            "shares": [units_value(row[f"share:{s}"]) for s in result.phases.stages],
            "speedups": [
                {"value": units_value(row[f"speedup:{s}"]), "changed": bool(row[f"changed:{s}"])}
                for s in result.steps["stage"]
            ],
        })
    return {"stages": stages, "steps": steps, "rows": rows}


def units_value(value: Any) -> float | None:
    """A cell as a float, None when missing."""
    return None if units.is_missing(value) else float(value)


# --- text: the terminal after `profgen sweep`, and the Markdown summary -------------------------

HEADERS = ("From", "To", "Phases changed", "P", "S", "Predicted", "Measured", "Difference")


def _cells(row: Mapping[Any, Any], key: Callable[[Any], str], text: Callable[[Any], str]
           ) -> tuple[str, ...]:
    """A step's cells; `key` formats stage keys, `text` the list of phases."""
    return (
        key(row["prev_stage"]),
        key(row["stage"]),
        text(row["changed_names"]),
        units.pct(row["share_pct"], 1),
        units.speedup(row["speedup"]),
        _gain(row["predicted"]),
        _gain(row["measured"]),
        f"{row['diff_pp']:+.2f} pp" if not units.is_missing(row["diff_pp"]) else units.MISSING,
    )


def _gain(ratio: Any) -> str:
    return units.MISSING if units.is_missing(ratio) else f"{(float(ratio) - 1.0) * 100.0:+.2f}%"


def plain_text(result: PhaseAmdahl | None) -> str:
    """The steps as aligned plain text, each explanation below, then the one sentence; "" when
    there is no analysis."""
    if result is None:
        return ""
    rows = result.steps.to_dict("records")
    name = functools.partial(terminal, limit=TEXT_LIMIT)
    table = [HEADERS, *(_cells(r, name, name) for r in rows)]
    widths = [max(len(r[i]) for r in table) for i in range(len(HEADERS))]
    right = (False, False, False, True, True, True, True, True)
    lines = ["Amdahl by phase: P is the changed phases' share of the previous stage's time, "
             "S their local speedup"]
    for r in table:
        cells = zip(r, widths, right, strict=True)
        lines.append("  ".join(c.rjust(w) if ri else c.ljust(w) for c, w, ri in cells).rstrip())
    lines += [f"{terminal(r['prev_stage'])} -> {terminal(r['stage'])}: "
              f"{terminal(r['explanation'], TEXT_LIMIT)}" for r in rows if r["explanation"]]
    if result.sentence:
        lines.append(terminal(result.sentence, TEXT_LIMIT))
    return "\n".join(lines) + "\n"


def markdown(result: PhaseAmdahl | None) -> str:
    """The steps as a Markdown table, the explanations and the one sentence; "" without an
    analysis."""
    if result is None:
        return ""
    lines = ["### Amdahl by phase", ""]
    if result.sentence:
        lines += [markdown_text(result.sentence, TEXT_LIMIT), ""]
    lines += ["| " + " | ".join(HEADERS) + " | Why |",
              "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in result.steps.to_dict("records"):
        cells = _cells(r, markdown_code, functools.partial(markdown_text, limit=TEXT_LIMIT))
        why = markdown_text(r["explanation"], TEXT_LIMIT) if r["explanation"] else AGREES
        lines.append("| " + " | ".join(cells) + f" | {why} |")
    return "\n".join(lines)
