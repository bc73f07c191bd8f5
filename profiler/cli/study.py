"""`profgen list`, `profgen run` and `profgen sweep`: the commands that run a study's stages."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from profiler import defaults
from profiler.analyze.checks import defaults_text
from profiler.cli.args import (
    HelpFormatter,
    int_list,
    non_negative_int,
    positive_float,
    positive_int,
    str_list,
)
from profiler.errors import EXIT_CODES_HELP, EXIT_STAGE_FAILED

STUDY_HELP = (
    "an installed study (see `profgen list`), a study file path/to/study.py[:NAME], "
    "or package.module:NAME"
)
SWEEP_EXAMPLES = """examples:
  profgen sweep lenet                         every stage, CUPTI tracing, report in reports/
  profgen sweep lenet --backend nsys --metrics   Nsight Systems tables and Nsight Compute counters
  profgen sweep my_study.py --backend none    your own study, timed and checked, no profiler
  profgen sweep lenet --stages pinned,overlap_fusion --batch-sizes 1,16,256
  profgen sweep lenet --baseline reports/baselines/lenet-h100.json --summary s.md --junit j.xml
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "list",
        help="print the installed studies and their stages, in order",
        description="Print every installed study (the profgen.studies entry points), or the "
        "one named, with its stages in study order, their roles and runtimes.",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("study", nargs="?", metavar="STUDY", help=STUDY_HELP)
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser(
        "run",
        help="run one stage: its time and correctness verdict",
        description="Run one stage of a study in a worker process, unprofiled: its median time "
        "over the repeats and whether its outputs match the study's reference.",
        epilog="example:\n  profgen run lenet --stage overlap_fusion --repeat 20\n\n"
        + EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    p.add_argument("study", metavar="STUDY", help=STUDY_HELP)
    p.add_argument("--stage", required=True, metavar="KEY", help="stage key (see profgen list)")
    _add_timing_args(p)
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser(
        "sweep",
        help="run every stage under a profiler and write a run directory with its report",
        description="Run the stages of a study, each in its own worker process, time and check "
        "each against the reference, profile it, and write a run directory "
        "(reports/<study>-<UTC time>/) with report.html. The last line printed is its path.",
        epilog=SWEEP_EXAMPLES + "\n" + EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    p.add_argument("study", metavar="STUDY", help=STUDY_HELP)
    _add_timing_args(p)
    _add_sweep_args(p)
    p.set_defaults(handler=cmd_sweep)

    p = sub.add_parser(
        "export-onnx",
        help="write the ONNX model a study runs to a file (to open in Netron)",
        description="Write the study's default model, the ONNX file its stages run (built "
        "first when the study builds it from a seed), to PATH.",
        epilog="example:\n  profgen export-onnx mobilenetv2 -o mobilenetv2.onnx\n\n"
        + EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    p.add_argument("study", metavar="STUDY", help=STUDY_HELP)
    p.add_argument("-o", "--output", type=Path, required=True, metavar="PATH",
                   help="the file to write (replaced when it exists)")
    p.set_defaults(handler=cmd_export_onnx)


def _add_timing_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--items",
        "--images",
        dest="items",
        type=positive_int,
        metavar="N",
        help="items to infer per repeat, in the study's unit (default: the study's, 10,000 "
        "images for lenet)",
    )
    p.add_argument(
        "--repeat",
        type=positive_int,
        metavar="R",
        help=f"timed repeats (default: the study's, else {defaults.REPEAT})",
    )
    p.add_argument(
        "--warmup",
        type=non_negative_int,
        default=defaults.WARMUP,
        metavar="W",
        help=f"untimed warm-up calls (default: {defaults.WARMUP})",
    )
    p.add_argument(
        "--data", type=Path, metavar="PATH", help="the study's own input file (lenet: MNIST IDX)"
    )
    p.add_argument(
        "--onnx", dest="model_file", type=Path, metavar="PATH",
        help="the study's model from your own ONNX file (mobilenetv2: e.g. torchvision's "
        "export with trained weights)",
    )
    p.add_argument(
        "--stage-timeout",
        type=positive_float,
        metavar="S",
        help=f"seconds before a stage is stopped and marked TIMEOUT (default: the stage's own, "
        f"else {defaults.STAGE_TIMEOUT_S:g})",
    )


def _add_sweep_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend",
        choices=defaults.BACKENDS,
        default=defaults.DEFAULT_BACKEND,
        help=f"profiler for the breakdown tables (default: {defaults.DEFAULT_BACKEND}; none: "
        "only time and check)",
    )
    p.add_argument(
        "--metrics", action="store_true", help="also collect Nsight Compute counters (slow)"
    )
    p.add_argument(
        "--stages", type=str_list, metavar="A,B", help="comma-separated stage keys (default: all)"
    )
    p.add_argument(
        "--batch-sizes", type=int_list, metavar="1,16,256", help="also time the stages at these"
    )
    p.add_argument(
        "--out", type=Path, default=Path("reports"), metavar="DIR",
        help="folder that receives the run directory (default: reports)",
    )
    p.add_argument(
        "--baseline", type=Path, metavar="RUN_OR_FILE",
        help="run directory or baseline file to compare against",
    )
    p.add_argument(
        "--fail-on", action="append", default=[], metavar="CHECK",
        help="regression check, e.g. stage:median:5%% (repeatable; needs --baseline; default: "
        + defaults_text().replace("%", "%%")
        + ")",
    )
    p.add_argument(
        "--allow-mismatch", action="store_true",
        help="compare even with a baseline from another GPU, driver, item count or (for CPU "
        "stages) CPU model",
    )
    p.add_argument("--summary", type=Path, metavar="FILE", help="write a Markdown summary for CI")
    p.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML, a case per check")


def cmd_export_onnx(args: argparse.Namespace) -> int:
    import shutil

    from profiler import files
    from profiler.collect import discovery

    source = discovery.model_file(args.study)
    with open(source, "rb") as src, files.atomic_output(args.output, [source], "-o") as dst:
        shutil.copyfileobj(src, dst)
    print(args.output)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from profiler.collect import discovery

    studies = [discovery.describe(args.study)] if args.study else discovery.list_studies()
    if not studies:
        print("no studies installed (the profgen.studies entry points are empty)")
    for study in studies:
        print(f"{study.name}: {study.title} (unit: {study.unit}, default {study.default_items:,})")
        for i, stage in enumerate(study.stages, 1):
            tags = f"{stage.role}, {stage.runtime}"
            print(f"  {i:2d}. {stage.key:<18} {stage.title}  [{tags}]")
    return 0


def build_settings(args: argparse.Namespace, stages: list[str] | None, backend: str) -> Any:
    """Typed, checked settings from the parsed arguments (the library never sees argparse).

    Raises: UsageError for an unknown study or stage, a bad --data, --fail-on without
    --baseline, or an output that cannot be written.
    """
    from profiler.collect import discovery
    from profiler.settings import SweepSettings, check_settings

    model_file = getattr(args, "model_file", None)
    study = discovery.describe(args.study, model_file=model_file)
    extra = {}
    if hasattr(args, "metrics"):
        extra = dict(
            metrics=args.metrics,
            batch_sizes=tuple(args.batch_sizes or ()),
            out_root=args.out,
            baseline=args.baseline,
            fail_on=tuple(args.fail_on),
            allow_mismatch=args.allow_mismatch,
            summary=args.summary,
            junit=args.junit,
        )
    settings = SweepSettings(
        study=study,
        stages=tuple(stages) if stages else study.keys,
        items=args.items or study.default_items,
        repeat=args.repeat or study.default_repeat or defaults.REPEAT,
        warmup=args.warmup,
        backend=backend,
        data=args.data,
        model_file=args.model_file,
        stage_timeout_s=args.stage_timeout,
        **extra,
    )
    return check_settings(settings)


def cmd_run(args: argparse.Namespace) -> int:
    from profiler import pipeline
    from profiler.cli.display import print_staged

    settings = build_settings(args, stages=[args.stage], backend="none")
    stages = pipeline.run_one(settings)
    print_staged(stages, settings.items, settings.study.unit)
    return 0 if (stages["status"] == "PASS").all() else EXIT_STAGE_FAILED


def cmd_sweep(args: argparse.Namespace) -> int:
    from profiler import pipeline
    from profiler.cli.display import LiveProgress, print_phase_amdahl, print_staged
    from profiler.render.escape import TEXT_LIMIT, terminal

    settings = build_settings(args, stages=args.stages, backend=args.backend)
    result = pipeline.run_pipeline(settings, LiveProgress())
    for mismatch in result.run.meta.get("baseline", {}).get("mismatches", []):
        warning = terminal(mismatch, TEXT_LIMIT)
        print(f"profgen: warning: baseline compared anyway: {warning}", file=sys.stderr)
    title = settings.study.title
    print_staged(result.run.table("stages"), settings.items, settings.study.unit, title)
    print_phase_amdahl(result.run)
    print(result.path)
    return result.exit_code
