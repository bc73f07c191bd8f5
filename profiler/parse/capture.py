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
  or an nsys CSV header at the start of a paragraph, or right under a code fence, as a README
  pastes `nsys stats --format csv`); a program's own `[1/10] epoch` is none;
- nsys's output starting again: a marker naming a report the section named already, or
  `Generating '/tmp/nsys-report-....qdstrm'` after one (two runs pasted one under the other);
  or a line nsys profile prints once a run (`Collecting data...`, `Generating '...'`) again;
  ncu's: `==PROF== Connected to process` after every process it connected to has disconnected.

An elision line (`...`, `[...]`, `[...warmup...]`) that a paste puts where it cut rows out is
left out of its section and recorded (the section's tables are partial); it cuts nothing, so a
table whose rows a paste elided, even right under its header, stays one table.

A file is a capture (`is_capture`) when it holds the output of two or more tools, two or more
nvprof or ncu runs typed after prompts (each is a run of its own, whatever its tool prints), two
or more sections of nsys output that name one report (runs of their own), ncu's or nsys's output
starting again (`restarts`; nsys's also after a fence or a prompt, where it prints again a
line nsys profile prints once a run), or a tool's output a paste elides rows of (the importer says
its tables are partial).
Any other file is left to its tool's parser whole: each parser finds its tables among prompts,
Markdown and program output, and applies its own rule to several runs in one file.

Linear in the text: a few NumPy passes over the bytes find the lines and the first non-blank
byte of each; only a line whose first non-blank byte could start a prompt, a fence, an elision
mark or a tool's output (or that holds an `@`, or starts a paragraph) is looked at in Python,
the rest being rows of the section being read (a million-row trace is one slice of the bytes).
Every pattern is anchored, bounded and free of nested repeats.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import string
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from profiler.parse import lines, ncu_csv_bounds, nsys_csv, nsys_stdout

NVPROF, NCU, NSYS = "nvprof", "ncu", "nsys"

