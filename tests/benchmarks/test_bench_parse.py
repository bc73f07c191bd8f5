"""Parser speed, on inputs that grow: every parser is linear in its input (issue 9).

- a 1,000,000-row `cuda_gpu_trace` CSV (target: under 2 s on a 2-core machine), built from the
  rows of the real H100 capture (tests/data/nsys/2025.3.1/overlap), repeated with shifted
  start times;
- the same trace inside a capture of `nsys stats` stdout;
- a 1,000,000-row gpu trace in the column text of `nsys stats` (no `--format csv`), built from
  the rows of the real 2020.4.3 capture (tests/data/nsys/2020.4.3): blank grid cells, thousands
  separators, one `Exporting [...gputrace.py ...]` line above it; its first column is widened
  by three characters so that the shifted start times fit;
- a 1,000,000-row nvprof text summary (every row cut with str.split, numbers checked);
- a 1,000,000-row nvprof text gpu trace (rows cut at the header's column edges), built from the
  rows of a real capture (tests/data/nvprof/9.x/cheby-text-gpu-trace.txt) with new start times;
- 1,000,000 rows of nvprof text metrics, from a real `--metrics` file's rows;
- a terminal capture of that nvprof trace and a real `nsys stats` stdout, cut into sections and
  each read (`import_capture`);
- 1,000,000 metric rows of ncu's default text output: a real kernel's `Section:` tables
  (tests/data/ncu/2023.x/ppc-max-flops.txt), repeated;
- a 1,000,000-row ncu `--csv` details page: the real H100 page's launches repeated with new IDs;
- files with a 100,000-space run, which the old nvprof row pattern and nsys stdout splitter
  took minutes over (quadratic backtracking), and 10,000,000 blank lines;
- 100 MB of a program's output, with nvprof's output at its end or none: detection looks past
  the first 64 KiB (`parse.late_start`).

Run with `pytest tests/benchmarks/test_bench_parse.py --benchmark-enable` to time them. Without
it (the default) each runs once, the million-row inputs cut to 10,000 rows so that the suite
stays fast while the same code paths are checked; timings are never asserted.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import pytest

from profiler import schema
from profiler.parse import ncu_csv, ncu_text, nsys_capture, nsys_csv, nvprof, pages

ROWS = 1_000_000
SMALL = 10_000
DATA = Path(__file__).parent.parent / "data"
SOURCE = DATA / "nsys" / "2025.3.1" / "overlap" / "cuda_gpu_trace.csv"
NVPROF_TEXT = DATA / "nvprof" / "9.x" / "cuda-stream-summary.txt"
NVPROF_TRACE = DATA / "nvprof" / "9.x" / "cheby-text-gpu-trace.txt"
NVPROF_METRICS = DATA / "nvprof" / "8.x" / "lbp-text-metrics.txt"
NCU_TEXT = DATA / "ncu" / "2023.x" / "ppc-max-flops.txt"
NCU_DETAILS = DATA / "ncu" / "2025.3.1" / "details-sections.csv"
STDOUT = DATA / "nsys" / "2025.3.1" / "demo" / "nsys-stats-stdout.txt"
TEXT_TRACE = DATA / "nsys" / "2020.4.3" / "omp-offload-stats.txt"


def rows_for(benchmark) -> int:
    return SMALL if benchmark.disabled else ROWS


def trace_lines(n: int) -> list[str]:
    header, *rows = SOURCE.read_text().splitlines()
    span = 10_000_000  # ns between copies of the capture, longer than the capture itself
    out = [header]
    while len(out) - 1 < n:
        offset = ((len(out) - 1) // len(rows)) * span
        for row in rows[: n - (len(out) - 1)]:
            start, rest = row.split(",", 1)
            out.append(f"{int(start) + offset},{rest}")
    return out


@pytest.fixture(scope="module", autouse=True)
def as_profgen_import_runs():
    """The parsers run as `profgen import` runs them: NumPy's huge-page advice off and pandas'
    strings in Python's storage for the process (profiler.parse.pages), restored after this
    module."""
    before = pages.set_huge_pages(False)
    storage = pages.set_string_storage("python")
    yield
    pages.set_string_storage(storage)
    if before is not None:
        pages.set_huge_pages(before)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, int, Callable], Path]:
    """Build (once per name and size) an input file: `build(n) -> text`."""
    cache: dict[tuple[str, int], Path] = {}

    def make(name: str, n: int, build: Callable[[int], str]) -> Path:
        if (name, n) not in cache:
            folder = tmp_path_factory.mktemp(name)
            path = folder / name
            path.write_text(build(n))
            cache[name, n] = path
        return cache[name, n]

    return make


def run(benchmark, func, *args):
    return benchmark.pedantic(func, args=args, rounds=3, iterations=1)


def test_parse_million_row_gpu_trace(benchmark, made):
    n = rows_for(benchmark)
    path = made("big_cuda_gpu_trace.csv", n, lambda k: "\n".join(trace_lines(k)) + "\n")
    tables = run(benchmark, nsys_csv.read_stats_dir, path.parent, "bench")
    trace = schema.validate(tables["gpu_trace"], schema.GPU_TRACE)
    assert len(trace) == n
    assert trace["kind"].value_counts().to_dict() == {"memcpy": n // 2, "kernel": n // 2}
    assert trace["start_ns"].is_monotonic_increasing


def test_parse_million_row_trace_in_stdout(benchmark, made):
    def build(k: int) -> str:
        marker = "Processing [/tmp/r.sqlite] with [/opt/nsys/reports/cuda_gpu_trace.py]... \n"
        return STDOUT.read_text().split("Processing [")[0] + marker + "\n".join(trace_lines(k))

    n = rows_for(benchmark)
    tables = run(benchmark, nsys_capture.read_stats_stdout, made("stdout.txt", n, build), "bench")
    assert len(tables["gpu_trace"]) == n


def text_trace(n: int) -> str:
    """`n` rows of the real gputrace text, repeated with start times 1 ms apart per copy."""
    lines = TEXT_TRACE.read_text().splitlines()
    mark = next(i for i, ln in enumerate(lines) if ln.startswith("Exporting ["))
    at = mark + 3  # the marker, a blank line, the header, the rule
    marker = lines[mark]
    header, rule, rows = lines[at - 1], lines[at], lines[at + 1 : at + 10]
    out = [marker, "", "   " + header, " " + "-" * 13 + rule[11:]]
    for i in range(n):
        row = rows[i % len(rows)]
        start = float(row[1:11]) + (i // len(rows)) * 0.001
        out.append(f" {start:13.6f}{row[11:]}")
    return "\n".join(out) + "\n"


def test_parse_million_row_text_trace(benchmark, made):
    n = rows_for(benchmark)
    path = made("text-trace.txt", n, text_trace)
    tables = run(benchmark, nsys_capture.read_stats_stdout, path, "bench")
    trace = schema.validate(tables["gpu_trace"], schema.GPU_TRACE)
    assert len(trace) == n
    kernels = trace[trace["kind"] == "kernel"]
    assert len(kernels) == n // 9 + (n % 9 > 5) and set(kernels["duration_ns"]) == {222_080}
    assert set(kernels["grid_x"]) == {1} and trace["grid_x"].isna().sum() == n - len(kernels)


def million_row_summary(n: int) -> str:
    """An nvprof text summary: one GPU row and `n` API rows (the shares are nvprof's `0.00%`)."""
    head = NVPROF_TEXT.read_text().splitlines()[:5]  # preamble, header, first GPU row
    head[4] = head[4].replace("20.21%", "100.00%")
    rows = [
        f"      API calls:  100.00%  1.2345ms  {n}  1.2345us  928ns  3.7970us  cudaLaunchKernel"
    ]
    rows += [
        f"                    0.00%  {i % 997 + 1}.{i % 89:02d}us  {i % 7 + 1}  1.2345us"
        f"     928ns  3.7970us  cudaFunction{i}"
        for i in range(n - 1)
    ]
    return "\n".join(head + rows) + "\n"


def test_parse_million_row_text_summary(benchmark, made):
    n = rows_for(benchmark)
    tables = run(benchmark, nvprof.read_log, made("summary.txt", n, million_row_summary), "b")
    assert len(tables["api_calls"]) == n and len(tables["gpu_activities"]) == 1


def million_row_text_trace(n: int) -> str:
    """The real trace's preamble, header and seven rows, repeated with start times 5 us apart
    (`0.50000s` is as wide as the Start column), then its legend."""
    lines = NVPROF_TRACE.read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("Start"))
    rows = lines[header + 1 : header + 8]
    width = len(lines[header]) - len(lines[header].lstrip()) + len("Start")
    body = [f"{0.5 + i * 5e-6:.5f}s".rjust(width) + rows[i % 7][width:] for i in range(n)]
    return "\n".join(lines[: header + 1] + body + lines[header + 8 :]) + "\n"


