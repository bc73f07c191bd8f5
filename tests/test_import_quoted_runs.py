"""A README that quotes its own tables again (an excerpt of a table it printed whole above):
the quote is no run of its own. A real file (tests/data/nsys/README.md); expected values are
read from its text here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from test_import_pasted import imported

from profiler import import_runs

NSYS = Path(__file__).parent / "data" / "nsys"
NOTES = NSYS / "2023.x" / "zh-unified-memory-notes-requoted-kern-table.md"
KERNEL = re.compile(r"^ +[0-9.]+ +([0-9,]+) +([0-9]+) .* (inc\(int \*, unsigned long\))$")


def kernel_rows(path: Path) -> list[tuple[int, int, int]]:
    """Each `inc` row of the file's kern tables: its line, total time and instances."""
    out = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if m := KERNEL.match(line):
            out.append((number, int(m[1].replace(",", "")), int(m[2])))
    return out


def test_quoted_kern_tables_are_left_out_with_a_warning(tmp_path, capsys):
    """The notes print a run, quote its kern table again, print a second run, then quote the
    first run's kern table once more beside the second's: two stages (four before), each
    quote named by its line with the run it repeats."""
    rows = kernel_rows(NOTES)
    assert len(rows) == 5  # run 1, quote, run 2, the comparison's two
    first, quote, second, again, _ = rows
    assert quote[1:] == first[1:] == again[1:] != second[1:]
    run, err = imported(NOTES, tmp_path, capsys)
    assert list(run.table("stages")["stage"]) == ["s.1", "s.2"]
    g = run.table("gpu_activities")
    kernels = g[g["kind"] == "kernel"]
    assert list(kernels["stage"]) == ["s.1", "s.2"]
    assert list(kernels["total_ns"]) == [first[1], second[1]]
    assert list(kernels["calls"]) == [first[2], second[2]]
    quoted = [w for w in err.splitlines() if "a quote, not a measurement" in w]
    assert len(quoted) == 2
    assert f"line {quote[0] - 2} " in quoted[0] and "run 2 of 4" in quoted[0]
    assert f"line {again[0] - 3} " in quoted[1] and "run 4 of 4" in quoted[1]
    assert all("repeats run 1's" in w for w in quoted)


def _run(total_ns: list[int]) -> import_runs.Run:
    """A run of one kernel table of `total_ns` rows."""
    names = [f"k{n}" for n in range(len(total_ns))]
    table = pd.DataFrame({"stage": "s", "name": names, "total_ns": total_ns, "time_pct": 1.0})
    return import_runs.Run({"gpu_activities": table}, "t")


def test_a_run_that_repeats_most_rows_is_kept():
    """Only an excerpt whose every row repeats is a quote; one new value keeps a run; so does
    a run of no time, and one that repeats another whole (one output pasted twice)."""
    runs = [_run([5, 7, 9]), _run([5, 7]), _run([5, 8]), _run([]), _run([5, 7, 9])]
    kept, said = import_runs.without_quotes(runs)
    totals = [list(r.tables["gpu_activities"]["total_ns"]) for r in kept]
    assert totals == [[5, 7, 9], [5, 8], [], [5, 7, 9]]
    assert len(said) == 1 and said[0].startswith("run 2 of 5 in the file left out")


RUNS_MD = Path(__file__).parent / "data" / "captures" / "nvprof-runs-in-markdown.md"


def test_the_runs_kept_are_numbered_without_the_quote(tmp_path, capsys):
    """Three nvprof runs of a real README with a quote of the first run's GPU rows pasted
    after it (in a fence of its own): the quote is left out, named by its place in the file
    (run 2 of 4), and the stages' titles and techniques number the three runs kept (the
    techniques said `run 3 of 4` and `run 4 of 4` before)."""
    lines = RUNS_MD.read_text().split("\n")
    head = 12  # run 1 to its first API row
    text = "\n".join(
        [*lines[:head], "~~~", "", "Again:", "~~~", *lines[5:9], "~~~", "", *lines[30:80]]
    )
    path = tmp_path / "notes.md"
    path.write_text(text)
    run, err = imported(path, tmp_path, capsys)
    stages = run.table("stages")
    assert list(stages["stage"]) == ["s.1", "s.2", "s.3"]
    assert [t.split(":")[0] for t in stages["title"]] == [f"s, run {n} of 3" for n in (1, 2, 3)]
    assert [t.split(", its")[0] for t in stages["technique"]] == [
        f"imported from nvprof output: run {n} of 3" for n in (1, 2, 3)
    ]
    quoted = [w for w in err.splitlines() if "a quote, not a measurement" in w]
    assert len(quoted) == 1 and "run 2 of 4 in the file left out" in quoted[0]
    assert "(imported from nvprof output: its tables from line 18" in quoted[0]
