"""`profgen import` of nvprof `--metrics` tables pasted into notes: four tables without their
`==PID==` lines, one header run on into the `Device ... Kernel:` line below it. The real file is
in tests/data/nvprof/9.x (its README says where it comes from)."""

from __future__ import annotations

from pathlib import Path

from test_import_pasted import imported

AMATH = (
    Path(__file__).parent
    / "data"
    / "nvprof"
    / "9.x"
    / "amath583-metrics-header-run-on-device-line.rst"
)


def occupancy_rows(path: Path) -> list[tuple[int, float, float, float]]:
    """Each `achieved_occupancy` row's Invocations, Min, Max and Avg, from the file text."""
    found = []
    for line in path.read_text().splitlines():
        cells = line.split()
        if len(cells) > 2 and cells[1] == "achieved_occupancy":
            found.append((int(cells[0]), *(float(c) for c in cells[-3:])))
    return found


def test_a_header_run_on_into_its_kernel_line_reads_that_kernels_rows(tmp_path, capsys):
    """The second table's header ends `AvgDevice "Tesla K80 (0)"    Kernel: madd(...)`: its
    rows are madd's (they were refused as rows with no `Kernel:` line above them), and each
    table, pasted without `Profiling result:` lines, is a run of its own."""
    run, _ = imported(AMATH, tmp_path, capsys)
    c = run.table("counters")
    occupancy = c[c["metric"] == "achieved_occupancy"]
    got = list(occupancy[["invocations", "min", "max", "value"]].itertuples(index=False))
    assert [tuple(r) for r in got] == occupancy_rows(AMATH)
    assert occupancy["stage"].tolist() == ["s.1", "s.2", "s.3", "s.4", "s.4", "s.4"]
    second = occupancy[occupancy["stage"] == "s.2"].iloc[0]
    assert second["name"] == "madd(int, float, float*, float*)"
    assert (second["min"], second["max"], second["value"]) == (0.087804, 0.124812, 0.118601)
    assert len(c[c["stage"] == "s.2"]) == 9  # the table's nine metric rows


FLOYD = AMATH.parent / "floyd-gtx1080-six-metric-runs-rules-cut.md"


def metric_rows(path: Path) -> list[tuple[str, int, str, float, float, float]]:
    """Each metric row of the file: its metric, Invocations, unit (what follows the number:
    `%`, `GB/s`, none) and Min, Max, Avg, read from the text."""
    found = []
    for line in path.read_text().splitlines():
        cells = line.split()
        if len(cells) > 5 and cells[0].isdigit() and "_" in cells[1]:
            *_, low, high, avg = cells
            unit = avg.lstrip("0123456789.")
            numbers = [float(c.removesuffix(unit)) for c in (low, high, avg)]
            found.append((cells[1], int(cells[0]), unit, *numbers))
    return found


def test_nvprof_runs_split_by_markdown_rules_each_import(tmp_path, capsys):
    """Six `--metrics` runs in one fence, each led by the author's `Profiling metric: X` line
    and followed by a `-------------------------------` rule: the rule is no row (it was
    refused as 'line 27: not a metric or event row'); each run is a stage of its own."""
    run, _ = imported(FLOYD, tmp_path, capsys)
    c = run.table("counters")
    want = metric_rows(FLOYD)
    assert len(want) == 6
    got = c[["metric", "invocations", "unit", "min", "max", "value"]].astype(object)
    got["unit"] = got["unit"].where(got["unit"].notna(), "")
    assert [tuple(row) for row in got.itertuples(index=False)] == want
    assert c["stage"].tolist() == [f"s.{k}" for k in range(1, 7)]
    assert set(c["name"]) == {"phase3_optimized(int*, int, int)"}
