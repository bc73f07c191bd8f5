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

import contextlib
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from profiler import files, schema, tablecsv
from profiler.errors import DataError, OutputError, RunNotFound

RUN_JSON = "run.json"
PARTIAL_SUFFIX = ".partial"
RUN_JSON_LIMIT = 16 << 20  # run.json holds settings and machine facts: a few kB
_META_TEXT = ("model", "model_title", "unit", "created", "command", "source", "profgen_version")
_META_OBJECTS = ("machine", "settings", "git", "ceilings", "baseline", "study")
_LEGACY_TRIM = re.compile(r"\((?P<of>\d{1,19}) -> (?P<kept>\d{1,19})\)\s*$")


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


def reserve_name(tmp: Path) -> Path:
    """Reserve and return the name the temporary run directory `tmp` will get: the first of
    `<stem>`, `<stem>-2`, `<stem>-3`... that an atomic, exclusive mkdir can create. The report
    is rendered knowing this name; `finish_run` then renames the run over the empty reservation,
    so two runs finishing at once never take (or print) the same name.

    Raises: OutputError when no name can be created.
    """
    stem = _stem(tmp)
    for final in _names(tmp.parent, stem):
        try:
            final.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise OutputError(f"{final}: cannot be created ({exc.strerror})") from None
        return final
    raise OutputError(f"{tmp.parent}: no free run name for {stem}")  # pragma: no cover


def release_name(final: Path) -> None:
    """Give back a name `reserve_name` took and the run never moved into (it stays empty)."""
    with contextlib.suppress(OSError):
        final.rmdir()


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
        tablecsv.write_csv(df, schema.table(name), directory / f"{name}.csv")
    meta = dict(run.meta, schema_version=schema.SCHEMA_VERSION, tables=sorted(run.tables))
    _write_json_atomic(directory / RUN_JSON, meta)


def finish_run(tmp: Path, final: Path | None = None) -> Path:
    """Give the complete temporary run directory `tmp` its final name and return that: the
    name reserved earlier with `reserve_name`, or one reserved now.

    Raises: OutputError when the directory cannot be renamed (the reservation is released).
    """
    final = final or reserve_name(tmp)
    try:
        os.replace(tmp, final)
    except OSError as exc:
        release_name(final)
        raise OutputError(f"{tmp} -> {final}: cannot be renamed ({exc.strerror})") from None
    return final


def publish(run: Run, tmp: Path, render: Callable[[], object]) -> Path:
    """Give the saved temporary run `tmp` its final name with its report: reserve the name, set
    `run.path` to it, call `render` (which writes the report, naming that directory), then
    rename the run over the reservation. A failing `render` gives the name back and leaves
    `tmp` where it is.

    Raises: OutputError when no name can be reserved or the rename fails; whatever `render`
    raises.
    """
    run.path = reserve_name(tmp)
    try:
        render()
    except BaseException:
        release_name(run.path)
        raise
    run.path = finish_run(tmp, run.path)
    return run.path


def load_run(path: str | Path) -> Run:
    """Read a run directory back: its run.json, checked, then each table it lists (a run of an
    older schema version upgraded as it is read).

    Raises: RunNotFound when `path` is not a complete run, or its run.json is malformed or of a
    schema version this profgen does not read; DataError when a file cannot be read (a FIFO,
    too large, not UTF-8); SchemaError naming the file, column and row when a table does not
    match its schema.
    """
    path = Path(path)
    meta = _read_meta(path)
    version = meta["schema_version"]
    tables = _read_tables(path, meta.get("tables", []), upgrade_v1_table if version == 1 else None)
    meta = upgrade_v1_meta(meta) if version == 1 else meta
    return Run(meta=meta, tables=upgrade_imports(meta, tables), path=path)


def _read_meta(path: Path) -> dict[str, Any]:
    """run.json of the run directory `path`, as written (see `_check_meta`)."""
    meta_path = path / RUN_JSON
    if not meta_path.exists():
        raise RunNotFound(
            f"{path}: not a profgen run (no {RUN_JSON}; an unfinished run ends in {PARTIAL_SUFFIX})"
        )
    meta = read_json(meta_path, "profgen run.json", RUN_JSON_LIMIT)
    if not isinstance(meta, dict):
        raise RunNotFound(
            f"{meta_path}: not a profgen run.json (expected a JSON object, got {describe(meta)})"
        )
    version = meta.get("schema_version")
    if type(version) is not int or version not in READABLE_VERSIONS:
        raise RunNotFound(
            f"{meta_path}: schema version {describe(version)}, this profgen reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}"
        )
    try:
        _check_meta(meta)
    except FieldError as exc:
        raise RunNotFound(f"{meta_path}: {exc}") from None
    return meta


