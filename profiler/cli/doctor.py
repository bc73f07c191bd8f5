"""`profgen doctor`: what this machine can profile, and how to fix what it cannot."""

from __future__ import annotations

import argparse

from profiler.errors import EXIT_CODES_HELP, EXIT_ENVIRONMENT


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="say which backends work on this machine and why not",
        description="Check the CUDA device, cupti-python (by tracing a tiny kernel), Nsight "
        "Systems and Nsight Compute, and say for each what fixes it when it does not work. "
        "Exits 0 when the default backend (cupti) works, else 4.",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="skip the tiny nsys and ncu profiling runs (check files and libraries only)",
    )
    p.set_defaults(handler=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    from profiler.collect import doctor

    checks = doctor.doctor(probe=not args.quick)
    print(doctor.format_checks(checks))
    return 0 if doctor.cupti_works(checks) else EXIT_ENVIRONMENT
