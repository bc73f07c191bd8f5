"""`profgen import` of round i's real files of issue 14 (tests/data/nvprof/9.x; the READMEs
there say where each comes from). Expected values are read from the files' text here."""

from __future__ import annotations

from pathlib import Path

from test_import_pasted import imported

NVPROF = Path(__file__).parent / "data" / "nvprof"
INDENTED = NVPROF / "9.x" / "ulhpc-slurm-summary-indented-admonition-program-output-under-cut.md"


def _summary_rows(path: Path, kind: str) -> list[list[str]]:
    """The fields of the file's summary rows of `kind` (`GPU activities`), the type left out."""
    rows = []
    for line in path.read_text().splitlines():
        head, sep, rest = line.strip().partition(":")
        if sep and head == kind:
            rows.append(rest.split(None, 6))
    return rows


def test_indented_summary_with_program_output_under_it(tmp_path, capsys):
    """A Slurm log quoted in a docs admonition, every line indented four spaces: the program's
    own lines (`out[0] = ...`, `PASSED`) come right under the summary's last row, at the table's
    margin. They end the table there (it was refused at `out[0]` as no summary row)."""
    rows = _summary_rows(INDENTED, "GPU activities")
    assert len(rows) == 1
    run, err = imported(INDENTED, tmp_path, capsys)
    g = run.table("gpu_activities")
    assert g["name"].tolist() == [rows[0][6]]
    assert g["total_ns"].tolist() == [round(float(rows[0][1][:-2]) * 1e6)]  # 611.62ms
    assert g["calls"].tolist() == [int(rows[0][2])]
    assert g["time_pct"].tolist() == [float(rows[0][0][:-1])]
    assert "a trimmed table" in err  # 94.83% of the time shown