# A prompt: an optional `(env) `, then `$` or `%` alone, or a `user@host[:path]` or
# `[user@host dir]` or `-bash-4.2` prefix ending in `$`, `#`, `%` or `>`, or `PS C:\dir>`, then a
# space and the command. `#` alone is no prompt (a Markdown heading, a shell comment), nor is `>`
# alone (a Markdown quote; CUDA's samples print `> Device 0: ...`) but before a profiler's run
# (`_PROFILER_PROMPT`). Up to four spaces may come
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
# `>` alone (PowerShell's and the shell's continuation prompt) only before a profiler's run typed
# (`> nsys stats a.nsys-rep --report cuda_api_sum`, `> ncu -o out ./app`), its tool first: a
# Markdown quote or a program's `> Device 0: ...` is none.
_PROFILER_PROMPT = re.compile(
    r"[ \t]{0,4}>[ \t]+(?P<command>(?:sudo[ \t]+)?/?(?:[^\s/]{1,100}/){0,20}"
    r"(?:nsys[ \t]+(?:profile|stats|launch|nvprof|export|analyze)"
    r"|(?:ncu|nvprof|nv-nsight-cu-cli)[ \t]+[-./])[^\n]{0,4000})"
)
_PROMPT_FIRST = frozenset(" \t$%([-_.~/>" + string.ascii_letters + string.digits)
_FENCE = re.compile(r"[ \t]{0,3}(?:```|~~~)")
# An elision mark: dots (`...`, `......`), `[...]` or `[...warmup...]`, `<snip>`, `[snip]`, and
# a snip between dots (`... < snip > ...`, the ECE408 handouts' nvprof examples).
_DOTS = r"(?:\.{3,20}|…{1,3})"
_SNIP = r"(?:<[ \t]{0,3}snip[ \t]{0,3}>|\[[ \t]{0,3}snip[ \t]{0,3}\])"
_SNIPPED = rf"{_DOTS}[ \t]{{0,3}}{_SNIP}[ \t]{{0,3}}{_DOTS}"
_ELISION = re.compile(rf"[ \t]*(?:{_DOTS}|\[{_DOTS}[^\]\n]{{0,80}}\]|{_SNIP}|{_SNIPPED})[ \t\r]*")
_MARKER_HEADS = ("Processing [", "Running [", "Exporting [")  # nsys lines that end in `...`
_ELISION_MAX = 100  # longer lines are no elision mark (table rows, mostly: not even tried)
# A profiler named as a word of a command: `nvprof ./a`, `sudo /usr/local/cuda/bin/ncu ...`,
# `$(which nsys) profile` (not `nvprof.log`, `nsys_notes.md`)
_RUNS = re.compile(r"(?:^|[\s/(])(?P<tool>nvprof|nsys|ncu|nv-nsight-cu-cli)(?=[\s)]|$)")
_RUNS_UNMARKED = (NVPROF, NCU)
_TOOL_OF = {"nvprof": NVPROF, "nsys": NSYS, "ncu": NCU, "nv-nsight-cu-cli": NCU}
_NVPROF = re.compile(r"==(?P<pid>[0-9]{1,10})== ")
# nvprof's lines with no PID: CUDA 5's nvprof and `nvprof -i profile.nvprof` (`======== Profiling
# result:`, `======== Warning: ...`); a Markdown heading's `========` underline has no word after it
_NVPROF_NO_PID = re.compile(r"={8} [A-Z]")
_NVPROF_STARTS = "== NVPROF is profiling process "
_NCU_CONNECTED = "==PROF== Connected to process "  # ncu attached to a process of its run
_NCU_DISCONNECTED = "==PROF== Disconnected from process "
_NSYS = re.compile(
    r"(?:Processing \[|Running \[|Generating SQLite file|Generating '|Collecting data\.\.\."
    r"|\[ {0,3}[0-9]{1,3}/[0-9]{1,3}\] (?:\[|Executing ')"
    r"|[ \t]{0,4}\*\* [^\n]{1,200}\([A-Za-z_]{1,64}\):)"
)
_NSYS_ONCE = ("Collecting data...", "Generating '")  # nsys profile prints each once a run
PROMPT_REACH = 40  # lines below a prompt within which a tool's first line is its command's


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
    reports: the reports (or scripts) its nsys marker lines name, as written
        (`[3/3] Executing 'cuda_gpu_trace' stats report`, `** CUDA API Summary (cuda_api_sum):`).
    once: the lines nsys profile prints once a run that its nsys output printed (`_NSYS_ONCE`),
        or ncu's `==PROF== Disconnected from process` when its ncu output printed one (the end
        of a run's processes: ncu prints each process's results below it).
    """

    first_line: int
    text: str
    tool: str | None
    command: str | None
    elided: tuple[int, ...] = ()
    marked: bool = False
    reports: tuple[str, ...] = ()
    once: tuple[str, ...] = ()

    def file_line(self, line: int) -> int:
        """The file line of line `line` (1-based) of `text`: the elision marks left out of
        `text` count again."""
        return _file_line(self.first_line, self.elided, line)


@dataclass(frozen=True)
class Piece:
    """A section as `cut` gives it: its text is bytes `spans` of the capture's bytes, run
    together; the rest is as in `Section`."""

    first_line: int
    spans: tuple[tuple[int, int], ...]
    tool: str | None
    command: str | None
    elided: tuple[int, ...] = ()
    marked: bool = False
    reports: tuple[str, ...] = ()
    once: tuple[str, ...] = ()

    def file_line(self, line: int) -> int:
        """As `Section.file_line`."""
        return _file_line(self.first_line, self.elided, line)


def marker_tail(above: str, line: str) -> bool:
    """Whether `line` is the `...` that ends nsys's `Processing [x.sqlite] with [.../r.py]...`
    line `above`, put on a line of its own by a terminal that wrapped it there: no elision."""
    head = above.lstrip(" \t")
    return (
        line.strip() == "..."
        and head.startswith(_MARKER_HEADS)
        and above.rstrip().endswith("]")
    )


def elision(line: str) -> bool:
    """Whether `line` is an elision mark a paste puts where it cut lines out (`...`, `[...]`,
    `[...warmup...]`, `<snip>`, `... < snip > ...`)."""
    return len(line) <= _ELISION_MAX and _ELISION.fullmatch(line) is not None


def _file_line(first_line: int, elided: tuple[int, ...], line: int) -> int:
    at = first_line + line - 1
    for mark in elided:  # ascending
        if first_line <= mark <= at:
            at += 1
    return at


def split(text: str) -> list[Section]:
    """The capture's sections, in order; sections with no text are left out."""
    data = text.encode("utf-8", "surrogatepass")
    ascii_text = text.isascii()  # then a byte offset is a character offset
    out = []
    for piece in cut(data):
        if ascii_text:
            body = "".join(text[a:b] for a, b in piece.spans)
        else:
            body = "".join(data[a:b].decode("utf-8", "surrogatepass") for a, b in piece.spans)
        fields = (piece.tool, piece.command, piece.elided, piece.marked, piece.reports, piece.once)
        out.append(Section(piece.first_line, body, *fields))
    return out


