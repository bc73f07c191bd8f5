"""The fast cut of terminal captures gives what the line-by-line cut gave (issue 14's speed
target).

`capture.cut` finds the lines with NumPy and looks in Python only at the lines that can start,
end or mark a section. It is held here to the line-by-line `split` it replaced (copied below as
it was) on every text file under tests/data and /work/shared/fixtures, and on mutated copies of
the captures and tool outputs among them: lines dropped and doubled, re-indented past the 64
bytes looked at, led by a non-ASCII blank, prompts, fences, elision marks, `user@host` lines,
tool banners and blank lines put in, CRLF and the other line ends `str.splitlines` knows, cut
short. The NumPy slices and the number of `@` lines found one by one are made tiny so that every
boundary falls inside the short fixtures.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from profiler import import_capture
from profiler.errors import ParseError
from profiler.parse import capture, csvtext, detect, fenced_reports, lines, nsys_stdout

DATA = Path(__file__).parent / "data"
SHARED = Path("/work/shared/fixtures")
TEXT_SUFFIXES = (".csv", ".log", ".txt", ".md", ".output")
FILES = sorted(
    p
    for root in (DATA, SHARED)
    if root.is_dir()
    for p in root.rglob("*")
    if p.suffix in TEXT_SUFFIXES and p.is_file() and p.stat().st_size < 2_000_000
)
# the captures and tool outputs whose mutants are tried (the CSV tables mutate alike: a few;
# the largest files are tried whole only)
SMALL = [p for p in FILES if p.stat().st_size < 150_000]
MUTATED = [p for p in SMALL if p.suffix != ".csv"] + [p for p in SMALL if p.suffix == ".csv"][::12]


# --- the line-by-line cut, as it was before it was sped up -------------------------------------


@dataclasses.dataclass
class _RefOpen:
    first_line: int
    command: str | None = None
    marked: bool = False
    tool: str | None = None
    run: str | None = None

    def __post_init__(self) -> None:
        self.lines: list[str] = []
        self.elided: list[int] = []
        self.reports: list[str] = []
        self.ncu_attached = 0
        self.ncu_done = False
        self.once: tuple[str, ...] = ()

    note = capture._Open.note

    def close(self, out: list[capture.Section]) -> None:
        text = "".join(self.lines)
        if text.strip():
            fields = (self.command, tuple(self.elided), self.marked, tuple(self.reports))
            fields += (self.once,)
            out.append(capture.Section(self.first_line, text, self.tool, *fields))
        elif self.elided and out:
            last = out[-1]
            out[-1] = dataclasses.replace(last, elided=(*last.elided, *self.elided))


def reference_split(text: str) -> list[capture.Section]:
    out: list[capture.Section] = []
    cur = _RefOpen(first_line=1)
    previous_blank = True
    every = text.splitlines(keepends=True)
    for number, line in enumerate(every, start=1):
        stripped = line.rstrip("\r\n")
        prompt = capture._prompt(stripped)
        if prompt is not None or capture._FENCE.match(stripped):
            cur.close(out)
            if prompt is not None:  # a command continued with `\` (the lines stay rows)
                typed = lambda j: every[j].rstrip("\r\n")  # noqa: E731
                prompt = capture._continued(prompt, number - 1, typed, len(every))
            cur = _RefOpen(first_line=number + 1, command=prompt, marked=True)
            cur.tool = None if prompt is None else capture.profiler_run(prompt)
        elif (
            len(stripped) <= capture._ELISION_MAX
            and capture._ELISION.fullmatch(stripped)
            and not capture.marker_tail(every[number - 2] if number > 1 else "", stripped)
        ):  # (a wrapped nsys marker's `...` since `marker_tail`: a row)
            cur.elided.append(number)
        else:
            tool, run = capture._signature(stripped, previous_blank)
            named = nsys_stdout.named(stripped.lstrip(" \t")) if tool == capture.NSYS else None
            another = tool is not None and capture._another(cur, tool, run, stripped, named)
            if another and cur.tool is not None:
                cur.close(out)
                cur = _RefOpen(first_line=number)
            elif tool is not None and cur.tool is None and cur.command is not None:
                if number - cur.first_line > capture.PROMPT_REACH:  # not the prompt's output
                    cur.close(out)
                    cur = _RefOpen(first_line=number)
            if tool is not None and (cur.tool is None or cur.run is None):
                cur.tool, cur.run = tool, run
            if named:
                cur.reports.append(named)
            if tool is not None:
                cur.note(tool, stripped)
            if not cur.lines:
                cur.first_line = number
            cur.lines.append(line)
        fence = prompt is None and capture._FENCE.match(stripped) is not None
        previous_blank = not stripped or stripped.isspace() or fence  # (since the fence rule)
    cur.close(out)
    return out


def reference_is_capture(head: str) -> bool:
    printed = [s for s in reference_split(head) if s.tool is not None]
    typed = [s for s in printed if s.command is not None and s.tool in capture._RUNS_UNMARKED]
    named = [r for s in printed if s.tool == capture.NSYS for r in set(s.reports)]
    several = len({s.tool for s in printed}) >= 2 or len(typed) >= 2
    restarts = capture.restarts(reference_split(head))
    return several or len(named) > len(set(named)) or any(s.elided for s in printed) or restarts


# --- mutants -------------------------------------------------------------------------------------

EDITS = [
    lambda s: None,
    lambda s: f"{s}\n{s}",
    lambda s: " " * 80 + s,
    lambda s: "\u00a0" + s,
    lambda s: "\u3000\u3000",
    lambda s: s.replace(" ", "\t", 1),
    lambda s: s.rstrip()[: len(s.rstrip()) // 2],
    lambda s: "",
    lambda s: "   \t ",
    lambda s: " " * 70,
    lambda s: f"$ nvprof --print-gpu-trace ./a\n{s}",
    lambda s: f"user@host:~/x$ nsys stats r.nsys-rep\n{s}",
    lambda s: f"(base) [me@box dir]$ ncu ./b\n{s}",
    lambda s: f"{s} # user@host> ./run",
    lambda s: f"    % {s}",
    lambda s: f"```\n{s}\n```",
    lambda s: f"   ~~~text\n{s}",
    lambda s: f"...\n{s}",
    lambda s: f"  [... 500 rows ...]\n{s}",
    lambda s: f"{s}\n…",
    lambda s: f"==4242== Profiling application: ./x\n{s}",
    lambda s: f"==PROF== Connected to process 1\n{s}",
    lambda s: f"Processing [r.sqlite] with [/x/cuda_gpu_trace.py]...\n{s}",
    lambda s: (
        "\n Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),Name\n" + s
    ),
    lambda s: f"{s}\x0bnext",
    lambda s: f"{s}\x0c",
    lambda s: f"{s}\x1cx",
    lambda s: f"{s}\rx",
    lambda s: f"{s}\x85y",
    lambda s: f"{s}\u2028y",
    lambda s: f"{s}\r",
    lambda s: f"\x1f{s}",
    lambda s: f"-bash-4.2$ {s}",
    lambda s: f"PS C:\\work> nsys profile {s}",
    lambda s: f"bash-5.1# {s}",
    lambda s: "é" + s,
]


def mutants(text: str, seed: int, count: int) -> list[str]:
    """`text`, CRLF, cut short, and copies of it with one or two lines changed."""
    rng = random.Random(seed)
    rows = text.split("\n")
    out = [text.replace("\n", "\r\n"), text[: len(text) // 2], text[: len(text) * 3 // 4]]
    for _ in range(count):
        copy = list(rows)
        for _ in range(rng.choice((1, 1, 2))):
            i = rng.randrange(len(copy))
            new = rng.choice(EDITS)(copy[i])
            copy[i : i + 1] = [] if new is None else [new]
        out.append("\n".join(copy))
    return out


def check(text: str) -> None:
    want = reference_split(text)
    assert capture.split(text) == want
    data = text.encode("utf-8", "surrogatepass")
    pieces = capture.cut(data)
    assert [b"".join(data[a:b] for a, b in p.spans) for p in pieces] == [
        s.text.encode("utf-8", "surrogatepass") for s in want
    ]
    assert [p.file_line(3) for p in pieces] == [s.file_line(3) for s in want]
    assert capture.is_capture(text) == reference_is_capture(text)


@pytest.fixture(autouse=True)
def tiny_slices(monkeypatch):
    monkeypatch.setattr(lines, "_SLICE", 61)
    monkeypatch.setattr(capture, "_SLICE", 37)
    monkeypatch.setattr(capture, "_HOLDING_FIND_MAX", 3)


def test_there_are_fixtures_and_most_take_the_fast_path():
    assert len(FILES) > 150 and len(MUTATED) > 80
    fast = [p for p in FILES if capture._line_ends(p.read_bytes()) is not None]
    assert len(fast) > len(FILES) * 0.9


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(p.parents[2])))
def test_fast_cut_is_the_line_by_line_cut_on_real_files(path):
    check(path.read_text(encoding="utf-8", errors="surrogateescape"))


@pytest.mark.parametrize("path", MUTATED, ids=lambda p: str(p.relative_to(p.parents[2])))
def test_fast_cut_is_the_line_by_line_cut_on_mutated_files(path):
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    for variant in mutants(text, seed=len(text), count=12):
        check(variant)


@pytest.mark.parametrize("seed", range(40))
def test_fast_cut_on_made_up_captures(seed):
    """Short texts of the lines that matter, in random order and spacing."""
    rng = random.Random(seed)
    pieces = ["", " ", "x,y", "0.5s 1ms  - kernel<int>(int) [3]", "a@b", "\u00a0"]
    rows = [rng.choice(EDITS)(rng.choice(pieces)) for _ in range(rng.randrange(1, 30))]
    for sep in ("\n", "\r\n"):
        text = sep.join(r for r in rows if r is not None)
        check(text)
        check(text + sep)


def test_the_walk_looks_at_few_lines_of_a_long_trace():
    """A capture's million-row trace is read, not walked: only its first lines are looked at."""
    head = "$ nvprof --print-gpu-trace ./a\n==1== Profiling result:\n   Start  Duration  Name\n"
    text = head + "".join(f"{i}.5ms  2us  kernel<int>(int*) [{i}]\n" for i in range(5000))
    looked: list[int] = []
    real = capture._prompt
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(capture, "_prompt", lambda line: looked.append(1) or real(line))
        (section,) = capture.split(text)
    assert section.tool == capture.NVPROF and section.text == text.split("\n", 1)[1]
    assert len(looked) < 10


