"""nvprof output pasted in layouts nvprof does not print (round g of issue 14's real files;
tests/data/nvprof/README.md cites them). Expected values are read from the files' text here.
"""

from __future__ import annotations

from pathlib import Path

from test_import_pasted import imported

NVPROF = Path(__file__).parent / "data" / "nvprof"
SHIFTED = NVPROF / "8.x" / "streams-m2050-gpu-trace-in-python-comments-cut.py"


def _trace_rows(path: Path) -> list[list[str]]:
    """The gpu trace rows of the `#` comment block, split at blanks (a row's Name is last)."""
    found = [line[1:].split() for line in path.read_text().splitlines() if line.startswith("#")]
    return [cells for cells in found if cells and cells[0][0].isdigit()]


def test_gpu_trace_whose_header_is_not_over_its_rows(tmp_path, capsys):
    """A script's comments keep a gpu trace whose header line sits three columns left of its
    rows (`#    Start` over `#    254.96ms`): read with the header moved onto the rows (it was
    refused at the Name column as re-spaced)."""
    rows = _trace_rows(SHIFTED)
    assert len(rows) == 20
    run, _ = imported(SHIFTED, tmp_path, capsys)
    t = run.table("gpu_trace")
    assert len(t) == len(rows)
    assert list(t["stream"]) == [int(r[r.index("(0)") + 2]) for r in rows]  # device, context
    kernels = t[t["kind"] == "kernel"]
    launches = [r for r in rows if r[-1].startswith("[1")]
    assert list(kernels["correlation_id"]) == [int(r[-1][1:-1]) for r in launches]
    assert list(kernels["duration_ns"]) == [round(float(r[1][:-2]) * 1e6) for r in launches]
    assert set(kernels["grid_x"]) == {49152} and set(kernels["registers"]) == {13}
    assert list(t["start_ns"]) == [round(float(r[0][:-2]) * 1e6) for r in rows]
