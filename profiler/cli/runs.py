"""`profgen show`, `profgen report` and `profgen import`: commands over stored runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from profiler.cli.args import key_value

SHOW_FORMATS = ("text", "csv", "json")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("show", help="print one table of a run")
    p.add_argument("run_dir", type=Path)
    p.add_argument(
        "--table", required=True, help="stages, gpu_activities, api_calls, ranges, metrics, ..."
    )
    p.add_argument("--stage", help="only this stage's rows")
    p.add_argument("--format", choices=SHOW_FORMATS, default="text")
    p.set_defaults(handler=cmd_show)

    p = sub.add_parser("report", help="render a run's HTML report again, from disk")
    p.add_argument("run_dir", type=Path)
    p.add_argument("-o", "--output", type=Path, help="default: RUN_DIR/report.html")
    p.set_defaults(handler=cmd_report)

    p = sub.add_parser("import", help="build a run from nsys, ncu or nvprof output made elsewhere")
    p.add_argument("--model", required=True, help="name of the study (free text)")
    p.add_argument(
        "--stage",
        dest="stages",
        action="append",
        type=key_value,
        required=True,
        metavar="KEY=PATH",
        help="a stage and its file or folder, in study order (repeatable)",
    )
    p.add_argument(
        "--title",
        dest="titles",
        action="append",
        type=key_value,
        default=[],
        metavar="KEY=TEXT",
        help="a stage's title (default: its key)",
    )
    p.add_argument("--out", type=Path, default=Path("reports"), help="folder that receives the run")
    p.set_defaults(handler=cmd_import)


def cmd_show(args: argparse.Namespace) -> int:
    from profiler import store
    from profiler.render import text

    run = store.load_run(args.run_dir)
    print(text.format_table(run, args.table, stage=args.stage, fmt=args.format), end="")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from profiler import store
    from profiler.render import html

    run = store.load_run(args.run_dir)
    if args.output is None:
        out = html.write_report(run, args.run_dir / "report.html")
    else:
        out = html.write_report(run, args.output, what="--output")
    print(out)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from profiler import importer

    path = importer.import_run(args.model, args.stages, dict(args.titles), args.out)
    print(path)
    return 0
