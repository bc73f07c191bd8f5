"""Terminal captures: what people paste into READMEs, issues and logs, cut into the sections each
of which one tool printed.

A capture holds shell prompts and the commands typed (`$ nvprof ./a.out`, `user@host:~$ nsys
stats ...`, `% ...`), program output, Markdown around it, and one or more tools' output one after
another. `split` cuts it at every line that starts something new, without knowing any table
layout (the parsers, which other formats join, find the tables in each section):

- a shell prompt with a command (the section after it records the command, and the profiler
  the command runs, if it runs one);
- a Markdown code fence (three backticks or tildes);
- the first line of another tool's output: nvprof (`==PID==`, and a new PID is a new run),
  Nsight Compute (`==PROF==`) or Nsight Systems (`Processing [...]`, `Generating '...'`, a
  `[3/8] Executing 'nvtx_sum'` step or `[1/8] [====100%]` bar, a `** ... (report):` banner,
  or an nsys CSV header at the start of a paragraph); a program's own `[1/10] epoch` is none.

An elision line (`...`, `[...]`, `[...warmup...]`) that a paste puts where it cut rows out is
left out of its section and recorded (the section's tables are partial); it cuts nothing, so a
table whose rows a paste elided, even right under its header, stays one table.

A file is a capture (`is_capture`) when it holds the output of two or more tools, two or more
nvprof or ncu runs typed after prompts (each is a run of its own, whatever its tool prints), or
a tool's output a paste elides rows of (the importer says its tables are partial).
Any other file is left to its tool's parser whole: each parser finds its tables among prompts,
Markdown and program output, and applies its own rule to several runs in one file.

Linear in the text: lines are visited once, each looked at by its first characters before any
pattern is tried, and every pattern is anchored, bounded and free of nested repeats.
"""

from __future__ import annotations

import dataclasses
import re
import string
from dataclasses import dataclass

from profiler.parse import nsys_csv

NVPROF, NCU, NSYS = "nvprof", "ncu", "nsys"

# A prompt: an optional `(env) `, then `$` or `%` alone, or a `user@host[:path]` or
# `[user@host dir]` or `-bash-4.2` prefix ending in `$`, `#`, `%` or `>`, or `PS C:\dir>`, then a
# space and the command. `#` alone is no prompt (a Markdown heading, a shell comment), nor is `>`
# alone (a Markdown quote; CUDA's samples print `> Device 0: ...`). Up to four spaces may come
# first (a Markdown code block is indented by four).
_PROMPT = re.compile(
    r"[ \t]{0,4}(?:\([^()\s]{1,64}\) )?"
    r"(?:[$%]"
    r"|\[[^\]\n]{1,200}\][$#%]"
    r"|[^\s$#%>@\[]{1,100}@[^\s$#%>]{1,200}(?: [^\s$#%>]{1,200})?[$#%>]"
    r"|-?bash-[0-9.]{1,10}[$#]"
    r"|PS [A-Za-z]:\\[^>\n]{0,200}>)"
    r"[ \t]+(?P<command>\S[^\n]{0,4000})"
)
_PROMPT_FIRST = frozenset(" \t$%([-_.~/" + string.ascii_letters + string.digits)
_FENCE = re.compile(r"[ \t]{0,3}(?:```|~~~)")
_ELISION = re.compile(
    r"[ \t]*(?:\.\.\.|…|\[(?:\.\.\.|…)[^\]\n]{0,80}\]|<snip>|\[snip\])[ \t\r]*"
)
_ELISION_MAX = 100  # longer lines are no elision mark (table rows, mostly: not even tried)
# A profiler named as a word of a command: `nvprof ./a`, `sudo /usr/local/cuda/bin/ncu ...`,
# `$(which nsys) profile` (not `nvprof.log`, `nsys_notes.md`)
_RUNS = re.compile(r"(?:^|[\s/(])(?P<tool>nvprof|nsys|ncu|nv-nsight-cu-cli)(?=[\s)]|$)")
_RUNS_UNMARKED = (NVPROF, NCU)
_TOOL_OF = {"nvprof": NVPROF, "nsys": NSYS, "ncu": NCU, "nv-nsight-cu-cli": NCU}
_NVPROF = re.compile(r"==(?P<pid>[0-9]{1,10})== ")
_NSYS = re.compile(
    r"(?:Processing \[|Running \[|Generating SQLite file|Generating '|Collecting data\.\.\."
    r"|\[[0-9]{1,3}/[0-9]{1,3}\] (?:\[|Executing ')"
    r"|[ \t]{0,4}\*\* [^\n]{1,200}\([A-Za-z_]{1,64}\):)"
)


