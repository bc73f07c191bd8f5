"""Noise-aware comparison of two runs: significance and verdicts under checks.

**Checks** (`stage:median:5%`, `kernel:total:10%`, ...; the default ones are `DEFAULT_CHECKS`)
are parsed by `profiler.analyze.checks`, whose names this module re-exports.

**Samples.** A stage's samples are its timed repeats (`schema.SAMPLES`, pass `timed`); when a
run has none for it, its `schema.STAGES` median is one sample. A kernel's samples are its summed
duration in each profiled repeat of its stage, from `schema.GPU_TRACE` (column `repeat`) when
both runs have a trace of that stage (a repeat where the kernel did not run counts 0); else from
`schema.GPU_ACTIVITIES`: one sample, the total divided by the stage's profiled repeats.
Kernels are matched by stage key and kernel name. A trace that was trimmed for committing holds
only part of the repeats: `profiler.baseline.comparable` leaves it out before it gets here, so
such a run's kernel totals come from its whole `GPU_ACTIVITIES`.

**Significance** (`significance`). Mann-Whitney U, two-sided, alpha = 0.05
(`scipy.stats.mannwhitneyu`, its default method), decides when the exact test could reach that
alpha at all: the smallest p it can give, 2 / C(n1 + n2, n1), is below 0.05 (so 4 against 4,
3 against 5, 2 against 8 or 1 against 40 samples, or more). With fewer samples it falls back to
interval overlap: the change is significant when the two samples' min-max ranges do not
overlap (with one sample on each side: when the two values differ, so the threshold alone
decides). `p_value` is NaN when interval overlap decided.

**Verdicts**, one row per check per stage (or per kernel of a stage): `regression` when the
statistic grew past the threshold AND the change is significant, `improvement` when it shrank
past the threshold and is significant, `unchanged` otherwise; `failed` when the stage did not
PASS in either run (FAIL, TIMEOUT, ERROR), `skipped` when it was SKIPPED in either, `missing`
when the stage or kernel is in one run only (or has no samples). `exit_code`: 3 when a stage
failed, else 1 when a check found a regression, else 0.

**Imported stages** (IMPORTED: nothing was checked, so it is no failure and never exits 3) are
compared like PASS stages when both runs' numbers are of one kind, and are `incomparable`
otherwise. A stage check needs times of the same kind (`stages.staged_table`'s basis and timing:
a GPU span against a GPU span, both per repeat or both whole-program; never an imported time
against a measured host time); its one sample per run is the stage's time. A kernel check needs
totals of the same kind: per repeat (a sweep's, or an import whose repeats were given: its
whole-program totals divided by them) or both whole-program; an imported stage's kernel samples
come from its GPU-activities totals, one sample, since its trace does not mark its repeats.

Pure: no I/O. `evaluate` takes anything with `table(name) -> DataFrame` (a `store.Run`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt
import pandas as pd

from profiler import schema
from profiler.analyze.checks import (
    DEFAULT_CHECKS,
    FORMS,
    SERVE_DEFAULT_CHECKS,
    STATISTICS,
    UNITS_NS,
    Check,
    default_checks,
    defaults_text,
    parse_check,
    resolve_checks,
    validate_regression_args,
)
from profiler.analyze.stages import PROGRAM, REPEAT, time_basis
from profiler.errors import EXIT_OK, EXIT_REGRESSION, EXIT_STAGE_FAILED

__all__ = [  # the check grammar is re-exported: callers need one import for a comparison
    "DEFAULT_CHECKS",
    "FORMS",
    "SERVE_DEFAULT_CHECKS",
    "STATISTICS",
    "UNITS_NS",
    "Check",
    "default_checks",
    "defaults_text",
    "parse_check",
    "resolve_checks",
    "validate_regression_args",
    "ALPHA",
    "REGRESSION",
    "IMPROVEMENT",
    "UNCHANGED",
    "FAILED",
    "SKIPPED",
    "MISSING",
    "INCOMPARABLE",
    "VERDICTS",
    "MANN_WHITNEY",
    "INTERVAL_OVERLAP",
    "RunSamples",
    "Significance",
    "Tables",
    "evaluate",
    "exit_code",
    "mann_whitney_can_decide",
    "significance",
    "statistic",
]

ALPHA = 0.05
REGRESSION, IMPROVEMENT, UNCHANGED = "regression", "improvement", "unchanged"
FAILED, SKIPPED, MISSING = "failed", "skipped", "missing"
INCOMPARABLE = "incomparable"  # both runs have it, but their numbers are of different kinds
VERDICTS = (REGRESSION, IMPROVEMENT, UNCHANGED, FAILED, SKIPPED, MISSING, INCOMPARABLE)
MANN_WHITNEY, INTERVAL_OVERLAP = "mann-whitney", "interval-overlap"

_FAILED_STATUSES = (schema.FAIL, schema.TIMEOUT, schema.ERROR)


class Tables(Protocol):
    """What `evaluate` reads from a run: its tables by name (`store.Run` is one)."""

    def table(self, name: str) -> pd.DataFrame: ...


@dataclass(frozen=True)
class Significance:
    """Whether two samples differ: the decision, the p-value (NaN for overlap) and the method."""

    significant: bool
    p_value: float
    method: str


def mann_whitney_can_decide(n1: int, n2: int, alpha: float = ALPHA) -> bool:
    """True when a two-sided exact Mann-Whitney U test of n1 against n2 samples can give p < alpha.

    Its smallest p-value is 2 / C(n1 + n2, n1) (every value of one side below every value of the
    other side).
    """
    return n1 > 0 and n2 > 0 and 2.0 / math.comb(n1 + n2, n1) < alpha


def significance(base: npt.ArrayLike, new: npt.ArrayLike, alpha: float = ALPHA) -> Significance:
    """Is the change from `base` to `new` significant? See the module docstring for the rule.

    Raises: ValueError when either sample is empty.
    """
    x = np.asarray(base, dtype=np.float64)
    y = np.asarray(new, dtype=np.float64)
    if x.size == 0 or y.size == 0:
        raise ValueError("significance needs at least one sample on each side")
    if mann_whitney_can_decide(x.size, y.size, alpha):
        from scipy.stats import mannwhitneyu

        p = float(mannwhitneyu(x, y, alternative="two-sided").pvalue)
        return Significance(bool(p < alpha), p, MANN_WHITNEY)
    apart = x.max() < y.min() or y.max() < x.min()
    return Significance(bool(apart), math.nan, INTERVAL_OVERLAP)


def statistic(samples: np.ndarray, stat: str) -> float:
    """The named statistic of a sample (`total` is the median of per-repeat totals)."""
    if stat == "mean":
        return float(np.mean(samples))
    if stat == "min":
        return float(np.min(samples))
    if stat == "max":
        return float(np.max(samples))
    return float(np.median(samples))


def exit_code(regressions: pd.DataFrame) -> int:
    """3 when a stage failed in either run, else 1 when a check found a regression, else 0."""
    verdicts = set(regressions["verdict"].dropna())
    if FAILED in verdicts:
        return EXIT_STAGE_FAILED
    return EXIT_REGRESSION if REGRESSION in verdicts else EXIT_OK


# --- evaluate -------------------------------------------------------------------------------


def evaluate(base: Tables, new: Tables, checks: Sequence[Check]) -> pd.DataFrame:
    """Compare `new` with `base` under every check.

    Returns: DataFrame with `schema.REGRESSIONS` columns, one row per check per stage (stage
    checks) or per kernel of a stage (kernel checks), in study order; kernels by their share of
    the stage's GPU time, largest first.
    """
    b, n = RunSamples.of(base), RunSamples.of(new)
    rows: list[dict[str, object]] = []
    for check in checks:
        if check.metric == "serve":
            rows.extend(_serve_rows(check, base, new))
            continue
        for stage in _stage_order(b, n):
            rows.extend(_stage_rows(check, stage, b, n))
    if not rows:
        return schema.empty(schema.REGRESSIONS)
    return schema.validate(
        schema.conform(pd.DataFrame(rows), schema.REGRESSIONS), schema.REGRESSIONS
    )


def _serve_rows(check: Check, base: Tables, new: Tables) -> list[dict[str, object]]:
    """One row per serving point of either run: the point's window samples of `check.stat`
    (p99 latency, or time per item for throughput) compared with the same rule as a stage's.
    A point flagged in either run (wrong answers, a broken honesty check) is `failed`."""
    column = "p99_ns" if check.stat == "p99" else "item_ns"
    wb, wn = (t.table(schema.SERVE_WINDOWS.name) for t in (base, new))
    pb, pn = (t.table(schema.SERVE_POINTS.name) for t in (base, new))
    flagged = set(pb.loc[pb["flag"].fillna("") != "", "point"]) | set(
        pn.loc[pn["flag"].fillna("") != "", "point"]
    )
    labels = list(dict.fromkeys([*pn["point"], *pb["point"]]))
    rows = []
    for label in labels:
        sb = wb.loc[wb["point"] == label, column].dropna().to_numpy(np.float64)
        sn = wn.loc[wn["point"] == label, column].dropna().to_numpy(np.float64)
        if label in flagged:
            rows.append(_row(check, label, check.stat, sb, sn, math.nan, FAILED))
        else:
            rows.append(_compare(check, label, check.stat, sb, sn, math.nan))
    return rows


def statistic_of(check: Check) -> str:
    """The statistic a check's samples are summarised by (serving checks: the median)."""
    return "median" if check.metric == "serve" else check.stat


