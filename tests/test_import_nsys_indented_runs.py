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
