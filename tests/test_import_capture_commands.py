"""`profgen import` of a capture whose runs' commands are continued over several lines (`ncu
--kernel-name k \\` and `    --launch-count 1 \\` below it): each run is titled with the whole
command. The real file is in tests/data/ncu/2024.x (its README says where it comes from)."""

from __future__ import annotations

import re
from pathlib import Path

from test_import_pasted import imported

SGEMM = (
    Path(__file__).parent
    / "data"
    / "ncu"
    / "2024.x"
    / "colab-sgemm-three-runs-continued-commands.md"
)


def typed_commands(path: Path) -> list[str]:
    """Each `$ ncu ...` command of the file with its continuation lines joined, as typed."""
    commands, lines = [], path.read_text().splitlines()
    for at, line in enumerate(lines):
        if line.startswith("$ ncu"):
            parts, j = [line[2:]], at + 1
            while parts[-1].endswith("\\"):
                parts[-1] = parts[-1][:-1].strip()
                parts.append(lines[j].strip())
                j += 1
            commands.append(" ".join(parts))
    return commands


def test_runs_are_titled_with_their_whole_continued_command(tmp_path, capsys):
    run, _ = imported(SGEMM, tmp_path, capsys)
    titles = run.table("stages")["title"].tolist()
    commands = typed_commands(SGEMM)
    assert len(commands) == 2 and all("\\" not in c for c in commands)
    assert commands[0].endswith("--section MemoryWorkloadAnalysis ./sgemm/build/sgemm 22")
    assert titles == ["s, run 1 of 3: Naive kernel"] + [
        f"s, run {n} of 3: {command}" for n, command in enumerate(commands, 2)
    ]


def test_each_runs_duration_is_read_in_its_own_unit(tmp_path, capsys):
    """`Duration  s  6.07`, then `ms  472.84` and `ms  460.39`."""
    run, _ = imported(SGEMM, tmp_path, capsys)
    text = SGEMM.read_text()
    scale = {"s": 10**9, "ms": 10**6, "us": 10**3}
    found = re.findall(r"^ +Duration +(s|ms|us) +([0-9.]+)$", text, re.MULTILINE)
    expected = [round(float(value) * scale[unit]) for unit, value in found]
    assert expected == [6_070_000_000, 472_840_000, 460_390_000]
    assert run.table("metrics")["duration_ns"].tolist() == expected
