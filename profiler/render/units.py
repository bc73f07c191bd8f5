"""Numbers as people read them: the one place every renderer formats durations, speedups, shares,
byte counts and rates (the HTML report, the terminal, `profgen show` and `compare`, the Markdown
summary, the JUnit file).

Every function takes a raw value (nanoseconds, a ratio, a percentage; None, NA or NaN when
missing) and returns text; `missing` is what a missing value reads (the report passes an em dash).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

MISSING = "-"
_TIME_UNITS = (("us", 1e3), ("ms", 1e6))


def is_missing(value: Any) -> bool:
    """True for None, pandas' NA or NaT, and NaN."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    try:
        return math.isnan(value)
    except TypeError:
        return False


def duration(
    ns: Any,
    digits: int = 4,
    *,
    keep_zeros: bool = False,
    seconds_digits: int | None = None,
    missing: str = MISSING,
) -> str:
    """A duration in nanoseconds with the largest unit that keeps it under 1000: `362ns`,
    `78.79us`, `5.568ms`, `1.235s` (`digits` significant digits; below a microsecond, whole ns).

    Args:
        ns: the duration in nanoseconds.
        digits: significant digits in us and ms.
        keep_zeros: keep trailing zeros (`1.8260ms`), as nvprof does.
        seconds_digits: significant digits in seconds (default `digits`).
        missing: the text of a missing value.
    """
    if is_missing(ns):
        return missing
    value = float(ns)
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if abs(value) < 999.5:
        return f"{value:.0f}ns"
    if abs(value) < 1000:  # rounds up to a whole microsecond
        value = math.copysign(1000.0, value)
    flag = "#" if keep_zeros else ""
    for unit, factor in _TIME_UNITS:
        shown = f"{value / factor:{flag}.{digits}g}"
        if abs(float(shown)) < 1000:
            return shown + unit
    secs = value / 1e9
    sdigits = seconds_digits or digits
    if abs(secs) >= 10 ** (sdigits - 1):
        return f"{secs:.0f}s"
    return f"{secs:{flag}.{sdigits}g}s"


def nvprof_duration(ns: Any, missing: str = MISSING) -> str:
    """As nvprof prints a time: five significant digits with trailing zeros, six in seconds
    (`928ns`, `1.8260ms`, `62.822us`, `8.56944s`)."""
    return duration(ns, 5, keep_zeros=True, seconds_digits=6, missing=missing)


def seconds(ns: Any, missing: str = MISSING) -> str:
    """`0.0137s`: a stage's time for all items, in seconds to four significant digits (as the
    study that profgen generalises wrote them)."""
    return missing if is_missing(ns) else f"{float(ns) / 1e9:.4g}s"


def speedup(ratio: Any, missing: str = MISSING) -> str:
    """A speedup to four significant digits: `48.93x`, `0.003737x`; `∞` when infinite."""
    if is_missing(ratio):
        return missing
    value = float(ratio)
    return "∞" if math.isinf(value) else f"{value:.4g}x"


def gain(ratio: Any, missing: str = MISSING) -> str:
    """A ratio as a percentage change: 1.013 -> `+1.3%`, 0.96 -> `-4.0%`; `+∞` when infinite."""
    if is_missing(ratio):
        return missing
    value = float(ratio)
    if math.isinf(value):
        return "+∞" if value > 0 else missing
    return f"{(value - 1.0) * 100.0:+.1f}%"


def pct(value: Any, digits: int = 2, missing: str = MISSING) -> str:
    """A percentage: `12.35%`."""
    return missing if is_missing(value) else f"{float(value):.{digits}f}%"


def _si(value: float, unit: str, digits: int = 4) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


def nbytes(value: Any, missing: str = MISSING) -> str:
    """Bytes in decimal units, as nsys prints them: `16.78 MB`."""
    return missing if is_missing(value) else _si(float(value), "B")


def rate(value: Any, unit: str = "B/s", missing: str = MISSING) -> str:
    """`53.22 GB/s`, `184.2 GFLOP/s`."""
    return missing if is_missing(value) else _si(float(value), unit)


def count(value: Any, missing: str = MISSING) -> str:
    """An integer with thousands separators: `10,000`."""
    return missing if is_missing(value) else f"{int(value):,}"


def sci(value: Any, missing: str = MISSING) -> str:
    """Two significant digits, exponent when small or large: `7.2e-07`."""
    return missing if is_missing(value) else f"{float(value):.2g}"


def number(value: Any, digits: int = 4, missing: str = MISSING) -> str:
    """`digits` significant digits."""
    return missing if is_missing(value) else f"{float(value):.{digits}g}"
