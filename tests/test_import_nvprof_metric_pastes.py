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
