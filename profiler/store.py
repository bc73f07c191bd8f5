"""Versioned run directories: save_run / load_run.

A run lives in `reports/<model>-<UTC timestamp>/`:

    run.json        schema version, command, settings, machine, ceilings, git commit
    <table>.csv     one file per table of `profiler.schema.TABLES` the run has
    raw/<stage>/    what the tools wrote (traces, .nsys-rep, ncu CSV, worker logs)
    report.html     written by profiler.render

A run is built under a hidden temporary name (`.<name>.<random>.partial`), report included, and
renamed when complete, so a crash never leaves a directory that looks like a whole run; the
partial directory is kept so nothing collected is lost.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from profiler import files, schema
from profiler.errors import OutputError, RunNotFound, SchemaError

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
    """Create and return the temporary directory a new run is written into: a hidden
    `.<model>-<UTC time>.<random>.partial` in `root`, unique even for runs started in the same
    second by several processes.

    Raises: UsageError when `root` exists as a non-directory; OutputError when it cannot be
    written.
    """
    files.check_output_dir(root)
    stem = f"{model}-{utc_stamp(now)}"
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{stem}.", suffix=PARTIAL_SUFFIX, dir=root))
        (tmp / "raw").mkdir()
    except OSError as exc:
        raise OutputError(f"--out {root}: cannot create a run directory ({exc.strerror})") from None
    return tmp


def final_path(tmp: Path) -> Path:
    """The name the temporary run directory `tmp` would get if it finished now (the first of
    `<stem>`, `<stem>-2`, `<stem>-3`... not taken)."""
    stem = _stem(tmp)
    for candidate in _names(tmp.parent, stem):
        if not candidate.exists():
            return candidate
    raise OutputError(f"{tmp.parent}: no free run name for {stem}")  # pragma: no cover


def _stem(tmp: Path) -> str:
    """`<model>-<UTC time>` of a temporary run directory `.<stem>.<random>.partial`."""
    return tmp.name[1 : -len(PARTIAL_SUFFIX)].rsplit(".", 1)[0]


def _names(root: Path, stem: str) -> list[Path]:
    return [root / stem] + [root / f"{stem}-{i}" for i in range(2, 1000)]


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
    """Give the complete temporary run directory `tmp` its final name and return that.

    The name is reserved by creating it (an atomic, exclusive mkdir), then the run is renamed
    over the empty reservation, so two runs finishing at once never take the same name.
    Raises: OutputError when the directory cannot be renamed.
    """
    stem = _stem(tmp)
    for final in _names(tmp.parent, stem):
        try:
            final.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise OutputError(f"{final}: cannot be created ({exc.strerror})") from None
        try:
            os.replace(tmp, final)
        except OSError as exc:
            final.rmdir()
            raise OutputError(f"{tmp} -> {final}: cannot be renamed ({exc.strerror})") from None
        return final
    raise OutputError(f"{tmp.parent}: no free run name for {stem}")


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
    if version not in READABLE_VERSIONS:
        raise RunNotFound(
            f"{path}: schema version {version}, this profgen reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}"
        )
    upgrade = upgrade_v1_table if version == 1 else None
    tables = {}
    for name in meta.get("tables", []):
        try:
            tables[name] = schema.read_csv(
                path / f"{name}.csv", schema.table(name), upgrade=upgrade
            )
        except (OSError, ValueError, SchemaError) as exc:
            raise RunNotFound(f"{path / (name + '.csv')}: unreadable table ({exc})") from exc
    meta = upgrade_v1_meta(meta) if version == 1 else meta
    return Run(meta=meta, tables=tables, path=path)


#: schema versions load_run reads; older ones are upgraded as they are read
READABLE_VERSIONS = (1, schema.SCHEMA_VERSION)
#: how schema version 1 (the LeNet-only study) told a stage's role from its key
_V1_BASELINE, _V1_FRAMEWORK_PREFIX = "cuda_baseline", "torch_"


def upgrade_v1_table(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """A table as schema version 1 wrote it, in version 2's columns: `images` is `items`,
    `top1_mismatches` is `topk_mismatches`, and roles are what version 1 inferred from keys."""
    df = df.rename(columns={"images": "items", "top1_mismatches": "topk_mismatches"})
    if name != schema.STAGES.name:
        return df
    keys = df["stage"].astype(str)
    role = ["baseline" if k == _V1_BASELINE else "step" for k in keys]
    role = [
        "framework" if k.startswith(_V1_FRAMEWORK_PREFIX) else r
        for k, r in zip(keys, role, strict=True)
    ]
    return df.assign(
        role=role,
        runtime=pd.NA,
        max_abs_err=float("nan"),
        comparison="max |out-ref| / max |ref| per row < 1e-4; same top-1 (schema 1)",
    )


def upgrade_v1_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """run.json of schema version 1 with version 2's names (`items`, a `unit`)."""
    settings = dict(meta.get("settings") or {})
    if "images" in settings:
        settings["items"] = settings.pop("images")
    return dict(meta, settings=settings, unit=meta.get("unit", "images"), schema_version=1)


def _write_json_atomic(path: Path, obj: Any) -> None:
    files.write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")