def test_parse_million_row_text_gpu_trace(benchmark, made):
    n = rows_for(benchmark)
    path = made("trace.txt", n, million_row_text_trace)
    trace = run(benchmark, nvprof.read_log, path, "b")["gpu_trace"]
    assert len(trace) == n and trace["start_ns"].is_monotonic_increasing
    assert trace["kind"].value_counts().to_dict() == {
        "memcpy": n // 7 * 5 + min(n % 7, 4) + (n % 7 == 7),
        "kernel": n // 7 * 2 + max(0, min(n % 7, 6) - 4),
    }


def million_row_text_metrics(n: int) -> str:
    """A real `--metrics` file's preamble and one kernel's block (its `Kernel:` line and seven
    rows), repeated: nvprof reads a repeated name as another kernel of that name."""
    lines = NVPROF_METRICS.read_text().splitlines()
    block = lines[7:15]
    return "\n".join(lines[:7] + block * (n // 7)) + "\n"


def test_parse_million_row_text_metrics(benchmark, made):
    n = rows_for(benchmark)
    metrics = run(benchmark, nvprof.read_log, made("metrics.txt", n, million_row_text_metrics), "b")
    table = metrics["metrics"]
    assert len(table) == n // 7 and table["kernel_id"].tolist() == list(range(n // 7))
    assert table["achieved_occupancy_pct"].to_numpy() == pytest.approx(51.7002)
    counters = metrics["counters"]  # every row, as printed
    assert len(counters) == n // 7 * 7 and counters["kernel_id"].iloc[-1] == n // 7 - 1
    assert counters["text"].iloc[:7].tolist()[::3] == ["7.2243GB/s", "44.48%", "100.00%"]


def metric_rows(text: str) -> int:
    """How many metric rows the `Section:` tables of ncu text hold (between a table's second
    rule and its last)."""
    rules, rows = 0, 0
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("Section:"):
            rules = 0
        elif stripped and not stripped.strip("- "):
            rules += 1
        elif rules == 2 and stripped:
            rows += 1
    return rows


def million_row_ncu_text(n: int) -> str:
    """The real capture's kernel (its launch line and three sections) repeated until the
    tables hold at least `n` metric rows."""
    block = NCU_TEXT.read_text()
    return block * -(-n // metric_rows(block))


def test_parse_million_row_ncu_text(benchmark, made):
    n = rows_for(benchmark)
    kernels = -(-n // metric_rows(NCU_TEXT.read_text()))
    path = made("ncu.txt", n, million_row_ncu_text)
    tables = run(benchmark, ncu_text.read_tables, path, "b")  # as `profgen import` reads it
    table = tables["metrics"]
    assert len(table) == kernels and table["kernel_id"].tolist() == list(range(kernels))
    assert len(tables["counters"]) == metric_rows(path.read_text())  # every row, as printed
    assert set(table["duration_ns"]) == {1_130_000_000} and set(table["registers"]) == {16}
    assert table["achieved_occupancy_pct"].to_numpy() == pytest.approx(95.84)


def million_row_ncu_details(n: int) -> str:
    """The real H100 details page's rows (tests/data/ncu/2025.3.1; a rule's description spans
    lines), repeated whole with new launch IDs until the page holds at least `n` rows."""
    text = NCU_DETAILS.read_text()
    head, at = text[: text.index('"ID",')], text.index('"ID",')
    header, *rows = list(csv.reader(io.StringIO(text[at:])))
    launches = len({row[0] for row in rows})
    out = io.StringIO()
    out.write(head)
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(header)
    for i in range(-(-n // len(rows)) * len(rows)):
        row = rows[i % len(rows)]
        writer.writerow([str(int(row[0]) + (i // len(rows)) * launches), *row[1:]])
    return out.getvalue()


def test_parse_million_row_ncu_csv_details(benchmark, made):
    n = rows_for(benchmark)
    path = made("ncu-details.csv", n, million_row_ncu_details)
    tables = run(benchmark, ncu_csv.read_tables, path, "b")
    text = path.read_text()
    page = list(csv.DictReader(io.StringIO(text[text.index('"ID",') :])))
    assert len(tables["counters"]) == sum(bool(r["Metric Name"]) for r in page)  # not rule rows
    assert len(tables["metrics"]) == len({r["ID"] for r in page})
    assert tables["counters"]["kernel_id"].is_monotonic_increasing


def test_parse_100k_space_run(benchmark, made):
    """A summary row whose name holds a run of 100,000 spaces (the old pattern: minutes)."""

    def build(_: int) -> str:
        return NVPROF_TEXT.read_text().replace("cudaMemcpy\n", "cudaMemcpy" + " " * 100_000 + "x\n")

    tables = run(benchmark, nvprof.read_log, made("spaces.txt", 1, build), "b")
    assert tables["api_calls"]["name"].str.startswith("cudaMemcpy  ").sum() == 1


def test_parse_stdout_with_100k_space_run_and_blank_lines(benchmark, made):
    """nsys stdout followed by 10,000,000 blank lines (1,000 when not timing) and a 100,000-space
    line: the old splitter was quadratic in both, and a repeated-group pattern took 1.2 GB."""
    blank = 10_000_000

    def build(k: int) -> str:
        return STDOUT.read_text() + "\n" * k + " " * 100_000 + "\n"

    path = made("stdout-blank.txt", 1_000 if benchmark.disabled else blank, build)
    tables = run(benchmark, nsys_capture.read_stats_stdout, path, "b")
    assert len(tables["gpu_trace"]) == 5


def million_row_capture(n: int) -> str:
    """A terminal capture of two tools: a prompt and the million-row nvprof text gpu trace, then
    a prompt and a real nsys `stats` stdout (the capture is cut, then each section parsed)."""
    return (
        "$ nvprof --print-gpu-trace ./cheby\n"
        + million_row_text_trace(n)
        + "$ nsys stats --report cuda_gpu_trace r.nsys-rep\n"
        + STDOUT.read_text()
    )


def test_import_million_row_capture(benchmark, made, tmp_path):
    from profiler import import_capture, importer

    n = rows_for(benchmark)
    path = made("capture.txt", n, million_row_capture)
    read = importer._read_stage
    (found,) = run(benchmark, import_capture.read_capture, path, "b", tmp_path, read)
    assert [s["kind"] for s in found.sections] == ["nvprof", "nsys-text"]
    assert len(found.tables["gpu_trace"]) == n  # nvprof's; nsys's is left out, and said so
    assert "gpu_trace" in found.sections[1]["tables_left_out"]


def log_bytes(benchmark) -> int:
    return (2 << 20) if benchmark.disabled else (100 << 20)


def test_detect_nvprof_at_the_end_of_a_100_mb_log(benchmark, tmp_path):
    """nvprof's output after 100 MB of program output (the first 64 KiB say nothing): found
    from the line it starts on (`parse.late_start`), in one pass over the file."""
    from test_import_late_start import LOG, big_log, detection

    from profiler import import_paste

    tail = LOG.read_bytes().split(b"\n", 92)[92]  # nvprof's output, from its first line on
    path = big_log(tmp_path / "late.log", log_bytes(benchmark), tail)
    found = run(benchmark, detection, path)
    assert isinstance(found, import_paste.Input) and found.kind == "nvprof"


def test_refuse_a_100_mb_log_without_profiler_output(benchmark, tmp_path):
    from test_import_late_start import big_log, detection

    from profiler.errors import ParseError

    found = run(benchmark, detection, big_log(tmp_path / "none.log", log_bytes(benchmark)))
    assert isinstance(found, ParseError) and "none of its lines is profiler output" in found.detail


#: real files of each text parser, and the text after which a run of blanks is put
BLANK_RUN_CASES = {
    "nvprof summary": (nvprof.read_log, "nvprof/9.x/cuda-stream-summary.txt", "cudaMemcpy"),
    "nvprof text trace": (nvprof.read_log, "nvprof/9.x/cheby-text-gpu-trace.txt", "Start"),
    "nvprof metrics": (nvprof.read_log, "nvprof/8.x/lbp-text-metrics.txt", "Invocations"),
    "nsys column text": (
        nsys_capture.read_stats_stdout, "nsys/2020.4.3/omp-offload-stats.txt", "[CUDA memcpy HtoD]",
    ),
    "nsys stdout": (
        nsys_capture.read_stats_stdout, "nsys/2025.3.1/demo/nsys-stats-stdout.txt", "Name",
    ),
    "ncu text": (ncu_text.read_metrics, "ncu/2023.x/ppc-max-flops.txt", "Duration"),
}  # fmt: skip


def widened(source: Path, anchor: str, blanks: int, where: str) -> str:
    """`source`'s text with `blanks` spaces after the first `anchor` (`cell`) or as a line of
    their own after the line holding it (`line`)."""
    text = source.read_text()
    at = text.index(anchor) + len(anchor)
    if where == "line":
        at = text.index("\n", at) + 1
        return text[:at] + " " * blanks + "\n" + text[at:]
    return text[:at] + " " * blanks + text[at:]


def read_or_refused(read: Callable[[Path, str], object], path: Path) -> object:
    from profiler.errors import ParseError

    try:
        return read(path, "s")
    except ParseError as exc:
        return exc  # refused is fine: only how long it took matters


@pytest.mark.parametrize("where", ["cell", "line"])
@pytest.mark.parametrize("case", BLANK_RUN_CASES.values(), ids=BLANK_RUN_CASES.keys())
def test_parse_50k_blank_run(benchmark, tmp_path, case, where):
    """Each text parser on a real file with a 50,000-space cell or line, read or refused (a
    quadratic pattern took the old nvprof row reader 44 s on 100 KB)."""
    read, source, anchor = case
    path = tmp_path / "blanks.txt"
    path.write_text(widened(DATA / source, anchor, 50_000, where))
    run(benchmark, read_or_refused, read, path)


def test_cut_capture_with_long_blank_runs(benchmark):
    """A terminal capture of 400,000 trace rows, then a 1,000,000-space prompt line and a
    1,000,000-character `=` line, cut into its sections (`parse.capture.split`)."""
    from test_import_capture import capture_with_blank_runs

    from profiler.parse import capture

    text = capture_with_blank_runs(4_000 if benchmark.disabled else 400_000)
    assert len(run(benchmark, capture.split, text)) == 2


def test_parse_ncu_text_with_20k_nested_block_titles(benchmark, tmp_path):
    """A real ncu text page with NVTX ranges whose block has 20,000 nested `NVTX Push/Pop
    Stack:` titles, each indented one more space (quadratic in a naive indentation walk)."""
    from test_parse_ncu_nvtx import nested_titles

    metrics = run(benchmark, ncu_text.read_metrics, nested_titles(tmp_path / "nested.txt"), "s")
    assert list(metrics["range"][:2]) == ["convLayer"] * 2
