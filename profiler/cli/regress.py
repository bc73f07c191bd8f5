"""`profgen compare` and `profgen baseline`.

compare exits 0 when no check found a regression, 1 when one did, 3 when a stage failed in
either run, and 2 when a run or baseline is broken or unreadable or the runs do not match
(another GPU model, driver major version, item count or, for CPU stages, CPU model, or one of
them recorded by one run only; unless --allow-mismatch); `profiler.cli.main` maps the errors.
baseline exits 2 when the run is broken or `-o` names one of its own files.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from profiler.analyze.checks import defaults_text
from profiler.cli.args import HelpFormatter
from profiler.errors import EXIT_CODES_HELP


def _escaped(text: str) -> str:
    """`text` for an argparse help string, where `%` starts a format."""
    return text.replace("%", "%%")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Registers `compare` and `baseline`."""
    p = sub.add_parser(
        "compare",
        help="compare two runs (or a baseline file and a run)",
        description="Judge NEW against BASE: every stage's end-to-end time and every kernel's "
        "total per stage, each change past its threshold and significant over the repeats "
        "(Mann-Whitney U, or non-overlapping ranges with few samples). Exits 1 on a regression.",
        epilog="examples:\n  profgen compare reports/baselines/lenet-h100.json reports/lenet-X\n"
        "  profgen compare BASE NEW --fail-on stage:median:5% --summary s.md --junit j.xml\n\n"
        + _escaped(EXIT_CODES_HELP),
        formatter_class=HelpFormatter,
    )
    p.add_argument("base", type=Path, metavar="BASE", help="a run directory or a baseline file")
    p.add_argument("new", type=Path, metavar="NEW", help="the run to judge (a directory or file)")
    p.add_argument(
        "--fail-on",
        action="append",
        default=[],
        metavar="CHECK",
        help=_escaped(
            "a check, e.g. stage:median:5%, kernel:total:10%, stage:median:0.2ms "
            f"(repeatable; default: {defaults_text()})"
        ),
    )
    p.add_argument(
        "--allow-mismatch",
        action="store_true",
        help="compare even when the GPU model, driver major version, item count or (with a "
        "stage that runs on the CPU) CPU model differ, or only one run records them",
    )
    p.add_argument(
        "--summary",
        type=Path,
        metavar="FILE",
        help="write a Markdown summary ($GITHUB_STEP_SUMMARY)",
    )
    p.add_argument(
        "--junit", type=Path, metavar="FILE", help="write JUnit XML, one test case per check"
    )
    p.add_argument(
        "--format",
        choices=("text", "csv", "json"),
        default="text",
        help="text, csv or json (default: text)",
    )
    p.set_defaults(handler=cmd_compare)

    p = sub.add_parser(
        "baseline",
        help="write a small baseline file of a run, fit to commit",
        description="Write a small JSON baseline of a run (its machine, every timed repeat and "
        "every kernel's per-repeat totals) to commit and compare later runs with.",
        epilog="example:\n  profgen baseline reports/lenet-X -o reports/baselines/lenet-h100.json"
        "\n\n" + EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    p.add_argument("run", type=Path, metavar="RUN", help="a run directory")
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="FILE",
        help="the baseline file to write (never one of the run's own files)",
    )
    p.set_defaults(handler=cmd_baseline)


def cmd_compare(args: argparse.Namespace) -> int:
    from profiler.analyze import regress
    from profiler.baseline import compare_runs, load_reference
    from profiler.render.comparison import format_comparison
    from profiler.render.escape import TEXT_LIMIT, terminal
    from profiler.render.outputs import check_ci_outputs, run_files, write_ci_outputs

    checks = regress.validate_regression_args(args.base, args.fail_on)
    inputs = [*run_files(args.base), *run_files(args.new)]
    check_ci_outputs(args.summary, args.junit, inputs)
    base, new = load_reference(args.base), load_reference(args.new)
    if not args.fail_on and new.meta.get("source") == "serve":  # a serving run's own defaults
        checks = [regress.parse_check(t) for t in regress.SERVE_DEFAULT_CHECKS]
    regressions, mismatches = compare_runs(base, new, checks, args.allow_mismatch)
    for line in mismatches:
        warning = terminal(line, TEXT_LIMIT)
        print(f"profgen: warning: compared despite a mismatch ({warning})", file=sys.stderr)
    print(format_comparison(regressions, args.format), end="")
    write_ci_outputs(new, regressions, args.summary, args.junit, inputs)
    return regress.exit_code(regressions)


def cmd_baseline(args: argparse.Namespace) -> int:
    from profiler import store
    from profiler.baseline import write_baseline

    print(write_baseline(store.load_run(args.run), args.output))
    return 0