def _stage_rows(check: Check, stage: str, b: RunSamples, n: RunSamples) -> list[dict[str, object]]:
    status = _stage_status(stage, b, n) or _kinds_differ(check, stage, b, n)
    if status is not None:
        return [_row(check, stage, None, None, None, math.nan, status)]
    if check.metric == "stage":
        return [_compare(check, stage, None, b.stage.get(stage), n.stage.get(stage), math.nan)]
    kb, kn, share = _kernel_samples(stage, b, n)
    names = sorted(set(kb) | set(kn), key=lambda k: (-share.get(k, 0.0), k))
    return [_compare(check, stage, k, kb.get(k), kn.get(k), share.get(k, math.nan)) for k in names]


def _stage_status(stage: str, b: RunSamples, n: RunSamples) -> str | None:
    statuses = (b.status.get(stage), n.status.get(stage))
    if any(s in _FAILED_STATUSES for s in statuses):
        return FAILED
    if schema.SKIPPED in statuses:
        return SKIPPED
    if None in statuses:
        return MISSING
    return None


def _kinds_differ(check: Check, stage: str, b: RunSamples, n: RunSamples) -> str | None:
    """INCOMPARABLE when the two runs' numbers for `check` on `stage` are of different kinds."""
    kinds = b.stage_kind if check.metric == "stage" else b.kernel_kind
    other = n.stage_kind if check.metric == "stage" else n.kernel_kind
    return INCOMPARABLE if kinds.get(stage) != other.get(stage) else None


