"""`profgen import` of a terminal capture: a pasted log with prompts, commands, program output and
one or more tools' output, cut into sections (`profiler.parse.capture`) each of which is read
by the same detection and parsers as a file of its own.

Each section's bytes (as the capture holds them, not decoded) are held in memory and read as a file
of its own would be (`csvtext.Held`, named `section<n><suffix>`: no file is written or read again),
`profiler.parse.detect` says what it is, and the importer's reader for that kind (passed in:
formats added to the importer are read here too) returns its tables. A section no reader recognises
is passed over: it is the rest of the capture. A section one recognises but cannot read is left out
and said so: in run.json, in the stage's technique and as a warning; so is a summary of its top
rows only (`reader_notes.TrimmedTable`), whose rows are kept, and so is a section refused at its
last line that reads without it (the paste stopped mid-row): its whole rows are kept and the cut row
alone is left out. Tables of two kinds are imported as both (summaries and a gpu trace, nvprof and
nsys output of one program): a summary a tool printed is kept as printed (the importer assembles
with `keep_printed`; a trace pasted beside it is often cut short) and the trace gives the timeline
and the GPU span. When two sections give the same table they are never added up. Several nvprof
runs that give tables of one kind (a README with one log per step) are one run each (`import_runs`
makes each a stage of its own): each nvprof section that gives tables starts a run, which takes the
sections after it up to the next (the sections before the first, the first's), but one under no
profiler command of its own that gives only tables no other section gives (a GPU trace fenced
under one run's summaries, its banner cut) goes with the run above. So are several nsys
runs (`capture` cuts a section where nsys's output starts again; one run's reports fenced a
block each are one section again: `parse.fenced_reports`) when no nvprof runs are, and
several ncu runs (after prompts, or where ncu connects to a process after the last disconnected)
when neither are; a run's stage is titled with the command typed above it, else with the
Markdown heading it is quoted under (`parse.headings`). Within a run (or a capture of one), of
anything else (nvprof and nsys output of one program) the first section's table is kept and the
later one's is left out and said so.

The capture fails as a whole (ParseError naming the file) only when no section gives a table;
errors a section's reader raises name the capture and its own lines.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import (
    capture,
    csvtext,
    detect,
    fenced_reports,
    headings,
    nsys_rule,
    nsys_stdout,
    nvprof_export,
    reader_notes,
    table_origin,
    unusable,
)

Reader = Callable[[str, Path | csvtext.Held, str, Path], tuple[dict[str, pd.DataFrame], list[Path]]]
_NOT_SECTIONS = (detect.CAPTURE, detect.NSYS_DIR, detect.NSYS_REPORT)
# output of several runs of one of these is several runs (the first that has several, in order)
_RUN_KINDS = (detect.NVPROF, detect.NSYS_TEXT, detect.NCU_TEXT)
_RUN_TOOLS = {detect.NSYS_TEXT: capture.NSYS, detect.NCU_TEXT: capture.NCU}


@dataclass
class Found:
    """What the sections of one capture gave: the tables, and per section what became of it."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    sections: list[dict[str, Any]] = field(default_factory=list)
    command: str | None = None  # of its run, when a capture holds several
    heading: str | None = None  # the Markdown heading its run is quoted under, likewise

    def warnings(self, path: Path) -> list[str]:
        """One line per section left out in whole or in part."""
        out = []
        for s in self.sections:
            if s.get("left_out"):
                out.append(
                    f"{path}: line {s['line']}: {s['kind']} output left out: {s['left_out']}"
                )
            if s.get("tables_left_out"):
                out.append(
                    f"{path}: line {s['line']}: {s['kind']} output's "
                    f"{', '.join(s['tables_left_out'])} left out (an earlier section gave them; "
                    "to import this run, give it a file of its own)"
                )
            if s.get("cut_row"):
                out.append(
                    f"{path}: line {s['line']}: {s['kind']} output's last row left out, cut short "
                    f"by the paste ({s['cut_row']}): tables partial"
                )
            if s.get("elided"):
                at = ", ".join(map(str, s["elided"]))
                out.append(f"{path}: line {s['line']}: rows elided at line {at}: tables partial")
            out += [f"{path}: {said}" for said in s.get("trimmed", []) + s.get("notes", [])]
        return out


