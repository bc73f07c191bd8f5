"""What a file profgen reads no table from is, when it is a known kind of profiler output that
holds none: the refusal then says what the file is and why profgen can't use it (issue 14),
instead of quoting its first line.

Only the start of the file that detection read (64 KiB) is looked at, line by line, with no
pattern that can backtrack:

- a list of Nsight Compute metric names (`ncu --query-metrics`): rows of a raw metric name
  (`unit__counter.suffix`), its type (`Counter`, `Ratio`, `Throughput`), unit and description,
  or the header `Metric Name ... Metric Description`;
- the output of Nsight Systems' expert-system rules (`nsys analyze`, or `nsys stats` run with
  them): `Processing [x.sqlite] with [.../rules/cuda_memcpy_sync.py]...`, advice and at most
  50 example rows per rule (not a stats report of all calls);
- the console output of `nsys profile` that ends at `Generating '....qdstrm'` with no stats
  table after it (the program or nsys failed before it wrote a report), and that of 2020-2021
  versions (`nsys nvprof` too) with no stats table: ending where nsys saved its report
  (`Saved report file to "x.qdrep"`), or with the program's own output after nsys's launch
  line (`WARNING: app and any of its children processes will be profiled.`: a paste cut
  before the tables);
- Nsight Compute's `Section:` tables (a tutorial's excerpt) with no kernel line above them
  (`name (grid)x(block), Context 1, Stream 7`): measurements of no kernel;
- Nsight Compute's rule advice (`    OPT   Memory is more heavily utilized ...`, `WRN`,
  `INF`) quoted without the `Section:` tables and kernel line it belongs to;
- a CPU profiler's output (gprof, Python's cProfile/pstats): `unusable_foreign`;
- an nvprof summary's text table with its columns joined by commas, rows of an nvprof or nsys
  table pasted without their header line, and an nvprof `--csv` gpu trace with a column a
  script put before nvprof's own: `unusable_rows`;
- nvprof's console output of a run that wrote its results to a file (`nvprof -o run.nvvp`),
  or only the command line of one (`--export-profile` too): no table, but the file it names
  can be imported (`nvprof_export`);
- rows of ncu's `--csv` output without their header line, the list of sections ncu can
  collect (`ncu --list-sections`), and the tables of sections' bodies (`Table Name : ...`)
  without their `Section:` lines: `unusable_ncu`;
- a profiler's usage text (`ncu --help`, `nsys --help`, `nvprof --help`): its first line is
  `usage: ncu [options] ...`;
- a log of the CUDA command-line profiler that came before nvprof, and the summary of THAPI's
  `iprof`: `unusable_foreign`;
- a table of the Nsight Systems GUI's stats view copied into Markdown, or tables of nsys
  reports profgen does not use only (`unusable_nsys`).

A Markdown document or an HTML page with none of these is said to be one (`document`); another
file none of whose lines is a profiler's (`program_output`) is said to look like a program's
own output.
"""

from __future__ import annotations

from pathlib import PurePath

from profiler.errors import ParseError
from profiler.parse import (
    cell_quotes,
    nvprof_export,
    unusable_foreign,
    unusable_ncu,
    unusable_nsys,
    unusable_rows,
)

_HTML_STARTS = ("<!doctype html", "<html")
_METRIC_TYPES = ("Counter", "Ratio", "Throughput")
_METRIC_ROWS = 3  # rows of a metric list that make one (a header alone does too)
_RULE_MARK, _WITH = "Processing [", "] with ["
_SOURCES = {
    **dict.fromkeys((".cu", ".cuh"), "a CUDA"),
    **dict.fromkeys((".c", ".cc", ".cpp", ".cxx", ".h", ".hpp"), "a C or C++"),
    ".py": "a Python",
    **dict.fromkeys((".sh", ".bash"), "a shell"),  # (a heredoc or an echo quotes output)
    ".f90": "a Fortran",
}
# words of the profilers' own lines and table headers (lower case): a file with one is no
# program's plain output, even where detection cannot say which tool's it is
_PROFILER_WORDS = (
    "nvprof",
    "nsys",
    "ncu",
    "nsight",
    "==prof==",
    "time(%)",
    "time (%)",
    "metric name",
    "section:",
    "[cuda ",
    "gpu activities",
    "api calls",
    "kernel",
)


