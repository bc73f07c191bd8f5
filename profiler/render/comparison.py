"""The comparison of two runs as text: `profgen compare`'s table, and the phrases the Markdown
summary and the JUnit file share (times with units, changes, how sure, one line per verdict).

Input is always a DataFrame with `schema.REGRESSIONS` columns; nothing is decided here.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any

import pandas as pd

Row = Mapping[Hashable, Any]  # one record of a `schema.REGRESSIONS` frame
FORMATS = ("text", "csv", "json")
_NAME_WIDTH = 48
_PLURAL = {"regression": "regressions", "improvement": "improvements"}
_ORDER = ("regression", "failed", "improvement", "unchanged", "skipped", "missing")


def format_ns(ns: Any) -> str:
    """A duration with a unit and four significant digits: `1.234 ms`; `-` when missing."""
    if ns is None or ns is pd.NA or (isinstance(ns, float) and math.isnan(ns)):
        return "-"
    value = float(ns)
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
        if abs(value) >= scale:
            return f"{value / scale:.4g} {unit}"
    return f"{value:.4g} ns"


def format_change(ratio: Any) -> str:
    """`+12.3%` / `-4.0%` from a new/base ratio; `-` when missing."""
    if ratio is None or ratio is pd.NA or not math.isfinite(float(ratio)):
        return "-"
    return f"{(float(ratio) - 1.0) * 100.0:+.1f}%"


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
    if share is None or share is pd.NA or not math.isfinite(float(share)):
        return "-"
    return f"{float(share):.1f}%"


def subject(row: Row) -> str:
    """What a row is about: `stage conv_opt` or `kernel fc1 in fc_opt`."""
    name = row.get("name")
    if isinstance(name, str):
        return f"kernel {name} in {row['stage']}"
    return f"stage {row['stage']}"


def describe(row: Row) -> str:
    """One sentence: what changed, by how much, how sure, and (kernels) how much it matters."""
    verdict = row["verdict"]
    if verdict in ("failed", "skipped", "missing"):
        why = {
            "failed": "did not PASS in the baseline or in this run (a failed stage exits 3)",
            "skipped": "was SKIPPED in the baseline or in this run",
            "missing": "is in only one of the runs (or has no samples)",
        }[verdict]
        return f"{subject(row)} {why} [{row['check']}]"
    text = (
        f"{subject(row)}: {format_ns(row['base_ns'])} -> {format_ns(row['new_ns'])} "
        f"({format_change(row['ratio'])}, threshold {float(row['threshold_pct']):.3g}%), "
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
        return str(regressions.to_csv(index=False))
    if fmt == "json":
        return str(regressions.to_json(orient="records", indent=1)) + "\n"
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
        name = row["name"] if isinstance(row["name"], str) else ""
        if len(name) > _NAME_WIDTH:
            name = name[: _NAME_WIDTH - 3] + "..."
        rows.append(
            (
                str(row["check"]),
                str(row["stage"]),
                name,
                format_ns(row["base_ns"]),
                format_ns(row["new_ns"]),
                format_change(row["ratio"]),
                format_significance(row),
                format_share(row["share_pct"]),
                str(row["verdict"]).upper()
                if row["verdict"] in ("regression", "failed")
                else str(row["verdict"]),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    return "\n".join(lines) + "\n"