# --- the hand-off: what the importer writes for each section, and how it reads the capture ------

REAL_CAPTURES = [
    p
    for p in MUTATED
    if p.suffix != ".csv" and reference_is_capture(p.read_text(encoding="utf-8", errors="replace"))
]
# captures made of real outputs, as a user pastes them one after another: (prompt, file) pairs
MADE_CAPTURES = {
    "nvprof-trace-then-nsys-stats.md": [
        ("$ nvprof --print-gpu-trace ./cheby", "nvprof/9.x/cheby-text-gpu-trace.txt"),
        ("user@box:~/d$ nsys stats r.nsys-rep", "nsys/2025.3.1/demo/nsys-stats-stdout.txt"),
    ],
    "nvprof-summary-ncu-nsys.log": [
        ("% nvprof ./cuda-stream", "nvprof/9.x/cuda-stream-summary.txt"),
        ("(venv) [me@host x]$ ncu ./a", "ncu/2023.x/ppc-max-flops.txt"),
        ("", "nsys/2023.2.3/derivative-stats.txt"),
    ],
    "two-nvprof-runs.txt": [
        ("$ nvprof ./lbp", "nvprof/8.x/lbp-text-metrics.txt"),
        ("$ nvprof --print-gpu-trace ./b", "nvprof/9.x/bfs-text-gpu-trace-unified-memory-only.txt"),
    ],
}


