"""Baselines: a small JSON file, fit to commit, that a later run is compared with.

`write_baseline(run, path)` keeps what `profiler.analyze.regress.evaluate` needs and no more:

    format, version, schema_version   "profgen-baseline", BASELINE_VERSION, schema.SCHEMA_VERSION
    model, created, source_run, git   where it came from
    machine                           {"gpu": ..., "driver": ..., "cuda": ...}
    items                             the item count the stages were timed on
    stages[]                          each stage's `schema.STAGES` row, its timed and profiled
                                      samples (`timed_ns`, `profiled_ns`), the repeats of its
                                      trace (`trace_repeats`, null without a trace), and its
                                      `activities[]`: the `schema.GPU_ACTIVITIES` row of each
                                      kernel and copy plus `repeat_totals_ns`, its summed
                                      duration in each traced repeat

`load_reference(path)` reads either a run directory or such a file back as a `store.Run`. A run
read from a baseline has the tables `stages`, `samples`, `gpu_activities` and, when the source
had a trace, a condensed `gpu_trace`: one row per activity per repeat holding that repeat's total
(start 0), which is all the comparison reads. Its `meta["baseline_file"]` names the file.

`check_compatible(base, new, allow_mismatch)` refuses a baseline from another GPU model, driver
major version or item count (`BaselineMismatch`, exit 2) unless mismatches are allowed.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from profiler import schema, store
from profiler.analyze import regress
from profiler.errors import BaselineMismatch, RunNotFound, SchemaError

FORMAT = "profgen-baseline"
BASELINE_VERSION = 1
# Spellings of the machine fields in run.json's "machine" object, first found wins.
GPU_KEYS = ("gpu", "gpu_name", "gpu_model", "device_name", "name")
DRIVER_KEYS = ("driver", "driver_version")
CUDA_KEYS = ("cuda", "cuda_version", "cuda_runtime", "cuda_runtime_version")
_ACTIVITY_FIELDS = [c.name for c in schema.GPU_ACTIVITIES.columns if c.name != "stage"]


def write_baseline(run: store.Run, path: str | Path) -> Path:
    """Write `run` as a baseline file at `path` (atomically) and return the path.

    Raises: RunNotFound when the run has no stages table.
    """
    require_stages(run)
    path = Path(path)
    text = json.dumps(baseline_dict(run), indent=1, sort_keys=False, allow_nan=False) + "\n"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path


def baseline_dict(run: store.Run) -> dict[str, Any]:
    """The JSON-ready content of a baseline of `run` (see the module docstring)."""
    meta = run.meta
    stages = run.table(schema.STAGES.name).sort_values("order")
    return {
        "format": FORMAT,
        "version": BASELINE_VERSION,
        "schema_version": schema.SCHEMA_VERSION,
        "model": meta.get("model"),
        "created": meta.get("created"),
        "source_run": run.path.name if run.path else meta.get("source_run"),
        "git": meta.get("git", {}),
        "machine": machine_summary(meta),
        "items": item_count(run),
        "unit": meta.get("unit"),
        "stages": [_stage_dict(run, row) for row in stages.to_dict("records")],
    }


def _stage_dict(run: store.Run, row: Mapping[Hashable, Any]) -> dict[str, Any]:
    stage = str(row["stage"])
    samples = run.table(schema.SAMPLES.name)
    samples = samples[samples["stage"] == stage].sort_values("repeat")
    trace = run.table(schema.GPU_TRACE.name)
    trace = trace[trace["stage"] == stage]
    repeats = sorted(int(r) for r in trace["repeat"].unique()) if not trace.empty else None
    out: dict[str, Any] = {str(k): _plain(v) for k, v in row.items()}
    for pass_ in ("timed", "profiled"):
        walls = samples.loc[samples["pass"] == pass_, "wall_ns"]
        out[f"{pass_}_ns"] = [int(w) for w in walls]
    out["trace_repeats"] = repeats
    out["activities"] = _activities(run, stage, trace, repeats)
    return out


def _activities(
    run: store.Run, stage: str, trace: pd.DataFrame, repeats: list[int] | None
) -> list[dict[str, Any]]:
    acts = run.table(schema.GPU_ACTIVITIES.name)
    acts = acts[acts["stage"] == stage]
    if acts.empty and not trace.empty:
        acts = _activities_from_trace(trace)
    per_repeat = trace.groupby(["kind", "name", "repeat"])["duration_ns"].sum()
    lookup = {key: int(v) for key, v in per_repeat.items()}  # (kind, name, repeat) -> ns
    out = []
    for row in acts.to_dict("records"):
        item = {k: _plain(row[k]) for k in _ACTIVITY_FIELDS}
        if repeats is not None:
            item["repeat_totals_ns"] = [
                lookup.get((row["kind"], row["name"], r), 0) for r in repeats
            ]
        out.append(item)
    return out


def _activities_from_trace(trace: pd.DataFrame) -> pd.DataFrame:
    g = trace.groupby(["stage", "kind", "name"], as_index=False).agg(
        total_ns=("duration_ns", "sum"),
        calls=("duration_ns", "size"),
        min_ns=("duration_ns", "min"),
        max_ns=("duration_ns", "max"),
        bytes=("bytes", "sum"),
        copy_kind=("copy_kind", "first"),
    )
    g["avg_ns"] = g["total_ns"] / g["calls"]
    g["time_pct"] = 100.0 * g["total_ns"] / g["total_ns"].sum()
    return schema.conform(g, schema.GPU_ACTIVITIES)


def _plain(value: Any) -> Any:
    """A JSON-ready scalar: <NA> and NaN as None, numpy scalars as Python ones."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "item"):
        return _plain(value.item())
    return value


