"""Versioned run directories: save_run / load_run.

A run lives in `reports/<model>-<UTC timestamp>/`:

    run.json        schema version, command, settings, machine, ceilings, git commit
    <table>.csv     one file per table of `profiler.schema.TABLES` the run has
    raw/<stage>/    what the tools wrote (traces, .nsys-rep, ncu CSV, worker logs)
    report.html     written by profiler.render

A run is built under a hidden temporary name (`.<name>.partial`) and renamed when complete,
so a crash never leaves a directory that looks like a whole run; the partial directory is
kept so nothing collected is lost.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from profiler import schema
from profiler.errors import RunNotFound, SchemaError

RUN_JSON = "run.json"
PARTIAL_SUFFIX = ".partial"


@dataclass
class Run:
    """A run in memory: its metadata (run.json) and its tables by name."""

    meta: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    path: Path | None = None

    def table(self, name: str) -> pd.DataFrame:
        """The table `name`, or an empty one of its schema when the run has none."""
        tbl = schema.table(name)
        return self.tables[name] if name in self.tables else schema.empty(tbl)

    def has(self, name: str) -> bool:
        return name in self.tables and not self.tables[name].empty


def utc_stamp(now: datetime | None = None) -> str:
    """`20261121T203600Z`: the timestamp part of a run directory's name."""
    return (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")


def start_run(root: Path, model: str, now: datetime | None = None) -> Path:
    """Create and return the temporary directory a new run is written into."""
    root.mkdir(parents=True, exist_ok=True)
    name = f"{model}-{utc_stamp(now)}"
    while (root / name).exists():  # two runs in one second
        name += "x"
    tmp = root / f".{name}{PARTIAL_SUFFIX}"
    (tmp / "raw").mkdir(parents=True)
    return tmp


def final_path(tmp: Path) -> Path:
    """Where the temporary run directory `tmp` is renamed to when complete."""
    return tmp.with_name(tmp.name[1 : -len(PARTIAL_SUFFIX)])


def save_run(run: Run, directory: Path) -> None:
    """Write run.json and every table of `run` into `directory` (validated first).

    Raises: SchemaError when a table does not match its schema.
    """
    for name, df in run.tables.items():
        schema.validate(df, schema.table(name))
    for name, df in run.tables.items():
        schema.write_csv(df, schema.table(name), directory / f"{name}.csv")
    meta = dict(run.meta, schema_version=schema.SCHEMA_VERSION, tables=sorted(run.tables))
    _write_json_atomic(directory / RUN_JSON, meta)


def finish_run(tmp: Path) -> Path:
    """Rename a complete temporary run directory to its final name and return that."""
    final = final_path(tmp)
    os.replace(tmp, final)
    return final


def load_run(path: str | Path) -> Run:
    """Read a run directory back.

    Raises: RunNotFound when `path` is not a complete run or its tables are unreadable.
    """
    path = Path(path)
    meta_path = path / RUN_JSON
    if not meta_path.is_file():
        raise RunNotFound(
            f"{path}: not a profgen run (no {RUN_JSON}; an unfinished run ends in {PARTIAL_SUFFIX})"
        )
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise RunNotFound(f"{meta_path}: unreadable ({exc})") from exc
    version = meta.get("schema_version")
    if version != schema.SCHEMA_VERSION:
        raise RunNotFound(
            f"{path}: schema version {version}, this profgen reads {schema.SCHEMA_VERSION}"
        )
    tables = {}
    for name in meta.get("tables", []):
        try:
            tables[name] = schema.read_csv(path / f"{name}.csv", schema.table(name))
        except (OSError, ValueError, SchemaError) as exc:
            raise RunNotFound(f"{path / (name + '.csv')}: unreadable table ({exc})") from exc
    return Run(meta=meta, tables=tables, path=path)


def _write_json_atomic(path: Path, obj: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(tmp, path)