def made_capture(name: str, made: dict[str, list[tuple[str, str]]] = MADE_CAPTURES) -> str:
    """Capture `name` of `made`: each prompt line, then its file's text."""
    return "".join(f"{prompt}\n{(DATA / file).read_text()}\n" for prompt, file in made[name])


def reference_joined(text: str, sections: list[capture.Section]) -> list[capture.Section]:
    """`sections` (`reference_split` of `text`) with each fenced block of nsys output that
    continues the run above it joined to it line by line (`fenced_reports` says which do): the
    lines between them, but elision marks, go with them."""
    rows = text.splitlines(keepends=True)
    out: list[capture.Section] = []
    for section in sections:
        above = fenced_reports.nsys_above(out)
        between = out[above + 1 :] if above is not None else []
        if (
            above is None
            or not fenced_reports.continues(out[above], section)
            or not fenced_reports.adjacent(above, len(out), section)
            or any(fenced_reports.holds_table(s.text) for s in between)
        ):
            out.append(section)
            continue
        first = out[above]
        elided = {*first.elided, *(n for s in out[above + 1 :] for n in s.elided), *section.elided}
        last = first.file_line(len(first.text.splitlines()))
        gap = [rows[n - 1] for n in range(last + 1, section.first_line) if n not in elided]
        joined = dataclasses.replace(
            first,
            text=first.text + "".join(gap) + section.text,
            elided=tuple(sorted(elided)),
            reports=(*first.reports, *section.reports),
        )
        out[above:] = [joined]
    return out


