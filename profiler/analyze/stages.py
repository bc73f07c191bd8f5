"""The staged table: one row per stage, its time, its spread and its speedups.

The study this generalises printed one line per optimisation step: the time for all items and
how much faster it is. Speedups are given against three references, each chosen by the roles the
study states, never guessed from a stage's key:

- the previous stage: the nearest earlier stage that PASSed with a time (a wrong or timed-out
  stage is never a reference),
- the baseline: the stage whose role is `baseline` (none: no such speedup),
- the best framework: the fastest stage whose role is `framework` and that PASSed.

A stage that did not PASS keeps its row, its status and its reason, and gets no speedups: a fast
wrong kernel must never look like a win. A speedup is reference time / stage time (> 1 is faster).

An imported stage (IMPORTED: nothing was checked) has a time of another kind, its `basis`: per
repeat when the user said how many repeats the program ran (`repeat`), else the whole program
(`program`), where a sweep's is the time for all items of one repeat (`items`). Its speedups are
against other imported stages only, and only those whose time is of the same basis and timing
(a GPU span is not set against a summed GPU time, nor a per-repeat time against a total); the
report says they were not checked for correctness.
"""

from __future__ import annotations

import math

import pandas as pd

from profiler import schema
from profiler.schema import Column

BASELINE, FRAMEWORK = "baseline", "framework"
ITEMS, REPEAT, PROGRAM = "items", "repeat", "program"  # column `basis`
SPEEDUP_STATUSES = (schema.PASS, schema.IMPORTED)  # a stage with one of these may be a reference

STAGED = schema.Table(
    "staged",
    "The staged table of the report: timing, spread, speedups and verdict per stage.",
    (
        Column("stage", "string"),
        Column("order", "int64"),
        Column("title", "string"),
        Column("technique", "string"),
        Column("role", "string", doc="`baseline`, `framework` or `step`"),
        Column("status", "string", doc="PASS, FAIL, TIMEOUT, ERROR, SKIPPED or IMPORTED"),
        Column("reason", "string", doc="why the stage did not PASS"),
        Column("items", "int64"),
        Column("batch", "int64"),
        Column("repeats", "int64"),
        Column("timing", "string", doc="what `median_ns` measures (`schema.TIMINGS`)"),
        Column("timing_range", "string", doc="the NVTX range that is the time (nvtx_range)"),
        Column(
            "basis",
            "string",
            doc="`items` (all items, one repeat), `repeat` (an import's time per repeat) or "
            "`program` (an import's whole-program total)",
        ),
        Column("median_ns", "Int64", "ns", "the stage's time, of its `basis` and `timing`"),
        Column("min_ns", "Int64", "ns"),
        Column("max_ns", "Int64", "ns"),
        Column("spread_pct", "float64", "%", "(max - min) / median over the timed repeats"),
        Column("prev_stage", "string", doc="the stage `speedup_prev` is measured against"),
        Column("speedup_prev", "float64", doc="previous PASS stage's time / this stage's time"),
        Column("speedup_baseline", "float64", doc="the baseline's time / this stage's time"),
        Column("speedup_framework", "float64", doc="best framework's time / this stage's time"),
        Column("max_rel_err", "float64"),
        Column("topk_mismatches", "Int64"),
        Column("profiled_median_ns", "Int64", "ns", "time of the profiled pass, median"),
        Column("overhead_pct", "float64", "%", "profiled over unprofiled time, minus 100"),
    ),
)


def baseline_key(stages: pd.DataFrame) -> str | None:
    """The stage whose role is `baseline`, or None.

    Args:
        stages: DataFrame with `schema.STAGES` columns.
    """
    ordered = stages.sort_values("order")
    keys = list(ordered.loc[ordered["role"].fillna("") == BASELINE, "stage"])
    return str(keys[0]) if keys else None


