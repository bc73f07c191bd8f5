"""The `profgen` command: thin argparse subcommands over the library.

Each module here registers its subcommands; `main` is the one place that maps errors to exit
codes: 0 fine, 1 a regression, 2 a stage or the tool failed (or bad usage), 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from profiler import __version__
from profiler.errors import ProfgenError


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    from profiler.cli import doctor, regress, runs, study

    parser = _Parser(prog="profgen", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"profgen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in (study, runs, doctor, regress):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
        return code
    except ProfgenError as exc:
        print(f"profgen: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("profgen: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