def _compare(
    check: Check,
    stage: str,
    name: str | None,
    base: np.ndarray | None,
    new: np.ndarray | None,
    share: float,
) -> dict[str, object]:
    if base is None or new is None or base.size == 0 or new.size == 0:
        return _row(check, stage, name, base, new, share, MISSING)
    b, n = statistic(base, statistic_of(check)), statistic(new, statistic_of(check))
    sig = significance(base, new)
    direction = check.direction(b, n) if sig.significant else 0
    verdict = REGRESSION if direction > 0 else IMPROVEMENT if direction < 0 else UNCHANGED
    row = _row(check, stage, name, base, new, share, verdict)
    row.update(p_value=sig.p_value, significant=sig.significant, method=sig.method)
    return row


def _row(
    check: Check,
    stage: str,
    name: str | None,
    base: np.ndarray | None,
    new: np.ndarray | None,
    share: float,
    verdict: str,
) -> dict[str, object]:
    stat = statistic_of(check)
    b = statistic(base, stat) if base is not None and base.size else math.nan
    n = statistic(new, stat) if new is not None and new.size else math.nan
    return {
        "check": check.text,
        "metric": check.metric,
        "stage": stage,
        "name": name if name is not None else pd.NA,
        "base_ns": b,
        "new_ns": n,
        "ratio": n / b if b else math.nan,
        "threshold_pct": check.threshold_pct(b),
        "p_value": math.nan,
        "significant": False,
        "method": pd.NA,
        "share_pct": share,
        "verdict": verdict,
    }


# --- samples of one run ---------------------------------------------------------------------

KernelSamples = dict[str, np.ndarray]  # kernel name -> per-repeat totals (ns)
Shares = dict[str, float]  # kernel name -> share of the stage's GPU time (%)


@dataclass(frozen=True)
class RunSamples:
    """What `evaluate` compares, drawn once from a run's tables."""

    status: dict[str, str]
    order: dict[str, int]
    stage: dict[str, np.ndarray]
    trace: dict[str, tuple[KernelSamples, Shares]]
    activities: dict[str, tuple[KernelSamples, Shares]]
    stage_kind: dict[str, tuple[str, str]]  # (basis, timing) of the stage's time
    kernel_kind: dict[str, str]  # what its kernel totals cover: `repeat` or `program`

    @classmethod
    def of(cls, run: Tables) -> RunSamples:
        stages = run.table(schema.STAGES.name)
        samples = run.table(schema.SAMPLES.name)
        trace = run.table(schema.GPU_TRACE.name)
        profiled = samples[samples["pass"] == "profiled"].groupby("stage")["repeat"].nunique()
        repeats = {str(k): int(v) for k, v in profiled.items()}
        imported = stages[stages["status"] == schema.IMPORTED]
        pairs = zip(imported["stage"], imported["repeats"], strict=True)
        repeats.update({str(k): max(int(n), 1) for k, n in pairs})
        traced = trace[~trace["stage"].isin(imported["stage"])]  # an import's trace: no repeats
        basis = time_basis(stages).astype(str)
        timing = stages["timing"].fillna(schema.HOST).astype(str)
        return cls(
            status={str(s): str(v) for s, v in zip(stages["stage"], stages["status"], strict=True)},
            order={str(s): int(v) for s, v in zip(stages["stage"], stages["order"], strict=True)},
            stage=_timed_samples(stages, samples),
            trace=_trace_kernels(traced),
            activities=_activity_kernels(run.table(schema.GPU_ACTIVITIES.name), trace, repeats),
            stage_kind={
                str(k): (b, t) for k, b, t in zip(stages["stage"], basis, timing, strict=True)
            },
            kernel_kind={
                str(k): PROGRAM if b == PROGRAM else REPEAT
                for k, b in zip(stages["stage"], basis, strict=True)
            },
        )


