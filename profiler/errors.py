"""The one error hierarchy of profgen, and its exit codes.

Every error a user can cause or meet derives from ProfgenError and carries the context
needed to act on it. `profiler.cli.main` is the only place that maps them to exit codes:

| code | meaning |
| --- | --- |
| 0 | fine |
| 1 | a regression against the baseline, and nothing else |
| 2 | bad usage or unreadable input (a flag, a file, a run, a baseline) |
| 3 | a stage failed: FAIL, TIMEOUT or ERROR (in the run or in its baseline) |
| 4 | the environment: no CUDA device, a missing or failing tool, an output that cannot be written |
| 5 | an internal error (a bug): one line on stderr, the traceback in a log file |
| 130 | interrupted (Ctrl-C) |
| 141 | the reader of the output closed it early (like `head`): nothing more is written |
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_USAGE = 2
EXIT_STAGE_FAILED = 3
EXIT_ENVIRONMENT = 4
EXIT_INTERNAL = 5
EXIT_INTERRUPTED = 130
EXIT_OUTPUT_CLOSED = 141  # 128 + SIGPIPE, what a shell shows for a tool killed by it

EXIT_CODES_HELP = (
    "exit codes: 0 fine, 1 a regression, 2 bad usage or unreadable input, 3 a stage failed, "
    "4 environment (no CUDA device, missing tool, unwritable output), 5 internal error "
    "(traceback in a log file), 130 interrupted, 141 output closed by its reader"
)


class ProfgenError(Exception):
    """Base of every error profgen raises on purpose. Exit status 2 unless said otherwise."""

    exit_code = EXIT_USAGE


class UsageError(ProfgenError):
    """A flag or argument that makes no sense (unknown model, `--images 0`, ...)."""


class EnvironmentProblem(ProfgenError):
    """This machine cannot do what was asked: exit status 4."""

    exit_code = EXIT_ENVIRONMENT


class NoCudaDevice(EnvironmentProblem):
    """No CUDA device (or no CuPy) on this machine."""


class ToolNotFound(EnvironmentProblem):
    """An external tool (nsys, ncu) is not installed or cannot run."""


class OutputError(EnvironmentProblem):
    """An output file or directory could not be written (full or read-only disk, permissions)."""


class ProfilerRunError(EnvironmentProblem):
    """An external command failed: carries the command, its exit code and its last log lines."""

    def __init__(self, cmd: Sequence[str], returncode: int | None, log_tail: str, hint: str = ""):
        self.cmd = list(cmd)
        self.returncode = returncode
        self.log_tail = log_tail
        self.hint = hint
        status = "timed out" if returncode is None else f"exited with status {returncode}"
        msg = f"{self.cmd[0]} {status}: {' '.join(self.cmd)}"
        if log_tail:
            msg += "\n" + log_tail.rstrip()
        if hint:
            msg += f"\nhint: {hint}"
        super().__init__(msg)


class ParseError(ProfgenError):
    """A file could not be read as the tool output it should be.

    Names the file and what was expected.
    """

    def __init__(self, path: str | Path, expected: str, detail: str = ""):
        self.path = str(path)
        self.expected = expected
        self.detail = detail
        msg = f"{self.path}: expected {expected}"
        if detail:
            msg += f" ({detail})"
        super().__init__(msg)


class SchemaError(ProfgenError):
    """A DataFrame does not match its declared table schema (a bug or a corrupt run)."""


class DataError(ProfgenError):
    """An input data file (images, model) is missing or malformed. Names the file."""


class VariantFailed(ProfgenError):
    """A stage crashed, timed out or computed wrong results."""

    exit_code = EXIT_STAGE_FAILED


class RunNotFound(ProfgenError):
    """A run directory is missing, incomplete or unreadable."""


class BaselineMismatch(ProfgenError):
    """A baseline was recorded on another GPU, driver or image count."""
