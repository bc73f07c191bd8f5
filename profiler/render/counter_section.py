"""The counters section: for each stage with counters (`schema.COUNTERS`), a compact grid of
its first kernels against its first counters, each cell as the profiler printed it, saying how
many of each are left out. Pure: a run's tables in, records out (`analyze.counters` decides
what is shown).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from profiler.analyze.counters import counter_grid
from profiler.render.records import shown
from profiler.store import Run

#: kernels (rows) and counters (columns) each stage's grid shows at most
KERNELS, COUNTERS = 20, 12


def counter_section(run: Run, titles: Mapping[str, str]) -> list[dict[str, Any]] | None:
    """One grid per stage with counters, in the order the table lists them; None when the run
    has none."""
    if not run.has("counters"):
        return None
    counters = run.table("counters")
    stages = [str(s) for s in pd.unique(counters["stage"].dropna())]
    return [_stage_grid(counters, stage, titles) for stage in stages]


def _stage_grid(counters: pd.DataFrame, stage: str, titles: Mapping[str, str]) -> dict[str, Any]:
    grid = counter_grid(counters, stage, KERNELS, COUNTERS)
    columns = [
        {"metric": shown(m), "section": None if s is None else shown(s)}
        for s, m in zip(grid.columns["section"], grid.columns["metric"], strict=True)
    ]
    rows = [
        {
            "kernel_id": int(k),
            "name": shown(n),
            "cells": [None if c is None else shown(c) for c in cells],
        }
        for k, n, cells in zip(
            grid.kernels["kernel_id"], grid.kernels["name"], grid.cells, strict=True
        )
    ]
    return {
        "stage": shown(stage),
        "title": titles.get(stage, shown(stage)),
        "columns": columns,
        "rows": rows,
        "kernels": grid.all_kernels,
        "counters": grid.all_counters,
        "kernels_left": grid.all_kernels - len(rows),
        "counters_left": grid.all_counters - len(columns),
    }
