"""`profgen doctor`: what this machine can profile, and how to fix what it cannot."""

from __future__ import annotations

import argparse

from profiler.errors import EXIT_ENVIRONMENT


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="say which backends work on this machine and why not")
    p.add_argument(
        "--quick",
        action="store_true",
        help="skip the tiny nsys and ncu profiling runs (check files and libraries only)",
    )
    p.set_defaults(handler=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    from profiler.collect import env

    checks = env.doctor(probe=not args.quick)
    print(env.format_checks(checks))
    return 0 if env.cupti_works(checks) else EXIT_ENVIRONMENT
