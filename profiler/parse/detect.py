"""What kind of profiler output is this file or folder? (for `profgen import`)

Only the first 64 KiB of a file are read; nothing is run. Anything but a regular file or a
folder (a FIFO, a socket, a device) is refused before it is opened for reading. A terminal
capture (prompts, fences or several tools' output around the tables: `parse.capture`) is
CAPTURE; the importer cuts it into sections and asks again for each. An nvprof profile (the
SQLite database `nvprof -o` writes: `parse.nvprof_db`) is NVPROF_DB.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

from profiler.errors import ParseError
from profiler.parse import (
    capture,
    csvtext,
    cupti,
    ncu_text,
    nsys_csv,
    nsys_stdout,
    nvprof,
    nvprof_db,
    unusable,
)

NSYS_DIR, NSYS_REPORT, NSYS_TEXT, NCU_REPORT, NCU_CSV, NCU_TEXT, NVPROF = (
    "nsys-dir",
    "nsys-rep",
    "nsys-text",
    "ncu-rep",
    "ncu-csv",
    "ncu-text",
    "nvprof",
)
NVPROF_DB = "nvprof-db"
CAPTURE = "capture"
KINDS = (
    NSYS_DIR,
    NSYS_REPORT,
    NSYS_TEXT,
    NCU_REPORT,
    NCU_CSV,
    NCU_TEXT,
    NVPROF,
    NVPROF_DB,
    CAPTURE,
)
EXPECTED = (
    "a folder of `nsys stats --format csv` files, an .nsys-rep or .sqlite, a capture of "
    "`nsys stats` output, an .ncu-rep, ncu output (text or --csv), an nvprof log or .nvprof "
    "profile, or a terminal capture of them"
)
REPORT_SUFFIXES = (".nsys-rep", ".qdrep", ".sqlite")
NCU_REPORT_SUFFIXES = (".ncu-rep", ".nsight-cuprof-report")  # (the second: Nsight Compute 2019)

# what profgen's own CUPTI record file is, and where its tables are
CUPTI_TRACE = (
    "it is profgen's own CUPTI trace (the `cupti.npz` that `profgen sweep --backend cupti` "
    "writes into a run directory's raw/<stage>/ folder), not a profiler's output to import: the "
    "run directory it came from holds its tables; `profgen report RUN` renders that run's "
    "report again, `profgen show RUN --table gpu_trace` prints its GPU trace"
)

# `--page raw|details` ("ID" first), `--print-summary per-kernel` ("Process ID" first) and
# nv-nsight-cu-cli 2019.1-2019.3's details page ("Kernel Name" first: no ID, no process)
_NCU_HEADER = re.compile(
    r'^"(?:ID","Process ID|Process ID","Process Name|Kernel Name","Kernel Time","Section Name)",',
    re.MULTILINE,
)


# what ncu prints only with results: a `Section:` line or a launch line (`...)x(...)`)
_NCU_RESULTS = re.compile(r"^[ \t]*Section: |\)x\(", re.MULTILINE)
_NCU_ERROR = re.compile(r"^[ \t]*==ERROR== ", re.MULTILINE)


def detect(path: str | Path | csvtext.Held) -> str:
    """The kind of profiler output at `path` (a file or folder, or a file's bytes held): one of
    `KINDS`.

    Raises: ParseError naming the path and what was expected when it is none of them (or is
        missing, empty, binary or unreadable).
    """
    if isinstance(path, csvtext.Held):
        return _file_kind(path)
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise ParseError(path, EXPECTED, exc.strerror or "cannot be read") from None
    if stat.S_ISDIR(mode):
        if nsys_csv.report_files(path):
            return NSYS_DIR
        raise ParseError(
            path, EXPECTED, "the folder has no regular CSV file named like an nsys report"
        )
    if not stat.S_ISREG(mode):
        raise ParseError(path, EXPECTED, "not a regular file (a FIFO, socket or device)")
    return _file_kind(path)


def text_kind(head: str) -> str | None:
    """The kind of a file that starts with `head` (its first 64 KiB), from its text alone: a
    terminal capture, or `tool_kind`."""
    return CAPTURE if capture.is_capture(head) else tool_kind(head)


def tool_kind(head: str) -> str | None:
    """The kind of a file that starts with `head`, as one tool's output: ncu CSV or text,
    nvprof or nsys stats output; None when it is none."""
    if _NCU_HEADER.search(head):
        return NCU_CSV
    if ncu_text.recognise(head) and not _nsys_beside_ncu_error(head):
        return NCU_TEXT
    if nvprof.looks_like(head):
        return NVPROF
    if nsys_stdout.recognise(head):
        return NSYS_TEXT
    return None


def _nsys_beside_ncu_error(head: str) -> bool:
    """Whether a file in which ncu failed (an `==ERROR==` line, `Failed to connect to process`,
    and no result: no `Section:` line, no launch line `k (2, 1, 1)x(128, 1, 1), Context 1,
    Stream 7`) holds nsys stats tables: notes that quote both tools, where only nsys worked,
    are nsys output (its reader passes over ncu's lines as it does over prose). ncu lines
    with no error over a table are an excerpt of ncu, and stay ncu's to refuse."""
    if _NCU_RESULTS.search(head) is not None or _NCU_ERROR.search(head) is None:
        return False
    return nsys_stdout.recognise(head)


def _file_kind(source: Path | csvtext.Held) -> str:
    """The kind of the regular file (or held bytes) `source`, from its name and first 64 KiB."""
    path = csvtext.source_path(source)
    if path.suffix.lower() in REPORT_SUFFIXES:
        return NSYS_REPORT
    if path.suffix.lower() in NCU_REPORT_SUFFIXES:
        return NCU_REPORT
    try:
        head = csvtext.read_head(source, EXPECTED)
    except ParseError:
        if isinstance(source, Path) and cupti.is_record_file(source):
            raise ParseError(source, EXPECTED, CUPTI_TRACE) from None
        if isinstance(source, Path) and nvprof_db.is_profile(source):
            return NVPROF_DB
        raise
    kind = text_kind(head)
    if kind is not None:
        return kind
    lines = head.splitlines()
    what = (
        unusable.describe(lines)
        or unusable.document(path.suffix, lines)
        or unusable.program_output(lines)
    )
    if what is not None:
        raise ParseError(path, EXPECTED, f"recognised none of them: {what}")
    raise ParseError(path, EXPECTED, f"recognised none of them; {_start(lines)}")


def _start(lines: list[str]) -> str:
    """How the file whose first lines are `lines` starts: its first line of text, and where it
    is when blank lines come first (a notebook read from what its cells printed has a blank
    line for each line of its JSON above the first output)."""
    at = next((k for k, line in enumerate(lines, 1) if line.strip()), None)
    if at is None:
        return "it has no text"
    first = lines[at - 1].strip()[:80]
    return f"it starts {first!r}" if at == 1 else f"its text starts at line {at}: {first!r}"
