"""nsys runs whose output a notebook exported to Markdown indents by four blanks: each run's
`[6/8] Executing 'cuda_gpu_kern_sum' stats report` marker, indented, starts another run, as it
does flush left. A real notebook (tests/data/nsys/README.md); expected values are read from
its text here.
"""

from __future__ import annotations

import re
from pathlib import Path

from clirun import profgen

from profiler import store

NSYS = Path(__file__).parent / "data" / "nsys"
NOTEBOOK = NSYS / "2025.x" / "notebook-four-runs-grep-indented.md"


def kernel_totals(path: Path) -> list[int]:
    """The Total Time (ns) of the row under each `cuda_gpu_kern_sum` header, from the text."""
    lines = path.read_text().splitlines()
    marks = [k for k, line in enumerate(lines) if "Executing 'cuda_gpu_kern_sum'" in line]
    row = re.compile(r"^ +100\.0 +([0-9]+) +1 ")
    return [int(next(m for m in map(row.match, lines[k:]) if m)[1]) for k in marks]


def test_four_indented_runs_are_four_stages(tmp_path, capsys):
    """Four runs (one per `nsys profile` of the add program's versions): stages s.1 to s.4, each
    with its kernel's total (the last three were left out before, as tables of a report read
    already, and the whole notebook was one stage)."""
    totals = kernel_totals(NOTEBOOK)
    assert totals == [1_558_137, 89_023_173_952, 3_280_318_336, 1_539_004]
    argv = ["import", "--model", "m", "--out", tmp_path, "--stage", f"s={NOTEBOOK}"]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    run = store.load_run(result.out.strip().splitlines()[-1])
    assert list(run.table("stages")["stage"]) == ["s.1", "s.2", "s.3", "s.4"]
    gpu = run.table("gpu_activities")
    kernels = gpu[gpu["kind"] == "kernel"]
    assert list(kernels["stage"]) == ["s.1", "s.2", "s.3", "s.4"]
    assert list(kernels["total_ns"]) == totals
    assert "left out" not in result.err


def _indented_table(lines: list[str], heading: str) -> list[list[str]]:
    """The rows (words) of the table under each indented `heading` line, from the text."""
    out = []
    for k, line in enumerate(lines):
        if line.strip() == heading:
            rows = []
            for row in lines[k + 4 :]:  # heading, blank, header, rule
                if not row.strip():
                    break
                rows.append(row.split())
            out.append(rows)
    return out


def test_an_indented_os_runtime_heading_skips_its_table(tmp_path, capsys):
    """A 2021 `--stats=true` run exported from a notebook, every line indented by four: the
    `    Operating System Runtime API Statistics:` table is that report's (skipped), not a second
    CUDA API table (was: left out as one, "another run? give it a file of its own", for each
    run; in a paste with no CUDA API table it would have been read as the CUDA API calls)."""
    path = NSYS / "2020.x" / "dli-vector-add-nbconvert-indented-runs-cut.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    api = _indented_table(lines, "CUDA API Statistics:")
    osrt = _indented_table(lines, "Operating System Runtime API Statistics:")
    assert len(api) == len(osrt) == 2
    argv = ["import", "--model", "m", "--out", tmp_path, "--stage", f"s={path}"]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    assert "left out" not in result.err
    run = store.load_run(result.out.strip().splitlines()[-1])
    calls = run.table("api_calls")
    for stage, rows in zip(("s.1", "s.2"), api, strict=True):
        got = calls[calls["stage"] == stage].set_index("name")
        assert sorted(got.index) == sorted(row[-1] for row in rows)
        for row in rows:
            assert got.loc[row[-1], "total_ns"] == int(row[1])
            assert got.loc[row[-1], "calls"] == int(row[2])
    assert not set(calls["name"]) & {row[-1] for rows in osrt for row in rows}


def test_an_rst_code_block_run_keeps_its_ranges_and_no_os_calls_as_api_calls(tmp_path, capsys):
    """A `--stats=true` run in a reStructuredText code block, indented by three: the NVTX ranges
    are read with their values, and the `Operating System Runtime API Statistics:` table (no CUDA
    trace: `SKIPPED`) is not read as CUDA API calls (was: its 11 OS calls, `select` first,
    imported as the run's CUDA API calls)."""
    path = NSYS / "2022.x" / "ncsa-delta-nvtx-osrt-rst-indented-cut.rst"
    lines = path.read_text(encoding="utf-8").split("\n")
    rows = _indented_table(lines, "NVTX Range Statistics:")[0]
    argv = ["import", "--model", "m", "--out", tmp_path, "--stage", f"s={path}"]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    run = store.load_run(result.out.strip().splitlines()[-1])
    ranges = run.table("ranges").set_index("name")
    assert sorted(ranges.index) == sorted(row[9] for row in rows)
    for row in rows:
        assert ranges.loc[row[9], "total_ns"] == int(row[1].replace(",", ""))
        assert ranges.loc[row[9], "calls"] == int(row[2])
        assert ranges.loc[row[9], "max_ns"] == int(row[6].replace(",", ""))
    assert run.table("api_calls").empty
