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


NOTED = NCU / "2024.x" / "jetson-orin-zh-notes-after-rows-cut.md"


def _table_rows(path: Path) -> list[tuple[str, str]]:
    """(name, value) of each row of the file's metric tables, as the text shows them: the
    lines between a `Metric Name` header's rule and the next rule, the author's `  # ` note cut
    off and the row split at its runs of two or more blanks (name, [unit,] value)."""
    rows: list[tuple[str, str]] = []
    inside, previous = False, ""
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if text.startswith("---"):
            inside = not inside and previous.startswith("Metric Name")
        elif inside:
            cells = re.split(r" {2,}", text.split("  # ")[0])
            rows.append((cells[0], cells[-1]))
        previous = text
    return rows


def test_notes_after_rows_without_blanks_are_cut_off(tmp_path, capsys):
    """A Chinese post's ncu text with the author's note after most rows, many of them one word
    with no blank (`1,024  # 决定了任务的并行程度...`) or `# SMs  SM  4  # Orin ...`: every row is
    read with its value (five rows of 20 were left out without a word)."""
    rows = _table_rows(NOTED)
    assert len(rows) == 20 and ("# SMs", "4") in rows and ("Grid Size", "1,024") in rows
    run, _ = imported(NOTED, tmp_path, capsys)
    c = run.table("counters")
    assert list(zip(c["metric"], c["text"], strict=True)) == rows
    freq = c[c["metric"] == "SM Frequency"]
    assert list(freq["unit"]) == ["Mhz"] and list(freq["value"]) == [305.41]
    assert list(run.table("metrics")["duration_ns"]) == [106_460]


GO_CONST = NCU / "2025.x" / "go-test-csv-const-cc121-cut.go"


def test_csv_in_a_go_string_closed_on_the_next_line(tmp_path, capsys):
    """ncu's CSV kept in a Go raw string whose closing backtick is alone on the line after the
    last row: the table is read and that line left out with a note (it was refused as a row
    cut short, `truncated file?`)."""
    rows = [r for r in GO_CONST.read_text().splitlines() if r.startswith('"') and '"us"' in r]
    run, err = imported(GO_CONST, tmp_path, capsys)
    assert "line 9 on ('`') left out: it follows the last ncu CSV row" in err
    m = run.table("metrics")
    assert list(m["kernel_id"]) == [int(r.split('","')[0].strip('"')) for r in rows]
    micros = [float(r.split('","')[-1].strip('"').replace(",", "")) for r in rows]
    assert micros == [211.94, 203.02, 1205.0]
    assert list(m["duration_ns"]) == [round(us * 1000) for us in micros]
    assert m["dram_throughput_pct"].isna().all()  # `n/a`


PY_STRING = NCU / "2025.x" / "superbench-cublaslt-b200-csv-in-python-string-cut.py"


def test_csv_in_a_python_string_closed_on_the_next_line(tmp_path, capsys):
    """ncu's CSV (base units: `hz`, `ns`, `byte`; rows ending in a comma) kept in a Python
    test's triple-quoted string whose closing `\"\"\"` is alone on the line after the last row:
    the table is read and that line left out with a note (it was refused as malformed CSV,
    `EOF inside string`, the closing quotes read as a cell)."""
    text = PY_STRING.read_text()
    rows = [r.split('","') for r in text.splitlines() if r.startswith('"0","')]
    cells = {r[12]: r[14].rstrip('",') for r in rows if r[12]}
    closing = text.splitlines().index('"""') + 1
    run, err = imported(PY_STRING, tmp_path, capsys)
    assert f'line {closing} on (\'"""\') left out: it follows the last ncu CSV row' in err
    m = run.table("metrics")
    assert list(m["name"]) == [rows[0][4]]
    assert list(m["duration_ns"]) == [int(cells["Duration"])]  # `ns`: nanoseconds as written
    assert list(m["registers"]) == [int(cells["Registers Per Thread"])]
    assert list(m["achieved_occupancy_pct"]) == [float(cells["Achieved Occupancy"])]
    assert list(m["sm_throughput_pct"]) == [float(cells["Compute (SM) Throughput"])]
    c = run.table("counters")
    assert len(c) == len(cells)  # every metric row; the three rule rows hold no metric
    hz = c[c["metric"] == "SM Frequency"]
    assert list(hz["unit"]) == ["hz"] and list(hz["value"]) == [float(cells["SM Frequency"])]
