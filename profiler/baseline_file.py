"""The baseline file: a small JSON file, fit to commit, that a later run is compared with.

`baseline_dict(run)` keeps what `profiler.analyze.regress.evaluate` needs and no more:

    format, version, schema_version   "profgen-baseline", BASELINE_VERSION, schema.SCHEMA_VERSION
    model, created, source_run, git   where it came from
    machine                           {"gpu", "driver", "cuda", "cpu"} (see `machine_summary`)
    items, unit                       the item count the stages were timed on, and its unit
    stages[]                          each stage's `schema.STAGES` row, its timed and profiled
                                      samples (`timed_ns`, `profiled_ns`), the repeats of its
                                      whole trace (`trace_repeats`; null without one, or when the
                                      run's trace was trimmed), and its `activities[]`: the
                                      `schema.GPU_ACTIVITIES` row of each kernel and copy plus,
                                      with `trace_repeats`, `repeat_totals_ns`: its summed
                                      duration in each traced repeat

`read_baseline(path)` reads such a file back as a `store.Run` with the tables `stages`,
`samples`, `gpu_activities` and, when the source had a whole trace, a condensed `gpu_trace`: one
row per activity per repeat holding that repeat's total (start 0), which is all the comparison
reads. Every field is checked on the way in: a file written by hand or damaged is refused naming
the field (`stages[3].timed_ns[0]: expected a non-negative integer, got -5`), never half-read.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from profiler import schema, store
from profiler.errors import DataError, RunNotFound

FORMAT = "profgen-baseline"
BASELINE_VERSION = 1
BASELINE_LIMIT = 16 << 20  # a LeNet baseline is 35 kB
# Spellings of the machine fields in run.json's "machine" object, first found wins.
MACHINE_KEYS = {
    "gpu": ("gpu", "gpu_name", "gpu_model", "device_name", "name"),
    "driver": ("driver", "driver_version"),
    "cuda": ("cuda", "cuda_version", "cuda_runtime", "cuda_runtime_version"),
    "cpu": ("cpu", "cpu_model"),
}
_ACTIVITY_FIELDS = [c.name for c in schema.GPU_ACTIVITIES.columns if c.name != "stage"]
_KINDS = (schema.KERNEL, schema.MEMCPY, schema.MEMSET)
_SIGNED = ("overhead_pct",)  # the one number a baseline holds that may be negative


# --- writing ------------------------------------------------------------------------------


def baseline_dict(run: store.Run) -> dict[str, Any]:
    """The JSON-ready content of a baseline of `run` (see the module docstring).

    Raises: DataError naming the table file, stage and field of a value strict JSON cannot hold
    (inf).
    """
    meta = run.meta
    stages = run.table(schema.STAGES.name).sort_values("order")
    return {
        "format": FORMAT,
        "version": BASELINE_VERSION,
        "schema_version": schema.SCHEMA_VERSION,
        "model": meta.get("model"),
        "created": meta.get("created"),
        "source_run": run.path.name if run.path else meta.get("source_run"),
        "git": meta.get("git") or {},
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
    _require_finite(out, _source(run, schema.STAGES), f"stage {stage!r}")
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
        where = f"stage {stage!r}, {item['kind']} {str(item['name'])[:60]!r}"
        _require_finite(item, _source(run, schema.GPU_ACTIVITIES), where)
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


def _source(run: store.Run, tbl: schema.Table) -> str:
    return str(run.path / f"{tbl.name}.csv") if run.path else f"table {tbl.name}"


def _require_finite(record: Mapping[str, Any], source: str, where: str) -> None:
    """Raises: DataError for an infinite number in `record`: strict JSON cannot hold it."""
    for key, value in record.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise DataError(
                f"{source}: {where}: {key} is {value}; a baseline holds only finite numbers "
                "(strict JSON): correct the table or record the run again"
            )


def machine_summary(meta: Mapping[str, Any]) -> dict[str, str | None]:
    """`{"gpu", "driver", "cuda", "cpu"}` from run.json's machine object (None where not
    recorded)."""
    machine = meta.get("machine") or {}
    return {field: _first(machine, keys) for field, keys in MACHINE_KEYS.items()}


def _first(machine: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = machine.get(key)
        if isinstance(value, Mapping):
            value = value.get("name") or value.get("version")
        if value not in (None, "") and str(value).strip():
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


# --- reading ------------------------------------------------------------------------------


def read_baseline(path: Path) -> store.Run:
    """The baseline file `path` as a `store.Run` (see the module docstring).

    Raises: DataError when it cannot be read or is not strict JSON (see `store.read_json`);
    RunNotFound when it is not a baseline, is of another version, or a field is malformed.
    """
    data = store.read_json(path, "profgen baseline file", BASELINE_LIMIT)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RunNotFound(
            f"{path}: not a profgen baseline (write one with `profgen baseline RUN -o FILE`)"
        )
    version, schema_version = data.get("version"), data.get("schema_version")
    if (
        (type(version), type(schema_version)) != (int, int)
        or version != BASELINE_VERSION
        or schema_version not in store.READABLE_VERSIONS
    ):
        raise RunNotFound(
            f"{path}: baseline version {store.describe(version)} "
            f"(schema {store.describe(schema_version)}); this profgen reads {BASELINE_VERSION} "
            f"(schema {', '.join(map(str, store.READABLE_VERSIONS))}): write it again"
        )
    try:
        return run_from_baseline(data, path)
    except store.FieldError as exc:
        raise RunNotFound(f"{path}: malformed baseline file: {exc}") from None


def run_from_baseline(data: Mapping[str, Any], path: Path | None = None) -> store.Run:
    """The `store.Run` a baseline's content describes, every field checked on the way (a stage
    of schema version 1 upgraded first, as `store.upgrade_v1_table` upgrades a run's table).

    Raises: store.FieldError naming the first malformed field.
    """
    stages: list[dict[str, Any]] = []
    samples: list[dict[str, Any]] = []
    acts: list[dict[str, Any]] = []
    trace: list[dict[str, Any]] = []
    old = data.get("schema_version") == 1
    for i, item in enumerate(store.array(data.get("stages"), "stages")):
        item = store.obj(item, f"stages[{i}]")
        store.text(item.get("stage"), f"stages[{i}].stage")
        st = _read_stage(_upgrade_v1(item) if old else item, f"stages[{i}]", stages)
        stages.append(st["row"])
        samples += st["samples"]
        acts += st["activities"]
        trace += st["trace"]
    tables = {
        schema.STAGES.name: _frame(stages, schema.STAGES),
        schema.SAMPLES.name: _frame(samples, schema.SAMPLES),
        schema.GPU_ACTIVITIES.name: _frame(acts, schema.GPU_ACTIVITIES),
    }
    if trace:
        fill = [c for c in schema.GPU_TRACE.names if c not in trace[0]]
        tables[schema.GPU_TRACE.name] = _frame(trace, schema.GPU_TRACE, fill)
    return store.Run(meta=_read_meta(data, path), tables=tables, path=None)


def _read_meta(data: Mapping[str, Any], path: Path | None) -> dict[str, Any]:
    """run.json-like metadata of a baseline's top-level fields, each checked."""
    meta: dict[str, Any] = {
        key: store.optional(store.text, data.get(key) or None, key)
        for key in ("model", "created", "source_run")
    }
    meta["git"] = store.optional(store.obj, data.get("git"), "git") or {}
    machine = store.optional(store.obj, data.get("machine"), "machine") or {}
    for key in MACHINE_KEYS:
        store.optional(store.text, machine.get(key) or None, f"machine.{key}")
    old = data.get("schema_version") == 1
    count = "images" if old else "items"
    meta.update(
        machine=dict(machine),
        settings={"items": store.optional(store.integer, data.get(count), count)},
        unit=store.optional(store.text, data.get("unit") or None, "unit")
        or (count if old else None),
        baseline_file=str(path) if path else None,
    )
    return meta