def cut(data: bytes) -> list[Piece]:
    """`split` of a capture's UTF-8 bytes, each section as byte ranges of `data` (the importer
    writes them out without making text of them).

    Lines end where `str.splitlines` ends them. Where `\\n` and `\\r\\n` are the only line ends
    (as good as always), the lines are found with NumPy and only those that can start, end or
    mark something (`_lines`) are looked at in Python: every other line is a row of the section
    being read. Otherwise every line is looked at.
    """
    ends = _line_ends(data)
    if ends is not None:
        bounds, candidates, blank, solid = _lines(data, ends)

        def stripped(i: int) -> str:
            row = data[bounds[i] : bounds[i + 1]]
            return row.decode("utf-8", "surrogatepass").rstrip("\r\n")

        return _walk(bounds, candidates, stripped, blank, solid)
    rows = data.decode("utf-8", "surrogatepass").splitlines(keepends=True)
    sizes = (len(row.encode("utf-8", "surrogatepass")) for row in rows)
    bounds = np.array([0, *itertools.accumulate(sizes)], dtype=np.int64)
    unused = np.zeros(len(rows) + 1, dtype=np.int64)  # (no line is left unlooked at)
    every = list(range(len(rows)))
    return _walk(bounds, every, lambda i: rows[i].rstrip("\r\n"), unused, unused)


def _walk(
    bounds: np.ndarray,
    candidates: list[int],
    stripped: Callable[[int], str],
    blank: np.ndarray,
    solid: np.ndarray,
) -> list[Piece]:
    """The sections of lines `bounds` cuts (line i is bytes `bounds[i]:bounds[i + 1]`, its end
    included), looking only at the lines `candidates` (ascending) names: each line between two
    is a row of the section being read, blank where `blank` says, and `solid[i]` lines before
    line i are not blank."""
    out: list[Piece] = []
    cur = _Open(first_line=1)
    previous_blank = True
    after = 0  # the first line not yet read
    for i in [*candidates, len(bounds) - 1]:
        if i > after:  # rows: lines after .. i - 1
            cur.add(after, int(bounds[after]), int(bounds[i]), bool(solid[i] > solid[after]))
            previous_blank = bool(blank[i - 1])
        if i == len(bounds) - 1:
            break
        line = stripped(i)
        number = i + 1
        prompt = _prompt(line)
        if prompt is not None or _FENCE.match(line):
            cur.close(out)
            if prompt is not None:
                prompt = _continued(prompt, i, stripped, len(bounds) - 1)
            cur = _Open(first_line=number + 1, command=prompt, marked=True)
            cur.tool = None if prompt is None else profiler_run(prompt)
        elif elision(line) and not marker_tail(stripped(i - 1) if i else "", line):
            cur.elided.append(number)  # left out; the section goes on
        else:
            tool, run = _signature(line, previous_blank)
            named = nsys_stdout.named(line.lstrip(" \t")) if tool == NSYS else None
            if tool is not None and cur.tool is not None and _another(cur, tool, run, line, named):
                cur.close(out)
                cur = _Open(first_line=number)
            elif tool is not None and cur.tool is None and _out_of_reach(cur, number):
                cur.close(out)  # the program's output: the tool's is no longer the prompt's
                cur = _Open(first_line=number)
            if tool is not None and (cur.tool is None or cur.run is None):
                cur.tool, cur.run = tool, run  # a prompt's `nvprof` gets its PID
            if named:
                cur.reports.append(named)
            if tool is not None:
                cur.note(tool, line)
            cur.add(i, int(bounds[i]), int(bounds[i + 1]), bool(line.strip()))
        # a fence ends a paragraph: the line after it starts one (an nsys CSV header may)
        previous_blank = not line or line.isspace() or (prompt is None and bool(_FENCE.match(line)))
        after = i + 1
    cur.close(out)
    return out


def _out_of_reach(cur: _Open, number: int) -> bool:
    """Whether a tool's first line at file line `number` is too far below the prompt that
    opened `cur` to be that command's output: a profiler prints its first line (`==PID==
    NVPROF is profiling`, `==PROF== Connected`, `Collecting data...`) before the program's
    own, so a command that runs one through a script or make shows it within `PROMPT_REACH`
    lines; further down, the paste lost the tool's start and the prompt ran something else
    (`$ ./mnistCUDNN`, 200 lines of its output and notes above a later `nsys` run's tables)."""
    return cur.command is not None and number - cur.first_line > PROMPT_REACH