def describe(lines: list[str]) -> str | None:
    """What the file whose first lines are `lines` is and why profgen can't use it, when it is
    one of the kinds above; else None."""
    return (
        _metric_list(lines)
        or nvprof_export.described(lines)
        or _rule_output(lines)
        or _profile_without_report(lines)
        or ncu_sections_without_kernel(lines)
        or _ncu_advice(lines)
        or unusable_foreign.cpu_profile(lines)
        or unusable_rows.comma_joined_summary(lines)
        or unusable_rows.headless_rows(lines)
        or unusable_rows.headless_trace(lines)
        or unusable_rows.prefixed_csv_trace(lines)
        or unusable_rows.headless_csv_trace(lines)
        or unusable_ncu.headless_csv(lines)
        or unusable_ncu.section_list(lines)
        or unusable_ncu.body_tables(lines)
        or _usage_text(lines)
        or unusable_foreign.legacy_profiler_log(lines)
        or unusable_foreign.iprof_summary(lines)
        or unusable_nsys.describe(lines)
        or nvprof_export.commanded(lines)
    )


def quoted_in(refused: ParseError, suffix: str) -> ParseError:
    """`refused` (profiler output in a file that could not be read) saying what the file is
    when its name's suffix is a program's source (`x.py`: a test's fixture, output pasted into
    a comment), where a table is often made up or reflowed by hand; else `refused` as it is."""
    kind = _SOURCES.get(suffix.lower())
    if kind is None:
        return refused
    said = f"{refused.detail}; " if refused.detail else ""
    said += f"the file is {kind} source file that quotes it (a test's fixture, a comment?)"
    return ParseError(refused.path, refused.expected, said)


def document(suffix: str, lines: list[str]) -> str | None:
    """What a Markdown document, an HTML page (by its name's suffix or its first line) or a
    program's source (by its name's suffix: profiler output is pasted into comments) in which
    detection found no profiler output is, and that; else None."""
    first = next((line.strip() for line in lines if line.strip()), "")
    if suffix.lower() in (".md", ".markdown") or first.startswith("# "):
        kind = "a Markdown document"
    elif suffix.lower() in (".html", ".htm") or first.lower().startswith(_HTML_STARTS):
        kind = "an HTML page"
    elif suffix.lower() in _SOURCES:
        kind = f"{_SOURCES[suffix.lower()]} source file"
    else:
        return None
    return (
        f"it is {kind} in which no profiler table was found (it starts "
        f"{cell_quotes.shown_cell(first, 80)}); {unusable_foreign.READS}"
    )


def program_output(lines: list[str]) -> str | None:
    """Why the file whose first lines are `lines` looks like a program's own output, when none
    of them is a profiler's (no `==PID==` or `==PROF==` prefix, no line naming nvprof, nsys,
    ncu or a profiler table's column); else None."""
    first = next((line.strip() for line in lines if line.strip()), None)
    if first is None or any(_profiler_line(line) for line in lines):
        return None
    return (
        "none of its lines is profiler output (no `==PID==` or `==PROF==` line, no nvprof, "
        f"nsys or ncu table): it looks like a program's own output, starting "
        f"{cell_quotes.shown_cell(first, 80)}; {unusable_foreign.READS}"
    )


def _metric_list(lines: list[str]) -> str | None:
    rows = 0
    for line in lines:
        if line.startswith("Metric Name") and "Metric Description" in line:
            rows = _METRIC_ROWS
        else:
            cells = line.split(None, 2)
            rows += len(cells) > 1 and "__" in cells[0] and cells[1] in _METRIC_TYPES
        if rows >= _METRIC_ROWS:
            return (
                "it is a list of Nsight Compute metric names with their descriptions, as "
                "`ncu --query-metrics` prints it: no measurements to import"
            )
    return None


def _rule_output(lines: list[str]) -> str | None:
    rules: dict[str, None] = {}  # the rules in order, once each
    report = ""
    for line in lines:
        if not line.startswith(_RULE_MARK) or _WITH not in line:
            continue
        source, script = line[len(_RULE_MARK) :].split(_WITH, 1)
        path = PurePath(script.split("]", 1)[0])
        if path.parent.name == "rules":
            rules[path.stem] = None
            report = report or source
    if not rules:
        return None
    names = cell_quotes.listed(rules, 6)
    return (
        f"it is the output of Nsight Systems' expert-system rules (`nsys analyze`: {names}): "
        "advice with at most 50 example rows per rule, no stats report; import "
        f"{cell_quotes.shown_cell(report, 120)} itself"
    )


def _profile_without_report(lines: list[str]) -> str | None:
    last = next((line.strip() for line in reversed(lines) if line.strip()), "")
    said = next((line.strip() for line in lines if "error" in line.lower()), None)
    error = f"; the first error in it: {cell_quotes.shown_cell(said, 200)}" if said else ""
    if last.startswith("Generating '") and last.endswith((".qdstrm'", ".nsys-rep'")):
        return (
            f"it is the console output of `nsys profile` that ends at "
            f"{cell_quotes.shown_cell(last, 120)}: nsys printed no stats table after it (did the "
            f"program or nsys fail?){error}"
        )
    return _saved_without_stats(last) or _launch_without_stats(lines)


