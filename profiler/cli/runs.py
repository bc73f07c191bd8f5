"""`profgen show`, `profgen report` and `profgen import`: commands over stored runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from profiler import schema
from profiler.cli.args import HelpFormatter, key_value, repeats_spec
from profiler.errors import EXIT_CODES_HELP

SHOW_FORMATS = ("text", "csv", "json")
RUN_HELP = "a run directory (the path `profgen sweep` or `profgen import` printed last)"
RAW = HelpFormatter


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "show",
        help="print one table of a run",
        description="Print one table of a stored run: as aligned text for people, or as CSV "
        "or JSON (whole nanoseconds, names in full) for scripts.",
        epilog="examples:\n  profgen show reports/lenet-20261121T214907Z --table stages\n"
        "  profgen show RUN --table gpu_activities --stage overlap_fusion --format csv\n\n"
        + EXIT_CODES_HELP,
        formatter_class=RAW,
    )
    p.add_argument("run", type=Path, metavar="RUN", help=RUN_HELP)
    p.add_argument(
        "--table",
        required=True,
        metavar="TABLE",
        help=f"one of: {', '.join(schema.TABLES)}",
    )
    p.add_argument("--stage", metavar="KEY", help="only this stage's rows")
    p.add_argument(
        "--format", choices=SHOW_FORMATS, default="text", help="text, csv or json (default: text)"
    )
    p.set_defaults(handler=cmd_show)

    p = sub.add_parser(
        "report",
        help="render a run's HTML report again, from disk",
        description="Render a stored run's self-contained HTML report again (no GPU needed), "
        "e.g. after upgrading profgen. Prints the file written.",
        epilog="example:\n  profgen report reports/sample-lenet-h100-cupti -o /tmp/lenet.html\n\n"
        + EXIT_CODES_HELP,
        formatter_class=RAW,
    )
    p.add_argument("run", type=Path, metavar="RUN", help=RUN_HELP)
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="FILE",
        help="the HTML file to write (default: RUN/report.html; never one of the run's files)",
    )
    p.set_defaults(handler=cmd_report)

    p = sub.add_parser(
        "import",
        help="build a run from nsys, ncu or nvprof output made elsewhere",
        description="Build a run directory and its report from profiler output made elsewhere: "
        "a folder of `nsys stats --format csv` files, an .nsys-rep or .sqlite (needs nsys; a "
        ".sqlite is read without it, NVTX ranges left out), an "
        ".ncu-rep (needs ncu, or NVIDIA's report reader for Python: pip install ncu-report), "
        "ncu output (its default text, `--csv --page raw` or "
        "`--print-summary per-kernel`), an nvprof log (summaries, gpu trace, metrics and events; "
        "text or --csv), or a terminal capture that holds several of them (shell prompts, "
        "commands and program output around the tables are passed over), one per stage. Nothing "
        "is written beside the inputs. Prints the run directory.\n\n"
        "A file (an nvprof log or a capture) that holds several nvprof runs, one per step, gives "
        "one stage per run that has tables: KEY.1, KEY.2, ... in file order, each titled with "
        "KEY's title, 'run N of M' and the command the run profiled; --title, --repeats and "
        "--range given for KEY apply to each run, and the runs that have no table (`No kernels "
        "were profiled.`) are left out and said so.\n\n"
        "An imported stage is IMPORTED, not PASS: nothing checks its outputs. Its time in the "
        "staged table is the NVTX range named with --range (its total time), else the GPU span "
        "of the capture (first GPU activity to last), else its summed GPU time; the report says "
        "which. Profiler summaries cover the whole program: with --repeats the time and the "
        "per-repeat figures are divided by the repeats it ran, without it they are whole-program "
        "totals, and say so.",
        epilog="examples:\n  profgen import --model mynet --stage before=run1/ --stage "
        "after=run2.nsys-rep --title after='Fused kernels'\n"
        "  profgen import --model lenet --stage naive=naive.log --stage fused=fused.log "
        "--repeats 10\n"
        "  profgen import --model mynet --stage a=a/ --stage b=b/ --repeats 100 --repeats b=50 "
        "--range infer\n"
        "  profgen import --model mynet --stage a=a/ --stage b=b/ --range a=forward "
        "--range b=forward_fused\n\n" + EXIT_CODES_HELP,
        formatter_class=RAW,
    )
    p.add_argument(
        "--model",
        required=True,
        metavar="NAME",
        help="the study's name (1-64 letters, digits, '_', '.' or '-')",
    )
    p.add_argument(
        "--stage",
        dest="stages",
        action="append",
        type=key_value,
        required=True,
        metavar="KEY=PATH",
        help="a stage's key (1-64 letters, digits, '_', '.' or '-') and its file or folder, in "
        "study order (repeatable); a file of several nvprof runs gives stages KEY.1, KEY.2, ...",
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
    p.add_argument(
        "--repeats",
        action="append",
        type=repeats_spec,
        default=[],
        metavar="[KEY=]N",
        help="how many repeats the program ran (1 to 1,000,000,000), for every stage or, as "
        "KEY=N, for stage KEY (which wins over the all-stages value); the staged table's time "
        "and per-repeat figures are divided by it (default: not said: whole-program totals)",
    )
    p.add_argument(
        "--range",
        dest="ranges",
        action="append",
        default=[],
        metavar="[KEY=]NAME",
        help="the NVTX range whose total time is a stage's time in the staged table, for every "
        "stage or, as KEY=NAME (KEY a stage key), for stage KEY; a range that a stage does not "
        "have is refused, naming those it has (default: the GPU span of the capture)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("reports"),
        metavar="DIR",
        help="folder that receives the run directory (default: reports)",
    )
    p.set_defaults(handler=cmd_import)


def cmd_show(args: argparse.Namespace) -> int:
    from profiler import store
    from profiler.render import text

    run = store.load_run(args.run)
    print(text.format_table(run, args.table, stage=args.stage, fmt=args.format), end="")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from profiler import store
    from profiler.render import html

    run = store.load_run(args.run)
    if args.output is None:
        out = html.write_report(run, args.run / "report.html")
    else:
        out = html.write_report(run, args.output, what="--output")
    print(out)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from profiler import importer
    from profiler.parse import pages
    from profiler.render.escape import terminal

    pages.set_huge_pages(False)  # steadier and faster on large inputs (profiler.parse.pages)
    pages.set_string_storage("python")  # faster where pyarrow is installed (the same)
    path = importer.import_run(
        args.model, args.stages, dict(args.titles), args.out, args.repeats, args.ranges
    )
    for warning in importer.warnings(path):
        print(f"profgen: warning: {terminal(warning)}", file=sys.stderr)
    print(path)
    return 0