def read_capture(path: Path | csvtext.Held, stage: str, raw: Path, read: Reader) -> list[Found]:
    """The tables of every section of the capture at `path` (see the module docstring): one
    `Found` for the capture, or one per nvprof (or nsys, or ncu) run when several give tables
    of one kind.

    Args:
        path: the capture (a file, or a file's bytes held).
        stage: the stage key written into every table.
        raw: the stage's raw folder (a reader may write there).
        read: the importer's reader: (kind, file or held bytes, stage, raw) -> (tables, files
            read).

    Raises: ParseError naming `path` when no section gives a table.
    """
    data, pieces = _held(path)
    sections, spans = [], {}
    for section, held in pieces:
        got = _read_section(section, held, stage, raw, read)
        if got is not None:
            sections.append(got)
            spans[id(got[0])] = (section.spans[0][0], section.spans[-1][1])
    by_run = _by_run(sections)
    runs = [_merged(run) for run in by_run]
    if len(runs) > 1:
        said = headings.above(
            lambda start, end: data[start:end].decode("utf-8", "surrogatepass"),
            [[spans[id(entry)] for entry, _ in run] for run in by_run],
        )
        for found, heading in zip(runs, said, strict=True):
            found.heading = heading
    if not any(found.tables for found in runs):
        raise _nothing_read(path, data, [s for s, _ in sections if s.get("left_out")])
    return runs


def _nothing_read(
    path: Path | csvtext.Held, data: bytes, tried: list[dict[str, Any]]
) -> ParseError:
    """The refusal of a capture no section of which gives a table: why each section found was
    refused (`_refused`), else what its start is when nvprof wrote its results to a file
    (`nvprof_export`)."""
    head = data[: 1 << 16].decode("utf-8", "replace").splitlines()
    said = _refused(tried) if tried else nvprof_export.described(head)
    return ParseError(
        csvtext.source_path(path),
        detect.EXPECTED,
        "a terminal capture, but none of its sections holds a table profgen reads"
        + (f": {said}" if said else ""),
    )


def _refused(tried: list[dict[str, Any]]) -> str:
    """Which sections were found where and why each was refused, in one line: a reason that
    names its own line says it once ("nvprof output at line 2 (refused at line 3: ...)", not
    "line 2: line 3: ..."), and a reason said before is "the same reason". Three at most."""
    parts, said = [], set()
    for s in tried[:3]:
        at, why = _own_line(s["left_out"])
        shown = "the same reason" if why in said else why
        said.add(why)
        parts.append(f"{s['kind']} output at line {s['line']} (refused{at}: {shown})")
    more = len(tried) - len(parts)
    return ", ".join(parts) + (f", and {more} more refused" if more > 0 else "")


def _own_line(reason: str) -> tuple[str, str]:
    """(" at line N...", the rest) when `reason` starts with the line it names, else ("",
    `reason`)."""
    if not reason.startswith("line "):
        return "", reason
    at, _, why = reason.partition(": ")
    return (f" at {at}", why) if why else ("", reason)


def _held(path: Path | csvtext.Held) -> tuple[bytes, list[tuple[capture.Piece, csvtext.Held]]]:
    """The capture's bytes and its sections, each with its bytes held: a section of one run of
    lines is a range of the capture's bytes (not copied: a million-row section is most of
    them), one of several runs (lines left out between them) a copy of those runs together."""
    data, ascii = csvtext.read_utf8_ascii(path, detect.EXPECTED)
    out = []
    for number, section in enumerate(fenced_reports.joined(capture.cut(data), data)):
        name = Path(f"section{number}{csvtext.source_path(path).suffix}")
        out.append((section, _section(name, data, section.spans, ascii)))
    return data, out


def _section(
    name: Path, data: bytes, spans: tuple[tuple[int, int], ...], ascii: bool
) -> csvtext.Held:
    """Bytes `spans` of `data`, run together, held as the file `name` (`ascii`: `data` is
    ASCII without a NUL byte, and so is any part of it)."""
    if spans == ((0, len(data)),):
        return csvtext.Held(name, data, ascii=ascii)
    if len(spans) == 1:
        return csvtext.Held(name, data, spans[0], ascii)
    view = memoryview(data)
    return csvtext.Held(name, b"".join(view[start:end] for start, end in spans), ascii=ascii)


Read = tuple[dict[str, Any], dict[str, pd.DataFrame]]  # a section's entry and tables


