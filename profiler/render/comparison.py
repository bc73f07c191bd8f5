"""The comparison of two runs as text: `profgen compare`'s table, and the phrases the Markdown
summary and the JUnit file share (how sure, one line per verdict). Numbers are formatted by
`profiler.render.units`.

Input is always a DataFrame with `schema.REGRESSIONS` columns; nothing is decided here. The
phrases hold run text (stage keys, kernel names clipped to `escape.NAME_LIMIT`) unescaped: each
target escapes them its own way. The text table is for a terminal and escapes them for one.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any

import pandas as pd

from profiler.render import data, units
from profiler.render.escape import clip, terminal

Row = Mapping[Hashable, Any]  # one record of a `schema.REGRESSIONS` frame
FORMATS = ("text", "csv", "json")
_NAME_WIDTH = 48
_STAGE_WIDTH = 32
_PLURAL = {"regression": "regressions", "improvement": "improvements"}
_ORDER = ("regression", "failed", "improvement", "unchanged", "skipped", "missing", "incomparable")
# why a stage or kernel was not compared, by verdict
NOT_COMPARED = {
    "failed": "did not PASS in the baseline or in this run (a failed stage exits 3)",
    "skipped": "was SKIPPED in the baseline or in this run",
    "missing": "is in only one of the runs (or has no samples)",
    "incomparable": "was measured differently in the two runs (an imported stage's span against "
    "a measured time or another span, or per repeat against a whole-program total): not compared",
}


def format_significance(row: Row) -> str:
    """`p=0.0002` (Mann-Whitney), `ranges apart` / `ranges overlap` (interval overlap), or `-`."""
    method = row.get("method")
    if method == "mann-whitney":
        return f"p={float(row['p_value']):.2g}"
    if method == "interval-overlap":
        return "ranges apart" if bool(row["significant"]) else "ranges overlap"
    return "-"


def format_share(share: Any) -> str:
    """A kernel's share of its stage's GPU time, `12.3%`; `-` for stages or when unknown."""
    if units.is_missing(share) or not math.isfinite(float(share)):
        return units.MISSING
    return units.pct(share, 1)


def subject(row: Row) -> str:
    """What a row is about: `stage conv_opt` or `kernel fc1 in fc_opt` (names clipped)."""
    name = row.get("name")
    if isinstance(name, str):
        return f"kernel {clip(name)} in {clip(row['stage'])}"
    return f"stage {clip(row['stage'])}"


def describe(row: Row) -> str:
    """One sentence: what changed, by how much, how sure, and (kernels) how much it matters."""
    verdict = row["verdict"]
    if verdict in NOT_COMPARED:
        return f"{subject(row)} {NOT_COMPARED[verdict]} [{row['check']}]"
    text = (
        f"{subject(row)}: {units.duration(row['base_ns'])} -> {units.duration(row['new_ns'])} "
        f"({units.gain(row['ratio'])}, threshold {float(row['threshold_pct']):.3g}%), "
        f"{'significant' if bool(row['significant']) else 'not significant'} "
        f"({format_significance(row)}) [{row['check']}]"
    )
    if isinstance(row.get("name"), str):
        text += f"; {format_share(row['share_pct'])} of the stage's GPU time"
    return text


def verdict_counts(regressions: pd.DataFrame) -> dict[str, int]:
    """How many rows have each verdict, in a fixed order (verdicts with no row left out)."""
    counts = regressions["verdict"].value_counts()
    return {v: int(counts[v]) for v in _ORDER if v in counts.index}


def counts_line(regressions: pd.DataFrame) -> str:
    """`1 regression, 0 improvements, 70 unchanged`-style line (always names regressions)."""
    counts = verdict_counts(regressions)
    counts.setdefault("regression", 0)
    ordered = sorted(counts.items(), key=lambda kv: _ORDER.index(kv[0]))
    return ", ".join(f"{n} {v if n == 1 else _PLURAL.get(v, v)}" for v, n in ordered)


def format_comparison(regressions: pd.DataFrame, fmt: str = "text") -> str:
    """The comparison table as `text` (aligned columns and a counts line), `csv` or `json`.

    Raises: ValueError for an unknown format.
    """
    if fmt == "csv":
        return data.to_csv(regressions)
    if fmt == "json":
        return data.to_json(regressions)
    if fmt != "text":
        raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    return _text_table(regressions) + counts_line(regressions) + "\n"


def _text_table(regressions: pd.DataFrame) -> str:
    header = (
        "check",
        "stage",
        "kernel",
        "before",
        "after",
        "change",
        "significance",
        "share",
        "verdict",
    )
    rows = [header]
    for row in regressions.to_dict("records"):
        name = terminal(row["name"], _NAME_WIDTH) if isinstance(row["name"], str) else ""
        rows.append(
            (
                terminal(row["check"], _STAGE_WIDTH),
                terminal(row["stage"], _STAGE_WIDTH),
                name,
                units.duration(row["base_ns"]),
                units.duration(row["new_ns"]),
                units.gain(row["ratio"]),
                format_significance(row),
                format_share(row["share_pct"]),
                terminal(row["verdict"]).upper()
                if row["verdict"] in ("regression", "failed")
                else terminal(row["verdict"]),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    return "\n".join(lines) + "\n"
