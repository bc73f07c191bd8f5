"""`profgen import` of nsys output found in an eighth round of public pastes (issue 14;
tests/data/nsys/README.md says where each file is from).

Expected values are read from the file's own text here, not from profgen.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clirun import profgen

from profiler import store

NSYS = Path(__file__).parent / "data" / "nsys"


def _import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: Path
) -> tuple[store.Run, str]:
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", out], capsys)
    assert result.code == 0, result.err
    return store.load_run(Path(result.out.strip().splitlines()[-1])), result.err


def _int(cell: str) -> int:
    return int(cell.replace(",", ""))


def _range_rows(lines: list[str]) -> dict[str, list[str]]:
    """Rows of a range summary (nine cells, the last `:name`): the name without its `:` -> the
    cells."""
    rows = [t.split() for t in lines]
    return {
        r[-1].lstrip(":"): r
        for r in rows
        if len(r) == 9 and r[0][0].isdigit() and r[-1].startswith(":")
    }


def test_nvtx_pushpop_sum_tables_are_read_as_ranges_one_run_each(tmp_path, capsys):
    """`nsys stats --report nvtx_pushpop_sum` prints nvtx_sum's layout less `Style` (was: the
    table under its banner passed over without a word, the second, under no banner, read as
    the one run's); each fence's table is a run, its ranges as written."""
    path = NSYS / "2023.x" / "bench-walkthrough-nvtx-pushpop-sum-two-runs-cut.md"
    rows = _range_rows(path.read_text(encoding="utf-8").split("\n"))
    run, _ = _import(tmp_path, capsys, path)
    ranges = run.table("ranges")
    assert sorted(ranges["stage"].unique()) == ["s.1", "s.2"]
    first = ranges[ranges["stage"] == "s.1"].set_index("name")
    assert list(first.index) == ["NvtxAnnotation.G1"]
    assert first.loc["NvtxAnnotation.G1", "total_ns"] == _int(rows["NvtxAnnotation.G1"][1])
    second = ranges[ranges["stage"] == "s.2"].set_index("name")
    assert sorted(second.index) == sorted(
        ["NvtxAnnotation.G1Phases", "copy_in", "copy_out", "kernel"]
    )
    for name in ("copy_in", "copy_out", "kernel"):
        assert second.loc[name, "total_ns"] == _int(rows[name][1])
        assert second.loc[name, "calls"] == _int(rows[name][2])
        assert second.loc[name, "min_ns"] == _int(rows[name][5])
