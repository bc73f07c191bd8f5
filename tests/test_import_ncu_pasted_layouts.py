"""ncu text pasted in layouts its own output does not have (round g of issue 14's real files;
tests/data/ncu/README.md cites them). Expected values are read from the files' text here.
"""

from __future__ import annotations

import re
from pathlib import Path

from test_import_pasted import imported

NCU = Path(__file__).parent / "data" / "ncu"
UNINDENTED = NCU / "2023.x" / "tiled-matmul-cc75-unindented-cut.md"


def _row(path: Path, name: str) -> tuple[str, str]:
    """The unit and value cells of the unindented row `name` in `path`."""
    row = re.compile(rf"^{re.escape(name)} +(\S+) +(\S+)$")
    found = [m for m in map(row.match, path.read_text().splitlines()) if m]
    assert len(found) == 1, name
    return found[0][1], found[0][2]


def test_ncu_text_with_its_indent_stripped(tmp_path, capsys):
    """A README's ncu result whose every line starts at column 0 (kernel line, `Section:` lines,
    rules, rows): read as ncu's indented text is (it was refused as quoted rule advice)."""
    assert _row(UNINDENTED, "Duration") == ("msecond", "46.31")
    run, _ = imported(UNINDENTED, tmp_path, capsys)
    m = run.table("metrics")
    assert list(m["name"]) == ["tiled(float *, float *, float *, float, float, int)"]
    assert list(m["grid"]) == ["(128, 128, 1)"] and list(m["block"]) == ["(16, 16, 1)"]
    assert list(m["duration_ns"]) == [46_310_000]
    assert list(m["sm_throughput_pct"]) == [float(_row(UNINDENTED, "Compute (SM) Throughput")[1])]
    assert list(m["dram_throughput_pct"]) == [float(_row(UNINDENTED, "DRAM Throughput")[1])]
    assert list(m["achieved_occupancy_pct"]) == [float(_row(UNINDENTED, "Achieved Occupancy")[1])]
    assert list(m["registers"]) == [int(_row(UNINDENTED, "Registers Per Thread")[1])]
    c = run.table("counters")
    freq = c[c["metric"] == "SM Frequency"]
    assert list(freq["unit"]) == ["cycle/usecond"] and list(freq["value"]) == [584.88]