_CONSOLE = "it is the console output of `nsys profile` (or `nsys nvprof`)"
_SAVED = "Saved report file to "
_LAUNCH = " and any of its children processes will be profiled."


def _saved_without_stats(last: str) -> str | None:
    """What a file is whose last line is nsys's `Saved report file to "x.qdrep"` (2020-2021
    versions, `nsys nvprof` included): nsys's console output cut before its stats tables, or of
    a run that printed none."""
    if not last.startswith(_SAVED):
        return None
    report = last[len(_SAVED) :].strip('"')
    return (
        f"{_CONSOLE} that ends where nsys saved its report "
        f"({cell_quotes.shown_cell(report, 120)}), "
        "with no stats table in it: import that report, or what `nsys stats` prints for it"
    )


def _launch_without_stats(lines: list[str]) -> str | None:
    """What a file is with nsys's launch line (`WARNING: app and any of its children processes
    will be profiled.`) and, detection having found none, no stats table after it: the program's
    own output runs to its end (a paste cut before nsys printed its tables)."""
    at = next((n for n, line in enumerate(lines) if line.rstrip().endswith(_LAUNCH)), None)
    if at is None or not lines[at].lstrip().startswith("WARNING: "):
        return None
    return (
        f"{_CONSOLE} from line {at + 1} ({cell_quotes.shown_cell(lines[at].strip(), 100)}) with no "
        "stats table in it: the program's own output runs to its end (cut before nsys printed "
        "its tables?)"
    )


def ncu_sections_without_kernel(lines: list[str]) -> str | None:
    """What a file is in which Nsight Compute's `Section: GPU Speed Of Light Throughput` tables
    (a `Section:` line, a dash rule under it) stand with no kernel line (`... (grid)x(block),
    Context 1, Stream 7`) anywhere (detection found none): metrics of no kernel."""
    if any(")x(" in line for line in lines):
        return None
    found = [
        n
        for n, line in enumerate(lines[:-1])
        if line.lstrip(" ").startswith("Section: ") and lines[n + 1].lstrip(" ").startswith("---")
    ]
    if not found:
        return None
    name = lines[found[0]].strip().removeprefix("Section: ")
    return (
        f"it quotes Nsight Compute's `Section:` tables ({len(found)}, the first at line "
        f"{found[0] + 1}: {cell_quotes.shown_cell(name, 60)}) with no kernel line above them "
        "(`name (grid)x(block), Context 1, Stream 7`): no launch to give their metrics to"
    )


_NCU_TAGS = ("OPT  ", "WRN  ", "INF  ")  # a rule's tag as ncu prints it, padded to 6


def _ncu_advice(lines: list[str]) -> str | None:
    """What a file is in which Nsight Compute's rule advice (`    OPT   Memory is more heavily
    utilized than Compute: ...`) is quoted without the `Section:` tables and kernel line it
    comes with (detection found none): no measurements."""
    tagged = [n for n, line in enumerate(lines) if line.lstrip(" ").startswith(_NCU_TAGS)]
    if not tagged:
        return None
    first = lines[tagged[0]].strip()
    return (
        f"it quotes Nsight Compute's rule advice ({len(tagged)} `OPT`/`WRN`/`INF` line"
        f"{'s' if len(tagged) > 1 else ''}, the first at line {tagged[0] + 1}: "
        f"{cell_quotes.shown_cell(first, 60)}) without the `Section:` tables and kernel line it "
        "comes with: no measurements to import"
    )


def _profiler_line(line: str) -> bool:
    """The line is (or names) a profiler's output: an `==<pid>==` prefix or a profiler word."""
    if line.startswith("==") and line[2 : line.find("==", 2)].isdigit():
        return True
    low = line.lower()
    return any(word in low for word in _PROFILER_WORDS)


_USAGE_TOOLS = ("ncu", "nsys", "nvprof", "nv-nsight-cu-cli")


def _usage_text(lines: list[str]) -> str | None:
    """What the file is when its first line is a profiler's usage line (`usage: ncu ...`)."""
    first = next((line.strip() for line in lines if line.strip()), "")
    words = first.split(None, 2)
    if len(words) < 2 or words[0].lower() != "usage:" or words[1] not in _USAGE_TOOLS:
        return None
    return (
        f"it is {words[1]}'s usage text (`{words[1]} --help`: "
        f"{cell_quotes.shown_cell(first, 80)}), the options it takes: no measurements to import"
    )