def load_reference(path: str | Path) -> store.Run:
    """A run directory or a baseline file, as a `store.Run`.

    Raises: RunNotFound when `path` is neither, or is unreadable, malformed or of another version.
    """
    path = Path(path)
    if path.is_dir():
        return store.load_run(path)
    if not path.is_file():
        raise RunNotFound(f"{path}: no such run directory or baseline file")
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunNotFound(f"{path}: unreadable baseline file ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RunNotFound(
            f"{path}: not a profgen baseline (write one with `profgen baseline RUN -o FILE`)"
        )
    if data.get("version") != BASELINE_VERSION or data.get("schema_version") not in (
        store.READABLE_VERSIONS
    ):
        raise RunNotFound(
            f"{path}: baseline version {data.get('version')} "
            f"(schema {data.get('schema_version')}); this profgen reads {BASELINE_VERSION} "
            f"(schema {schema.SCHEMA_VERSION}): write it again"
        )
    try:
        return run_from_baseline(data, path)
    except (KeyError, TypeError, ValueError, SchemaError) as exc:
        raise RunNotFound(f"{path}: malformed baseline file ({type(exc).__name__}: {exc})") from exc


def run_from_baseline(data: Mapping[str, Any], path: Path | None = None) -> store.Run:
    """The `store.Run` a baseline's content describes (see the module docstring).

    Raises: KeyError, TypeError, ValueError or SchemaError when the content is malformed.
    """
    stages: list[dict[str, Any]] = []
    samples: list[dict[str, Any]] = []
    acts: list[dict[str, Any]] = []
    trace: list[dict[str, Any]] = []
    old = data.get("schema_version") == 1
    for st in data["stages"]:
        stages.append(st if old else {c: st.get(c) for c in schema.STAGES.names})
        for pass_ in ("timed", "profiled"):
            samples += [
                {"stage": st["stage"], "pass": pass_, "repeat": i, "wall_ns": w}
                for i, w in enumerate(st[f"{pass_}_ns"])
            ]
        acts += [dict(act, stage=st["stage"]) for act in st["activities"]]
        trace += _condensed_trace(st)
    stages_df = pd.DataFrame(stages)
    if old and not stages_df.empty:
        stages_df = store.upgrade_v1_table(stages_df, schema.STAGES.name)
    tables = {
        schema.STAGES.name: _frame(stages_df.to_dict("records"), schema.STAGES),
        schema.SAMPLES.name: _frame(samples, schema.SAMPLES),
        schema.GPU_ACTIVITIES.name: _frame(acts, schema.GPU_ACTIVITIES),
    }
    if trace:
        fill = [c for c in schema.GPU_TRACE.names if c not in trace[0]]
        tables[schema.GPU_TRACE.name] = _frame(trace, schema.GPU_TRACE, fill)
    meta = {k: data.get(k) for k in ("model", "created", "source_run", "git")}
    meta.update(
        machine=dict(data.get("machine") or {}),
        settings={"items": data.get("items", data.get("images"))},
        unit=data.get("unit") or ("images" if old else None),
        baseline_file=str(path) if path else None,
    )
    return store.Run(meta=meta, tables=tables, path=None)


