"""Trim a run directory's traces so it can be committed (a sample run, test data).

Summaries (stages, samples, gpu_activities, api_calls, ranges, metrics, ...) stay whole; the
per-instance traces keep, per stage, only the first profiled repeat and at most --rows rows of
it (a per-image stage issues ~90,000 GPU ops per repeat). run.json records what was cut, and
the raw tool output is dropped except small text files.

    python scripts/trim_run.py RUN_DIR OUT_DIR [--rows 3000]
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from profiler import schema, store

TRACES = ("gpu_trace", "api_trace", "range_trace")
KEEP_RAW = (".json", ".log", ".txt")
MAX_RAW_BYTES = 200_000


def trim(run: store.Run, rows: int) -> dict[str, str]:
    """Trim `run`'s traces in place. Returns what was cut, per table."""
    cut = {}
    for name in TRACES:
        if name not in run.tables:
            continue
        df = run.tables[name]
        first = df[df["repeat"] == df.groupby("stage")["repeat"].transform("max").clip(upper=0)]
        kept = first.groupby("stage", sort=False, group_keys=False).head(rows)
        run.tables[name] = schema.conform(kept, schema.table(name))
        cut[name] = f"first profiled repeat, at most {rows} rows per stage ({len(df)} -> {len(kept)})"
    return cut


def copy_raw(src: Path, dst: Path) -> None:
    for path in sorted(src.rglob("*")):
        if path.is_file() and path.suffix in KEEP_RAW and path.stat().st_size <= MAX_RAW_BYTES:
            target = dst / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--rows", type=int, default=3000)
    args = parser.parse_args()
    run = store.load_run(args.run_dir)
    run.meta["trimmed"] = trim(run, args.rows)
    args.out_dir.mkdir(parents=True, exist_ok=False)
    store.save_run(run, args.out_dir)
    copy_raw(args.run_dir / "raw", args.out_dir / "raw")
    print(args.out_dir)


if __name__ == "__main__":
    main()
