"""`profgen import` of round j's real files of issue 14 (tests/data/nvprof/9.x and
tests/data/ncu; the READMEs there say where each comes from). Expected values are read from
the files' text here."""

from __future__ import annotations

from pathlib import Path

from test_import_pasted import imported

DATA = Path(__file__).parent / "data"
SPACED = (
    DATA / "nvprof" / "9.x" / "zh-reduce-integer-v100-metric-tables-blank-lines-in-comment-cut.cu"
)


def _metric_tables(path: Path) -> list[list[tuple[str, str, str]]]:
    """Each metric table's rows in file order: kernel name, metric name and Avg cell."""
    tables: list[list[tuple[str, str, str]]] = []
    kernel = ""
    for line in path.read_text().splitlines():
        cells = line.split()
        if line.startswith("Invocations"):
            tables.append([])
        elif line.strip().startswith("Kernel: "):
            kernel = line.strip()[len("Kernel: ") :]
        elif len(cells) > 4 and cells[0].isdigit() and cells[1].islower():
            tables[-1].append((kernel, cells[1], cells[-1]))
    return tables


def test_metric_tables_with_blank_lines_between_kernels(tmp_path, capsys):
    """Notes quote six `--metrics` tables, each of three kernels, with blank lines (some of
    four spaces) after `Device "..."` and between kernels: every kernel is read, each table a
    run of its own (the tables ended at the first blank line: two kernels of three were lost,
    and a table with a blank line above its first kernel was refused as having no rows)."""
    tables = _metric_tables(SPACED)
    assert [len(t) for t in tables] == [3] * 6
    run, _ = imported(SPACED, tmp_path, capsys)
    c = run.table("counters")
    assert c["stage"].tolist() == [f"s.{k}" for k in range(1, 7) for _ in range(3)]
    rows = [row for table in tables for row in table]
    assert list(zip(c["name"], c["metric"], c["text"], strict=True)) == rows
    assert c["kernel_id"].tolist() == [0, 1, 2] * 6


POINT_GROUPS = DATA / "ncu" / "2023.x" / "rtx30-matmul-metrics-line-comments-point-groups-cut.cu"


def test_point_groups_shown_only_above_the_first_kernel_line(tmp_path, capsys):
    """ncu's tables in `//` comments, digits grouped by points: the two tables that show it
    (`25.698.261`) lost their kernel lines in the paste, and the kernel's own table holds only
    `786.432` (786432, or 786.432?). The page is read in its locale: 786432 sectors (it was
    read as 786.432)."""
    text = POINT_GROUPS.read_text()
    assert "25.698.261" in text.split("ampere_s16816gemm")[0]
    cells = [line.split()[-1] for line in text.split("ampere_s16816gemm")[1].splitlines()[5:7]]
    run, err = imported(POINT_GROUPS, tmp_path, capsys)
    c = run.table("counters")
    assert c["text"].tolist() == cells  # ['0', '786.432']
    assert c["value"].tolist() == [float(cell.replace(".", "")) for cell in cells]
    assert "decimal comma ('25.698.261')" in err


OPENACC = DATA / "nvprof" / "9.x" / "openacc-v100-cnn-summary-openacc-excl-rows-cut.md"


def test_openacc_rows_of_a_summary_are_said_left_out(tmp_path, capsys):
    """A summary with GPU activities, API calls and PGI's `OpenACC (excl):` rows: the first two
    are read and the OpenACC rows are said to be left out, with their line (they were passed
    over without a word)."""
    lines = OPENACC.read_text().splitlines()
    first = next(k for k, line in enumerate(lines) if line.lstrip().startswith("OpenACC")) + 1
    api = next(k for k, line in enumerate(lines) if "API calls:" in line)
    run, err = imported(OPENACC, tmp_path, capsys)
    assert len(run.table("gpu_activities")) == 1
    assert run.table("api_calls")["name"].tolist() == [
        line.split()[-1] for line in lines[api : first - 1]
    ]
    assert f"line {first}: nvprof's `OpenACC (excl):` rows left out" in err
