"""`profgen import` of nsys captures whose runs the format tells apart, found by the ninth round
of public pastes and not read whole then (issue 14; tests/data/nsys/README.md says where each
file is from).

Expected values are read from the file's own text here, not from profgen.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_import_pasted import imported

from profiler.parse import capture, fenced_reports, nsys_capture, reader_notes

NSYS = Path(__file__).parent / "data" / "nsys"
API = "nsys stats a.nsys-rep --report cuda_api_sum"
STATS = re.compile(r"> (nsys stats (\S+)\.nsys-rep --report (\S+))$")


def _int(cell: str) -> int:
    return int(cell.replace(",", ""))


def _commands(lines: list[str]) -> list[tuple[int, str, str, str]]:
    """(line index, command, report file stem, report) of every `> nsys stats` line."""
    return [(n, m[1], m[2], m[3]) for n, line in enumerate(lines) if (m := STATS.fullmatch(line))]


def _rows_below(lines: list[str], at: int) -> list[list[str]]:
    """The rows (8 numbers, then the name) of the first table below line index `at`."""
    rule = next(n for n in range(at, len(lines)) if lines[n].strip().startswith("--------"))
    rows = []
    for line in lines[rule + 1 :]:
        if not line.strip():
            break
        rows.append(line.split(None, 8))
    return rows


def test_nsys_stats_commands_after_a_prompt_are_one_run_per_report_file(tmp_path, capsys):
    """Python docstrings hold eight `> nsys stats X.nsys-rep --report R` outputs, two reports of
    each of four profiles: only the first profile was read (the rest left out as "another
    run?"); `> nsys ...` is a prompt, and the commands on one report file are one run each."""
    path = NSYS / "2025.x" / "zh-bench-docstrings-nsys-stats-per-report-four-modes-cut.py"
    lines = path.read_text(encoding="utf-8").split("\n")
    commands = _commands(lines)
    profiles = list(dict.fromkeys(stem for _, _, stem, _ in commands))
    assert len(commands) == 8 and len(profiles) == 4
    run, err = imported(path, tmp_path, capsys)
    assert "left out" not in err
    stages = run.table("stages").set_index("stage")
    names = [f"s.{n}" for n in range(1, 5)]
    assert list(stages.index) == names
    activities, api = run.table("gpu_activities"), run.table("api_calls")
    for stage, stem in zip(names, profiles, strict=True):
        first = next(command for _, command, s, _ in commands if s == stem)
        assert stages.loc[stage, "title"].endswith(first)
        for at, _, s, report in commands:
            if s != stem:
                continue
            rows = _rows_below(lines, at)
            table = activities if report == "cuda_gpu_kern_sum" else api
            got = table[table["stage"] == stage].set_index("name")
            assert len(got) == len(rows) > 0
            for row in rows:
                assert got.loc[row[8], "total_ns"] == _int(row[1])
                assert got.loc[row[8], "calls"] == _int(row[2])
                assert got.loc[row[8], "max_ns"] == _int(row[6])


@pytest.mark.parametrize(
    ("line", "command"),
    [
        (f"> {API}", API),
        ("    > ncu --set full ./app", "ncu --set full ./app"),
        ("> sudo /usr/local/cuda/bin/nvprof ./a.out", "sudo /usr/local/cuda/bin/nvprof ./a.out"),
        ("> nsys is what we used here", None),  # a Markdown quote
        ("> ncu shows the kernel is memory bound", None),
        ("> Device 0: NVIDIA A100", None),  # a CUDA sample's output
    ],
)
def test_a_gt_prompt_is_one_only_before_a_profilers_run(line, command):
    sections = capture.split(f"text\n{line}\nmore\n")
    assert [s.command for s in sections if s.command] == ([command] if command else [])


@pytest.mark.parametrize(
    ("above", "below", "joined"),
    [
        (API, "nsys stats ./a.nsys-rep -r cuda_gpu_kern_sum", True),
        (API, "nsys stats b.nsys-rep --report cuda_gpu_kern_sum", False),
        (API, "nsys stats a.nsys-rep --report=cuda_api_sum", False),  # named again
        ("nsys stats a.nsys-rep", API, False),  # every default report
        ("nsys profile -o a ./app", API, True),
        ("nsys profile -o b ./app", API, False),
        ("nsys profile --stats=true ./app", "nsys stats -r gputrace report1.qdrep", True),
        ("nsys profile --stats=true ./app", "nsys stats -r gputrace run.qdrep", False),
    ],
)
def test_nsys_stats_commands_on_one_report_file_are_one_profile(above, below, joined):
    top = capture.Section(1, "", capture.NSYS, above, marked=True)
    under = capture.Section(9, "", capture.NSYS, below, marked=True)
    assert fenced_reports.continues(top, under) is joined


def _lines_from(path: Path, first: str, count: int) -> str:
    """`count` lines of `path` from its line that starts (stripped) with `first`."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if line.strip().startswith(first))
    return "".join(lines[at : at + count])


def test_a_push_pop_table_under_nvtx_sum_is_said_to_repeat_its_ranges(tmp_path):
    """One run's `nsys stats --report nvtx_sum,nvtx_pushpop_sum` prints each push/pop range in
    both tables; profgen reads nvtx_sum's, and the warning named the push/pop table "nvtx_sum"
    and asked "another run?". No real file holds both, so this capture is made of two real
    files' tables: the nvtx_sum banner and table of the blog's run (2025.x) and the
    nvtx_pushpop_sum banner and table of the bench walkthrough (2023.x)."""
    nvtx = _lines_from(
        NSYS / "2025.x" / "blog-post04-stats-q-fence-per-report-trimmed-trace-then-exercise-cut.md",
        "** NVTX Range Summary (nvtx_sum):",
        7,
    )
    pushpop = _lines_from(
        NSYS / "2023.x" / "bench-walkthrough-nvtx-pushpop-sum-two-runs-cut.md",
        "** NVTX Push/Pop Range Summary (nvtx_pushpop_sum):",
        5,
    )
    path = tmp_path / "both.txt"
    path.write_text(f"{nvtx}\n{pushpop}", encoding="utf-8")
    pushpop_line = nvtx.count("\n") + 1 + 3  # its banner, a blank line, then its header
    with pytest.warns(reader_notes.ReadNote) as said:
        ranges = nsys_capture.read_stats_stdout(path, "s")["ranges"]
    names = [row.split()[-1].removeprefix(":") for row in nvtx.splitlines()[4:]]  # (no domain)
    assert list(ranges["name"]) == names
    assert [str(w.message) for w in said] == [
        f"line {pushpop_line}: the nvtx_pushpop_sum table left out: it repeats the push/pop "
        "ranges of the nvtx_sum table at line 3, which profgen reads"
    ]
