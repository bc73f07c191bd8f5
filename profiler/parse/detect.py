"""What kind of profiler output is this file or folder? (for `profgen import`)

Only the first 64 KiB of a file are read; nothing is run.
"""

from __future__ import annotations

import re
from pathlib import Path

from profiler.errors import ParseError
from profiler.parse import csvtext, nsys_csv, nvprof

NSYS_DIR, NSYS_REPORT, NSYS_TEXT, NCU_CSV, NVPROF = (
    "nsys-dir",
    "nsys-rep",
    "nsys-text",
    "ncu-csv",
    "nvprof",
)
KINDS = (NSYS_DIR, NSYS_REPORT, NSYS_TEXT, NCU_CSV, NVPROF)
EXPECTED = (
    "a folder of `nsys stats --format csv` files, an .nsys-rep, a capture of `nsys stats` "
    "output, an `ncu --csv` file or an nvprof log"
)
REPORT_SUFFIXES = (".nsys-rep", ".qdrep", ".sqlite")

_NVPROF_LINE = re.compile(r"^==\d+== ", re.MULTILINE)
_NCU_HEADER = re.compile(r'^"ID","Process ID",', re.MULTILINE)


def detect(path: str | Path) -> str:
    """The kind of profiler output at `path`: one of `KINDS`.

    Raises: ParseError naming the path and what was expected when it is none of them (or is
        missing, empty, binary or unreadable).
    """
    path = Path(path)
    if path.is_dir():
        if any(nsys_csv.canonical_report(f.stem) for f in path.glob("*.csv")):
            return NSYS_DIR
        raise ParseError(path, EXPECTED, "the folder has no CSV file named like an nsys report")
    if not path.exists():
        raise ParseError(path, EXPECTED, "no such file or folder")
    if path.suffix.lower() in REPORT_SUFFIXES:
        return NSYS_REPORT
    head = csvtext.read_head(path, EXPECTED)
    if _NCU_HEADER.search(head):
        return NCU_CSV
    lines = head.splitlines()
    if _NVPROF_LINE.search(head) or any(nvprof.is_table_header(ln) for ln in lines):
        return NVPROF
    if any(nsys_csv.identify(ln) for ln in lines if "," in ln):
        return NSYS_TEXT
    hint = f"it starts {lines[0].strip()[:80]!r}" if lines else "it has no text"
    raise ParseError(path, EXPECTED, f"recognised none of them; {hint}")
