"""`profgen import` of round i's real files of issue 14 (tests/data/nvprof/9.x; the READMEs
there say where each comes from). Expected values are read from the files' text here."""

from __future__ import annotations

from pathlib import Path

from test_import_pasted import imported
from test_import_refusals import refusal

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


BARE_THEN_WHOLE = (
    NVPROF / "9.x" / "zh-summatrix-v100-bare-metric-tables-then-whole-runs-in-comment-cut.cu"
)


def _metric_rows(path: Path) -> list[tuple[str, str]]:
    """Each metric row's name and Avg cell, in file order."""
    rows = []
    for line in path.read_text().splitlines():
        cells = line.split()
        if len(cells) > 4 and cells[0].isdigit() and cells[1].islower():
            rows.append((cells[1], cells[-1]))
    return rows


def test_bare_metric_tables_above_the_first_profiling_result_line_are_runs(tmp_path, capsys):
    """Notes in a C comment quote four `--metrics` runs as bare tables (no `==PID==` lines),
    then four whole runs: each table is a run of its own (the four bare ones were read as one
    run, one kernel's metric four times over)."""
    rows = _metric_rows(BARE_THEN_WHOLE)
    assert len(rows) == 8
    whole = BARE_THEN_WHOLE.read_text().count("Profiling result:")
    assert whole == 4
    run, _ = imported(BARE_THEN_WHOLE, tmp_path, capsys)
    c = run.table("counters")
    assert c["stage"].tolist() == [f"s.{k}" for k in range(1, 9)]
    assert list(zip(c["metric"], c["text"], strict=True)) == rows
    titles = run.table("stages")["title"].tolist()
    assert [t.endswith(": ./sumMatrix 32 32") for t in titles] == [False] * 4 + [True] + [False] * 3


UNIFIED_ONLY = NVPROF / "9.x" / "colab-k80-p100-unified-memory-tables-only-cut.md"


def test_notes_quoting_only_unified_memory_tables_are_refused_saying_so(tmp_path, capsys):
    """Notes that quote only nvprof's Unified Memory tables (one under its `==PID==` title, one
    from its `Device` line) are refused naming those tables (the line said no nvprof table
    header was found, and each has one)."""
    text = UNIFIED_ONLY.read_text()
    assert text.count("Total Size  Total Time  Name") == 2 and "GPU activities" not in text
    said = refusal(UNIFIED_ONLY, tmp_path, capsys)
    assert said.startswith(f"profgen: error: {UNIFIED_ONLY}: expected nvprof output")
    assert said.endswith(
        "(its only nvprof tables are Unified Memory profiling results (page migrations and "
        "faults: `Count Avg Size ... Total Time Name`), which profgen has no table for)"
    )


REQUOTED = NVPROF / "9.x" / "zh-notes-summary-then-requoted-in-two-parts-cut.md"


def test_summary_quoted_again_in_parts_is_read_once(tmp_path, capsys):
    """Notes quote a run's summary whole, then its GPU activities rows and its API calls rows
    again, each under a header, to explain them: the two later tables repeat rows of the first
    and are left out, said so (the file was refused as one run with two GPU summaries)."""
    lines = REQUOTED.read_text().splitlines()
    headers = [n for n, line in enumerate(lines, 1) if line.strip().startswith("Type  Time(%)")]
    assert len(headers) == 3
    whole = lines[headers[0] : lines.index("```", headers[0])]  # the rows under the header
    api_at = next(k for k, row in enumerate(whole) if row.strip().startswith("API calls:"))
    gpu = [row.split("%", 1)[1].split(None, 5) for row in whole[:api_at]]
    run, err = imported(REQUOTED, tmp_path, capsys)
    g, a = run.table("gpu_activities"), run.table("api_calls")
    assert (len(g), len(a)) == (api_at, len(whole) - api_at)  # 3 and 12, read once
    assert g["calls"].tolist() == [int(r[1]) for r in gpu]
    assert g["total_ns"].tolist() == [570_250_000, 29_586_000, 18_459_000]  # 570.25ms ...
    for line in headers[1:]:
        assert f"line {line}: a summary whose " in err
        assert f"repeat the summary at line {headers[0]} (quoted again): left out" in err
