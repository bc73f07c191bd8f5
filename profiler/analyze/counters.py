"""A stage's counters (`schema.COUNTERS`) as a grid: kernels down, counters across, the first
few of each, each cell the value as the profiler printed it. Pure: a table in, a table out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Grid:
    """The first kernels (rows: `kernel_id`, `name`) and counters (`columns`: section and
    metric) of a stage, `cells[i][j]` kernel i's counter j as printed (with its unit when the
    printed value does not end in it; None where the kernel has no such counter), and how many
    kernels and counters the stage has in all."""

    kernels: pd.DataFrame
    columns: pd.DataFrame
    cells: list[list[str | None]]
    all_kernels: int
    all_counters: int


def counter_grid(counters: pd.DataFrame, stage: str, kernels: int, metrics: int) -> Grid:
    """The grid of `stage`'s counters: its first `kernels` kernels (by `kernel_id`, in the
    order the profiler printed them) and first `metrics` counters (section and metric, in the
    order first printed).

    Args:
        counters: DataFrame with `schema.COUNTERS` columns (all stages).
        stage: the stage key.
        kernels, metrics: how many of each the grid holds at most.
    """
    mine = counters[(counters["stage"] == stage).fillna(False).to_numpy()]
    ids = pd.unique(mine["kernel_id"].to_numpy())
    first_ids = ids[:kernels]
    label = mine["section"].fillna("").astype(str) + "\x1f" + mine["metric"].astype(str)
    codes, labels = pd.factorize(label)
    keep = np.isin(mine["kernel_id"].to_numpy(), first_ids) & (codes < metrics)
    picked = mine[keep].assign(column=codes[keep]).drop_duplicates(["kernel_id", "column"])
    row_of = {int(k): i for i, k in enumerate(first_ids.tolist())}
    cells: list[list[str | None]] = [[None] * min(metrics, len(labels)) for _ in row_of]
    for kid, col, text, unit in zip(
        picked["kernel_id"].tolist(),
        picked["column"].tolist(),
        picked["text"].tolist(),
        picked["unit"].tolist(),
        strict=True,
    ):
        cells[row_of[int(kid)]][int(col)] = _cell(text, unit)
    names = mine.drop_duplicates("kernel_id").set_index("kernel_id")["name"]
    rows = pd.DataFrame({"kernel_id": first_ids, "name": names.loc[first_ids].to_numpy()})
    split = [str(s).partition("\x1f") for s in labels[:metrics]]
    columns = pd.DataFrame(
        {"section": [s or None for s, _, _ in split], "metric": [m for _, _, m in split]}
    )
    return Grid(rows, columns, cells, len(ids), len(labels))


def _cell(text: object, unit: object) -> str | None:
    """A counter as the grid shows it: its text, and its unit unless the text ends in it."""
    if not isinstance(text, str):  # (missing)
        return None
    shown = str(text)
    if isinstance(unit, str) and unit and not shown.endswith(unit):
        shown = f"{shown} {unit}"
    return shown