def held_sections(path: Path, tmp: Path) -> list[bytes]:
    """The bytes of each section `import_capture.read_capture` holds (and hands to `detect`,
    then to a reader, which here reads nothing)."""
    seen: list[bytes] = []
    real = detect.detect

    def detecting(held: csvtext.Held) -> str:
        seen.append(bytes(held.view()))
        return real(held)

    def read(kind: str, file: Path, stage: str, raw: Path):  # type: ignore[no-untyped-def]
        raise ParseError(file, "x", "not read here")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(detect, "detect", detecting)
        with pytest.raises(ParseError):
            import_capture.read_capture(path, "s", tmp, read)
    return seen


@pytest.mark.parametrize("name", [p.name for p in REAL_CAPTURES] + sorted(MADE_CAPTURES))
def test_the_importer_holds_each_section_as_the_line_by_line_cut_gave_it(name, tmp_path):
    assert len(REAL_CAPTURES) >= 3
    real = [p for p in REAL_CAPTURES if p.name == name]
    text = real[0].read_text(encoding="utf-8") if real else made_capture(name)
    assert reference_is_capture(text)
    suffix = Path(name).suffix
    for number, variant in enumerate([text, *mutants(text, seed=7, count=6)]):
        file = tmp_path / f"v{number}{suffix}"
        file.write_text(variant, encoding="utf-8", newline="")
        want = [s.text.encode("utf-8") for s in reference_joined(variant, reference_split(variant))]
        assert held_sections(file, tmp_path) == want


BAD = {
    "empty.txt": b"",
    "blank.txt": b" \n\t\n",
    "nul.txt": b"==1== x\n\x00\n",
    "utf16.txt": "==1== x\n".encode("utf-16"),
    "latin1.txt": b"==1== caf\xe9\n",
    "bom.txt": b"\xef\xbb\xbf==1== x\n$ nvprof ./a\n",
    "cut-utf8.txt": "==1== é".encode()[:-1],
    "ascii.txt": b"$ nvprof ./a\n==1== x\r\n",
    "utf8.txt": "$ nvprof ./é\n==1== x\u2028y\n".encode(),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_read_utf8_is_read_text_encoded(name, tmp_path):
    path = tmp_path / name
    path.write_bytes(BAD[name])
    try:
        want: bytes | str = csvtext.read_text(path, "x").encode("utf-8")
    except ParseError as exc:
        want = str(exc)
    try:
        got: bytes | str = csvtext.read_utf8(path, "x")
    except ParseError as exc:
        got = str(exc)
    assert got == want