def _condensed_trace(st: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One trace row per activity per traced repeat of a baseline's stage, holding its total."""
    rows = []
    for act in st["activities"]:
        totals = act.get("repeat_totals_ns") or []
        for rep, total in zip(st["trace_repeats"] or [], totals, strict=True):
            rows.append(
                {
                    "stage": st["stage"],
                    "repeat": rep,
                    "kind": act["kind"],
                    "name": act["name"],
                    "start_ns": 0,
                    "end_ns": total,
                    "duration_ns": total,
                    "copy_kind": act.get("copy_kind"),
                }
            )
    return rows


def _frame(rows: list[dict[str, Any]], tbl: schema.Table, fill: Sequence[str] = ()) -> pd.DataFrame:
    if not rows:
        return schema.empty(tbl)
    return schema.validate(schema.conform(pd.DataFrame(rows), tbl, fill=fill), tbl)


def machine_summary(meta: Mapping[str, Any]) -> dict[str, str | None]:
    """`{"gpu", "driver", "cuda"}` from run.json's machine object (None where not recorded)."""
    machine = meta.get("machine") or {}
    return {
        "gpu": _first(machine, GPU_KEYS),
        "driver": _first(machine, DRIVER_KEYS),
        "cuda": _first(machine, CUDA_KEYS),
    }


def _first(machine: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = machine.get(key)
        if isinstance(value, Mapping):
            value = value.get("name") or value.get("version")
        if value not in (None, ""):
            return str(value).strip()
    return None


def item_count(run: store.Run) -> int | None:
    """The items each stage was timed on: the most common count of the stages table, else the
    run's settings; None when neither says."""
    items = run.table(schema.STAGES.name)["items"].dropna()
    if not items.empty:
        return int(items.mode().iloc[0])
    value = (run.meta.get("settings") or {}).get("items")
    return int(value) if value is not None else None


def driver_major(version: str | None) -> str | None:
    """`580.95.05` -> `580`."""
    return version.split(".")[0].strip() if version else None


def require_stages(run: store.Run) -> None:
    """Raises: RunNotFound when `run` has no stages table (a broken or unfinished run)."""
    if not run.has(schema.STAGES.name):
        where = run.path or run.meta.get("baseline_file") or "run"
        raise RunNotFound(f"{where}: has no stages table; it is not a complete profgen run")


def check_compatible(base: store.Run, new: store.Run, allow_mismatch: bool = False) -> list[str]:
    """Whether `base` may be compared with `new`: same GPU model, driver major version and item
    count (a field only one run records is not compared).

    Returns: the mismatches found, each one line (empty when none; not empty only when allowed).
    Raises: BaselineMismatch naming both values and `--allow-mismatch`, unless `allow_mismatch`.
    """
    mb, mn = machine_summary(base.meta), machine_summary(new.meta)
    pairs = {
        "GPU model": (mb["gpu"], mn["gpu"]),
        "driver major version": (driver_major(mb["driver"]), driver_major(mn["driver"])),
        "item count": (item_count(base), item_count(new)),
    }
    found = [
        f"{what}: baseline {b!r}, this run {n!r}"
        for what, (b, n) in pairs.items()
        if b is not None and n is not None and b != n
    ]
    if found and not allow_mismatch:
        raise BaselineMismatch(
            "the baseline does not match this run (" + "; ".join(found) + "); times from another "
            "GPU, driver or item count are not comparable. Record a new baseline with "
            "`profgen baseline RUN -o FILE`, or pass --allow-mismatch to compare anyway"
        )
    return found


def compare_runs(
    base: store.Run, new: store.Run, checks: Sequence[regress.Check], allow_mismatch: bool = False
) -> tuple[pd.DataFrame, list[str]]:
    """Check both runs are whole and comparable, then evaluate `checks`.

    Returns: (DataFrame with `schema.REGRESSIONS` columns, the mismatches allowed).
    Raises: RunNotFound for a run without stages; BaselineMismatch (see `check_compatible`).
    """
    require_stages(base)
    require_stages(new)
    mismatches = check_compatible(base, new, allow_mismatch)
    return regress.evaluate(base, new, checks), mismatches
