"""The NVTX range a kernel launch ran in, as Nsight Compute reports it (`ncu --nvtx`).

ncu reports, per launch, the push/pop stack of the launching thread, per domain and outermost
first, and the start/end ranges open at the launch. A launch's `range` is, in this order:

1. the innermost range of profgen's own domain (`profiler.ranges.DOMAIN`) on its push/pop stack.
   profgen's sweeps name a stage's phases there and keep only the kernels inside them
   (`--nvtx-include`); ranges that a framework or library opens around them in other domains
   (CCCL's `cub::DeviceReduce` in its own domain, a user's `<default domain>` range) never
   displace them;
2. else the innermost range of any other domain on its push/pop stack (the last one ncu lists),
   so that a user's own ranges are kept;
3. else the last start/end range ncu lists for the launch.

A range of profgen's domain or of the default domain is named as it is; a range of another
domain is `domain:name`, as nsys imports name it (`nsys_tables.strip_domain`).

In `--csv` output a launch's ranges are two cells. One holds the thread id and the push/pop
stack's quoted segments (header `thread Domain:Push/Pop_Range:PL_Type:PL_Value`, and
`:CLR_Type:Color:Msg_Type:Msg` since about 2023), the other the start/end ranges' segments
(`Id:Domain:Start/Stop_Range:...`). A range name may hold colons: it is found by counting the
fields the header names after it (linear in the cell, where a back-referencing pattern would
backtrack). In the default text output a launch's ranges are blocks between its kernel line and
its first `Section:` line (`text_ranges`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiler.parse import gpuops, lines
from profiler.ranges import DOMAIN

DEFAULT_DOMAINS = ("<default domain>", "")
_QUOTED = re.compile(r'"([^"]*)"')
_MSG_TYPES = {"REGISTERED", "ASCII", "UNICODE", "UNKNOWN", "NONE"}
# A range (domain, name) as ncu lists it for a launch.
Segment = tuple[str, str]


def chosen(pushed: Sequence[Segment], started: Sequence[Segment] = ()) -> str | None:
    """A launch's range (see the module docstring) from its push/pop stack's ranges and its
    start/end ranges, each as ncu lists them (outermost first)."""
    own = [name for domain, name in pushed if domain == DOMAIN]
    if own:
        return own[-1]
    for segments in (pushed, started):
        if segments:
            domain, name = segments[-1]
            return name if domain in DEFAULT_DOMAINS else f"{domain}:{name}"
    return None


@dataclass(frozen=True)
class Layout:
    """Where a CSV NVTX cell's segment has its domain and range: `lead` fields before the
    domain (`Id`), `trail` fields after the range, and whether the last two are `Msg_Type:Msg`
    (the message may hold colons and often repeats the range)."""

    lead: int
    trail: int
    messages: bool

    @classmethod
    def of(cls, header: str) -> Layout | None:
        """The layout a column's header names, or None when it names no `Domain` and
        `..._Range` field (`thread Domain:Push/Pop_Range:PL_Type:PL_Value`)."""
        fields = header.split(":")
        fields[0] = fields[0].split(" ")[-1]  # "thread Domain": the thread id is no segment's
        if "Domain" not in fields:
            return None
        lead = fields.index("Domain")
        if lead + 1 >= len(fields) or not fields[lead + 1].endswith("_Range"):
            return None
        trail = len(fields) - lead - 2
        return cls(lead, trail, trail == 6 and fields[-2:] == ["Msg_Type", "Msg"])

    def segments(self, cell: object) -> list[Segment]:
        """The (domain, range) of each quoted segment of one cell, in cell order; a segment
        too short for the layout is passed over."""
        if not isinstance(cell, str):
            return []
        out = []
        for segment in _QUOTED.findall(cell):
            parts = segment.split(":")[self.lead :]
            name = _message_range(parts) if self.messages else _counted_range(parts, self.trail)
            if name is not None:
                out.append((parts[0], name))
        return out


def _counted_range(parts: list[str], trail: int) -> str | None:
    """The range of a segment split at `:` (domain first) with `trail` fields after it."""
    if len(parts) < trail + 2:
        return None
    return ":".join(parts[1 : len(parts) - trail])


def _message_range(parts: list[str]) -> str | None:
    """The range of a segment split at `:` (domain first) ending `Msg_Type:Msg`. When the
    message repeats the range (profgen's ranges), the range has (len - 8) / 2 colons; else the
    last known Msg_Type ends it."""
    colons, odd = divmod(len(parts) - 8, 2)
    if colons >= 0 and not odd and parts[1 : 2 + colons] == parts[len(parts) - 1 - colons :]:
        return ":".join(parts[1 : 2 + colons])
    for at in range(len(parts) - 2, 5, -1):  # Msg_Type, followed by a message
        if parts[at] in _MSG_TYPES:
            return ":".join(parts[1 : at - 4])
    return None


def csv_ranges(launches: pd.DataFrame) -> pd.Series | None:
    """Each launch's range from its NVTX columns (`chosen`), as a `string` Series; None when
    the CSV has neither a push/pop nor a start/stop column it can read."""
    found = []
    for kind in ("Push/Pop_Range", "Start/Stop_Range"):
        column = next((c for c in launches.columns if kind in str(c)), None)
        layout = None if column is None else Layout.of(str(column))
        found.append(None if layout is None else (launches[column], layout))
    pushed, started = found
    if pushed is None and started is None:
        return None
    missing = pd.Series(pd.NA, index=launches.index, dtype="string")
    by_stack = missing if pushed is None else _mapped(*pushed, lambda s: chosen(s))
    by_start = missing if started is None else _mapped(*started, lambda s: chosen((), s))
    return by_stack.fillna(by_start)


def _mapped(
    cells: pd.Series, layout: Layout, choose: Callable[[list[Segment]], str | None]
) -> pd.Series:
    """`choose` of each cell's segments, read once per distinct cell."""
    return gpuops.map_strings(cells, lambda cell: choose(layout.segments(cell)))


def text_ranges(found: lines.Lines, kernel_lines: np.ndarray, titles: np.ndarray) -> pd.Series:
    """Each launch's range (`chosen`) from the NVTX blocks of ncu's text output, as a `string`
    Series in launch order.

    A block is a title line (`titles`: `NVTX Start/End Ranges:` or `NVTX Push/Pop Stack...:`)
    after a launch's kernel line, then the lines indented deeper than it: a domain (`<default
    domain>`, or as ncu writes it) at the first depth, and under it each range as `<N,name>`.
    Lines of other shapes under a domain (a range's attributes) are passed over; a blank line
    or one indented no deeper than the title ends the block. `ncu_walk` finds the titles with
    the lines it looks at, so a text without them costs nothing more.
    """
    pushed: list[list[Segment]] = [[] for _ in kernel_lines]
    started: list[list[Segment]] = [[] for _ in kernel_lines]
    launch = np.searchsorted(kernel_lines, titles) - 1
    read_to = 0  # the line after the last block read: a title inside it is no block's
    for head, at in zip(titles.tolist(), launch.tolist(), strict=True):
        line = found.text(head).rstrip()
        title = line.lstrip()
        if at < 0 or head < read_to or not title.endswith(":"):
            continue  # before the first kernel, or inside a block
        into = pushed if "Push/Pop" in title else started if "Start/End" in title else None
        if into is not None:
            segments, read_to = _block(found, head + 1, len(line) - len(title))
            into[at] += segments
    empty: list[Segment] = []
    names = [chosen(p, empty if p else s) for p, s in zip(pushed, started, strict=True)]
    return pd.Series(names, dtype="string")


def _block(found: lines.Lines, first: int, indent: int) -> tuple[list[Segment], int]:
    """The (domain, range) pairs of the NVTX block whose title line is indented `indent` and
    whose lines start at line `first`, and the line after the block."""
    out: list[Segment] = []
    domain, depth = "", -1
    end = first
    for end in range(first, len(found)):
        line = found.text(end)
        text = line.lstrip()
        deeper = len(line) - len(text)
        if not text or deeper <= indent:
            break
        text = text.rstrip()
        if depth < 0 or deeper <= depth:
            domain, depth = text, deeper
        elif text.startswith("<") and text.endswith(">") and "," in text:
            out.append((domain, text[text.index(",") + 1 : -1]))
    else:
        end = len(found)
    return out, end
