"""Trim a run directory's traces so it can be committed (a sample run, test data).

The per-instance traces (gpu_trace, api_trace, range_trace) keep, per stage, only the first
profiled repeat and at most --rows rows of it (a per-image stage issues ~90,000 GPU ops per
repeat). Before anything is cut, every summary a trace gives (gpu_activities, api_calls, ranges)
is made whole: a stage the summary lacks gets it computed from the FULL trace, as a sweep does
(`profiler.analyze.assemble`); a summary the run has is kept as it is. So stages, samples,
gpu_activities, api_calls, ranges and metrics cover every repeat, and a comparison takes its
kernel totals from them (`profiler.baseline.comparable` never reads a trimmed trace).

run.json's `trimmed` says what was cut, table by table: `{"kept": rows, "of": rows, "rule":
"..."}`, `of` counting the rows of the untrimmed run even when a trimmed run is trimmed again.
The raw tool output is dropped except small text files.

    python scripts/trim_run.py RUN_DIR OUT_DIR [--rows 3000]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from profiler import schema, store
from profiler.analyze.assemble import SUMMARIES, in_repeats
from profiler.errors import ProfgenError, RunNotFound

TRACES = ("gpu_trace", "api_trace", "range_trace")
KEEP_RAW = (".json", ".log", ".txt")
MAX_RAW_BYTES = 200_000


def trim(run: store.Run, rows: int) -> dict[str, dict[str, Any]]:
    """Make `run`'s summaries whole, then trim its traces in place.

    Returns: run.json's `trimmed`: per trace table, the rows kept, of how many, and the rule.
    """
    complete_summaries(run)
    before = store.trimmed_tables(run.meta)
    cut = {}
    for name in TRACES:
        if name not in run.tables:
            continue
        df = run.tables[name]
        first = df[df["repeat"] == df.groupby("stage")["repeat"].transform("max").clip(upper=0)]
        kept = first.groupby("stage", sort=False, group_keys=False).head(rows)
        run.tables[name] = schema.conform(kept, schema.table(name))
        of = before[name].of if name in before and before[name].of is not None else len(df)
        cut[name] = {
            "kept": len(kept),
            "of": of,
            "rule": f"first profiled repeat, at most {rows} rows per stage",
        }
    return cut


def complete_summaries(run: store.Run) -> None:
    """Give every stage of a trace its summary rows, computed from that (full) trace, where the
    run has none (summaries it has are kept: they may come from a tool, or from a trace that
    was already trimmed).

    Raises: RunNotFound when a stage lacks a summary and its trace was trimmed already.
    """
    trimmed = store.trimmed_tables(run.meta)
    for summary, (trace_name, summarise) in SUMMARIES.items():
        trace = run.tables.get(trace_name)
        if trace is None or trace.empty:
            continue
        tbl = schema.table(summary)
        have = run.tables.get(summary, schema.empty(tbl))
        lacking = [s for s in trace["stage"].dropna().unique() if s not in set(have["stage"])]
        if lacking and trace_name in trimmed:
            raise RunNotFound(
                f"{run.path}: {summary} has no rows of stage(s) {', '.join(map(str, lacking))} "
                f"and {trace_name} was trimmed already: the summary cannot be made whole"
            )
        parts = [
            summarise(in_repeats(trace[trace["stage"] == s].reset_index(drop=True)))
            for s in lacking
        ]
        if parts:
            run.tables[summary] = schema.conform(pd.concat([have, *parts], ignore_index=True), tbl)


def copy_raw(src: Path, dst: Path) -> None:
    """Copy the small text files of `src` (a run's raw/) into `dst`."""
    for path in sorted(src.rglob("*")):
        if path.is_file() and path.suffix in KEEP_RAW and path.stat().st_size <= MAX_RAW_BYTES:
            target = dst / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--rows", type=int, default=3000)
    args = parser.parse_args(argv)
    if args.rows < 1:
        parser.error("--rows must be at least 1")
    try:
        run = store.load_run(args.run_dir)
        run.meta["trimmed"] = trim(run, args.rows)
    except ProfgenError as exc:
        print(f"trim_run: error: {exc}", file=sys.stderr)
        return exc.exit_code
    args.out_dir.mkdir(parents=True, exist_ok=False)
    store.save_run(run, args.out_dir)
    copy_raw(args.run_dir / "raw", args.out_dir / "raw")
    print(args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
