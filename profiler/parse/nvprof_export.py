"""nvprof's console output of a run that wrote its results to a file (`nvprof -o run.nvvp ./app`,
`--export-profile run.nvprof`): nvprof prints no table then, only `==PID== NVPROF is profiling
process PID, command: ./app`, the program's output and at its end `==PID== Generated result file:
/path/run.nvvp`. A paste of it (cut before that last line, or whole) holds nothing to read, but
the file it names does: profgen imports nvprof's .nvprof and .nvvp profiles (`nvprof_db`), so
the refusal says to import that file instead.

The file is the one the `Generated result file:` line names, else the operand of `-o` or
`--export-profile` on a command line that runs nvprof (a word `nvprof`, `/usr/bin/nvprof`, or
`SANDBOX='nvprof` as a Makefile variable holds it) in a text that also shows nvprof's
`NVPROF is profiling process` line. Lines are split into words; no pattern can backtrack.
"""

from __future__ import annotations

from profiler.parse import cell_quotes

_STARTED = "NVPROF is profiling process "
RESULT_FILE = "Generated result file: "
IMPORT_IT = "import that file itself (profgen reads nvprof's .nvprof and .nvvp profiles)"
_OPTIONS = ("-o", "--export-profile")


def described(lines: list[str]) -> str | None:
    """Why a text of nvprof's console output of a run that wrote its results to a file holds no
    table, naming that file and saying to import it; None for any other text."""
    found = _result_file(lines) or _command_output(lines)
    if found is None:
        return None
    at, name = found
    return (
        f"it is nvprof's console output of a run that wrote its results to a file (line {at}: "
        f"{cell_quotes.shown_cell(name, 120)}), not a table: {IMPORT_IT}"
    )


def _result_file(lines: list[str]) -> tuple[int, str] | None:
    """(line number, file) of nvprof's `==PID== Generated result file: FILE` line, or None."""
    for n, line in enumerate(lines, 1):
        at = line.find(RESULT_FILE)
        if at >= 0 and line[:at].rstrip().endswith("=="):
            return n, line[at + len(RESULT_FILE) :].strip()
    return None


def commanded(lines: list[str]) -> str | None:
    """Why a text that shows an nvprof command writing its profile to a file (`nvprof -o
    run.nvvp ./app`, as a README or an issue quotes it) and no nvprof table holds nothing to
    read, naming the line and the file; None when it shows no such command."""
    found = _command(lines)
    if found is None:
        return None
    at, name = found
    return (
        f"it shows an nvprof run that wrote its profile to a file (line {at}: "
        f"{cell_quotes.shown_cell(lines[at - 1].strip(), 100)}), and no nvprof table: import that "
        f"file ({cell_quotes.shown_cell(name, 60)}: profgen reads .nvprof and .nvvp profiles), or "
        "nvprof's printed summary"
    )


def _command_output(lines: list[str]) -> tuple[int, str] | None:
    """(line number, file) of the `-o`/`--export-profile` operand of an nvprof command line in a
    text that shows nvprof's `NVPROF is profiling process` line, or None."""
    if not any(_STARTED in line for line in lines):
        return None
    return _command(lines)


def _command(lines: list[str]) -> tuple[int, str] | None:
    """(line number, file) of the first nvprof command line's `-o`/`--export-profile` operand,
    or None."""
    for n, line in enumerate(lines, 1):
        if "nvprof" not in line:
            continue
        name = _operand(line.split())
        if name is not None:
            return n, name
    return None


def _operand(words: list[str]) -> str | None:
    """The file `-o FILE`, `--export-profile FILE` or `--export-profile=FILE` names after the
    word that runs nvprof, or None (also when nsys runs it: `nsys nvprof`)."""
    runs = [i for i, w in enumerate(words) if _program(w) == "nvprof"]
    if not runs or (runs[0] and _program(words[runs[0] - 1]) == "nsys"):
        return None  # (`nsys nvprof -o` writes nsys's own report)
    after = words[runs[0] + 1 :]
    for i, word in enumerate(after):
        if word.startswith("--export-profile="):
            return word.split("=", 1)[1].strip("'\"")
        if word in _OPTIONS and i + 1 < len(after):
            return after[i + 1].strip("'\"")
    return None


def _program(word: str) -> str:
    """The program a command word runs: `/usr/local/cuda/bin/nvprof` and `SANDBOX='nvprof` ->
    `nvprof`."""
    return word.rsplit("=", 1)[-1].strip("'\"").rsplit("/", 1)[-1]
