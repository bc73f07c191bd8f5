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
"""

from __future__ import annotations

import pandas as pd

from profiler import schema
from profiler.schema import Column

BASELINE, FRAMEWORK = "baseline", "framework"

STAGED = schema.Table(
    "staged",
    "The staged table of the report: timing, spread, speedups and verdict per stage.",
    (
        Column("stage", "string"),
        Column("order", "int64"),
        Column("title", "string"),
        Column("technique", "string"),
        Column("role", "string", doc="`baseline`, `framework` or `step`"),
        Column("status", "string", doc="PASS, FAIL, TIMEOUT, ERROR or SKIPPED"),
        Column("reason", "string", doc="why the stage did not PASS"),
        Column("items", "int64"),
        Column("batch", "int64"),
        Column("repeats", "int64"),
        Column("median_ns", "Int64", "ns", "time for all items, median over repeats"),
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
    timed = _valid_times(df)
    median = df["median_ns"].astype("float64")
    df["spread_pct"] = (df["max_ns"] - df["min_ns"]).astype("float64") / median * 100.0
    df["prev_stage"] = _previous_valid(df, timed)
    prev_time = df["prev_stage"].map(lambda k: timed.get(k) if isinstance(k, str) else None)
    df["speedup_prev"] = _ratio(prev_time, df, timed)
    base_time = timed.get(baseline_key(df) or "")
    df["speedup_baseline"] = _ratio(pd.Series(base_time, index=df.index), df, timed)
    framework_time = timed.get(framework_key(df) or "")
    df["speedup_framework"] = _ratio(pd.Series(framework_time, index=df.index), df, timed)
    return schema.validate(schema.conform(df, STAGED), STAGED)


def _valid_times(df: pd.DataFrame) -> dict[str, float]:
    """Median time of every stage that PASSed with a positive time: the only valid references."""
    ok = (df["status"] == schema.PASS) & df["median_ns"].notna()
    ok &= df["median_ns"].fillna(0) > 0
    pairs = zip(df.loc[ok, "stage"], df.loc[ok, "median_ns"], strict=True)
    return {str(k): float(v) for k, v in pairs}


def _previous_valid(df: pd.DataFrame, timed: dict[str, float]) -> pd.Series:
    """For each row, the key of the nearest earlier stage with a valid time (or <NA>)."""
    out: list[str | None] = []
    last: str | None = None
    for key in df["stage"]:
        out.append(last)
        if key in timed:
            last = str(key)
    return pd.Series(out, index=df.index, dtype="string")


def _ratio(reference: pd.Series, df: pd.DataFrame, timed: dict[str, float]) -> pd.Series:
    """reference / own time for rows with a valid own time and a reference; NaN elsewhere."""
    own = df["stage"].map(lambda k: timed.get(str(k), float("nan"))).astype("float64")
    ref = pd.to_numeric(reference, errors="coerce").astype("float64")
    return ref / own
