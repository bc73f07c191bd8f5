"""The one error hierarchy of profgen.

Every error a user can cause or meet derives from ProfgenError and carries the context
needed to act on it. `profiler.cli.main` is the only place that maps them to exit codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class ProfgenError(Exception):
    """Base of every error profgen raises on purpose. Exit status 2 unless said otherwise."""

    exit_code = 2


class UsageError(ProfgenError):
    """A flag or argument that makes no sense (unknown model, `--images 0`, ...)."""


class NoCudaDevice(ProfgenError):
    """No CUDA device (or no CuPy) on this machine."""


class ToolNotFound(ProfgenError):
    """An external tool (nsys, ncu) is not installed or cannot run."""


class ProfilerRunError(ProfgenError):
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


class RunNotFound(ProfgenError):
    """A run directory is missing, incomplete or unreadable."""


class BaselineMismatch(ProfgenError):
    """A baseline was recorded on another GPU, driver or image count."""