def _stage_order(b: RunSamples, n: RunSamples) -> list[str]:
    """Every stage of either run, in the new run's study order, then the baseline's."""
    order = {**{s: (1, o) for s, o in b.order.items()}, **{s: (0, o) for s, o in n.order.items()}}
    return sorted(order, key=lambda s: (*order[s], s))


def _kernel_samples(
    stage: str, b: RunSamples, n: RunSamples
) -> tuple[KernelSamples, KernelSamples, Shares]:
    """Both runs' kernel samples of `stage` (per repeat from traces when both have one) and the
    kernels' shares of the stage's GPU time (the new run's, else the baseline's)."""
    source = "trace" if stage in b.trace and stage in n.trace else "activities"
    empty: tuple[KernelSamples, Shares] = ({}, {})
    kb, sb = getattr(b, source).get(stage, empty)
    kn, sn = getattr(n, source).get(stage, empty)
    return kb, kn, {**sb, **sn}


def _timed_samples(stages: pd.DataFrame, samples: pd.DataFrame) -> dict[str, np.ndarray]:
    timed = samples[samples["pass"] == "timed"]
    out = {str(s): g["wall_ns"].to_numpy(dtype=np.float64) for s, g in timed.groupby("stage")}
    for stage, median in zip(stages["stage"], stages["median_ns"], strict=True):
        if str(stage) not in out and not pd.isna(median):
            out[str(stage)] = np.array([float(median)])
    return out


def _trace_kernels(trace: pd.DataFrame) -> dict[str, tuple[KernelSamples, Shares]]:
    out: dict[str, tuple[KernelSamples, Shares]] = {}
    for stage, rows in trace.groupby("stage"):
        repeats = np.sort(rows["repeat"].unique())
        gpu_total = float(rows["duration_ns"].sum())
        kernels = rows[rows["kind"] == schema.KERNEL]
        per_repeat = kernels.groupby(["name", "repeat"])["duration_ns"].sum()
        samples: KernelSamples = {}
        shares: Shares = {}
        for name, series in per_repeat.groupby(level="name"):
            values = series.droplevel("name").reindex(repeats, fill_value=0)
            samples[str(name)] = values.to_numpy(dtype=np.float64)
            shares[str(name)] = 100.0 * float(series.sum()) / gpu_total if gpu_total else math.nan
        out[str(stage)] = (samples, shares)
    return out


def _activity_kernels(
    activities: pd.DataFrame, trace: pd.DataFrame, repeats: dict[str, int]
) -> dict[str, tuple[KernelSamples, Shares]]:
    """One sample per kernel: its total over the profiled repeats divided by their number.
    A stage with a trace but no activities rows gets its totals from the trace."""
    totals = activities[["stage", "kind", "name", "total_ns"]]
    traced = trace[~trace["stage"].isin(totals["stage"])]
    if not traced.empty:
        summed = traced.groupby(["stage", "kind", "name"])["duration_ns"].sum()
        totals = pd.concat([totals, summed.rename("total_ns").reset_index()])
        for stage, rows in traced.groupby("stage"):
            repeats.setdefault(str(stage), int(rows["repeat"].nunique()))
    out: dict[str, tuple[KernelSamples, Shares]] = {}
    for stage, rows in totals.groupby("stage"):
        count = max(repeats.get(str(stage), 1), 1)
        gpu_total = float(rows["total_ns"].sum())
        kernels = rows[rows["kind"] == schema.KERNEL].groupby("name")["total_ns"].sum()
        out[str(stage)] = (
            {str(k): np.array([float(v) / count]) for k, v in kernels.items()},
            {
                str(k): 100.0 * float(v) / gpu_total if gpu_total else math.nan
                for k, v in kernels.items()
            },
        )
    return out
