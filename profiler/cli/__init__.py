"""The `profgen` command: thin argparse subcommands over the library.

Each module here registers its subcommands; `main` is the one place that maps errors to exit
codes (see `profiler.errors`): an unexpected exception prints one line and the path of a log
file that holds its traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from profiler import __version__
from profiler.errors import (
    EXIT_CODES_HELP,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OUTPUT_CLOSED,
    EXIT_USAGE,
    ProfgenError,
)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    from profiler.cli import doctor, regress, runs, serve, study
    from profiler.cli.args import HelpFormatter

    parser = _Parser(
        prog="profgen",
        description="Run staged GPU optimisation studies under a profiler and write reports.",
        epilog="examples:\n  profgen sweep lenet\n  profgen sweep my_study.py --backend none\n"
        "  profgen report RUN\n  profgen compare BASELINE RUN\n\n" + EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"profgen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in (study, serve, runs, doctor, regress):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    if not (sys.argv[1:] if argv is None else argv):  # bare `profgen`: how to use it
        parser.print_usage(sys.stderr)
        print(
            "profgen: error: choose a command; `profgen --help` says what each does",
            file=sys.stderr,
        )
        return EXIT_USAGE
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
        return code
    except ProfgenError as exc:
        print(f"profgen: error: {_printable(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("profgen: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `profgen show ... | head`: the reader has all it wanted
        _silence_stdout()
        return EXIT_OUTPUT_CLOSED
    except Exception as exc:  # noqa: BLE001 - the one place a bug becomes a line and a log
        from profiler.crashlog import write_crash_log

        log = write_crash_log(exc, sys.argv if argv is None else ["profgen", *argv])
        first = (str(exc).splitlines() or [""])[0][:200]
        print(
            f"profgen: internal error: {type(exc).__name__}: {first} (traceback in {log}; "
            "please report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush of what is still buffered
    meets no closed pipe (Python's own recipe for SIGPIPE)."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _printable(message: str) -> str:
    """An error message safe for a terminal: each line's control characters written out (a
    tool's log tail may span lines; a file name may hold escape codes)."""
    from profiler.render.escape import TEXT_LIMIT, terminal

    return "\n".join(terminal(line, TEXT_LIMIT) for line in message.splitlines())


if __name__ == "__main__":
    sys.exit(main())
