#!/usr/bin/env python3
"""Where do the sweep worker's extra 20-60 us a LeNet call come from? One process, the worker's
own loading path (`load_study`, `make_inputs`, `prepare`, `host_input`), and the stage called
four ways in alternating rounds of --repeat calls each:

- `bench`: what scripts/bench_stages.py does: a device synchronise, then `infer`, host-timed;
- `bench_nvtx`: the same inside the stage's NVTX range (`profiler.ranges.range`);
- `harness`: two warm-ups then `profiler.collect.harness.timed_calls`, the worker's own timed
  pass (events on stdout, the NVTX range, the runtime's synchronise after the call, every
  output held);
- `harness_no_nvtx`: the same with NVTX switched off;
- `gap<N>us`: `bench` with the host busy for N us after each call's synchronise, before the next
  call starts (the GPU idle as long: the harness holds a copy of each output there).

    python3 scripts/worker_gap.py [--stages uint8_input,one_kernel] [--items 10000]
        [--repeat 10] [--rounds 4] [--gaps-us 50,200]

Prints the harness's host time outside the calls per stage (a pass's time less its calls', per
call: the gaps between calls and the check of the held outputs after the last), then each
way's median ms per stage.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from profiler import ranges  # noqa: E402
from profiler.collect import discovery, harness, runtimes  # noqa: E402
from profiler.collect.loading import load_study  # noqa: E402


def bench(call: harness.Call, repeat: int, nvtx: bool, gap_us: float = 0) -> list[int]:
    sync = call.runtime.synchronize
    times = []
    for _ in range(repeat):
        sync()
        until = time.perf_counter_ns() + int(gap_us * 1000)
        while time.perf_counter_ns() < until:  # busy, as the harness is between calls
            pass
        t0 = time.perf_counter_ns()
        with ranges.range(call.name) if nvtx else contextlib.nullcontext():
            call.stage.infer(call.x)
        times.append(time.perf_counter_ns() - t0)
    return times


#: the harness's host time outside the calls (us), per call, one a pass: the gaps between calls
#: and the check of the held outputs after the last one (milliseconds for 10,000 images)
BETWEEN: list[float] = []


def through_harness(
    call: harness.Call, repeat: int, checks: harness.Checks, nvtx: bool
) -> list[int]:
    """The worker's warm-ups (2, held) and timed pass."""
    saved = ranges._nvtx
    if not nvtx:
        ranges._nvtx = False
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            harness.warm_up(call, 2, checks)
            t0 = time.perf_counter_ns()
            times = harness.timed_calls(call, "timed", repeat, checks)
            BETWEEN.append((time.perf_counter_ns() - t0 - sum(times)) / repeat / 1e3)
            return times
    finally:
        ranges._nvtx = saved


def one_stage(study, key: str, args: argparse.Namespace) -> dict[str, float]:
    spec = study.get(key)
    stage = spec.build()
    model = study.load_model(None)
    x = study.make_inputs(args.items, None)
    ref_x = stage.reference_input(x) if hasattr(stage, "reference_input") else x
    checks = harness.Checks(study.run_reference(ref_x, model), study.compare_for(spec))
    stage.prepare(model, len(x))
    call = harness.Call(stage, stage.host_input(x), len(x), f"{study.name}:{key}",
                        runtimes.adapter(spec.runtime))
    ways = {
        "bench": lambda: bench(call, args.repeat, False),
        "bench_nvtx": lambda: bench(call, args.repeat, True),
        "harness": lambda: through_harness(call, args.repeat, checks, True),
        "harness_no_nvtx": lambda: through_harness(call, args.repeat, checks, False),
    }
    for gap in args.gaps_us:
        ways[f"gap{gap:g}us"] = lambda gap=gap: bench(call, args.repeat, False, gap)
    samples: dict[str, list[int]] = {w: [] for w in ways}
    bench(call, 3, False)  # warm-up
    for _ in range(args.rounds):
        for way, fn in ways.items():
            samples[way] += fn()
    stage.release()
    if checks.failures:
        print(f"{key}: check failed: {checks.reason()}")
    print(f"{key}: the harness's host time outside the calls, checks included, median over passes: "
          f"{statistics.median(BETWEEN):.0f} us")
    BETWEEN.clear()
    return {w: statistics.median(t) / 1e6 for w, t in samples.items()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--study", default="lenet")
    p.add_argument("--stages", default="uint8_input,one_kernel")
    p.add_argument("--items", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--gaps-us", type=lambda v: [float(g) for g in v.split(",")], default=[50, 200])
    args = p.parse_args()
    study = load_study(discovery.resolve(args.study))
    rows = {key: one_stage(study, key, args) for key in args.stages.split(",")}
    ways = next(iter(rows.values())).keys()
    print(f"\nworker gap: {args.items} items, {args.rounds} rounds x {args.repeat} calls, "
          "median ms")
    print(f"{'stage':<16}" + "".join(f"{w:>17}" for w in ways))
    for key, row in rows.items():
        print(f"{key:<16}" + "".join(f"{row[w]:>17.4f}" for w in ways))
    return 0


if __name__ == "__main__":
    sys.exit(main())
