"""Regression checks: small values parsed from strings, in pytest-benchmark's
`--benchmark-compare-fail` grammar with the metric in front: `METRIC:STATISTIC:THRESHOLD`.

    stage:median:5%      a stage's end-to-end time (the timed, unprofiled repeats)
    stage:min:5%         ... statistics: median, mean, min, max
    kernel:total:10%     a kernel's total GPU time in its stage, per profiled repeat (median)
    stage:median:0.2ms   an absolute threshold: ns, us, ms or s
    serve:p99:10%        a serving point's p99 latency (`profgen serve` runs)
    serve:throughput:10% a serving point's throughput, compared as time per item (its inverse)

A serving point's samples are its measured window cut in ten equal parts (schema.SERVE_WINDOWS):
the p99 of each part, or each part's time per item; the statistic is their median.

A percent threshold is relative to the baseline's value; an absolute one is converted to the
equivalent percent of each row's baseline value (column `threshold_pct`). With no `--fail-on`
the checks are `DEFAULT_CHECKS`, written once, below; `defaults_text()` states them for help
texts, so no other place spells them.

Why the default stage threshold is so wide: on a shared cloud H100 host, five unchanged sweeps
moved the end-to-end median of a stage that copies from pageable memory by up to +84% between
processes (host memory bandwidth is shared), while every kernel's total moved by under 4%, and
stages that copy from pinned memory by under 10%. Mann-Whitney over one run's repeats cannot see
that between-run noise, so a tighter default stage check would cry wolf; the kernel check
carries the sensitivity. On a quiet machine, gate stages tighter: `--fail-on stage:median:5%`.

This module is light (no pandas, numpy or scipy) so that the command line can state the defaults
and check `--fail-on` without loading the analysis; `profiler.analyze.regress` re-exports it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from profiler.errors import UsageError

STATISTICS: dict[str, tuple[str, ...]] = {
    "stage": ("median", "mean", "min", "max"),
    "kernel": ("total",),
    "serve": ("p99", "throughput"),
}
UNITS_NS: dict[str, float] = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
#: The checks used when none are given: the one place they are written (see the module doc
#: for why the stage threshold is so wide). `profgen compare --help` and the README state them.
DEFAULT_CHECKS = ("stage:median:100%", "kernel:total:10%")
#: ... and those of a serving run (`profgen serve`): p99 and throughput of every point
SERVE_DEFAULT_CHECKS = ("serve:p99:10%", "serve:throughput:10%")
FORMS = (
    "METRIC:STATISTIC:THRESHOLD with METRIC:STATISTIC one of "
    + ", ".join(f"{m}:{s}" for m, stats in STATISTICS.items() for s in stats)
    + " and THRESHOLD a percent (5%) or a time with a unit (0.2ms; ns, us, ms, s), "
    + "e.g. stage:median:5% or kernel:total:10%"
)
_THRESHOLD = re.compile(r"^(?P<num>\d+(?:\.\d*)?|\.\d+)(?P<unit>%|ns|us|ms|s)$")


@dataclass(frozen=True)
class Check:
    """One regression rule: a metric, a statistic and a threshold (percent or absolute ns)."""

    metric: str
    stat: str
    percent: float | None = None
    absolute_ns: float | None = None
    text: str = ""

    def limit_ns(self, base: float) -> float:
        """The change, in ns, past which this check counts a value compared with `base`."""
        if self.percent is not None:
            return abs(base) * self.percent / 100.0
        return float(self.absolute_ns or 0.0)

    def threshold_pct(self, base: float) -> float:
        """The threshold as a percent of `base` (NaN for an absolute check on a zero base)."""
        if self.percent is not None:
            return self.percent
        return 100.0 * float(self.absolute_ns or 0.0) / base if base else math.nan

    def direction(self, base: float, new: float) -> int:
        """+1 when `new` grew past the threshold, -1 when it shrank past it, else 0."""
        delta, limit = new - base, self.limit_ns(base)
        return 1 if delta > limit else -1 if -delta > limit else 0


def parse_check(text: str) -> Check:
    """Parse `stage:median:5%`, `kernel:total:10%`, `stage:median:0.2ms`, ...

    Raises: UsageError naming the valid forms for an unknown metric or statistic, a missing or
    non-positive threshold, or a number without `%` or a unit.
    """
    parts = text.strip().split(":")
    if len(parts) != 3:
        raise UsageError(f"bad check {text!r}: expected {FORMS}")
    metric, stat, threshold = (p.strip() for p in parts)
    if metric not in STATISTICS:
        raise UsageError(f"bad check {text!r}: unknown metric {metric!r}; expected {FORMS}")
    if stat not in STATISTICS[metric]:
        raise UsageError(
            f"bad check {text!r}: unknown statistic {stat!r} for {metric}; expected {FORMS}"
        )
    match = _THRESHOLD.match(threshold)
    if match is None or float(match["num"]) <= 0:
        raise UsageError(f"bad check {text!r}: bad threshold {threshold!r}; expected {FORMS}")
    value, unit = float(match["num"]), match["unit"]
    canonical = f"{metric}:{stat}:{threshold}"
    if unit == "%":
        return Check(metric, stat, percent=value, text=canonical)
    return Check(metric, stat, absolute_ns=value * UNITS_NS[unit], text=canonical)


def default_checks() -> list[Check]:
    """The checks used when none are given (`DEFAULT_CHECKS`)."""
    return [parse_check(t) for t in DEFAULT_CHECKS]


def resolve_checks(fail_on: Sequence[str]) -> list[Check]:
    """The checks of `--fail-on` strings, or the default checks when there are none.

    Raises: UsageError for a bad check.
    """
    return [parse_check(t) for t in fail_on] or default_checks()


def validate_regression_args(baseline: str | Path | None, fail_on: Sequence[str]) -> list[Check]:
    """Check the regression flags of a sweep before any GPU time is spent.

    Returns: the checks to apply (the default checks when `fail_on` is empty).
    Raises: UsageError when `fail_on` is given without a baseline, or a check is malformed.
    """
    if fail_on and baseline is None:
        raise UsageError(
            "--fail-on needs --baseline (a run directory or a file written by `profgen baseline`)"
        )
    return resolve_checks(fail_on)


def defaults_text() -> str:
    """`stage:median:100% and kernel:total:10%`: `DEFAULT_CHECKS` in words, for help texts."""
    return " and ".join(DEFAULT_CHECKS)