def _upgrade_v1(st: dict[str, Any]) -> dict[str, Any]:
    """A stage object of schema version 1 in version 2's fields (`store.upgrade_v1_table`)."""
    frame = store.upgrade_v1_table(pd.DataFrame([st], dtype=object), schema.STAGES.name)
    return {str(k): None if _missing(v) else v for k, v in frame.iloc[0].items()}


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _read_stage(st: Mapping[str, Any], where: str, before: list[dict[str, Any]]) -> dict[str, Any]:
    """One `stages[]` item: its STAGES row, samples, activities and condensed trace rows."""
    row = _read_row(st, schema.STAGES, where)
    stage = store.text(row["stage"], f"{where}.stage")
    store.text(row["status"], f"{where}.status", choices=schema.STATUSES)
    if any(r["stage"] == stage for r in before):
        raise store.FieldError(f"{where}.stage", "a stage key not used before", stage)
    samples = [
        {"stage": stage, "pass": pass_, "repeat": i, "wall_ns": store.integer(w, f"{at}[{i}]")}
        for pass_, at in (("timed", f"{where}.timed_ns"), ("profiled", f"{where}.profiled_ns"))
        for i, w in enumerate(store.array(st.get(f"{pass_}_ns"), at))
    ]
    repeats = store.optional(store.array, st.get("trace_repeats"), f"{where}.trace_repeats")
    if repeats is not None:
        repeats = [
            store.integer(r, f"{where}.trace_repeats[{i}]", minimum=-1)
            for i, r in enumerate(repeats)
        ]
    acts, trace = [], []
    for j, act in enumerate(store.array(st.get("activities"), f"{where}.activities")):
        at = f"{where}.activities[{j}]"
        act_row, totals = _read_activity(store.obj(act, at), at, repeats)
        acts.append(dict(act_row, stage=stage))
        trace += [
            _trace_row(stage, act_row, r, t) for r, t in zip(repeats or [], totals, strict=True)
        ]
    return {"row": row, "samples": samples, "activities": acts, "trace": trace}


