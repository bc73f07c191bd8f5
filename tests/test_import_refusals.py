"""Real public files that `profgen import` cannot use, refused with one line that says what the
file is and why (issue 14: "The rest are refused with one line that says what the file is and
why profgen can't use it"). tests/data/ncu/README.md and tests/data/nsys/README.md say where
each file comes from."""

from __future__ import annotations

from pathlib import Path

from clirun import assert_refused, profgen

DATA = Path(__file__).parent / "data"
NSYS, NCU = DATA / "nsys", DATA / "ncu"


def refusal(path: Path, tmp_path: Path, capsys) -> str:
    """The one line `profgen import` refuses `path` with (exit 2, nothing written)."""
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", out], capsys)
    assert_refused(result, 2, str(path))
    assert not out.exists() or not any(out.iterdir())
    return result.err.strip()


def test_ncu_log_of_a_run_with_a_report_file_names_the_report(tmp_path, capsys):
    path = NCU / "any" / "dphpc-report-only.log"
    assert refusal(path, tmp_path, capsys) == (
        f"profgen: error: {path}: expected Nsight Compute output (ncu's per-kernel `Section:` "
        "tables, or ncu --csv) (ncu wrote its results only to the report "
        "'/home/nwadekar/dphpc/dphpc-gemm/ncu_analysis.ncu-rep' (`==PROF== Report:`), not "
        "here: import that .ncu-rep instead)"
    )