def _read_tables(
    path: Path, names: list[str], upgrade: Callable[[pd.DataFrame, str], pd.DataFrame] | None
) -> dict[str, pd.DataFrame]:
    """The tables `names` (run.json's `tables`, checked) of the run directory `path`."""
    return {
        name: tablecsv.read_csv(path / f"{name}.csv", schema.table(name), upgrade=upgrade)
        for name in names
    }


def _check_meta(meta: dict[str, Any]) -> None:
    """The fields of run.json that profgen reads have the types it reads them as.

    Raises: FieldError naming the first field that does not.
    """
    names = array(meta.get("tables", []), "tables")
    for i, name in enumerate(names):
        text(name, f"tables[{i}]", choices=schema.TABLES)
    if len(set(names)) != len(names):
        raise FieldError("tables", "each table once", names)
    for key in _META_TEXT:
        optional(text, meta.get(key) or None, key)
    for key in _META_OBJECTS:
        optional(obj, meta.get(key), key)
    for i, stage in enumerate(optional(array, meta.get("stages"), "stages") or []):
        text(stage, f"stages[{i}]")
    settings = meta.get("settings") or {}
    for key in ("items", "images"):  # `images` before schema version 2
        optional(integer, settings.get(key), f"settings.{key}")
    for key, value in (meta.get("ceilings") or {}).items():
        if key != "error":
            optional(number, value, f"ceilings.{key}")
    trimmed_tables(meta)


@dataclass(frozen=True)
class Trim:
    """How much of a table a trimmed run kept: `kept` of `of` rows (None when not recorded)."""

    kept: int | None
    of: int | None


def trimmed_tables(meta: Mapping[str, Any]) -> dict[str, Trim]:
    """The tables run.json's `trimmed` says were cut (`scripts/trim_run.py`), by name.

    `trimmed` maps a table to `{"kept": rows, "of": rows, ...}`; a run trimmed before that form
    holds a sentence ending in `(OF -> KEPT)` instead, read the same way (a sentence without
    counts means the table was cut by an unknown amount). A table kept whole is not returned.

    Raises: FieldError when `trimmed` is neither.
    """
    out: dict[str, Trim] = {}
    for name, value in (optional(obj, meta.get("trimmed"), "trimmed") or {}).items():
        where = f"trimmed.{name}"
        text(name, where, choices=schema.TABLES)
        if isinstance(value, str):
            counts = _LEGACY_TRIM.search(value)
            trim = Trim(int(counts["kept"]), int(counts["of"])) if counts else Trim(None, None)
        else:
            value = obj(value, where)
            of = integer(value.get("of"), f"{where}.of")
            trim = Trim(integer(value.get("kept"), f"{where}.kept", maximum=of), of)
        if trim.kept is None or trim.kept != trim.of:
            out[name] = trim
    return out


#: schema versions load_run reads; older ones are upgraded as they are read
READABLE_VERSIONS = (1, schema.SCHEMA_VERSION)
#: how schema version 1 (the LeNet-only study) told a stage's role from its key
_V1_BASELINE, _V1_FRAMEWORK_PREFIX = "cuda_baseline", "torch_"


