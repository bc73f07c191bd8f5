"""`profgen import`: a run built from profiler output that already exists.

Each stage is one file or folder, in study order: a folder of `nsys stats --format csv` files,
a capture of `nsys stats` output, an `.nsys-rep` or `.sqlite` (turned into CSV with the real
`nsys stats` in a temporary folder; a `.sqlite` with Python's sqlite3 where nsys is not
installed: `collect.nsys_sqlite`), an `.ncu-rep` or 2019
`.nsight-cuprof-report` (read through `ncu --import --csv`, or where ncu is missing or fails
on it, NVIDIA's report reader for Python: `collect.ncu_pyreport`), ncu output (text or
--csv), an nvprof log (summary, gpu trace or API trace, text or `--csv`; metrics, events), an
nvprof profile (`nvprof -o`, `.nvprof`/`.nvvp`: its kernels, copies and memsets,
`parse.nvprof_db`), or a terminal capture of several tools' output
(`profiler.import_capture`).
The stage's tables come out as if profgen had profiled it: the same parsers and the same
nvprof-style summaries. Nothing is checked against a reference, so every stage is
IMPORTED (never PASS) with that said in its `reason`. Its time is the span the user names
(`--range`), else the GPU span of the capture, else its summed GPU time; per repeat when the user
says how many repeats the program ran (`--repeats`), else a whole-program total
(`profiler.import_timing`). A file of several nvprof runs, or a capture of several nsys or ncu
runs, is one stage per run (`profiler.import_runs`).

What is kept: only the files that were read are copied into `raw/<stage>/` (for a folder, the
regular files named like an nsys report; a symbolic link, a FIFO or any other file in it is
neither read nor copied), each opened without following links; run.json says `"source":
"import"` and lists them. A path given on the command line is the user's choice and is resolved
once, links included.

Stage keys and the model name name folders: a key is `KEY_PATTERN` (letters, digits, `_.-`, at
most 64 characters, not starting with a dot or a dash). The run is complete, report.html
included, before its directory gets its final name: an interrupt or a full disk leaves no
run that looks whole.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import stat
import tempfile
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from profiler import (
    __version__,
    files,
    import_capture,
    import_paste,
    import_runs,
    import_timing,
    schema,
    store,
)
from profiler.analyze.assemble import assemble_tables
from profiler.collect import demangle, reports
from profiler.errors import DataError, OutputError, ParseError, ToolNotFound, UsageError
from profiler.import_timing import REASON, StageTiming
from profiler.parse import (
    csvtext,
    cupti,
    detect,
    ncu_csv,
    ncu_runs,
    ncu_text,
    nsys_capture,
    nsys_csv,
    nsys_no_table,
    nvprof,
    nvprof_db,
    reader_notes,
    unusable,
)
from profiler.render import html

__all__ = ["KEY_PATTERN", "REASON", "StageTiming", "import_run"]

KEY_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
_STAGE = re.compile(KEY_PATTERN)
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
_TECHNIQUE = {
    detect.NSYS_DIR: "imported from nsys stats CSV files",
    detect.NSYS_TEXT: "imported from nsys stats output",
    detect.NSYS_REPORT: "imported from an Nsight Systems report",
    detect.NCU_REPORT: "imported from an Nsight Compute report",
    detect.NCU_CSV: "imported from Nsight Compute CSV",
    detect.NCU_TEXT: "imported from Nsight Compute output",
    detect.NVPROF: "imported from nvprof output",
    detect.NVPROF_DB: "imported from an nvprof profile (nvprof -o)",
    detect.CAPTURE: "imported from a terminal capture",
}
# Kinds whose readers take a file's bytes held (`csvtext.Held`); the others get a file.
_READ_HELD = (detect.NSYS_TEXT, detect.NCU_CSV, detect.NVPROF)


def import_run(
    model: str,
    stages: list[tuple[str, str]],
    titles: dict[str, str],
    out_root: Path,
    repeats: Sequence[tuple[str | None, int]] = (),
    ranges: Sequence[str] = (),
) -> Path:
    """Build a run directory from existing profiler output, one file or folder per stage.

    Args:
        model: the study's name (letters, digits, `_.+-`, at most 64), in the run folder's name.
        stages: (stage key, path) pairs in study order; keys match `KEY_PATTERN`.
        titles: stage titles by key (a stage without one is titled by its key).
        out_root: the folder that receives the run directory.
        repeats: how many repeats each program ran, as `--repeats` gives them: (stage key, or
            None for every stage, count); see `import_timing.stage_timings`.
        ranges: the NVTX range that is a stage's time, as `--range` gives them (`NAME` or
            `KEY=NAME`).

    Returns: the complete run directory (`<out_root>/<model>-<UTC timestamp>`).

    Raises:
        UsageError: a bad model name or stage key, a repeated key, a title, `--repeats` or
            `--range` for no stage (or given twice), repeats out of range, a `--range` that
            matches no NVTX range of its stage, an `out_root` that is no folder.
        DataError: a path that does not exist.
        ParseError: a file or folder that is not profiler output profgen reads, is corrupt, or
            has no rows.
        ToolNotFound: an .nsys-rep or .sqlite was given and nsys is not installed, or an
            .ncu-rep and neither ncu nor NVIDIA's report reader for Python is.
        ProfilerRunError: `nsys stats` failed on a report, or `ncu --import` did and the
            report reader could not read it either.
        OutputError: the run cannot be written (a full or read-only disk).
    """
    inputs = _check(model, stages, titles)
    timings = import_timing.stage_timings([k for k, _ in inputs], repeats, ranges)
    files.check_output_dir(out_root)
    with _disk(out_root):
        tmp = store.start_run(Path(out_root), model)
    try:
        listed: list[dict[str, Any]] = []
        made: list[import_runs.Stage] = []
        for key, inp in inputs:
            raw = tmp / "raw" / key
            runs, read, extra = _read_pasted(inp, key, raw)
            runs, quotes = import_runs.without_quotes(runs)
            quotes += import_paste.pipes_left_out(inp)
            if quotes:
                said = [*extra.get("warnings", []), *(f"{inp.path}: {q}" for q in quotes)]
                extra = {**extra, "warnings": said}
            made += import_runs.stages(key, runs, titles.get(key, key), [k for k, _ in stages])
            with _disk(out_root):
                listed.append({**_copy_raw(key, inp.path, inp.kind, read, raw, tmp), **extra})
        keys = [s.key for s in made]
        timed = {s.key: timings[s.source] for s in made}
        tables = assemble_tables([s.tables for s in made], model, keep_printed=True)
        tables[schema.STAGES.name] = import_timing.stages_table(
            [(s.key, s.technique) for s in made], tables, {s.key: s.title for s in made}, timed
        )
        command = _command(model, stages, titles, out_root, repeats, ranges)
        meta = _meta(model, keys, listed, command, timed)
        run = store.Run(meta, tables)
        with _disk(out_root):
            store.save_run(run, tmp)
            path = store.publish(run, tmp, lambda: html.write_report(run, tmp / "report.html"))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # the inputs are still where they were
        raise
    return path


@contextlib.contextmanager
def _disk(out_root: Path) -> Iterator[None]:
    """A failing disk (full, read-only, permissions) inside the block, as OutputError."""
    try:
        yield
    except OSError as exc:
        raise OutputError(
            f"--out {out_root}: cannot write the run ({exc.strerror or exc})"
        ) from None


def _check(
    model: str, stages: list[tuple[str, str]], titles: dict[str, str]
) -> list[tuple[str, import_paste.Input]]:
    """Validate the arguments and detect every input's kind (and a paste's shape:
    `import_paste`) before anything is written."""
    if not _MODEL.fullmatch(model):
        raise UsageError(
            f"--model {model[:80]!r}: use letters, digits and _.+- only, at most 64 characters "
            "(it names the run folder)"
        )
    if not stages:
        raise UsageError("give at least one --stage KEY=PATH")
    keys = [k for k, _ in stages]
    for key in keys:
        if not _STAGE.fullmatch(key):
            raise UsageError(
                f"--stage {key[:80]!r}: a stage key is letters, digits and _.- (not first), "
                "at most 64 characters (it names a folder)"
            )
        if keys.count(key) > 1:
            raise UsageError(f"--stage {key!r} is given twice")
    unknown = sorted(set(titles) - set(keys))
    if unknown:
        raise UsageError(
            f"--title for unknown stage {unknown[0][:80]!r}; stages: {', '.join(keys)}"
        )
    return [(key, import_paste.detected(path)) for key, path in _resolved(stages)]


def _resolved(stages: list[tuple[str, str]]) -> list[tuple[str, Path]]:
    """Each stage's path, resolved once (a link the user names is followed here, and only here).

    Raises: DataError for a path that does not exist or cannot be looked up.
    """
    out = []
    for key, text in stages:
        try:
            path = Path(text).expanduser().resolve(strict=True)
        except FileNotFoundError:
            raise DataError(f"{text}: no such file or folder (stage {key})") from None
        except (OSError, ValueError, RuntimeError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            raise DataError(f"{text[:200]!r}: cannot be used (stage {key}: {why})") from None
        out.append((key, path))
    return out


def _read_pasted(
    inp: import_paste.Input, stage: str, raw: Path
) -> tuple[list[import_runs.Run], list[Path], dict[str, Any]]:
    """`_read_input` of the input, its text with a paste's shape undone when it has one: what
    is read is named as the file, the file is what is copied, and every line number is the
    file's own (`import_paste`).

    Raises: ParseError as `_read_input`, naming the file's own lines, and what the file is
        when it is a program's source (`unusable.quoted_in`).
    """
    try:
        if inp.shape is None:
            return _read_input(inp.kind, inp.path, stage, raw)
        runs, _, extra = _read_input(inp.kind, inp.source, stage, raw, inp.path)
    except ParseError as exc:
        noted = exc if inp.shape is None else import_paste.noted(exc, inp.shape, inp.path)
        raise unusable.quoted_in(noted, inp.path.suffix) from None
    runs, extra = import_paste.relocated(inp, runs, extra)
    return runs, [inp.path], extra


def _read_input(
    kind: str, source: Path | csvtext.Held, stage: str, raw: Path, path: Path | None = None
) -> tuple[list[import_runs.Run], list[Path], dict[str, Any]]:
    """An input's runs (one, unless it holds several profiler runs: `import_runs`), the files
    read and what run.json's entry adds: a terminal capture is read section by section
    (`import_capture`) through `_read_stage`. `source` is the file or folder, or a file's text
    held; `path` names it (`source`'s own path when None).

    Raises: ParseError as `_read_stage`, for the input or any of its runs.
    """
    path = path or csvtext.source_path(source)
    if kind == detect.NVPROF:
        with reader_notes.trimmed() as trimmed:
            found = nvprof.read_runs(source, stage)
        for run in found.kept:
            _check_rows(run.tables, path)
        left = [f"{path}: line {n}: nvprof run left out: {why}" for n, why in found.left_out]
        left += [f"{path}: {note}" for note in trimmed]
        runs = import_runs.nvprof_runs(found, _TECHNIQUE[kind], trimmed)
        return runs, [path], {"warnings": left} if left else {}
    if kind == detect.NSYS_TEXT:
        with reader_notes.trimmed() as trimmed:
            told = nsys_capture.read_stats_runs(source, stage)
        for _, tables in told:
            _check_rows(tables, path)
        said = {"warnings": [f"{path}: {note}" for note in trimmed]} if trimmed else {}
        return import_runs.nsys_text_runs(told, _TECHNIQUE[kind], trimmed), [path], said
    if kind == detect.NCU_TEXT:
        return _ncu_text_runs(source, stage, path)
    if kind != detect.CAPTURE:
        with reader_notes.trimmed() as trimmed:
            tables, read = _read_stage(kind, source, stage, raw)
        technique = import_runs.noted(_TECHNIQUE[kind], trimmed)
        said = {"warnings": [f"{path}: {note}" for note in trimmed]} if trimmed else {}
        return [import_runs.Run(tables, technique)], read, said
    found_runs = import_capture.read_capture(source, stage, raw, _read_stage)
    names = {k: v.removeprefix("imported from ") for k, v in _TECHNIQUE.items()}
    extra = {
        "sections": [s for f in found_runs for s in f.sections],
        "warnings": [w for f in found_runs for w in f.warnings(path)],
    }
    runs = [
        import_runs.Run(f.tables, import_capture.technique(f, names), f.command or f.heading)
        for f in found_runs
    ]
    return runs, [path], extra


def _ncu_text_runs(
    source: Path | csvtext.Held, stage: str, path: Path
) -> tuple[list[import_runs.Run], list[Path], dict[str, Any]]:
    """`_read_input` of a file of ncu text output: one run per ncu run it tells apart
    (`ncu_runs`), else one.

    Raises: ParseError as `ncu_text.read_tables`.
    """
    if isinstance(source, csvtext.Held):
        with _on_disk(source) as file:
            return _ncu_text_runs(file, stage, path)
    with reader_notes.trimmed() as trimmed:
        found = ncu_runs.read_runs(source, stage)
    for run in found.kept:
        _check_rows(run.tables, path)
    said = {"warnings": [f"{path}: {note}" for note in trimmed]} if trimmed else {}
    runs = import_runs.nvprof_runs(found, _TECHNIQUE[detect.NCU_TEXT], trimmed)
    return runs, [path], said


def warnings(run_dir: Path) -> list[str]:
    """What an import passed over that its user should know (run.json's `inputs[].warnings`):
    a section of a capture left out, a paste that elides rows, a table of its top rows only."""
    meta = store.read_json(Path(run_dir) / store.RUN_JSON, "profgen run.json", store.RUN_JSON_LIMIT)
    inputs = meta.get("inputs") if isinstance(meta, dict) else None
    return [
        f"stage {entry.get('stage')}: {line}"
        for entry in inputs or []
        if isinstance(entry, dict)
        for line in entry.get("warnings") or []
    ]


def _read_stage(
    kind: str, path: Path | csvtext.Held, stage: str, raw: Path
) -> tuple[dict[str, pd.DataFrame], list[Path]]:
    """The stage's tables (summaries of traces come later: analyze.assemble) and the input
    files that were read. `path` is a file or folder, or a file's bytes held (a section of a
    terminal capture: `import_capture`).

    Raises: ParseError when the input gives no rows at all.
    """
    if isinstance(path, csvtext.Held) and kind not in _READ_HELD:
        with _on_disk(path) as file:
            return _read_stage(kind, file, stage, raw)
    name = csvtext.source_path(path)
    read = [name]
    stats_log: Path | None = None  # the log of `nsys stats` run on a report
    if kind == detect.NSYS_DIR:
        read = list(nsys_csv.report_files(name).values())
        tables = nsys_csv.read_stats_dir(name, stage)
    elif kind == detect.NSYS_TEXT:
        tables = nsys_capture.read_stats_stdout(path, stage)
    elif kind == detect.NSYS_REPORT:
        with _tool_for(name, "an Nsight Systems report, read through `nsys stats`"):
            folder, note = reports.nsys_stats(name, raw)
        if note:  # (an export read by Python's sqlite3, not nsys: said with the stage)
            reader_notes.read_note(note)
        tables = nsys_csv.read_stats_dir(folder, stage)
        stats_log = folder / reports.NSYS_LOG
    elif kind == detect.NCU_REPORT:
        with _tool_for(name, "an Nsight Compute report, read through `ncu --import`"):
            csv_file, note = reports.ncu_import(name, raw)
        if note:  # (read by NVIDIA's report reader for Python, not ncu: said with the stage)
            reader_notes.read_note(note)
        tables = ncu_csv.read_tables(csv_file, stage)
    elif kind == detect.NVPROF_DB:
        tables = {"gpu_trace": _nvprof_profile_trace(name, stage)}
    elif kind == detect.NCU_CSV:
        tables = ncu_csv.read_tables(path, stage)
    elif kind == detect.NCU_TEXT:
        tables = ncu_text.read_tables(name, stage)
    else:
        tables = nvprof.read_log(path, stage)
    _check_rows(tables, name, stats_log)
    return tables, read


def _nvprof_profile_trace(path: Path, stage: str) -> pd.DataFrame:
    """The GPU trace of the nvprof profile at `path` (`parse.nvprof_db`), its kernel names
    demangled as profgen's cupti backend demangles them (`collect.demangle`).

    Raises: ParseError naming the file when it cannot be read.
    """
    raw = nvprof_db.read_raw(path)
    raw["names.kernel"] = np.array(demangle.demangle(list(raw["names.kernel"]))[0], dtype=object)
    return cupti.gpu_trace(raw, stage)


@contextlib.contextmanager
def _tool_for(path: Path, what: str) -> Iterator[None]:
    """A missing profiler named with the file that needs it (`path`) and what the file is
    (`what`): the one line a user reads says why a report is not imported.

    Raises: ToolNotFound, its message led by the file and what it is.
    """
    try:
        yield
    except ToolNotFound as exc:
        raise ToolNotFound(f"{path}: {what}, and {exc}") from None


def _check_rows(tables: dict[str, pd.DataFrame], path: Path, stats_log: Path | None = None) -> None:
    """Raises: ParseError when no table has a row, saying what `nsys stats` skipped (its log,
    `stats_log`, when it ran on a report) when it skipped the reports profgen reads because
    the profile holds none of their data."""
    if any(len(t) for t in tables.values()):
        return
    why = None
    if stats_log is not None and stats_log.is_file():
        why = nsys_no_table.all_skipped(stats_log.read_text(errors="replace"))
    raise ParseError(path, detect.EXPECTED, why or "it has tables but no rows to import")


@contextlib.contextmanager
def _on_disk(held: csvtext.Held) -> Iterator[Path]:
    """Held bytes as a temporary file of the same name, for a reader that takes files only."""
    with tempfile.TemporaryDirectory(prefix="profgen-capture-") as folder:
        file = Path(folder) / held.path.name
        file.write_bytes(held.view())
        yield file


def _copy_raw(
    key: str, path: Path, kind: str, read: list[Path], raw: Path, run_dir: Path
) -> dict[str, Any]:
    """Copy the files a stage's parser read into `raw/<stage>/`; returns its entry in
    run.json's `inputs`."""
    raw.mkdir(parents=True, exist_ok=True)
    for file in read:
        _copy_regular(file, raw / file.name)
    return {
        "stage": key,
        "path": str(path),
        "kind": kind,
        "raw": [str((raw / f.name).relative_to(run_dir)) for f in read],
    }


def _copy_regular(src: Path, dst: Path) -> None:
    """Copy the regular file `src` to the new file `dst`: `src` is opened without following a
    link and without blocking, and refused unless it is a regular file; `dst` is created
    exclusively. Modification time kept, as `shutil.copy2` does.

    Raises: ParseError when `src` is not (or no longer) a regular file.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(src, flags)
    except OSError as exc:
        raise ParseError(src, "a regular file", f"cannot copy it: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fin:
        st = os.fstat(fin.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ParseError(src, "a regular file", "it changed into something else while read")
        with open(dst, "xb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


def _command(
    model: str,
    stages: list[tuple[str, str]],
    titles: dict[str, str],
    out_root: Path,
    repeats: Sequence[tuple[str | None, int]] = (),
    ranges: Sequence[str] = (),
) -> str:
    """The `profgen import` command line that makes this run."""
    words = ["profgen", "import", "--model", model]
    words += [f"--stage={key}={path}" for key, path in stages]
    words += [f"--title={key}={text}" for key, text in titles.items()]
    words += [f"--repeats={n}" if k is None else f"--repeats={k}={n}" for k, n in repeats]
    words += [f"--range={text}" for text in ranges]
    return shlex.join([*words, "--out", str(out_root)])


def _meta(
    model: str,
    keys: list[str],
    inputs: list[dict[str, Any]],
    command: str,
    timings: dict[str, StageTiming],
) -> dict[str, Any]:
    said = {k: t for k, t in timings.items() if t.repeats or t.range is not None}
    settings: dict[str, Any] = {"backend": "import", "stages": keys}
    settings["repeats"] = {k: t.repeats for k, t in said.items() if t.repeats}
    settings["ranges"] = {k: t.range for k, t in said.items() if t.range is not None}
    return {
        "profgen_version": __version__,
        "model": model,
        "model_title": model,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command,
        "source": "import",
        "settings": settings,
        "inputs": inputs,
        "machine": {},
        "git": {},
        "stages": keys,
    }
