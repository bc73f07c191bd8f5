"""One `nsys stats` run's reports pasted a Markdown fence each, read as one section of a capture.

`capture.cut` cuts a capture at every fence, so a README that fences one run's reports one per
block (the API summary, then the kernel summary, then the memory operations) gives a section
per report, and the importer made each a run of its own (`import_capture` cuts nsys runs
where sections give tables of one kind: the kernel and memory-operation summaries are both
GPU activities). `joined` makes such blocks one section again: a section of nsys output that a
fence (not a prompt) parts from the nsys section above it, with only prose or blank lines
between them (no table of an nsys report: one whose banner a paste cut off names none), joins
it when both name their reports (`** CUDA API Summary (cuda_api_sum):`,
`[4/7] Executing 'cuda_api_sum' stats report`) and it names none the section above named, nor
prints a line nsys profile prints once a run (`Collecting data...`). A report named again, a
prompt or another tool's output between, or a block whose reports are not named keeps its
section (and its run) as before.

The joined section's text runs from the first block's first line to the last one's last line,
the fences and the prose between included (the nsys reader ends a table at a fence and passes
over prose), the elision marks of any of them left out as `capture` leaves them out.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import PurePath
from typing import Protocol

from profiler.parse import capture, nsys_fields, nsys_stdout

_HEAD = 1 << 16  # what `holds_table` reads of a section
_STATS = re.compile(r"(?:^|[\s/])nsys[ \t]+stats(?:[ \t]|$)")
_PROFILE = re.compile(r"(?:^|[\s/])nsys[ \t]+profile(?:[ \t]|$)")
_REPORT_FILES = (".nsys-rep", ".qdrep", ".sqlite")
_REPORT, _OUTPUT = ("--report", "-r"), ("--output", "-o")
_DEFAULT = "report<N>"  # what `nsys profile` names its report file with no `--output`
_DEFAULT_NAME = re.compile(r"report[0-9]{1,9}")


class Cut(Protocol):
    """What the rule reads of a section (`capture.Piece`, `capture.Section`)."""

    @property
    def tool(self) -> str | None: ...
    @property
    def command(self) -> str | None: ...
    @property
    def marked(self) -> bool: ...
    @property
    def reports(self) -> tuple[str, ...]: ...
    @property
    def once(self) -> tuple[str, ...]: ...


def joined(pieces: list[capture.Piece], data: bytes) -> list[capture.Piece]:
    """`pieces` (`capture.cut` of `data`) with each fenced block of nsys output that continues
    the run of the nsys section above it (see the module docstring) joined to that section."""
    out: list[capture.Piece] = []
    for piece in pieces:
        above = nsys_above(out)
        if (
            above is not None
            and continues(out[above], piece)
            and adjacent(above, len(out), piece)
            and not any(holds_table(_text(p, data)) for p in out[above + 1 :])
        ):
            out[above:] = [_join(out[above], out[above + 1 :], piece, data)]
        else:
            out.append(piece)
    return out


def nsys_above(out: Sequence[Cut]) -> int | None:
    """Where the last section of `out` that is nsys output stands, when only sections of no
    tool's output and no prompt come after it; else None."""
    for at in range(len(out) - 1, -1, -1):
        if out[at].tool == capture.NSYS:
            return at
        if out[at].tool is not None or out[at].command is not None:
            return None
    return None


def continues(above: Cut, piece: Cut) -> bool:
    """Whether `piece` is a fenced block, or the output of an `nsys stats` command on the same
    report file (`same_profile`), of the run whose nsys output `above` holds."""
    if piece.tool != capture.NSYS or not piece.marked or piece.once:
        return False
    if piece.command is not None:
        return same_profile(above, piece)
    if not above.reports or not piece.reports:
        return False
    return not set(map(_canonical, above.reports)) & set(map(_canonical, piece.reports))


def adjacent(above: int, count: int, piece: Cut) -> bool:
    """Whether `piece` may join the section at `above` of the `count` before it: a fenced block
    across the sections of prose between; an `nsys stats` command's output only right under
    the section (no fence between: a block a fence sets apart whose report cannot be read, a
    Markdown rule under its header, would be passed over unsaid in the joined section)."""
    return piece.command is None or above == count - 1


def same_profile(above: Cut, piece: Cut) -> bool:
    """Whether `piece`'s command is `nsys stats` of the report file `above`'s command read
    (`nsys stats`) or wrote (`nsys profile`), naming reports (`--report`) that neither `above`'s
    command nor its markers named: several reports of one profile, one run (`> nsys stats
    eager.nsys-rep --report cuda_gpu_kern_sum`, then `--report cuda_api_sum`). A command on
    another report file starts a run of its own."""
    mine = stats_of(piece.command)
    theirs = stats_of(above.command) or written_by(above.command)
    if mine is None or theirs is None or not _same_file(theirs[0], mine[0]):
        return False
    named = set(map(_canonical, (*above.reports, *theirs[1])))
    return not named & set(map(_canonical, (*piece.reports, *mine[1])))


