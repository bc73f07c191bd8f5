"""Phase-range GPU times of a resnet50 run, per stage: a check for a device session, not the
report (the Amdahl panel is the report's).

`python -m variants.resnet50.phase_times RUN_DIR` prints, for every stage with phase ranges,
the GPU milliseconds per forward of the res3.2-3.4 tails, of all 16 tails, of all phases, and
the kernels each res3 tail launched (from the run's ranges.csv and gpu_trace.csv).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

RES3_TAILS = ("res3.2/tail", "res3.3/tail", "res3.4/tail")


def per_forward(ranges: pd.DataFrame) -> pd.DataFrame:
    """GPU ms per forward of every (stage, range): a range's GPU time over its calls."""
    out = ranges.assign(ms=ranges["gpu_total_ns"].astype(float) / ranges["calls"].clip(lower=1)
                        / 1e6)
    return out.pivot_table(index="name", columns="stage", values="ms", aggfunc="sum")


def summary(run: Path) -> str:
    ranges = pd.read_csv(run / "ranges.csv")
    table = per_forward(ranges)
    stages = list(dict.fromkeys(ranges["stage"]))
    phases = [n for n in table.index if "/" in n or n in ("stem", "head")]
    tails = [n for n in table.index if n.endswith("/tail")]
    rows = []
    for stage in stages:
        if stage not in table or table.loc[phases, stage].isna().all():
            continue
        col = table[stage]
        rows.append({"stage": stage,
                     "res3.2-3.4 tails ms": col.reindex(list(RES3_TAILS)).sum(),
                     "all 16 tails ms": col.reindex(tails).sum(),
                     "all phases ms": col.reindex(phases).sum(),
                     "phases": int(col.reindex(phases).notna().sum())})
    lines = [pd.DataFrame(rows).to_string(index=False, float_format="%.3f")]
    per_tail = table.reindex(list(RES3_TAILS))
    lines.append(per_tail.to_string(float_format="%.3f"))
    lines.append(changed_phases(run, stages))
    return "\n".join(lines)


def kernels_by_phase(trace: pd.DataFrame, stage: str) -> dict[str, tuple[str, ...]]:
    """Sorted kernel names the trace attributes to each phase range in one repeat of `stage`."""
    rows = trace[(trace["stage"] == stage) & (trace["kind"] == "kernel")]
    rows = rows[rows["repeat"] == rows["repeat"].min()]
    return {str(k): tuple(sorted(map(str, g["name"]))) for k, g in rows.groupby("range")}


def changed_phases(run: Path, stages: list[str]) -> str:
    """Which phases launch other kernels than the stage before (unfused -> ... -> fuse_all)."""
    trace = pd.read_csv(run / "gpu_trace.csv", usecols=["stage", "repeat", "kind", "name",
                                                        "range"])
    steps = [s for s in ("unfused", "bn_folded", "fuse_res3", "fuse_all") if s in stages]
    lines = []
    for before, after in zip(steps, steps[1:], strict=False):
        a, b = kernels_by_phase(trace, before), kernels_by_phase(trace, after)
        changed = sorted(p for p in set(a) | set(b) if a.get(p) != b.get(p))
        lines.append(f"{before} -> {after}: {len(changed)} phases launch other kernels: "
                     f"{', '.join(changed[:8])}{' ...' if len(changed) > 8 else ''}")
        for p in changed[:3]:
            lines.append(f"  {p}: {list(a.get(p, ()))} -> {list(b.get(p, ()))}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    for run in args:
        print(f"phase ranges of {run} (GPU ms per forward):")
        print(summary(Path(run)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