_CONTINUED_MAX = 32  # the most lines a command continued with `\` is read over


def _continued(command: str, at: int, stripped: Callable[[int], str], last: int) -> str:
    """A command typed at line `at` with the lines it is continued on (each line before them
    ending `\\`: `ncu --kernel-name k \\`, `    --launch-count 1 \\`, `    ./a.out`) joined to
    it, one space apart; those lines stay rows of the section, as they are in the file."""
    parts, j = [command], at + 1
    while parts[-1].endswith("\\") and j < last and j - at <= _CONTINUED_MAX:
        parts[-1] = parts[-1][:-1].rstrip()
        parts.append(stripped(j).strip())
        j += 1
    return " ".join(part for part in parts if part)


def _another(cur: _Open, tool: str, run: str | None, line: str, named: str | None) -> bool:
    """Whether a line of `tool`'s output (of `run`) starts a section other than `cur`: another
    tool's, another nvprof PID's, nvprof's first line again (`==308== NVPROF is profiling
    process 308`: a handout's two examples both say 308), or nsys's run starting again: a
    marker naming (`named`) a report `cur` named already, or the line nsys profile starts its
    output with (`Generating '/tmp/nsys-report-73d9.qdstrm'`) after a report was named (two
    runs pasted one under the other), or ncu connecting to a process after every process `cur`
    connected to has disconnected (`==PROF== Connected to process 5342 (...)`: the processes of
    one run, `--target-processes all`, connect before the first disconnects)."""
    if tool != cur.tool or (cur.run is not None and run is not None and run != cur.run):
        return True
    if tool == NCU:
        return cur.ncu_done and line.lstrip(" \t").startswith(_NCU_CONNECTED)
    if tool == NSYS:
        line = line.lstrip()
        again = line.startswith(cur.once)  # what it prints once a run, printed again
        return again or named in cur.reports or bool(cur.reports and line.startswith(_NSYS_ONCE))
    return cur.run is not None and tool == NVPROF and _NVPROF_STARTS in line


def profiler_run(command: str) -> str | None:
    """The profiler a typed command runs (`sudo $(which nsys) profile ...` -> NSYS), or None."""
    found = _RUNS.search(command[:400])
    return None if found is None else _TOOL_OF[found["tool"]]


def is_capture(head: str) -> bool:
    """True when the text (a file's first 64 KiB) holds several tools' output, several nvprof or
    ncu runs typed after prompts (their output need not mark where a run starts: a paste cuts
    nvprof's `Profiling result:` lines), several sections of nsys output that name one report
    (nsys's parser reads one table of each report), ncu's or nsys's output starting again
    (`restarts`: its parser would read the runs as one), or a tool's output that a paste elides
    rows of."""
    sections = split(head)
    printed = [s for s in sections if s.tool is not None]
    typed = [s for s in printed if s.command is not None and s.tool in _RUNS_UNMARKED]
    named = [r for s in printed if s.tool == NSYS for r in set(s.reports)]
    return (
        len({s.tool for s in printed}) >= 2
        or len(typed) >= 2
        or len(named) > len(set(named))
        or any(s.elided for s in printed)
        or restarts(sections)
    )


def restarts(sections: list[Section]) -> bool:
    """Whether ncu's or nsys's output starts again in `sections`: a section of it right after
    another, with no prompt or fence between (`_another` cut it where ncu connected to a process
    anew, or where nsys printed again what it prints once a run), or a section of nsys output
    that prints a line nsys profile prints once a run which an earlier one printed (each run
    in a Markdown fence of its own or after a prompt of its own: `Collecting data...` twice;
    `nsys stats` after `nsys profile` prints neither again), or a section of ncu output that
    disconnects from a process after an earlier one did (each run's results in a fence of its
    own, below its `==PROF== Disconnected from process` line)."""
    pairs = zip(sections, sections[1:], strict=False)
    if any(a.tool == b.tool and b.tool in (NCU, NSYS) and not b.marked for a, b in pairs):
        return True
    printed: set[str] = set()
    for section in sections:
        if section.tool in (NSYS, NCU):
            if printed.intersection(section.once):
                return True
            printed.update(section.once)
    return False


