"""`profgen list`, `profgen run` and `profgen sweep`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from profiler.cli.args import int_list, non_negative_int, positive_float, positive_int, str_list
from profiler.errors import EXIT_STAGE_FAILED

DEFAULT_IMAGES = 10_000
DEFAULT_REPEAT = 10
DEFAULT_WARMUP = 2
DEFAULT_STAGE_TIMEOUT_S = 600.0
BACKENDS = ("cupti", "nsys", "none")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="print every model and its ordered stages")
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("run", help="run one stage and print its time and correctness verdict")
    p.add_argument("model")
    p.add_argument("--stage", required=True, help="stage key (see `profgen list`)")
    _add_timing_args(p)
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser("sweep", help="run every stage under a profiler and write a report")
    p.add_argument("model")
    _add_timing_args(p)
    p.add_argument(
        "--backend", choices=BACKENDS, default="cupti", help="profiler for the breakdown tables"
    )
    p.add_argument(
        "--metrics", action="store_true", help="also collect Nsight Compute counters (slow)"
    )
    p.add_argument("--stages", type=str_list, help="comma-separated stage keys (default: all)")
    p.add_argument("--batch-sizes", type=int_list, help="also time the stages at these batch sizes")
    p.add_argument(
        "--stage-timeout",
        type=positive_float,
        default=DEFAULT_STAGE_TIMEOUT_S,
        help="seconds before a stage is killed and marked TIMEOUT",
    )
    p.add_argument("--out", type=Path, default=Path("reports"), help="folder that receives the run")
    p.add_argument(
        "--baseline", type=Path, help="run directory or baseline file to compare against"
    )
    p.add_argument(
        "--fail-on",
        action="append",
        default=[],
        metavar="CHECK",
        help="regression check, e.g. stage:median:5%% (repeatable; needs --baseline)",
    )
    p.add_argument(
        "--allow-mismatch", action="store_true", help="accept a baseline from another GPU"
    )
    p.add_argument("--summary", type=Path, help="write a Markdown summary for a CI job page")
    p.add_argument("--junit", type=Path, help="write a JUnit XML file, one test case per check")
    p.set_defaults(handler=cmd_sweep)


def _add_timing_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--images", type=positive_int, default=DEFAULT_IMAGES, help="images to infer")
    p.add_argument("--repeat", type=positive_int, default=DEFAULT_REPEAT, help="timed repeats")
    p.add_argument(
        "--warmup", type=non_negative_int, default=DEFAULT_WARMUP, help="untimed warm-ups"
    )
    p.add_argument("--data", type=Path, help="MNIST test images in IDX format (gz or not)")


def cmd_list(args: argparse.Namespace) -> int:
    from variants.registry import models

    for spec in models().values():
        print(f"{spec.name}: {spec.title}")
        for i, cls in enumerate(spec.stages(), 1):
            print(f"  {i:2d}. {cls.key:<16} {cls.title}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from profiler import pipeline
    from profiler.cli.display import print_staged

    settings = pipeline.settings_from_args(args, stages=[args.stage], backend="none")
    stages = pipeline.run_one(settings)
    print_staged(stages, settings.images)
    return 0 if (stages["status"] == "PASS").all() else EXIT_STAGE_FAILED


def cmd_sweep(args: argparse.Namespace) -> int:
    from profiler import pipeline
    from profiler.cli.display import LiveProgress, print_staged
    from profiler.render.escape import TEXT_LIMIT, terminal

    settings = pipeline.settings_from_args(args, stages=args.stages, backend=args.backend)
    result = pipeline.run_pipeline(settings, LiveProgress())
    for mismatch in result.run.meta.get("baseline", {}).get("mismatches", []):
        warning = terminal(mismatch, TEXT_LIMIT)
        print(f"profgen: warning: baseline compared anyway: {warning}", file=sys.stderr)
    title = result.run.meta.get("model_title", settings.model)
    print_staged(result.run.table("stages"), settings.images, title)
    print(result.path)
    return result.exit_code
