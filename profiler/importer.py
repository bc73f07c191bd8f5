"""`profgen import`: a run built from profiler output that already exists.

Each stage is one file or folder, in study order: a folder of `nsys stats --format csv` files,
a capture of `nsys stats` output, an `.nsys-rep` (turned into CSV with `nsys stats` when nsys is
installed), an `ncu --csv` file, or an nvprof log (text summary, `--csv` summary or `--csv
--print-gpu-trace`). The stage's tables come out as if profgen had profiled it: the same parsers
and the same nvprof-style summaries. The inputs are copied into `raw/<stage>/`; run.json says
`"source": "import"` and lists them. Nothing is checked against a reference, so every stage is
PASS with that said in its `reason`, and timings the inputs lack stay missing.
"""

from __future__ import annotations

import re
import shlex
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from profiler import __version__, schema, store
from profiler.analyze.assemble import assemble_tables
from profiler.errors import DataError, UsageError
from profiler.parse import detect, ncu_csv, nsys_csv, nvprof
from profiler.render import html

REASON = "imported; not checked against a reference"
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
_STAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
_TECHNIQUE = {
    detect.NSYS_DIR: "imported from nsys stats CSV files",
    detect.NSYS_TEXT: "imported from nsys stats output",
    detect.NSYS_REPORT: "imported from an Nsight Systems report",
    detect.NCU_CSV: "imported from Nsight Compute CSV",
    detect.NVPROF: "imported from nvprof output",
}