@dataclass(frozen=True)
class Section:
    """One cut-out piece of a capture.

    first_line: the file line (1-based) of its first line.
    text: its lines, as in the file.
    tool: the tool whose output it holds (`NVPROF`, `NCU`, `NSYS`), or None (none seen).
    command: the command of the prompt above it, or None.
    elided: the file lines of elision marks (`...`, `[...warmup...]`) in it: left out of `text`,
        which is the rest of its lines run together (a table cut by a paste stays one table).
    marked: whether a prompt or a fence cut it from what came before.
    """

    first_line: int
    text: str
    tool: str | None
    command: str | None
    elided: tuple[int, ...] = ()
    marked: bool = False

    def file_line(self, line: int) -> int:
        """The file line of line `line` (1-based) of `text`: the elision marks left out of
        `text` count again."""
        at = self.first_line + line - 1
        for mark in self.elided:  # ascending
            if self.first_line <= mark <= at:
                at += 1
        return at


def split(text: str) -> list[Section]:
    """The capture's sections, in order; sections with no text are left out."""
    out: list[Section] = []
    cur = _Open(first_line=1)
    previous_blank = True
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        stripped = line.rstrip("\r\n")
        prompt = _prompt(stripped)
        if prompt is not None or _FENCE.match(stripped):
            cur.close(out)
            cur = _Open(first_line=number + 1, command=prompt, marked=True)
            cur.tool = None if prompt is None else profiler_run(prompt)
        elif len(stripped) <= _ELISION_MAX and _ELISION.fullmatch(stripped):
            cur.elided.append(number)  # left out; the section goes on
        else:
            tool, run = _signature(stripped, previous_blank)
            if tool is not None and cur.tool is not None and _another(cur, tool, run):
                cur.close(out)
                cur = _Open(first_line=number)
            if tool is not None and (cur.tool is None or cur.run is None):
                cur.tool, cur.run = tool, run  # a prompt's `nvprof` gets its PID
            if not cur.lines:
                cur.first_line = number
            cur.lines.append(line)
        previous_blank = not stripped or stripped.isspace()
    cur.close(out)
    return out


def _another(cur: _Open, tool: str, run: str | None) -> bool:
    """Whether a line of `tool`'s output (of `run`) starts a section other than `cur`."""
    return tool != cur.tool or (cur.run is not None and run != cur.run)


def profiler_run(command: str) -> str | None:
    """The profiler a typed command runs (`sudo $(which nsys) profile ...` -> NSYS), or None."""
    found = _RUNS.search(command[:400])
    return None if found is None else _TOOL_OF[found["tool"]]


def is_capture(head: str) -> bool:
    """True when the text (a file's first 64 KiB) holds several tools' output, several nvprof or
    ncu runs typed after prompts (their output need not mark where a run starts: a paste cuts
    nvprof's `Profiling result:` lines; nsys's parser reads the first run of each report), or a
    tool's output that a paste elides rows of."""
    sections = split(head)
    printed = [s for s in sections if s.tool is not None]
    typed = [s for s in printed if s.command is not None and s.tool in _RUNS_UNMARKED]
    return len({s.tool for s in printed}) >= 2 or len(typed) >= 2 or any(s.elided for s in printed)


def _prompt(line: str) -> str | None:
    """The command of a prompt line, or None."""
    if not line or line[0] not in _PROMPT_FIRST:
        return None
    if "$" not in line and "%" not in line and "#" not in line and ">" not in line:
        return None  # a table row, most often: no prompt mark at all
    found = _PROMPT.fullmatch(line.rstrip())
    return found["command"].strip() if found else None


def _signature(line: str, paragraph_start: bool) -> tuple[str | None, str | None]:
    """(tool, run) whose output `line` is recognisably part of; (None, None) for any other line.
    nvprof's run is its PID; an nsys CSV header counts only at the start of a paragraph."""
    if line.startswith("=="):
        if line.startswith(("==PROF==", "==ERROR==", "==WARNING==")):
            return NCU, None
        found = _NVPROF.match(line)
        return (NVPROF, found["pid"]) if found else (None, None)
    if _NSYS.match(line):
        return NSYS, None
    if paragraph_start and "," in line and nsys_csv.identify(line) is not None:
        return NSYS, None
    return None, None


@dataclass
class _Open:
    """The section being read."""

    first_line: int
    command: str | None = None
    marked: bool = False
    tool: str | None = None
    run: str | None = None

    def __post_init__(self) -> None:
        self.lines: list[str] = []
        self.elided: list[int] = []

    def close(self, out: list[Section]) -> None:
        text = "".join(self.lines)
        if text.strip():
            elided = tuple(self.elided)
            out.append(Section(self.first_line, text, self.tool, self.command, elided, self.marked))
        elif self.elided and out:  # an elision right after a section ends that section
            last = out[-1]
            out[-1] = dataclasses.replace(last, elided=(*last.elided, *self.elided))
