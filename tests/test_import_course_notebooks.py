"""`profgen import` of course notebooks as their students saved them (issue 14): NVIDIA DLI
labs whose cells ran `!nsys profile --stats=true`, their outputs kept in the .ipynb JSON
(tests/data/nsys/README.md says where each file is from). Expected values are read from the
file's own lines, quoted beside each check.
"""

from __future__ import annotations

import json
from pathlib import Path

from clirun import assert_refused, profgen

from profiler import store

NSYS = Path(__file__).parent / "data" / "nsys" / "2020.x"
STREAMING = NSYS / "dli-streaming-nul-printed.ipynb"
NBODY_CPU = NSYS / "dli-nbody-cpu-only-osrt.ipynb"


def test_a_nul_a_program_printed_into_a_cell_is_no_binary_file(tmp_path, capsys):
    """Two cells' programs printed a NUL (line 1372: `"\\u00000\\n"`), kept as JSON's
    `\\u0000`: a terminal shows nothing for it (was: refused, "it holds a NUL byte")."""
    argv = ["import", "--model", "m", "--stage", f"s={STREAMING}", "--out", tmp_path]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    run = store.load_run(Path(result.out.strip().splitlines()[-1]))
    cells = json.loads(STREAMING.read_text(encoding="utf-8"))["cells"]
    runs = sum(
        "Generating CUDA Kernel Statistics..." in "".join(o.get("text", ""))
        for c in cells
        for o in c.get("outputs", [])
    )
    assert runs == 8
    assert list(run.table("stages")["stage"]) == [f"s.{k}" for k in range(1, runs + 1)]
    gpu = run.table("gpu_activities").set_index(["stage", "name"])
    # line 1424, the run after the first NUL:
    # `100.0  174717  5  34943.4  32927  42528  printNumber`
    row = gpu.loc[("s.5", "printNumber")]
    assert row[["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [174_717, 5, 32_927, 42_528]
    # line 1621, after the second: `100.0  192093  5  38418.6  34911  46367  printNumber`
    assert gpu.loc[("s.6", "printNumber"), "total_ns"] == 192_093


def test_a_run_with_only_an_os_runtime_heading_names_that_heading(tmp_path, capsys):
    """nsys 2020-2021 printed `Operating System Runtime API Statistics:` alone for a program
    that ran on the CPU (line 802 of the notebook): the refusal names it (was: "profgen does
    not use ()", and its header was taken for an nvprof summary's lacking `Avg`)."""
    argv = ["import", "--model", "m", "--stage", f"s={NBODY_CPU}", "--out", tmp_path]
    result = profgen(argv, capsys)
    assert "nvprof" not in result.err  # its `Time(%)  Total Time (ns)  Num Calls` is nsys's
    assert_refused(
        result,
        2,
        f"{NBODY_CPU}: expected nsys stats output",
        "its tables are all of nsys reports profgen does not use (Operating System Runtime API "
        "Statistics), none of a CUDA API, kernel or memory-copy report",
    )
