"""nvprof's text summary of a program that launches kernels from the GPU (dynamic parallelism,
CDP) -> the plain summary's one `Calls` column.

Such a run's header splits the calls in two: `Type  Time(%)  Time  Calls (host)  Calls (device)
Avg  Min  Max  Name`. A kernel's calls are its launches from the host plus those from the
device: nvprof's `Avg` is its `Time` over both (`543.55ms` over `1` and `20750` calls is
`26.194us`). Copies and API rows have no device column (`-`): their calls are the host's.
Each row's two call cells are summed into one, the rest of the row left as written, so that
the table reads as a plain summary (`nvprof_summary`) and messages still name file lines.
"""

from __future__ import annotations

import dataclasses
import math
import re

from profiler.parse import values
from profiler.parse.table_origin import Origin

# `Calls (host)  Calls (device)` in a summary header (linear: single classes, no nesting).
_SPLIT_CALLS = re.compile(r"[ \t]Calls \(host\)[ \t]+Calls \(device\)[ \t]")


def is_split(header: str) -> bool:
    """Whether a summary header splits its calls into host and device columns."""
    return _SPLIT_CALLS.search(header) is not None


def merged(origin: Origin) -> Origin:
    """The table of `origin` (its header first) with one `Calls` column: each row's host and
    device calls summed (`-` counts none). A row that is not of that form is left as written,
    to be refused by the summary's reader with its line."""
    lines = origin.full_text().split("\n")
    header = _SPLIT_CALLS.sub(" Calls ", lines[0], count=1)
    return dataclasses.replace(
        origin, text="\n".join([header, *map(_one_calls_cell, lines[1:])]), cut=None
    )


def _one_calls_cell(line: str) -> str:
    """A row `[type:] share time host device avg min max name` with `host + device` as its
    one calls cell; any other line as it is."""
    body = line.lstrip()
    lead = line[: len(line) - len(body)]
    kind, sep, rest = body.partition(":")
    typed = body[:1].isalpha() and sep and "%" not in kind and rest[:1].isspace()
    if typed:
        lead, body = lead + kind + sep, rest
    fields = body.split(None, 7)
    if len(fields) < 8:
        return line
    host, device = (_count(cell) for cell in fields[2:4])
    if math.isnan(host) or math.isnan(device):
        return line
    calls = f"{int(host + device)}"
    return f"{lead}  {'  '.join([*fields[:2], calls, *fields[4:7]])}  {fields[7]}"


def _count(cell: str) -> float:
    """A call count's cell: its number, 0 for `-` (no such calls), NaN for anything else."""
    return 0.0 if cell == "-" else values.number_or_nan(cell)
