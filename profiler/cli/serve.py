"""`profgen serve STUDY --stage KEY`: latency against throughput under load."""

from __future__ import annotations

import argparse
from pathlib import Path

from profiler.cli.args import HelpFormatter, int_list, positive_float, positive_int
from profiler.errors import EXIT_CODES_HELP, UsageError

DURATION_S = 2.0
WARMUP_S = 0.5
EXAMPLES = """examples:
  profgen serve lenet --stage overlap_fusion
  profgen serve lenet --stage overlap_fusion --concurrency 1,4,16,64 --max-batch 1,64 \\
      --max-wait-us 0,200 --streams 1,4 --graphs off,on --slo-ms 1
  profgen serve lenet --stage torch_gpu --graphs off,on
  profgen serve lenet --stage overlap_fusion --rate 1000,10000,50000     open loop
  profgen serve examples/softmax_cpu.py --stage vectorised                 no GPU needed
"""
DURATION_HELP = (
    f"seconds each point is measured (default: {DURATION_S:g}: at LeNet's latencies, 50 us to "
    "a few ms, that is 10^3 to 10^5 requests, enough for a p99 from at least ten requests above "
    f"it, and a 16-point sweep stays under a minute), after --warmup-s (default {WARMUP_S:g}: "
    "caches, clocks and the batcher settle)"
)


def float_list(text: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers, got {text!r}"
        ) from None
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected non-negative numbers, got {text!r}")
    return values


def on_off_list(text: str) -> list[bool]:
    words = {"on": True, "off": False, "1": True, "0": False, "yes": True, "no": False}
    try:
        return [words[x.strip().lower()] for x in text.split(",") if x.strip()]
    except KeyError:
        raise argparse.ArgumentTypeError(f"expected on,off; got {text!r}") from None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="serve one stage under load: latency against throughput, batching, streams, graphs",
        description="Serve one stage of a study from a server loop with dynamic batching (up to "
        "--max-batch items or --max-wait-us of waiting), over --streams CUDA streams with "
        "page-locked staging buffers and optionally one CUDA graph per batch size, under a "
        "closed-loop load (--concurrency clients, each waiting for its answer) and/or an "
        "open-loop load (--rate requests/s, Poisson arrivals). Writes a run directory with "
        "report.html; the last line printed is its path.",
        epilog=EXAMPLES + "\n" + EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    p.add_argument("study", metavar="STUDY", help="an installed study or path/to/study.py")
    p.add_argument("--stage", required=True, metavar="KEY", help="the stage to serve")
    p.add_argument(
        "--concurrency",
        type=int_list,
        default=[1, 2, 4, 8, 16, 32],
        metavar="1,2,4",
        help="closed loop: clients (default: 1,2,4,8,16,32)",
    )
    p.add_argument(
        "--rate",
        type=float_list,
        default=[],
        metavar="R1,R2",
        help="open loop: requests/s with Poisson arrivals (default: none)",
    )
    p.add_argument(
        "--request-items",
        type=positive_int,
        default=1,
        metavar="R",
        help="items per request (default: 1)",
    )
    p.add_argument("--max-batch", type=int_list, default=[32], metavar="B", help="default: 32")
    p.add_argument(
        "--max-wait-us", type=float_list, default=[100.0], metavar="T", help="default: 100"
    )
    p.add_argument("--streams", type=int_list, default=[1], metavar="S", help="default: 1")
    p.add_argument(
        "--graphs", type=on_off_list, default=[False], metavar="off,on", help="default: off"
    )
    p.add_argument(
        "--engine",
        choices=("stage", "tensorrt"),
        default="stage",
        help="stage: the study's stage (default); tensorrt: needs the tensorrt package",
    )
    p.add_argument("--duration-s", type=positive_float, default=DURATION_S, help=DURATION_HELP)
    p.add_argument("--warmup-s", type=positive_float, default=WARMUP_S, help="see --duration-s")
    p.add_argument(
        "--slo-ms",
        type=positive_float,
        default=1.0,
        help="the p99 latency objective the report's answer uses (default: 1)",
    )
    p.add_argument(
        "--check-every",
        type=positive_int,
        default=64,
        metavar="N",
        help="check one answer in N against the reference (default: 64)",
    )
    p.add_argument(
        "--keep-records",
        action="store_true",
        help="keep every point's per-request records (raw/serve/<point>.npz, megabytes each); "
        "by default they are deleted once the tables, report and trace are written",
    )
    p.add_argument("--data", type=Path, metavar="PATH", help="the study's own input file")
    p.add_argument("--timeout", type=positive_float, default=600.0, help="seconds (default: 600)")
    p.add_argument("--out", type=Path, default=Path("reports"), metavar="DIR")
    p.add_argument("--baseline", type=Path, metavar="RUN", help="serving run to compare against")
    p.add_argument(
        "--fail-on",
        action="append",
        default=[],
        metavar="CHECK",
        help="e.g. serve:p99:10%% (default with --baseline: serve:p99:10%% and "
        "serve:throughput:10%%)",
    )
    p.add_argument("--allow-mismatch", action="store_true")
    p.set_defaults(handler=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from profiler.cli.display import LiveProgress
    from profiler.collect import discovery
    from profiler.collect.serve.runner import ServeJob
    from profiler.serve_pipeline import ServeSettings, check_settings, run_serve

    if any(c < 1 for c in args.concurrency) or any(b < 1 for b in args.max_batch + args.streams):
        raise UsageError("--concurrency, --max-batch and --streams take positive integers")
    if args.request_items > min(args.max_batch):
        raise UsageError(
            f"--request-items {args.request_items} is more than --max-batch {min(args.max_batch)}"
        )
    study = discovery.describe(args.study)
    job = ServeJob(
        study_ref=study.ref,
        stage=args.stage,
        concurrency=tuple(args.concurrency),
        rates=tuple(args.rate),
        request_items=args.request_items,
        max_batch=tuple(args.max_batch),
        max_wait_us=tuple(args.max_wait_us),
        streams=tuple(args.streams),
        graphs=tuple(dict.fromkeys(args.graphs)),
        warmup_s=args.warmup_s,
        duration_s=args.duration_s,
        engine=args.engine,
        check_every=args.check_every,
        data=args.data,
        timeout_s=args.timeout,
    )
    settings = check_settings(
        ServeSettings(
            study=study,
            job=job,
            slo_ms=args.slo_ms,
            keep_records=args.keep_records,
            out_root=args.out,
            baseline=args.baseline,
            fail_on=tuple(args.fail_on),
            allow_mismatch=args.allow_mismatch,
        )
    )
    result = run_serve(settings, LiveProgress())
    print_points(result.run)
    print(result.path)
    return result.exit_code


def print_points(run: object) -> None:
    """The table of points, the Little's law check and the sentence, on the terminal."""
    from profiler.analyze import serving
    from profiler.render.serve_text import points_text

    print(points_text(run, serving))