def import_run(
    model: str, stages: list[tuple[str, str]], titles: dict[str, str], out_root: Path
) -> Path:
    """Build a run directory from existing profiler output, one file or folder per stage.

    Args:
        model: the study's name (letters, digits, `_.+-`), used in the run directory's name.
        stages: (stage key, path) pairs in study order.
        titles: stage titles by key (a stage without one is titled by its key).
        out_root: the folder that receives the run directory.

    Returns: the complete run directory (`<out_root>/<model>-<UTC timestamp>`).

    Raises:
        UsageError: a bad model name or stage key, a repeated key, a title for no stage.
        DataError: a path that does not exist.
        ParseError: a file or folder that is not profiler output profgen reads, or is corrupt.
        ToolNotFound: an .nsys-rep was given and nsys is not installed.
        ProfilerRunError: `nsys stats` failed on an .nsys-rep.
    """
    inputs = _check(model, stages, titles)
    tmp = store.start_run(Path(out_root), model)
    try:
        parts, listed = [], []
        for order, (key, path, kind) in enumerate(inputs):
            raw = tmp / "raw" / key
            listed.append(_copy_raw(key, path, kind, raw, tmp))
            tables = _read_stage(kind, path, key, raw)
            tables[schema.STAGES.name] = _stage_row(key, order, titles.get(key, key), kind)
            parts.append(tables)
        meta = _meta(
            model, [k for k, _, _ in inputs], listed, _command(model, stages, titles, out_root)
        )
        run = store.Run(meta=meta, tables=assemble_tables(parts, model))
        store.save_run(run, tmp)
        path = store.finish_run(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # the inputs are still where they were
        raise
    run.path = path
    html.write_report(run, path / "report.html")
    return path


def _check(
    model: str, stages: list[tuple[str, str]], titles: dict[str, str]
) -> list[tuple[str, Path, str]]:
    """Validate the arguments and detect every input's kind before anything is written."""
    if not _MODEL.match(model):
        raise UsageError(
            f"--model {model!r}: use letters, digits and _.+- only (it names the run folder)"
        )
    if not stages:
        raise UsageError("give at least one --stage KEY=PATH")
    keys = [k for k, _ in stages]
    for key in keys:
        if not _STAGE.match(key):
            raise UsageError(f"--stage {key!r}: a stage key uses letters, digits and _.+- only")
        if keys.count(key) > 1:
            raise UsageError(f"--stage {key!r} is given twice")
    unknown = sorted(set(titles) - set(keys))
    if unknown:
        raise UsageError(f"--title for unknown stage {unknown[0]!r}; stages: {', '.join(keys)}")
    inputs = []
    for key, text in stages:
        path = Path(text).expanduser()
        if not path.exists():
            raise DataError(f"{path}: no such file or folder (stage {key})")
        inputs.append((key, path, detect.detect(path)))
    return inputs


def _read_stage(kind: str, path: Path, stage: str, raw: Path) -> dict[str, pd.DataFrame]:
    if kind == detect.NSYS_DIR:
        tables = nsys_csv.read_stats_dir(path, stage)
    elif kind == detect.NSYS_TEXT:
        tables = nsys_csv.read_stats_stdout(path, stage)
    elif kind == detect.NSYS_REPORT:
        tables = nsys_csv.read_stats_dir(_nsys_stats(path, raw), stage)
    elif kind == detect.NCU_CSV:
        tables = {schema.METRICS.name: ncu_csv.read_metrics(path, stage)}
    else:
        tables = nvprof.read_log(path, stage)
    return tables  # summaries of traces: analyze.assemble


def _nsys_stats(report: Path, out_dir: Path) -> Path:
    """Run `nsys stats` on an .nsys-rep into `out_dir` (the one subprocess of an import).

    Raises: ToolNotFound when nsys is not installed; ProfilerRunError when nsys stats fails.
    """
    from profiler.collect import nsys as nsys_tool
    from profiler.collect.tools import run_tool

    nsys = nsys_tool.find_nsys()
    out_dir.mkdir(parents=True, exist_ok=True)
    prefix = out_dir / nsys_tool.STATS_PREFIX
    run_tool(nsys_tool.stats_cmd(nsys, report, prefix), out_dir / "nsys-stats.log", timeout=600)
    return out_dir


def _copy_raw(key: str, path: Path, kind: str, raw: Path, run_dir: Path) -> dict[str, Any]:
    """Copy one stage's input into `raw/<stage>/`; returns its entry in run.json's `inputs`."""
    raw.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        files = [f for f in sorted(path.iterdir()) if f.is_file()]
    else:
        files = [path]
    for file in files:
        shutil.copy2(file, raw / file.name)
    return {
        "stage": key,
        "path": str(path.resolve()),
        "kind": kind,
        "raw": [str((raw / f.name).relative_to(run_dir)) for f in files],
    }


def _stage_row(key: str, order: int, title: str, kind: str) -> pd.DataFrame:
    """The stage's STAGES row: PASS, not checked; counts 0 and timings missing (not measured)."""
    row = {
        "stage": key,
        "order": order,
        "title": title,
        "technique": _TECHNIQUE[kind],
        "role": "step",
        "runtime": "",
        "status": schema.PASS,
        "reason": REASON,
        "items": 0,
        "batch": 0,
        "warmup": 0,
        "repeats": 0,
        "max_rel_err": float("nan"),
        "max_abs_err": float("nan"),
        "comparison": "",
        "overhead_pct": float("nan"),
    }
    fill = [c.name for c in schema.STAGES.columns if c.name not in row]
    return schema.conform(pd.DataFrame([row]), schema.STAGES, fill=fill)


def _command(
    model: str, stages: list[tuple[str, str]], titles: dict[str, str], out_root: Path
) -> str:
    """The `profgen import` command line that makes this run."""
    words = ["profgen", "import", "--model", model]
    words += [f"--stage={key}={path}" for key, path in stages]
    words += [f"--title={key}={text}" for key, text in titles.items()]
    return shlex.join([*words, "--out", str(out_root)])


def _meta(
    model: str, keys: list[str], inputs: list[dict[str, Any]], command: str
) -> dict[str, Any]:
    return {
        "profgen_version": __version__,
        "model": model,
        "model_title": model,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command,
        "source": "import",
        "settings": {"backend": "import", "stages": keys},
        "inputs": inputs,
        "machine": {},
        "git": {},
        "stages": keys,
    }