def _read_activity(
    act: Mapping[str, Any], where: str, repeats: list[int] | None
) -> tuple[dict[str, Any], list[int]]:
    """One activity: its GPU_ACTIVITIES fields and its per-repeat totals (one per repeat)."""
    row = _read_row(act, schema.GPU_ACTIVITIES, where, skip=("stage",))
    store.text(row["kind"], f"{where}.kind", choices=_KINDS)
    store.text(row["name"], f"{where}.name")
    if repeats is None:
        return row, []
    at = f"{where}.repeat_totals_ns"
    totals = [
        store.integer(t, f"{at}[{i}]")
        for i, t in enumerate(store.array(act.get("repeat_totals_ns"), at))
    ]
    if len(totals) != len(repeats):
        raise store.FieldError(at, f"{len(repeats)} totals, one per trace repeat", totals)
    return row, totals


def _read_row(
    obj: Mapping[str, Any], tbl: schema.Table, where: str, skip: Sequence[str] = ()
) -> dict[str, Any]:
    """`tbl`'s fields of `obj`, each checked against its column's dtype (null where nullable;
    numbers finite and, but for `_SIGNED` ones, not negative)."""
    row: dict[str, Any] = {}
    for col in tbl.columns:
        if col.name in skip:
            continue
        value, at = obj.get(col.name, col.default), f"{where}.{col.name}"
        if col.dtype == "string":
            if value is not None and not isinstance(value, str):
                raise store.FieldError(at, "a string or null", value)
        elif col.dtype == "int64":
            value = store.integer(value, at)
        elif col.dtype == "Int64":
            value = store.optional(store.integer, value, at)
        else:
            minimum = None if col.name in _SIGNED else 0.0
            value = store.optional(store.number, value, at, minimum=minimum)
        row[col.name] = value
    return row


def _trace_row(stage: str, act: Mapping[str, Any], repeat: int, total: int) -> dict[str, Any]:
    return {
        "stage": stage,
        "repeat": repeat,
        "kind": act["kind"],
        "name": act["name"],
        "start_ns": 0,
        "end_ns": total,
        "duration_ns": total,
        "copy_kind": act.get("copy_kind"),
    }


def _frame(rows: list[dict[str, Any]], tbl: schema.Table, fill: Sequence[str] = ()) -> pd.DataFrame:
    if not rows:
        return schema.empty(tbl)
    return schema.validate(schema.conform(pd.DataFrame(rows), tbl, fill=fill), tbl)