def framework_key(stages: pd.DataFrame) -> str | None:
    """The fastest framework stage that PASSed with a time, or None.

    Args:
        stages: DataFrame with `schema.STAGES` columns.
    """
    timed = _valid_times(stages)
    roles = stages["role"].fillna("")
    frameworks = [str(k) for k in stages.loc[roles == FRAMEWORK, "stage"] if k in timed]
    return min(frameworks, key=timed.__getitem__) if frameworks else None


def staged_table(stages: pd.DataFrame) -> pd.DataFrame:
    """Speedups and spread for every stage, in study order.

    Args:
        stages: DataFrame with `schema.STAGES` columns.

    Returns: DataFrame with `STAGED` columns, one row per stage, sorted by `order`.
    Raises: SchemaError when `stages` does not match `schema.STAGES`.
    """
    schema.validate(stages, schema.STAGES)
    df = stages.sort_values("order").reset_index(drop=True)
    df["basis"] = time_basis(df)
    timed = _valid_times(df)
    kinds = _kinds(df)
    median = df["median_ns"].astype("float64")
    df["spread_pct"] = (df["max_ns"] - df["min_ns"]).astype("float64") / median * 100.0
    df["prev_stage"] = _previous_valid(df, timed, kinds)
    df["speedup_prev"] = _ratio(df["prev_stage"], df, timed, kinds)
    for column, reference in (
        ("speedup_baseline", baseline_key(df)),
        ("speedup_framework", framework_key(df)),
    ):
        df[column] = _ratio(pd.Series(reference, index=df.index, dtype="string"), df, timed, kinds)
    return schema.validate(schema.conform(df, STAGED), STAGED)


def time_basis(stages: pd.DataFrame) -> pd.Series:
    """Each stage's `basis`: `items` for a measured stage, `repeat` or `program` for an import.

    Args:
        stages: DataFrame with `schema.STAGES` columns.
    """
    imported = (stages["status"] == schema.IMPORTED).to_numpy()
    per_repeat = (stages["repeats"] > 0).to_numpy()
    basis = [
        (REPEAT if r else PROGRAM) if i else ITEMS
        for i, r in zip(imported, per_repeat, strict=True)
    ]
    return pd.Series(basis, index=stages.index, dtype="string")


def _kinds(df: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Each stage's kind of time, (basis, timing): only times of one kind are set against each
    other."""
    timing = df["timing"].fillna(schema.HOST).astype(str)
    pairs = zip(df["stage"], df["basis"].astype(str), timing, strict=True)
    return {str(k): (b, t) for k, b, t in pairs}


def _valid_times(df: pd.DataFrame) -> dict[str, float]:
    """Time of every stage that PASSed (or was IMPORTED) with a positive time: the only valid
    references."""
    ok = df["status"].isin(SPEEDUP_STATUSES) & df["median_ns"].notna()
    ok &= df["median_ns"].fillna(0) > 0
    pairs = zip(df.loc[ok, "stage"], df.loc[ok, "median_ns"], strict=True)
    return {str(k): float(v) for k, v in pairs}


def _previous_valid(
    df: pd.DataFrame, timed: dict[str, float], kinds: dict[str, tuple[str, str]]
) -> pd.Series:
    """For each row, the key of the nearest earlier stage with a valid time of the same kind
    (or <NA>)."""
    out: list[str | None] = []
    last: dict[tuple[str, str], str] = {}
    for key in df["stage"]:
        out.append(last.get(kinds[str(key)]))
        if key in timed:
            last[kinds[str(key)]] = str(key)
    return pd.Series(out, index=df.index, dtype="string")


def _ratio(
    reference: pd.Series,
    df: pd.DataFrame,
    timed: dict[str, float],
    kinds: dict[str, tuple[str, str]],
) -> pd.Series:
    """The reference stage's time / own time, for rows with a valid own time and a reference of
    the same kind; NaN elsewhere."""
    out = []
    for ref, own in zip(reference, df["stage"], strict=True):
        same = isinstance(ref, str) and kinds.get(ref) == kinds.get(str(own))
        value = timed.get(ref, math.nan) / timed.get(str(own), math.nan) if same else math.nan
        out.append(value)
    return pd.Series(out, index=df.index, dtype="float64")
