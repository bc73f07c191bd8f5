"""Baselines and comparisons: what `profgen baseline`, `profgen compare` and `sweep --baseline`
read, check and write.

`write_baseline(run, path)` writes a baseline file (format: `profiler.baseline_file`) through
`profiler.files.write_text`: atomically, never over a file of the run it was made from.

`load_reference(path)` reads a run directory or a baseline file as a `store.Run` fit to compare
(`comparable`): a GPU trace that run.json says was trimmed (`scripts/trim_run.py`) is left
out, so kernel totals come from the whole `gpu_activities` summary and never from a trace that
keeps, say, 3,000 of a stage's 90,000 operations.

`check_compatible(base, new, allow_mismatch)` refuses a baseline from another machine unless
mismatches are allowed (`BaselineMismatch`, exit 2): another GPU model, driver major version or
item count, and, when a stage that runs on the CPU alone (`cpu_stages`) is compared, another
CPU model. A field one run records and the other does not is a mismatch too: a CPU-only machine
(no GPU recorded) is not compared with an H100 baseline.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from profiler import files, schema, store
from profiler.analyze import regress
from profiler.baseline_file import (
    BASELINE_VERSION,
    FORMAT,
    baseline_dict,
    item_count,
    machine_summary,
    read_baseline,
    run_from_baseline,
)
from profiler.errors import BaselineMismatch, RunNotFound

__all__ = [
    "BASELINE_VERSION",
    "FORMAT",
    "baseline_dict",
    "check_compatible",
    "comparable",
    "compare_runs",
    "cpu_stages",
    "driver_major",
    "item_count",
    "load_reference",
    "machine_summary",
    "require_stages",
    "run_from_baseline",
    "write_baseline",
]


def write_baseline(run: store.Run, path: str | Path) -> Path:
    """Write a baseline of `run` (read as `comparable` reads it) to the file `path`.

    Returns: the path written.
    Raises: RunNotFound when the run has no stages table or its trimmed trace cannot stand in
    for whole totals; DataError for a value strict JSON cannot hold (inf); UsageError when
    `path` is one of the run's own files, a directory or a link; OutputError when the disk
    refuses.
    """
    require_stages(run)
    content = baseline_dict(comparable(run))
    text = json.dumps(content, indent=1, sort_keys=False, allow_nan=False) + "\n"
    return files.write_text(path, text, inputs=run_files(run), what="baseline file")


def run_files(run: store.Run) -> list[Path]:
    """The files of a run directory that were read to build `run`: run.json and its tables."""
    if run.path is None:
        return []
    names = [store.RUN_JSON, *(f"{name}.csv" for name in run.meta.get("tables") or [])]
    return [run.path / name for name in names]


def load_reference(path: str | Path) -> store.Run:
    """A run directory or a baseline file, as a `store.Run` fit to compare (`comparable`).

    Raises: RunNotFound when `path` is neither, or is malformed or of another version;
    DataError when it cannot be read; SchemaError for a table that does not match its schema.
    """
    path = Path(path)
    if path.is_dir():
        return comparable(store.load_run(path))
    if not path.exists():
        raise RunNotFound(f"{path}: no such run directory or baseline file")
    return read_baseline(path)


def comparable(run: store.Run) -> store.Run:
    """`run` as a comparison may read it: without a GPU trace that run.json says was trimmed.

    A trimmed trace holds part of the profiled repeats (a committed sample keeps the first
    repeat, and at most 3,000 rows of it), so kernel totals summed from it would be wrong
    (cuda_baseline's would read 3% of the truth). Without it, the comparison takes kernel totals
    from `gpu_activities`, which a trimmed run keeps whole.

    Raises: RunNotFound when a stage of the trimmed trace has no `gpu_activities` rows: its
    totals cannot be taken from anywhere whole.
    """
    trim = store.trimmed_tables(run.meta).get(schema.GPU_TRACE.name)
    if trim is None or schema.GPU_TRACE.name not in run.tables:
        return run
    traced = set(run.table(schema.GPU_TRACE.name)["stage"].dropna())
    lacking = sorted(traced - set(run.table(schema.GPU_ACTIVITIES.name)["stage"].dropna()))
    if lacking:
        kept = f"{trim.kept} of {trim.of} rows" if trim.of is not None else "partly"
        raise RunNotFound(
            f"{_where(run)}: its gpu_trace was trimmed ({kept} kept) and gpu_activities has no "
            f"rows of stage(s) {', '.join(lacking)}, so their kernel totals are not known whole; "
            "compare the untrimmed run"
        )
    tables = {k: v for k, v in run.tables.items() if k != schema.GPU_TRACE.name}
    return store.Run(meta=run.meta, tables=tables, path=run.path)


def _where(run: store.Run) -> str:
    return str(run.path or run.meta.get("baseline_file") or "run")


def require_stages(run: store.Run) -> None:
    """Raises: RunNotFound when `run` has no stages table (a broken or unfinished run), or one
    with a stage twice, without a key, or with an unknown status (names the table's file).
    A serving run (`profgen serve`) has points instead of stages: nothing to check here."""
    if run.has(schema.SERVE_POINTS.name):
        return
    if schema.STAGES.name not in run.tables:
        raise RunNotFound(f"{_where(run)}: has no stages table; it is not a complete profgen run")
    where = run.path / f"{schema.STAGES.name}.csv" if run.path else _where(run)
    if not run.has(schema.STAGES.name):
        raise RunNotFound(f"{where}: the stages table has no rows; there is nothing to compare")
    stages = run.table(schema.STAGES.name)
    twice = sorted(set(stages.loc[stages["stage"].duplicated(), "stage"].dropna()))
    if stages["stage"].isna().any() or twice:
        what = f"stage(s) {', '.join(map(repr, twice))} more than once" if twice else "an empty key"
        raise RunNotFound(f"{where}: the stages table has {what}; one row per stage")
    unknown = sorted(set(stages["status"].dropna()) - set(schema.STATUSES))
    if unknown or stages["status"].isna().any():
        raise RunNotFound(
            f"{where}: stage status {', '.join(map(repr, unknown)) or 'missing'}; "
            f"expected one of {', '.join(schema.STATUSES)}"
        )


def driver_major(version: str | None) -> str | None:
    """`580.95.05` -> `580`."""
    return version.split(".")[0].strip() if version else None


def stage_keys(run: store.Run) -> set[str] | None:
    """The stages `run` has (its stages table, else the stages its run.json says it will run),
    or None when neither says."""
    if schema.STAGES.name in run.tables:
        return {str(s) for s in run.table(schema.STAGES.name)["stage"].dropna()}
    listed = (run.meta.get("settings") or {}).get("stages") or run.meta.get("stages")
    return {str(s) for s in listed} if listed else None


def cpu_stages(run: store.Run) -> set[str]:
    """The stages of `run` that run on the CPU alone: runtime `cpu` in its stages table, as the
    study declares it; where the table does not say (schema version 1 recorded no runtime), a
    stage with no GPU activity in `gpu_activities` or `gpu_trace`. A run without a stages table
    (a sweep about to run) names none."""
    if schema.STAGES.name not in run.tables:
        return set()
    stages = run.table(schema.STAGES.name)
    runtime = stages["runtime"].fillna("")
    busy = set(run.table(schema.GPU_ACTIVITIES.name)["stage"].dropna())
    busy |= set(run.table(schema.GPU_TRACE.name)["stage"].dropna())
    unknown = stages.loc[(runtime == "") & ~stages["stage"].isin(busy), "stage"]
    return {str(s) for s in stages.loc[runtime == "cpu", "stage"]} | {str(s) for s in unknown}


def _compared_cpu_stages(base: store.Run, new: store.Run) -> list[str]:
    """The CPU stages (in either run) that the comparison will judge (in both runs)."""
    kb, kn = stage_keys(base), stage_keys(new)
    compared = kb & kn if kb is not None and kn is not None else kb or kn or set()
    return sorted(compared & (cpu_stages(base) | cpu_stages(new)))


def machine_pairs(base: store.Run, new: store.Run) -> dict[str, tuple[object, object]]:
    """What must be equal for `base` to be compared with `new`: (baseline, this run) per field."""
    mb, mn = machine_summary(base.meta), machine_summary(new.meta)
    pairs: dict[str, tuple[object, object]] = {
        "GPU model": (mb["gpu"], mn["gpu"]),
        "driver major version": (driver_major(mb["driver"]), driver_major(mn["driver"])),
        "item count": (item_count(base), item_count(new)),
    }
    cpu = _compared_cpu_stages(base, new)
    if cpu:
        pairs[f"CPU model (stages on the CPU: {', '.join(cpu)})"] = (mb["cpu"], mn["cpu"])
    return pairs


def check_compatible(base: store.Run, new: store.Run, allow_mismatch: bool = False) -> list[str]:
    """Whether `base` may be compared with `new` (see the module docstring and `machine_pairs`).

    Returns: the mismatches found, each one line (empty when none; not empty only when allowed).
    Raises: BaselineMismatch naming both values and `--allow-mismatch`, unless `allow_mismatch`.
    """
    found = [
        f"{what}: baseline {_shown(b)}, this run {_shown(n)}"
        for what, (b, n) in machine_pairs(base, new).items()
        if b != n
    ]
    if found and not allow_mismatch:
        raise BaselineMismatch(
            "the baseline does not match this run (" + "; ".join(found) + "); times from another "
            "machine or item count are not comparable. Record a new baseline with "
            "`profgen baseline RUN -o FILE`, or pass --allow-mismatch to compare anyway"
        )
    return found


def _shown(value: object) -> str:
    return "not recorded" if value is None else repr(value)


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
    return regress.evaluate(comparable(base), comparable(new), checks), mismatches