def stats_of(command: str | None) -> tuple[str, tuple[str, ...]] | None:
    """(report file, reports) of an `nsys stats` command: the one file it reads (a word ending
    `.nsys-rep`, `.qdrep` or `.sqlite`) and the reports its `--report` (`-r`) options name;
    None when it is no `nsys stats`, reads no one file or names no report."""
    if command is None or not _STATS.search(command[:400]):
        return None
    words = command.split()
    files = {PurePath(w).as_posix() for w in words if w.endswith(_REPORT_FILES)}
    reports = [name for value in _values(words, _REPORT) for name in value.split(",") if name]
    return (files.pop(), tuple(reports)) if len(files) == 1 and reports else None


def written_by(command: str | None) -> tuple[str, tuple[str, ...]] | None:
    """(report file, no reports) of an `nsys profile` command: its `--output` (`-o`), else
    nsys's default name `report<N>` (`_DEFAULT`); None when it is no `nsys profile`."""
    if command is None or not _PROFILE.search(command[:400]):
        return None
    return next(iter(_values(command.split(), _OUTPUT)), _DEFAULT), ()


def _values(words: list[str], names: tuple[str, str]) -> list[str]:
    """The values of an option `names` (long, short) in `words` (`--report R`, `--report=R`,
    `-r R`)."""
    found = [words[n + 1] for n, word in enumerate(words[:-1]) if word in names]
    return found + [w.partition("=")[2] for w in words if w.startswith(f"{names[0]}=")]


def _same_file(written: str, read: str) -> bool:
    """Whether the report file `read` is `written` (either without its suffix; `_DEFAULT`: any
    `report<N>`)."""
    if written == _DEFAULT:
        return _DEFAULT_NAME.fullmatch(PurePath(_stem(read)).name) is not None
    return _stem(written) == _stem(read)


def _stem(path: str) -> str:
    """`path` (as posix) without a report file's suffix."""
    name = PurePath(path).as_posix()
    return next((name[: -len(s)] for s in _REPORT_FILES if name.endswith(s)), name)


def holds_table(text: str) -> bool:
    """Whether a section of no tool's output between two blocks (`text`) holds a table of an
    nsys report (a bare one, its banner cut off): its report is not named, so the blocks around
    it are not joined across it."""
    return nsys_stdout.recognise(text[:_HEAD])


def _text(piece: capture.Piece, data: bytes) -> str:
    """The start of `piece`'s text (its first `_HEAD` bytes)."""
    head = bytearray()
    for a, b in piece.spans:
        head += data[a : min(b, a + _HEAD - len(head))]
        if len(head) >= _HEAD:
            break
    return head.decode("utf-8", "replace")


def _canonical(report: str) -> str:
    """A report as a marker names it (`cuda_api_sum`, `/opt/.../cudaapisum.py`), canonical."""
    return nsys_fields.canonical_report(PurePath(report).name) or report


def _join(
    above: capture.Piece, between: list[capture.Piece], piece: capture.Piece, data: bytes
) -> capture.Piece:
    """`above`, the lines after it up to `piece` (but elision marks) and `piece`, one section."""
    elided = sorted({*above.elided, *(n for p in between for n in p.elided), *piece.elided})
    gap = _lines_between(data, above.spans[-1][1], piece.spans[0][0], piece.first_line, elided)
    spans = _runs([*above.spans, *gap, *piece.spans])
    reports = (*above.reports, *piece.reports)
    return dataclasses.replace(above, spans=spans, elided=tuple(elided), reports=reports)


def _lines_between(
    data: bytes, start: int, end: int, next_line: int, elided: list[int]
) -> list[tuple[int, int]]:
    """The byte ranges of the lines of `data[start:end]` (whole lines; the line after them is
    file line `next_line`) that are not `elided` file lines."""
    rows = data[start:end].decode("utf-8", "surrogatepass").splitlines(keepends=True)
    out, at, left_out = [], start, set(elided)
    for number, row in enumerate(rows, start=next_line - len(rows)):
        size = len(row.encode("utf-8", "surrogatepass"))
        if number not in left_out:
            out.append((at, at + size))
        at += size
    return out


def _runs(spans: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """`spans` (ascending, apart) with each one that starts where the one before ends merged."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], b)
        elif b > a:
            out.append((a, b))
    return tuple(out)