def _read_section(
    section: capture.Piece, held: csvtext.Held, stage: str, raw: Path, read: Reader
) -> Read | None:
    """The section's entry in run.json and its tables; None when it is no profiler output."""
    try:
        kind = detect.detect(held)
    except ParseError:
        return _quoted_sections(section, held)  # else not profiler output: the rest of it
    entry: dict[str, Any] = {"line": section.first_line, "kind": kind, "command": section.command}
    entry["elided"] = list(_rows_elided(section, held))
    if kind in _NOT_SECTIONS:
        entry["left_out"] = "not a section of one tool's output"
        return entry, {}
    try:
        tables, trimmed = _tables(read, kind, held, stage, raw)
    except ParseError as exc:
        why = exc.detail or str(exc)
        kept = _without_cut_row(read, kind, held, why, stage, raw)
        if kept is None:
            entry["left_out"] = table_origin.renumbered(why, section.file_line)
            return entry, {}
        tables, trimmed = kept
        entry["cut_row"] = table_origin.renumbered(why, section.file_line)
    entry["tables"] = sorted(name for name, df in tables.items() if len(df))
    if kind == detect.NSYS_TEXT and entry["elided"]:
        entry["elided"] = _not_after_tables(entry["elided"], _last_line(section, held))
    said = [(t.partial, table_origin.renumbered(str(t), section.file_line)) for t in trimmed]
    entry["trimmed"] = [line for partial, line in said if partial]
    if len(entry["trimmed"]) < len(said):  # notes that the tables are whole (`ReadNote`)
        entry["notes"] = [line for partial, line in said if not partial]
    return entry, tables


def _quoted_sections(section: capture.Piece, held: csvtext.Held) -> Read | None:
    """The entry of a section that is no output profgen reads, when it quotes Nsight Compute's
    `Section:` tables with no kernel line (a post's excerpt of one section, its values marked
    `<- KEY!`): left out, said with why (`unusable`), since their values differ from any run
    read (passed over without a word before); None for any other."""
    lines = bytes(held.view()[: 1 << 16]).decode("utf-8", "replace").splitlines()
    why = unusable.ncu_sections_without_kernel(lines)
    if why is None:
        return None
    entry: dict[str, Any] = {"line": section.first_line, "kind": detect.NCU_TEXT}
    entry.update(command=section.command, elided=list(section.elided))
    entry["left_out"] = table_origin.renumbered(why, section.file_line)
    return entry, {}


def _rows_elided(section: capture.Piece, held: csvtext.Held) -> tuple[int, ...]:
    """The elision marks of `section` that may cut its tables: for nsys output (or a section
    no tool's line names, read as nsys's), not one above its first marker or table rule (a `...`
    between the program's log and the tables nsys printed after it, such as a course report's,
    or above the header of a table quoted alone, elides what came before), which `file_line`
    still counts."""
    if section.tool not in (capture.NSYS, None) or not section.elided:
        return section.elided
    text = bytes(held.view()[:_MARK_BYTES]).decode("utf-8", "replace")
    for n, line in enumerate(text.split("\n", _MARK_LINES), 1):
        if n <= _MARK_LINES and (nsys_stdout.named(line.lstrip(" \t")) or nsys_rule.is_rule(line)):
            first = section.file_line(n)
            return tuple(mark for mark in section.elided if mark > first)
    return section.elided


_MARK_LINES, _MARK_BYTES = 10_000, 1 << 20  # what is looked at for the first marker, at most


def _not_after_tables(marks: list[int], last: int) -> list[int]:
    """The elision marks (file lines, ascending) of an nsys section whose last line that is not
    blank is `last`, less those below a blank line under it: nsys ends each table with a blank
    line, so a `...` below one stands after the last table (the paste cut the rest of the log
    there), not among its rows. A `...` right under the last rows may elide rows (the tail of
    a summary, its rows of `0.0` percent, which their shares cannot tell of): it is kept."""
    kept = []
    for mark in marks:
        between = mark - last - 1 - sum(last < other < mark for other in marks)
        if mark < last or between == 0:
            kept.append(mark)
    return kept


def _last_line(section: capture.Piece, held: csvtext.Held) -> int:
    """The file line of the section's last line that is not blank (an elision mark below it
    stands after every table the section holds: the paste cut the rest of the log there)."""
    start, stop = (0, len(held.buffer)) if held.span is None else held.span
    tail = held.buffer[max(start, stop - _TAIL) : stop].rstrip()  # (fewer blanks end a section)
    end = max(start, stop - _TAIL) + len(tail)
    return section.file_line(held.buffer.count(b"\n", start, end) + 1)


_TAIL = 1 << 16  # the bytes at a section's end looked at for its last line


def _tables(
    read: Reader, kind: str, held: csvtext.Held, stage: str, raw: Path
) -> tuple[dict[str, pd.DataFrame], list[reader_notes.ReadNote]]:
    """What `read` gives of the section `held`, and the tables it read only the top rows of."""
    with reader_notes.trimmed() as trimmed:
        tables, _ = read(kind, held, stage, raw)
    return tables, trimmed


