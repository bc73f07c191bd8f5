"""A stage's `result.json` (from `profiler.collect.runner`) -> its `stages` and `samples` rows.

The file always exists after a stage was collected, whatever became of the stage: `status` is
PASS, FAIL, TIMEOUT, ERROR or SKIPPED; `timed_ns` and `profiled_ns` hold the host times of the
timed and profiled repeats (empty when the pass did not run).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from profiler import files, schema
from profiler.errors import DataError, ParseError, SchemaError

EXPECTED = "a stage result (result.json) written by profgen's collection"
_REQUIRED = ("stage", "status", "items", "batch", "warmup", "repeat", "timed_ns", "profiled_ns")


def read_result(path: str | Path) -> dict[str, Any]:
    """Load and check a result file.

    Raises: ParseError naming the file when it is missing, not JSON, or lacks a field.
    """
    path = Path(path)
    try:
        data = json.loads(files.read_text(path))
    except DataError as exc:
        raise ParseError(path, EXPECTED, str(exc).removeprefix(f"{path}: ")) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ParseError(path, EXPECTED, f"not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ParseError(path, EXPECTED, f"a JSON {type(data).__name__}, not an object")
    data = _upgrade_format_1(data)
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise ParseError(path, EXPECTED, f"missing fields {missing}")
    if data["status"] not in schema.STATUSES:
        raise ParseError(path, EXPECTED, f"status {data['status']!r} is none of {schema.STATUSES}")
    return data


def _upgrade_format_1(data: dict[str, Any]) -> dict[str, Any]:
    """A result of the LeNet-only worker (format 1) in today's names: `images` is `items`,
    `top1_mismatches` is `topk_mismatches`, roles as that worker's keys implied."""
    if "images" not in data or "items" in data:
        return data
    out = dict(data, items=data["images"], topk_mismatches=data.get("top1_mismatches"))
    key = str(data.get("stage", ""))
    out.setdefault("role", "baseline" if key == "cuda_baseline" else
                   "framework" if key.startswith("torch_") else "step")
    return out


def one_line(text: str) -> str:
    """A reason as the tables hold it: its lines joined, at most 500 characters."""
    joined = " | ".join(ln.strip() for ln in str(text).splitlines() if ln.strip())
    return joined if len(joined) <= 500 else joined[:499] + "…"


def _float(value: Any) -> float:
    return float(value) if value is not None else np.nan


def _median(values: Sequence[int]) -> int | None:
    return int(round(float(np.median(values)))) if len(values) else None


def stage_row(result: Mapping[str, Any], order: int) -> pd.DataFrame:
    """The stage's one row of the staged table.

    Returns: DataFrame with `schema.STAGES` columns (timings missing when the pass did not run;
    overhead_pct is the profiled median over the timed median, minus 100, in percent).
    """
    timed = [int(x) for x in result.get("timed_ns", [])]
    profiled = [int(x) for x in result.get("profiled_ns", [])]
    median, p_median = _median(timed), _median(profiled)
    overhead = (p_median / median - 1.0) * 100.0 if median and p_median is not None else np.nan
    row = {
        "stage": result["stage"],
        "order": order,
        "title": result.get("title") or result["stage"],
        "technique": result.get("technique", ""),
        "role": result.get("role", "step"),
        "runtime": result.get("runtime", ""),
        "status": result["status"],
        "reason": one_line(result.get("reason", "")),
        "items": int(result["items"]),
        "batch": int(result["batch"]),
        "warmup": int(result["warmup"]),
        "repeats": len(timed) if timed else int(result["repeat"]),
        "timing": schema.HOST,
        "timing_range": None,
        "median_ns": median,
        "min_ns": min(timed) if timed else None,
        "max_ns": max(timed) if timed else None,
        "max_rel_err": _float(result.get("max_rel_err")),
        "max_abs_err": _float(result.get("max_abs_err")),
        "topk_mismatches": result.get("topk_mismatches"),
        "comparison": result.get("comparison", ""),
        "profiled_median_ns": p_median,
        "overhead_pct": overhead,
    }
    df = pd.DataFrame({k: [v] for k, v in row.items()})
    df["timing_range"] = pd.array([None], dtype="string")
    for col in ("median_ns", "min_ns", "max_ns", "topk_mismatches", "profiled_median_ns"):
        df[col] = pd.array([row[col]], dtype="Int64")
    return schema.validate(schema.conform(df, schema.STAGES), schema.STAGES)


def samples(result: Mapping[str, Any]) -> pd.DataFrame:
    """Every timed and profiled repeat's host time.

    Returns: DataFrame with `schema.SAMPLES` columns.
    """
    rows = []
    for kind, key in (("timed", "timed_ns"), ("profiled", "profiled_ns")):
        rows += [(result["stage"], kind, i, int(ns)) for i, ns in enumerate(result.get(key, []))]
    df = pd.DataFrame(rows, columns=["stage", "pass", "repeat", "wall_ns"])
    return schema.validate(schema.conform(df, schema.SAMPLES), schema.SAMPLES)


def layers(path: str | Path) -> pd.DataFrame | None:
    """The study's per-node facts a result carries (`schema.LAYERS`), or None.
    Raises: ParseError naming the file."""
    rows = read_result(path).get("layers")
    if rows is None:
        return None
    try:
        return schema.conform(pd.DataFrame(rows), schema.LAYERS)
    except (TypeError, ValueError, KeyError, SchemaError) as exc:
        raise ParseError(path, EXPECTED, f"bad layers: {exc}") from exc


def read(path: str | Path, order: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(stages row, samples) of one result file. Raises: ParseError naming the file."""
    result = read_result(path)
    try:
        return stage_row(result, order), samples(result)
    except (TypeError, ValueError, KeyError, SchemaError) as exc:
        raise ParseError(path, EXPECTED, f"bad field: {exc}") from exc
