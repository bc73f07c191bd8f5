"""Several ncu runs in one Markdown file, each in a fence of its own: one stage per run, as
nvprof's and nsys's runs are. A real post (tests/data/ncu/README.md); expected values are
read from its text here.
"""

from __future__ import annotations

import re
from pathlib import Path

from clirun import profgen

from profiler import store

NCU = Path(__file__).parent / "data" / "ncu"
RUNS = NCU / "2023.x" / "blog-two-runs-fenced-one-space-indent.md"


def sectors(path: Path) -> list[int]:
    """The `l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum` value of each run, from the text."""
    row = re.compile(r"^ +l1tex__t_sectors_pipe_lsu_mem_global_op_ld\.sum +sector +([0-9,]+)$")
    found = (row.match(line) for line in path.read_text().splitlines())
    return [int(m[1].replace(",", "")) for m in found if m]


def test_two_fenced_runs_are_two_stages(tmp_path, capsys):
    """Each fence holds one run's `==PROF== Disconnected from process` line and its result: the
    runs are stages `s.1` and `s.2` with their own values (both were read as one stage before,
    two launches numbered 0 and the same kernel name, the runs' values side by side)."""
    assert sectors(RUNS) == [2_097_152, 262_144]
    argv = ["import", "--model", "m", "--out", tmp_path, "--stage", f"s={RUNS}"]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    run = store.load_run(result.out.strip().splitlines()[-1])
    assert list(run.table("stages")["stage"]) == ["s.1", "s.2"]
    c = run.table("counters")
    got = c[c["metric"] == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    assert list(got["stage"]) == ["s.1", "s.2"]
    assert list(got["value"]) == sectors(RUNS)
    assert list(got["kernel_id"]) == [0, 0]  # each run's own first launch


def test_a_run_whose_section_line_was_cut_out(tmp_path, capsys):
    """The same post with the first run's `Section:` line deleted (a paste that lost it; found
    by fuzzing): that run's metric table is still read under its kernel line, its counters with
    no section, instead of an IndexError (a run with no `Section:` line at all)."""
    text = RUNS.read_text()
    path = tmp_path / "post.md"
    path.write_text(text.replace("   Section: Command line profiler metrics\n", "", 1))
    argv = ["import", "--model", "m", "--out", tmp_path / "out", "--stage", f"s={path}"]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    run = store.load_run(result.out.strip().splitlines()[-1])
    c = run.table("counters")
    got = c[c["metric"] == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    assert list(got["stage"]) == ["s.1", "s.2"]
    assert list(got["value"]) == sectors(RUNS)
    assert list(got["section"].isna()) == [True, False]
