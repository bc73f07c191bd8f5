"""`profgen import` refusals of Nsight Compute files that hold nothing it can read, each saying
what the file is (`parse.unusable_ncu`). The real files are in tests/data/ncu/2024.x (its README
says where each comes from)."""

from __future__ import annotations

from pathlib import Path

from test_import_refusals import refusal

NCU = Path(__file__).parent / "data" / "ncu" / "2024.x"
SECTIONS = NCU / "list-sections-saved-as-cu.cu"
HEADLESS = NCU / "triton-5136-csv-rows-headless-cut.md"


def test_the_list_of_ncus_sections_is_refused_as_what_it_is(tmp_path, capsys):
    line = refusal(SECTIONS, tmp_path, capsys)
    header = next(n for n, t in enumerate(SECTIONS.read_text().splitlines(), 1) if "Enabled" in t)
    assert line.endswith(
        "(recognised none of them: it is the list of Nsight Compute's sections (`ncu "
        f"--list-sections`, its header at line {header}): which sections ncu can collect, no "
        "measurements to import)"
    )
    assert "source file" not in line


def test_ncu_csv_rows_without_their_header_are_refused_saying_so(tmp_path, capsys):
    line = refusal(HEADLESS, tmp_path, capsys)
    first = next(n for n, t in enumerate(HEADLESS.read_text().splitlines(), 1) if t[:3] == '"2"')
    assert f"rows of Nsight Compute `--csv` output from line {first} on" in line
    assert "without the header line" in line
    assert "no profiler table was found" not in line