def _without_cut_row(
    read: Reader, kind: str, held: csvtext.Held, why: str, stage: str, raw: Path
) -> tuple[dict[str, pd.DataFrame], list[reader_notes.ReadNote]] | None:
    """The section's tables without its last line, when the reader refused the section (`why`)
    at that line and reads the lines above it: the paste stopped mid-row (a row cut short,
    empty cells at its end). None otherwise, and when the lines above give no row."""
    data = bytes(held.view())
    body = data.rstrip()
    start = body.rfind(b"\n") + 1
    if not start or table_origin.first_line(why) != body.count(b"\n") + 1:
        return None
    above = replace(held, buffer=data[:start], span=None)
    try:
        tables, trimmed = _tables(read, kind, above, stage, raw)
    except ParseError:
        return None
    return (tables, trimmed) if any(len(df) for df in tables.values()) else None


def _by_run(sections: list[Read]) -> list[list[Read]]:
    """The sections as one run, or, when several sections of one tool's output (nvprof's, else
    nsys's, else ncu's) give tables of one kind, as one run per such section with the sections
    after it (those before the first, with it)."""
    runs = next(filter(None, (_starts(sections, kind) for kind in _RUN_KINDS)), [])
    if not runs:
        return [sections]
    out: list[list[Read]] = []
    for got in sections:
        if not out or (id(got[0]) in runs and id(got[0]) != runs[0]):
            out.append([])
        out[-1].append(got)
    return out


def _starts(sections: list[Read], kind: str) -> list[int]:
    """The sections of `kind` that start a run, by `id` of their entry, when two of them give
    tables of one kind: each typed after its own profiler command, and each that gives a table
    of a kind another gives too. One under no command of its own that gives only tables no
    other gives (a run's GPU trace fenced under its summaries, its banner cut) starts none: it
    goes with the run above, as it would in a capture of one run. Else none."""
    given = [(s, set(s["tables"])) for s, _ in sections if s["kind"] == kind and s.get("tables")]
    counted = Counter(t for _, tables in given for t in tables)
    again = {t for t, n in counted.items() if n > 1}
    if not again:
        return []
    return [id(s) for s, tables in given if tables & again or _run_command(s) is not None]


def _merged(sections: list[Read]) -> Found:
    """One run's sections: a table from the first section that gives it, the later ones' left
    out and said so."""
    found = Found()
    for entry, tables in sections:
        found.sections.append(entry)
        if "tables" not in entry:
            continue  # left out
        entry["tables_left_out"] = [n for n in entry["tables"] if n in found.tables]
        for name in entry["tables"]:
            found.tables.setdefault(name, tables[name])
        if found.command is None and entry["kind"] in _RUN_KINDS and entry["tables"]:
            found.command = _run_command(entry)
    return found


def _run_command(entry: dict[str, Any]) -> str | None:
    """The command of a section that starts a run: nvprof's as typed; nsys's (ncu's) only when
    it runs nsys (ncu): the prompt above nsys output may be another command's (`$ cat
    /proc/meminfo`)."""
    command = entry["command"]
    if entry["kind"] == detect.NVPROF or command is None:
        return command
    return command if capture.profiler_run(command) == _RUN_TOOLS[entry["kind"]] else None


def technique(found: Found, kinds: dict[str, str]) -> str:
    """The stage's technique: what each section was, where it is, and what was left out.

    Args:
        found: what `read_capture` gave.
        kinds: a phrase per kind (`imported from nvprof output` -> `nvprof output`).
    """
    parts = []
    for s in found.sections:
        what = kinds.get(s["kind"], s["kind"])
        where = f"line {s['line']}" + (f", `{s['command']}`" if s.get("command") else "")
        if s.get("left_out"):
            parts.append(f"{what} at {where} left out ({s['left_out']})")
            continue
        kept = [t for t in s.get("tables", []) if t not in s.get("tables_left_out", [])]
        note = (
            f"; its {', '.join(s['tables_left_out'])} left out: an earlier section gave them"
            if s.get("tables_left_out")
            else ""
        )
        partial = f"{schema.PARTIAL}the paste elides rows" if s.get("elided") else ""
        if s.get("cut_row"):
            partial += f"{schema.PARTIAL}its last row cut short by the paste"
        partial += "".join(f"{schema.PARTIAL}{said}" for said in s.get("trimmed", []))
        parts.append(f"{what} at {where} ({', '.join(kept) or 'nothing new'}{note}{partial})")
    return "imported from a terminal capture: " + "; ".join(parts)