def upgrade_v1_table(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """A table as schema version 1 wrote it, in version 2's columns: `images` is `items`,
    `top1_mismatches` is `topk_mismatches`, and roles are what version 1 inferred from keys (a
    stages table without its `stage` column is left to the column check to refuse)."""
    df = df.rename(columns={"images": "items", "top1_mismatches": "topk_mismatches"})
    if name != schema.STAGES.name or "stage" not in df.columns:
        return df
    keys = df["stage"].astype(str)
    role = ["baseline" if k == _V1_BASELINE else "step" for k in keys]
    role = [
        "framework" if k.startswith(_V1_FRAMEWORK_PREFIX) else r
        for k, r in zip(keys, role, strict=True)
    ]
    return df.assign(
        role=role,
        runtime=pd.Series(pd.NA, index=df.index, dtype="string"),
        max_abs_err=float("nan"),
        comparison="max |out-ref| / max |ref| per row < 1e-4; same top-1 (schema 1)",
    )


def upgrade_imports(
    meta: Mapping[str, Any], tables: dict[str, pd.DataFrame]
) -> dict[str, pd.DataFrame]:
    """An import (`"source": "import"`) made before imported stages had a verdict of their own
    called them PASS, with no time: they are IMPORTED (nothing was checked), with no timing."""
    stages = tables.get(schema.STAGES.name)
    if meta.get("source") != "import" or stages is None:
        return tables
    old = stages["status"] == schema.PASS
    if not old.any():
        return tables
    stages = stages.assign(
        status=stages["status"].mask(old, schema.IMPORTED),
        timing=stages["timing"].mask(old & stages["median_ns"].isna(), pd.NA),
    )
    return {**tables, schema.STAGES.name: stages}


def upgrade_v1_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """run.json of schema version 1 with version 2's names (`items`, a `unit`)."""
    settings = dict(meta.get("settings") or {})
    if "images" in settings:
        settings["items"] = settings.pop("images")
    return dict(meta, settings=settings, unit=meta.get("unit", "images"), schema_version=1)


# --- strict JSON, for run.json and baseline files (`profiler.baseline_file`) ----------------
# `read_json` refuses what Python's json takes or chokes on: NaN and Infinity, numbers past the
# float range, integers past MAX_INT_DIGITS (the 4300-digit limit raises deep in the decoder),
# nesting past MAX_DEPTH (RecursionError). The accessors return a value typed or raise
# FieldError naming where it sits (`stages[3].timed_ns[0]`), what was expected and what was found.

MAX_DEPTH = 32
MAX_INT_DIGITS = 30
INT64_MAX = 2**63 - 1
T = TypeVar("T")


class FieldError(ValueError):
    """A value of a JSON document is not what its place needs."""

    def __init__(self, where: str, expected: str, value: Any):
        self.where = where
        super().__init__(f"{where}: expected {expected}, got {describe(value)}")


def read_json(path: str | Path, what: str, limit: int) -> Any:
    """The JSON document in the file `path` (at most `limit` bytes), strictly parsed.

    Raises: DataError naming `path` (and `what` it should be) when the file cannot be read
    (see `profiler.files.read_text`) or is not strict JSON of bounded depth.
    """
    content = files.read_text(path, limit=limit)
    try:
        data = json.loads(
            content, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_no_constant
        )
    except RecursionError:
        raise DataError(f"{path}: not a {what} (JSON nested too deeply to read)") from None
    except ValueError as exc:  # JSONDecodeError, or one of the hooks below
        raise DataError(f"{path}: not a {what} (not valid JSON: {exc})") from None
    depth = nesting_depth(data)
    if depth > MAX_DEPTH:
        raise DataError(f"{path}: not a {what} (JSON nested {depth} deep; at most {MAX_DEPTH})")
    return data


def nesting_depth(value: Any) -> int:
    """How deep lists and objects nest in `value` (a scalar is 0); iterative, so any depth."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if not isinstance(item, list):
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in item)
    return deepest


def _parse_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(digits.lstrip('-'))} digits")
    return int(digits)


def _parse_float(digits: str) -> float:
    if not math.isfinite(value := float(digits)):
        raise ValueError(f"the number {digits[:40]} is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def describe(value: Any) -> str:
    """`-5`, `"x"` or `a list`: a short account of a JSON value, for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value[:40] + ("..." if len(value) > 40 else ""))
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return "an object" if isinstance(value, dict) else type(value).__name__


def obj(value: Any, where: str) -> dict[str, Any]:
    """`value` as a JSON object. Raises: FieldError."""
    if not isinstance(value, dict):
        raise FieldError(where, "an object", value)
    return value


def array(value: Any, where: str) -> list[Any]:
    """`value` as a JSON list. Raises: FieldError."""
    if not isinstance(value, list):
        raise FieldError(where, "a list", value)
    return value


def optional(read: Callable[..., T], value: Any, where: str, **limits: Any) -> T | None:
    """None for a JSON null, else `read(value, where, **limits)` (one of the accessors below)."""
    return None if value is None else read(value, where, **limits)


def integer(value: Any, where: str, *, minimum: int = 0, maximum: int = INT64_MAX) -> int:
    """`value` as an integer in [minimum, maximum].

    Raises: FieldError for anything else: a float (1.5, 1e30), a boolean, a string, a value out
    of range (a negative duration).
    """
    if not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= maximum:
        kind = "a non-negative integer" if minimum == 0 else f"an integer of at least {minimum}"
        raise FieldError(where, kind + (f" up to {maximum}" if maximum != INT64_MAX else ""), value)
    return value


def number(value: Any, where: str, *, minimum: float | None = 0.0) -> float:
    """`value` as a finite number, at least `minimum` unless that is None. Raises: FieldError."""
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or (minimum is not None and value < minimum)
    ):
        kind = "a number" if minimum is None else f"a number >= {minimum:g}"
        raise FieldError(where, kind, value)
    return float(value)


def text(value: Any, where: str, *, choices: Collection[str] = ()) -> str:
    """`value` as a non-empty string (one of `choices` when given). Raises: FieldError."""
    if not isinstance(value, str) or not value:
        raise FieldError(where, "a non-empty string", value)
    if choices and value not in choices:
        raise FieldError(where, "one of " + ", ".join(sorted(choices)), value)
    return value


def _write_json_atomic(path: Path, obj: Any) -> None:
    files.write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")