def _prompt(line: str) -> str | None:
    """The command of a prompt line, or None."""
    if not line or line[0] not in _PROMPT_FIRST:
        return None
    if "$" not in line and "%" not in line and "#" not in line and ">" not in line:
        return None  # a table row, most often: no prompt mark at all
    found = _PROMPT.fullmatch(line.rstrip()) or _PROFILER_PROMPT.fullmatch(line.rstrip())
    return found["command"].strip() if found else None


def _signature(line: str, paragraph_start: bool) -> tuple[str | None, str | None]:
    """(tool, run) whose output `line` is recognisably part of; (None, None) for any other line.
    nvprof's run is its PID; an nsys or ncu CSV header counts only at the start of a paragraph
    (`"Process ID","Process Name",...` under an nsys CSV is ncu's, not more nsys rows). A line
    indented as a Markdown code block (`    ==308== NVPROF is profiling ...`) counts as well."""
    line = line.lstrip(" \t")
    if line.startswith("=="):
        if line.startswith(("==PROF==", "==ERROR==", "==WARNING==")):
            return NCU, None
        found = _NVPROF.match(line)
        if found is None and _NVPROF_NO_PID.match(line):
            return NVPROF, None  # the run its PID-less lines are part of: the section's
        return (NVPROF, found["pid"]) if found else (None, None)
    if _NSYS.match(line):
        return NSYS, None
    if paragraph_start and "," in line and nsys_csv.identify(line) is not None:
        return NSYS, None
    if paragraph_start and ncu_csv_bounds.is_header(line):
        return NCU, None
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
        self.reports: list[str] = []  # what its nsys marker lines name
        self.spans: list[tuple[int, int]] = []
        self.solid = False  # whether a line read is not blank
        self.elided: list[int] = []
        self.ncu_attached = 0  # processes ncu connected to and not yet disconnected from
        self.ncu_done = False  # one disconnected, and none is connected: its run is over
        self.once: tuple[str, ...] = ()  # the lines of a run's end or start it printed (`Section`)

    def note(self, tool: str, line: str) -> None:
        """Note `tool`'s `line` if it marks where a run is: ncu connecting to or disconnecting
        from a process, a line nsys prints once a run."""
        line = line.lstrip(" \t")
        if tool == NSYS:
            self.once += tuple(m for m in _NSYS_ONCE if line.startswith(m))
        elif tool == NCU and line.startswith(_NCU_CONNECTED):
            self.ncu_attached, self.ncu_done = self.ncu_attached + 1, False
        elif tool == NCU and line.startswith(_NCU_DISCONNECTED):
            self.ncu_attached = max(0, self.ncu_attached - 1)
            self.ncu_done = self.ncu_attached == 0
            self.once += () if _NCU_DISCONNECTED in self.once else (_NCU_DISCONNECTED,)

    def add(self, line: int, start: int, end: int, solid: bool) -> None:
        """Read lines `line`.. (0-based), bytes `start:end` of the capture."""
        if not self.spans:
            self.first_line = line + 1
            self.spans.append((start, end))
        elif self.spans[-1][1] == start:
            self.spans[-1] = (self.spans[-1][0], end)
        else:
            self.spans.append((start, end))
        self.solid = self.solid or solid

    def close(self, out: list[Piece]) -> None:
        if self.solid:
            elided = tuple(self.elided)
            spans = tuple(self.spans)
            fields = (self.command, elided, self.marked, tuple(self.reports), self.once)
            out.append(Piece(self.first_line, spans, self.tool, *fields))
        elif self.elided and out:  # an elision right after a section ends that section
            last = out[-1]
            out[-1] = dataclasses.replace(last, elided=(*last.elided, *self.elided))


# Lines looked at in Python (`_lines`): those whose first non-blank byte may start a fence
# (`` ` `` `~`), an elision (`.` `[` `<`), a tool's first line (`=` `P` `R` `G` `C` `[` `*`) or a
# prompt (`$` `%` `(` `[` `-` `b` `P`, or a `user@host` one: every line that holds an `@`).
_LOOK = np.zeros(256, dtype=bool)
_LOOK[list(b"`~.[<=PRGC*$%(-b>")] = True
_FENCE_LEAD = np.zeros(256, dtype=bool)  # a fence's first byte: the line after it is looked at
_FENCE_LEAD[list(b"`~")] = True
_BLANK = np.array([c < 128 and chr(c).isspace() for c in range(256)])  # as `parse.lines`
_BLANK_IN_LINE = _BLANK & (np.arange(256) != 10)
_HOLDING_FIND_MAX = 4096  # more lines that hold the byte: one NumPy pass instead
_SLICE = 1 << 20


