"""The staged table as the terminal shows it at the end of `profgen sweep` and `profgen run`."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from rich.console import Group
from rich.table import Table
from rich.text import Text

from profiler import schema
from profiler.analyze.stages import staged_table


def seconds(ns: Any) -> str:
    """`0.0137s`: seconds to four significant digits, as the study wrote them."""
    if ns is None or ns is pd.NA or (isinstance(ns, float) and math.isnan(ns)):
        return "-"
    return f"{float(ns) / 1e9:.4g}s"


def speedup(x: Any) -> str:
    return "-" if pd.isna(x) else f"{x:.3g}x"


def staged_rich_table(stages: pd.DataFrame, items: int, unit: str, title: str = "") -> Group:
    """The staged table for the terminal: title, time for N items (median, min-max), speedups
    against the previous stage and the baseline, max relative error, verdict; then, one line
    each, why the stages that did not PASS did not."""
    staged = staged_table(stages)
    table = Table(title=f"{title}, {items:,} {unit}" if title else None)
    for name, justify in (
        ("Stage", "left"),
        (f"Time ({items:,} {unit})", "right"),
        ("min-max", "right"),
        ("vs previous", "right"),
        ("vs baseline", "right"),
        ("max rel err", "right"),
        ("Verdict", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    notes = []
    for row in staged.to_dict("records"):
        err = "-" if pd.isna(row["max_rel_err"]) else f"{row['max_rel_err']:.1e}"
        status = str(row["status"])
        style = {"PASS": "green", "SKIPPED": "yellow"}.get(status, "bold red")
        table.add_row(
            str(row["title"]),
            seconds(row["median_ns"]),
            f"{seconds(row['min_ns'])}-{seconds(row['max_ns'])}",
            speedup(row["speedup_prev"]),
            speedup(row["speedup_baseline"]),
            err,
            f"[{style}]{status}[/]",
        )
        if status != schema.PASS and not pd.isna(row["reason"]):
            notes.append(Text(f"{status} {row['title']}: {row['reason']}", style=style))
    return Group(table, *notes)
