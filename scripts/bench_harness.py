#!/usr/bin/env python3
"""The harness's timed pass with outputs checked after the timed repeats (now) against checked
between calls (as before: `harness.HELD_BYTES = 0` forces it), through the project's own worker,
one process a run as the sweep does, the two ways alternated.

    python3 scripts/bench_harness.py [--study lenet] [--stages one_kernel,uint8_input]
        [--items 10000] [--repeat 10] [--warmup 2] [--rounds 2]

Prints each stage's medians both ways last; writes harness.json under --out ($OUT, else ".").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WAYS = {"after": None, "between": 0}  # HELD_BYTES: the default, or nothing held


def child(held: str, worker_args: list[str]) -> int:
    """This script run as the worker, with HELD_BYTES set first."""
    from profiler.collect import harness, worker

    if held != "default":
        harness.HELD_BYTES = int(held)
    return worker.main(worker_args)


def study_ref(name: str) -> str:
    """The reference the runner hands its workers for a study name or file."""
    from profiler.collect import discovery

    return discovery.resolve(name)


def one_run(args: argparse.Namespace, stage: str, held: int | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "r.json"
        cmd = [sys.executable, __file__, "--child", "default" if held is None else str(held),
               "run", "--study", study_ref(args.study), "--stage", stage,
               "--items", str(args.items),
               "--warmup", str(args.warmup), "--repeat", str(args.repeat),
               "--profiled-repeats", "1", "--passes", "timed", "--out", tmp,
               "--result", str(result)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return json.loads(result.read_text())


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        return child(sys.argv[2], sys.argv[3:])
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--study", default="lenet")
    p.add_argument("--stages", default="one_kernel,uint8_input")
    p.add_argument("--items", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    args = p.parse_args()
    rows = []
    for stage in args.stages.split(","):
        for rnd in range(args.rounds):
            for way, held in WAYS.items():
                r = one_run(args, stage, held)
                rows.append({"stage": stage, "way": way, "round": rnd, "status": r["status"],
                             "checked_calls": r.get("checked_calls"), "notes": r["notes"],
                             "timed_ns": r["timed_ns"]})
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "harness.json").write_text(json.dumps(rows, indent=1))
    print(f"\nharness A/B: {args.study}, {args.items} items, {args.repeat} timed repeats after "
          f"{args.warmup} warm-ups, {args.rounds} rounds, one worker process a run")
    print(f"{'stage':<18}{'way':<9}{'median ms':>10}{'min':>9}  status  checked calls")
    for r in rows:
        t = [v / 1e6 for v in r["timed_ns"]] or [float("nan")]
        print(f"{r['stage']:<18}{r['way']:<9}{statistics.median(t):>10.3f}{min(t):>9.3f}  "
              f"{r['status']:<6}  {r['checked_calls']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
