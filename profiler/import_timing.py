"""What `profgen import` makes of a stage's time: the user's `--repeats` and `--range`, checked,
and each imported stage's STAGES row.

An imported stage is IMPORTED, never PASS: nothing was checked against a reference. Its time is
the span `profiler.analyze.imported.stage_time` takes (an NVTX range the user names, else the GPU
span of the capture, else the summed GPU time), divided by the repeats the program ran when the
user says how many; its `items` is 0 (an import knows no item count).

`--repeats N` and `--range NAME` apply to every stage; `--repeats KEY=N` and `--range KEY=NAME`
to stage KEY alone, and win over the all-stages form for it. A `--range` value is per stage
when the text before its first `=` is a stage key given with `--stage`; otherwise all of it is a
range name (so a range named `a=b` needs no escaping unless `a` is a stage key).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd

from profiler import schema
from profiler.analyze import imported
from profiler.errors import UsageError

REASON = "imported; not checked against a reference"
MAX_REPEATS = 10**9
_SHOWN_RANGES = 8  # range names a refusal lists before "and N more"
T = TypeVar("T")


@dataclass(frozen=True)
class StageTiming:
    """What the user said of one stage's time: the repeats its program ran (0: not said) and
    the NVTX range that is its time (None: the GPU span or the summed GPU time)."""

    repeats: int = 0
    range: str | None = None


def stage_timings(
    keys: Sequence[str],
    repeats: Sequence[tuple[str | None, int]] = (),
    ranges: Sequence[str] = (),
) -> dict[str, StageTiming]:
    """Each stage's `StageTiming`, from the `--repeats` and `--range` values as given.

    Args:
        keys: the stage keys, in study order.
        repeats: (stage key or None for every stage, repeats) per `--repeats`.
        ranges: the `--range` values as typed (`NAME` or `KEY=NAME`).

    Raises: UsageError for a key no `--stage` gives, a value given twice for one stage (or twice
        for all), repeats out of 1..MAX_REPEATS, or an empty range name.
    """
    counts = _per_stage("--repeats", keys, repeats)
    for key, n in counts.items():
        if not 1 <= n <= MAX_REPEATS:
            where = f"{key}=" if key is not None else ""
            raise UsageError(f"--repeats {where}{n}: give 1 to {MAX_REPEATS:,} repeats")
    names = _per_stage("--range", keys, [_range_spec(text, keys) for text in ranges])
    return {
        key: StageTiming(counts.get(key, counts.get(None, 0)), names.get(key, names.get(None)))
        for key in keys
    }


def _range_spec(text: str, keys: Sequence[str]) -> tuple[str | None, str]:
    key, sep, name = text.partition("=")
    spec: tuple[str | None, str] = (key, name) if sep and key in keys else (None, text)
    if not spec[1].strip():
        raise UsageError(f"--range {text[:80]!r}: name an NVTX range")
    return spec


def _per_stage(
    flag: str, keys: Sequence[str], given: Sequence[tuple[str | None, T]]
) -> dict[str | None, T]:
    """{stage key or None: value}; refuses an unknown key and a stage (or all) given twice."""
    out: dict[str | None, T] = {}
    for key, value in given:
        if key is not None and key not in keys:
            raise UsageError(f"{flag} for unknown stage {key[:80]!r}; stages: {', '.join(keys)}")
        if key in out:
            what = f"stage {key!r}" if key is not None else "all stages"
            raise UsageError(f"{flag} is given twice for {what}")
        out[key] = value
    return out


def stages_table(
    inputs: Sequence[tuple[str, str]],
    tables: Mapping[str, pd.DataFrame],
    titles: Mapping[str, str],
    timings: Mapping[str, StageTiming],
) -> pd.DataFrame:
    """The STAGES rows of an import, one per (stage key, technique) in study order.

    Returns: DataFrame with `schema.STAGES` columns.
    Raises: UsageError when a stage's `--range` names no NVTX range it has (the refusal names
        the ranges it has; for ncu output, which times no range, the ranges its kernels ran in).
    """
    rows = []
    for order, (key, technique) in enumerate(inputs):
        timing = timings.get(key, StageTiming())
        rows.append(_row(key, order, titles.get(key, key), technique, _time(tables, key, timing)))
    fill = [c.name for c in schema.STAGES.columns if c.name not in rows[0]]
    return schema.validate(schema.conform(pd.DataFrame(rows), schema.STAGES, fill), schema.STAGES)


def _time(tables: Mapping[str, pd.DataFrame], key: str, timing: StageTiming) -> imported.StageTime:
    try:
        return imported.stage_time(tables, key, timing.repeats, timing.range)
    except KeyError:
        names = imported.range_names(tables, key)
        kernels = imported.kernel_range_names(tables, key)
        if names:
            has = f"has the ranges {_listed(names)}"
        elif kernels:
            has = (
                "has no range times (Nsight Compute times kernels one at a time, not ranges); "
                f"its kernels ran in the ranges {_listed(kernels)}"
            )
        else:
            has = "has no NVTX ranges (no nvtx_sum, nvtx_gpu_proj_trace or range table)"
        raise UsageError(
            f"--range {str(timing.range)[:80]!r} matches no NVTX range of stage {key!r}: it {has}"
        ) from None


def _listed(names: Sequence[str]) -> str:
    """The first `_SHOWN_RANGES` names, quoted, and how many more there are."""
    more = len(names) - _SHOWN_RANGES
    shown = ", ".join(repr(n[:80]) for n in names[:_SHOWN_RANGES])
    return shown + (f" and {more} more" if more > 0 else "")


def _row(
    key: str, order: int, title: str, technique: str, time: imported.StageTime
) -> dict[str, Any]:
    """The stage's STAGES row: IMPORTED, not checked; no items; its time as `time` says."""
    return {
        "stage": key,
        "order": order,
        "title": title,
        "technique": technique,
        "role": "step",
        "runtime": "",
        "status": schema.IMPORTED,
        "reason": REASON,
        "items": 0,
        "batch": 0,
        "warmup": 0,
        "repeats": time.repeats,
        "timing": time.timing,
        "timing_range": time.timing_range,
        "median_ns": time.median_ns,
        "max_rel_err": float("nan"),
        "max_abs_err": float("nan"),
        "comparison": "",
        "overhead_pct": float("nan"),
    }