def _line_ends(data: bytes) -> np.ndarray | None:
    """The offsets of the `\\n` bytes of `data`, or None when `str.splitlines` ends lines
    elsewhere too: at `\\r` alone, `\\v`, `\\f`, `\\x1c`-`\\x1e`, U+0085, U+2028 or U+2029.

    One pass finds every byte below 32 or from 0xC2 (the first of those characters' UTF-8),
    a slice at a time; what each is, is looked up among the few found.
    """
    codes = np.frombuffer(data, dtype=np.uint8)
    parts = [  # (byte + 62) mod 256 < 94: below 32, or 0xC2 and up
        np.flatnonzero((codes[at : at + _SLICE] + np.uint8(62)) < 94) + at
        for at in range(0, len(codes), _SLICE)
    ]
    found = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    byte = codes[found]
    if np.isin(byte, (11, 12, 28, 29, 30)).any():
        return None
    cr = found[byte == 13]
    if len(cr) and (cr[-1] + 1 == len(codes) or (codes[cr + 1] != 10).any()):
        return None
    last = len(codes) - 1
    c2, e2 = found[byte == 0xC2], found[byte == 0xE2]
    if (codes[np.minimum(c2 + 1, last)] == 0x85).any():
        return None
    second, third = codes[np.minimum(e2 + 1, last)], codes[np.minimum(e2 + 2, last)]
    if ((second == 0x80) & ((third == 0xA8) | (third == 0xA9))).any():
        return None
    return found[byte == 10]


def _lines(data: bytes, ends: np.ndarray) -> tuple[np.ndarray, list[int], np.ndarray, np.ndarray]:
    """(bounds, candidates, blank, solid) for `_walk` of `data`, whose lines end at `ends`."""
    bounds = np.concatenate(([0], ends + 1))
    if bounds[-1] != len(data):
        bounds = np.concatenate((bounds, [len(data)]))  # the last line has no `\\n`
    start = bounds[:-1]
    lead = np.frombuffer(data, dtype=np.uint8)[start]  # the first non-blank byte, below
    todo = np.flatnonzero(_BLANK[lead])
    for at in range(0, lines.LEAD_LIMIT, 8):  # as `lines.split`, for the lines that need it
        window = lines.words(data, start[todo] + at).view(np.uint8).reshape(-1, 8)
        found = ~_BLANK_IN_LINE[window]
        stops = found.any(axis=1)
        k = found.argmax(axis=1)[stops]
        lead[todo[stops]] = window[stops][np.arange(len(k)), k]
        todo = todo[~stops]
        if not len(todo):
            break
    unknown = lead >= 128
    unknown[todo] = True  # blank for more than LEAD_LIMIT bytes
    blank = (lead == 10) & ~unknown
    look = unknown | _LOOK[lead]
    if len(look):
        look[0] = True  # a paragraph's first line (an nsys CSV header may start one)
        look[1:] |= blank[:-1] | unknown[:-1] | _FENCE_LEAD[lead[:-1]]
        look[_holding(data, b"@", bounds)] = True
    solid = np.concatenate(([0], np.cumsum(~blank & ~unknown, dtype=np.int64)))
    return bounds, np.flatnonzero(look).tolist(), blank, solid


def _holding(data: bytes, byte: bytes, bounds: np.ndarray) -> np.ndarray:
    """The lines (0-based) that hold `byte`."""
    hits: list[int] = []
    at = data.find(byte)
    while at >= 0 and len(hits) < _HOLDING_FIND_MAX:
        hits.append(at)
        end = data.find(b"\n", at)
        at = -1 if end < 0 else data.find(byte, end)
    if at >= 0:  # many: all at once
        hits = _offsets(np.frombuffer(data, dtype=np.uint8), byte[0]).tolist()
    return np.searchsorted(bounds, np.array(hits, dtype=np.int64), side="right") - 1


def _offsets(codes: np.ndarray, byte: int) -> np.ndarray:
    """Where `byte` is in `codes`, found a slice at a time as `lines.newlines` finds `\\n`."""
    parts = [
        np.flatnonzero(codes[at : at + _SLICE] == byte) + at for at in range(0, len(codes), _SLICE)
    ]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
