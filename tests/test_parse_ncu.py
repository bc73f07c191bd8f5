"""Nsight Compute CSV parsing, checked against the real H100 captures in tests/data/ncu/2025.3.1/.

Expected values are read from the files with the `csv` module here, not from the parser.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd
import pytest

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import ncu_csv, ncu_nvtx, ncu_text, ncu_walk, reader_notes

NCU = Path(__file__).parent / "data" / "ncu" / "2025.3.1"
RAW, DETAILS, INCLUDE = (
    NCU / "raw-metrics.csv",
    NCU / "details-sections.csv",
    NCU / "nvtx-include.csv",
)


PUSH_POP = ncu_nvtx.Layout.of(
    "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
)


def innermost(cell: str) -> str | None:
    """The range of a launch whose push/pop cell (of ncu 2025.x's layout) is `cell`."""
    assert PUSH_POP is not None
    return ncu_nvtx.chosen(PUSH_POP.segments(cell))


def csv_rows(path: Path) -> list[list[str]]:
    lines = path.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith('"ID","Process ID"'))
    return list(csv.reader(lines[start:]))


def raw_column(name: str) -> tuple[str, list[float]]:
    """(unit, values) of one metric column of the raw page, thousands separators removed."""
    table = csv_rows(RAW)
    i = table[0].index(name)
    return table[1][i], [float(r[i].replace(",", "")) for r in table[2:]]


def detail_values(metric: str) -> dict[int, tuple[str, float]]:
    table = csv_rows(DETAILS)
    h = table[0]
    return {
        int(r[0]): (r[h.index("Metric Unit")], float(r[h.index("Metric Value")].replace(",", "")))
        for r in table[1:]
        if r[h.index("Metric Name")] == metric
    }


def test_raw_page():
    m = ncu_csv.read_metrics(RAW, "overlap")
    schema.validate(m, schema.METRICS)
    assert list(m["kernel_id"]) == list(range(16))
    assert list(m["name"]) == ["scale", "relu"] * 8
    assert set(m["range"]) == {"compute"}
    assert set(m["grid"]) == {"(4096, 1, 1)"} and set(m["block"]) == {"(256, 1, 1)"}
    unit, durations = raw_column("gpu__time_duration.sum")
    assert unit == "ns" and list(m["duration_ns"]) == durations
    unit, dram = raw_column("dram__bytes_read.sum")
    assert unit == "byte" and list(m["dram_read_bytes"]) == dram
    assert list(m["dram_write_bytes"]) == raw_column("dram__bytes_write.sum")[1]
    _, sm = raw_column("sm__throughput.avg.pct_of_peak_sustained_elapsed")
    assert list(m["sm_throughput_pct"]) == pytest.approx(sm)
    assert set(m["registers"]) == {16}
    # not collected in this file: missing, not an error
    assert m["dram_throughput_pct"].isna().all() and m["achieved_occupancy_pct"].isna().all()


def test_fp32_flops_from_instruction_counts():
    m = ncu_csv.read_metrics(RAW, "overlap")
    sass = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
    ffma, fadd, fmul = (raw_column(sass.format(op))[1] for op in ("ffma", "fadd", "fmul"))
    expected = [2 * a + b + c for a, b, c in zip(ffma, fadd, fmul, strict=True)]
    assert list(m["fp32_flops"]) == expected
    # scale does y = a * x: one FMUL per thread, 4096 * 256 threads; relu has no FP32 math
    assert set(m.loc[m["name"] == "scale", "fp32_flops"]) == {4096 * 256}
    assert set(m.loc[m["name"] == "relu", "fp32_flops"]) == {0}


def test_details_page_pivot():
    m = ncu_csv.read_metrics(DETAILS, "overlap")
    schema.validate(m, schema.METRICS)
    assert list(m["kernel_id"]) == list(range(16))
    duration = detail_values("Duration")
    assert {u for u, _ in duration.values()} == {"ns"}
    assert list(m["duration_ns"]) == [duration[i][1] for i in range(16)]
    sm = detail_values("Compute (SM) Throughput")
    assert list(m["sm_throughput_pct"]) == pytest.approx([sm[i][1] for i in range(16)])
    dram = detail_values("DRAM Throughput")
    assert list(m["dram_throughput_pct"]) == pytest.approx([dram[i][1] for i in range(16)])
    occ = detail_values("Achieved Occupancy")
    assert list(m["achieved_occupancy_pct"]) == pytest.approx([occ[i][1] for i in range(16)])
    assert set(m["registers"]) == {16}
    assert m["dram_read_bytes"].isna().all() and m["fp32_flops"].isna().all()
    assert set(m["range"]) == {"compute"}


def test_nvtx_include_file_and_ranges_with_colons():
    m = ncu_csv.read_metrics(INCLUDE, "overlap")
    assert len(m) == 8 and set(m["range"]) == {"compute"}
    assert list(m["duration_ns"][:2]) == [6112, 5440]  # "6,112", "5,440" in the file
    cell = '1062  "profgen:stage:overlap:rep1:none:none:RGB:0xff:REGISTERED:stage:overlap:rep1" '
    assert innermost(cell) == "stage:overlap:rep1"
    other = cell + ' "other:inner:none:none:RGB:0xff:REGISTERED:inner" '
    assert innermost(other) == "stage:overlap:rep1"
    assert PUSH_POP.segments(other)[-1] == ("other", "inner")
    assert innermost("") is None


def test_time_and_byte_units(tmp_path):
    text = DETAILS.read_text().replace('"Duration","ns","5,856"', '"Duration","usecond","5.856"')
    path = tmp_path / "details.csv"
    path.write_text(text)
    assert ncu_csv.read_metrics(path, "s")["duration_ns"].iloc[0] == 5856
    raw = RAW.read_text().splitlines()
    table = list(csv.reader(raw[3:]))
    i = table[0].index("dram__bytes_read.sum")
    table[1][i] = "Kbyte"
    for r in table[2:]:
        r[i] = str(float(r[i].replace(",", "")) / 1000)
    out = tmp_path / "raw.csv"
    with out.open("w", newline="") as f:
        f.write("\n".join(raw[:3]) + "\n")
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(table)
    assert set(ncu_csv.read_metrics(out, "s")["dram_read_bytes"]) == {4_197_120}


def test_not_available_values(tmp_path):
    text = DETAILS.read_text().replace(
        '"Achieved Occupancy","%","69.65"', '"Achieved Occupancy","%","n/a"'
    )
    path = tmp_path / "d.csv"
    path.write_text(text)
    m = ncu_csv.read_metrics(path, "s")
    occ = detail_values("Achieved Occupancy")
    assert list(m["kernel_id"][m["achieved_occupancy_pct"].isna()]) == [
        i for i in occ if occ[i][1] == 69.65
    ]


@pytest.mark.parametrize("content", [b"", b"\x00\x01\x02" * 100])
def test_empty_or_binary(tmp_path, content):
    path = tmp_path / "x.csv"
    path.write_bytes(content)
    with pytest.raises(ParseError) as exc:
        ncu_csv.read_metrics(path, "s")
    assert str(path) in str(exc.value) and "Nsight Compute" in str(exc.value)


def test_no_ncu_header(tmp_path):
    nvprof = Path(__file__).parent / "data" / "nvprof" / "9.x" / "cfd-csv-summary.csv"
    with pytest.raises(ParseError) as exc:
        ncu_csv.read_metrics(nvprof, "s")
    assert str(nvprof) in str(exc.value) and '"ID","Process ID"' in str(exc.value)


def test_report_from_the_wrong_tool():
    nsys = Path(__file__).parent / "data" / "nsys" / "2025.3.1" / "demo" / "cuda_gpu_trace.csv"
    with pytest.raises(ParseError, match="Nsight Compute CSV"):
        ncu_csv.read_metrics(nsys, "s")


@pytest.mark.parametrize("where", ["in_quotes", "after_id"])
def test_truncated(tmp_path, where):
    text = RAW.read_text()
    last = text.rindex('"15","756"')
    end = last + (30 if where == "in_quotes" else 5)
    path = tmp_path / "t.csv"
    path.write_text(text[:end])
    with pytest.raises(ParseError) as exc:
        ncu_csv.read_metrics(path, "s")
    assert str(path) in str(exc.value)


def test_header_only_gives_no_rows(tmp_path):
    lines = RAW.read_text().splitlines()
    path = tmp_path / "h.csv"
    path.write_text("\n".join(lines[:5]) + "\n")  # preamble, header, units row
    m = ncu_csv.read_metrics(path, "s")
    assert m.empty and list(m.columns) == schema.METRICS.names


# --- hostile input: refused at once, by line and column -------------------------------------


def test_fifo_is_refused_without_blocking(tmp_path):
    import os

    from test_parse_values import deadline

    fifo = tmp_path / "ncu.csv"
    os.mkfifo(fifo)
    with deadline(10), pytest.raises(ParseError, match="not a regular file"):
        ncu_csv.read_metrics(fifo, "s")


def raw_with(tmp_path: Path, column: str, cell: str, row: int = 1) -> Path:
    """The raw page with one cell of data row `row` (0-based) replaced."""
    lines = RAW.read_text().splitlines()
    table = csv_rows(RAW)
    table[2 + row][table[0].index(column)] = cell
    path = tmp_path / "raw.csv"
    with path.open("w", newline="") as f:
        f.write("\n".join(lines[:3]) + "\n")
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(table)
    return path


@pytest.mark.parametrize(
    "column, cell, message",
    [
        ("gpu__time_duration.sum", "inf", "'inf' is not a finite number"),
        ("gpu__time_duration.sum", "nan", "'nan' is not a number"),
        ("gpu__time_duration.sum", "-5", "'-5' is negative"),
        ("gpu__time_duration.sum", "1e300", "out of range"),
        ("dram__bytes_read.sum", str(2**64), "out of range"),
        ("launch__registers_per_thread", "1.5", "not a whole number"),
        ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "1.2.3", "'1.2.3' is not a number"),
        ("ID", "...%", "'...%' is not a number"),
    ],
)
def test_bad_metric_value(tmp_path, column, cell, message):
    path = raw_with(tmp_path, column, cell)
    with pytest.raises(ParseError) as exc:
        ncu_csv.read_metrics(path, "s")
    assert f"(line 7, column {column!r}: " in str(exc.value) and message in str(exc.value)


def test_instruction_counts_past_int64_when_added(tmp_path):
    path = raw_with(tmp_path, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", str(2**61 + 1))
    with pytest.raises(ParseError, match="fp32_flops of a launch is past 2\\*\\*62"):
        ncu_csv.read_metrics(path, "s")


def test_details_page_bad_value_names_its_line(tmp_path):
    text = DETAILS.read_text().replace('"Duration","ns","5,856"', '"Duration","ns","-5,856"')
    path = tmp_path / "d.csv"
    path.write_text(text)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if '"-5,856"' in ln)
    with pytest.raises(ParseError, match=f"line {line}, column 'Duration': '-5,856' is negative"):
        ncu_csv.read_metrics(path, "s")


def test_repeated_column_is_refused(tmp_path):
    text = RAW.read_text().replace('"Kernel Name","Context"', '"Kernel Name","Kernel Name"', 1)
    path = tmp_path / "raw.csv"
    path.write_text(text)
    with pytest.raises(ParseError, match="column 'Kernel Name' appears twice in the header"):
        ncu_csv.read_metrics(path, "s")


def test_header_cut_inside_a_quoted_name_is_refused(tmp_path):
    """A header line that ends inside a quoted name (a cut paste): pandas' reader runs the
    header on into the lines below it, so its names are not the line's cells."""
    lines = RAW.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith('"ID","Process ID"'))
    cells = lines[at].count('","') + 1
    lines[at] = lines[at][: lines[at].rindex('","') + 4] + "\n"  # the last name cut after its quote
    path = tmp_path / "raw.csv"
    path.write_text("".join(lines))
    said = f"its header line has {cells} cells, but a quote left open"
    with pytest.raises(ParseError, match=said):
        ncu_csv.read_metrics(path, "s")


def test_long_kernel_name_and_range_are_capped(tmp_path):
    from profiler.parse.bounded_names import MAX_NAME

    path = raw_with(tmp_path, "Kernel Name", "k" * 2_000_000)
    metrics = ncu_csv.read_metrics(path, "s")
    name = metrics["name"][metrics["name"].str.startswith("kkk")].iloc[0]
    assert len(name) < MAX_NAME + 80 and "2,000,000 characters" in name


def test_nvtx_cell_with_a_long_range_name():
    name = "a:" * 50_000 + "b"
    cell = f'1  "profgen:{name}:none:none:RGB:0xff:REGISTERED:{name}" '
    assert innermost(cell) == name
    other = f'1  "profgen:{name}:none:none:RGB:0xff:ASCII:another message" '
    assert innermost(other) == name
    # name and message both 49,997 colons, as the old back-referencing pattern read it
    assert innermost('"profgen:' + ":" * 100_000 + '"') == ":" * 49_997


def test_start_that_is_no_ncu_output_is_refused_early(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("x\n" * 100_000 + RAW.read_text())
    with pytest.raises(ParseError, match="no such header nor ==PROF== line at its start"):
        ncu_csv.read_metrics(path, "s")


# --- ncu's default text output, 2020.x-2023.x, and its error-only output ----------------------
# Real captures copied from public repositories (tests/data/ncu/README.md says where from). The
# expected values are read from the file text by `text_metric` (rows cut at runs of blanks).

DATA = NCU.parent
NS = {"nsecond": 1, "usecond": 1e3, "msecond": 1e6, "second": 1e9}


def kernel_blocks(path: Path) -> list[list[str]]:
    """The lines of each kernel result, from its `..., Context N, Stream N` line on."""
    blocks: list[list[str]] = []
    for line in path.read_text().splitlines():
        if ", Context " in line and ", Stream " in line:
            blocks.append([])
        if blocks:
            blocks[-1].append(line)
    return blocks


def text_metric(path: Path, kernel: int, name: str) -> tuple[str, str]:
    """(unit, value) of the first row `name` of the kernel's result; unit '' when blank."""
    for line in kernel_blocks(path)[kernel]:
        cells = re.split(r"\s{2,}", line.strip())
        if cells[0] == name:
            return (cells[1], cells[2]) if len(cells) == 3 else ("", cells[1])
    raise AssertionError(f"{name} not in kernel {kernel} of {path}")


def value(path: Path, kernel: int, name: str) -> float:
    unit, cell = text_metric(path, kernel, name)
    return float(cell.replace(",", "")) * NS.get(unit, 1)


def assert_text_metrics(path: Path, sm: str, dram: str | None) -> pd.DataFrame:
    m = schema.validate(ncu_text.read_metrics(path, "s"), schema.METRICS)
    n = len(kernel_blocks(path))
    assert len(m) == n
    for k in range(n):
        assert m["duration_ns"].iloc[k] == round(value(path, k, "Duration"))
        assert m["sm_throughput_pct"].iloc[k] == pytest.approx(value(path, k, sm))
        assert m["achieved_occupancy_pct"].iloc[k] == pytest.approx(
            value(path, k, "Achieved Occupancy")
        )
        assert m["registers"].iloc[k] == value(path, k, "Registers Per Thread")
        if dram:
            assert m["dram_throughput_pct"].iloc[k] == pytest.approx(value(path, k, dram))
    if dram is None:
        assert m["dram_throughput_pct"].isna().all()
    assert m["range"].isna().all() and m["dram_read_bytes"].isna().all()
    return m


def test_text_2022_sections_without_header_rows():
    """ncu 2022.x: `name(args), <date>, Context 1, Stream 7`; `Compute (SM) [%]`; `msecond`."""
    path = DATA / "2022.x" / "matrix_sums.profile1-simple.output"
    m = assert_text_metrics(path, "Compute (SM) [%]", "DRAM Throughput")
    assert list(m["kernel_id"]) == [0, 1]  # ==PROF== Profiling "row_sums" - 0: ...
    assert list(m["name"]) == [
        "row_sums(const float *, float *, unsigned long)",
        "column_sums(const float *, float *, unsigned long)",
    ]
    assert list(m["duration_ns"]) == [11_970_000, 3_020_000]  # 11.97 and 3.02 msecond
    assert list(m["registers"]) == [20, 22] and m["grid"].isna().all()


def test_text_2022_rows_indented_deeper_than_their_rule():
    path = DATA / "2022.x" / "nsight-profile.1.reductions-b-160K.output"
    m = assert_text_metrics(path, "Compute (SM) [%]", "DRAM Throughput")
    assert list(m["name"]) == [
        "atomic_red(const float *, float *)", "reduce_a(float *, float *)",
        "reduce_ws(float *, float *)",
    ]  # fmt: skip
    assert list(m["duration_ns"]) == [600_640, 15_780, 10_660]  # usecond


def test_text_2020_sol_section_ids_from_one():
    """ncu 2020.x: `Section: GPU Speed Of Light`, `SM [%]`, numbers without separators, launch
    numbers from 1 in the `==PROF==` lines (one of them cut by the program's output); `SOL FB`
    is the DRAM throughput (`dram__throughput`, ncu 2019.3.1 on): lines 12 and 51, 36.25 and
    88.20 (was: not mapped)."""
    path = DATA / "2020.x" / "matrix_sums-2a.txt"
    m = assert_text_metrics(path, "SM [%]", "SOL FB")
    assert list(m["kernel_id"]) == [1, 2] and list(m["dram_throughput_pct"]) == [36.25, 88.20]
    assert list(m["name"]) == [
        "row_sums(float const *,float*,unsigned long)",
        "column_sums(float const *,float*,unsigned long)",
    ]
    three = assert_text_metrics(DATA / "2020.x" / "reductions-1b.txt", "SM [%]", "SOL FB")
    assert list(three["dram_throughput_pct"]) == [0.34, 25.78, 28.51]  # lines 14, 53, 92
    assert list(three["kernel_id"]) == [1, 2, 3] and list(three["registers"]) == [16, 16, 16]


def test_text_2023_metric_name_headers_and_launch_shape():
    """ncu 2023.x: `name (grid)x(block), Context 1, Stream 7, Device 0, CC 8.6`, tables with a
    `Metric Name  Metric Unit  Metric Value` header between two rules, durations in `second`,
    an `INF` line with trailing blanks; pasted without `==PROF==` lines."""
    path = DATA / "2023.x" / "ppc-max-flops.txt"
    m = assert_text_metrics(path, "Compute (SM) Throughput", "DRAM Throughput")
    assert list(m["name"]) == ["gpu_kernel"] and list(m["kernel_id"]) == [0]
    assert (m["grid"].iloc[0], m["block"].iloc[0]) == ("(1024, 1, 1)", "(256, 1, 1)")
    assert m["duration_ns"].iloc[0] == 1_130_000_000
    cp5 = assert_text_metrics(
        DATA / "2023.x" / "ppc-cp5-matmul.txt", "Compute (SM) Throughput", "DRAM Throughput"
    )
    assert (cp5["grid"].iloc[0], cp5["block"].iloc[0]) == ("(110, 110, 1)", "(16, 16, 1)")
    assert list(cp5["registers"]) == [100] and cp5["achieved_occupancy_pct"].iloc[0] == 33.30


def test_text_metrics_run_without_mapped_metrics():
    """`ncu --metrics l1tex__...`: `Section: Command line profiler metrics`, raw names none of
    which METRICS maps: the launches are there, their values missing."""
    m = ncu_text.read_metrics(DATA / "2022.x" / "matrix_sums.profile2-flags.output", "s")
    assert list(m["kernel_id"]) == [0, 1]
    assert list(m["name"]) == [
        "row_sums(const float *, float *, unsigned long)",
        "column_sums(const float *, float *, unsigned long)",
    ]
    assert m["duration_ns"].isna().all() and m["sm_throughput_pct"].isna().all()


def summary_averages(path: Path, name: str) -> list[float]:
    """Each kernel's `Average` (the last cell) of row `name`, from the file text, in ns for a
    duration: a per-kernel summary's kernel lines end `, Invocations N`."""
    found: list[float] = []
    for line in path.read_text().splitlines():
        if ", Invocations " in line:
            found.append(float("nan"))
        cells = re.split(r"\s{2,}", line.strip())
        if found and cells[0] == name and found[-1] != found[-1]:
            scale = {"ns": 1, "us": 1e3, "ms": 1e6}.get(cells[1], 1) if len(cells) == 5 else 1
            found[-1] = float(cells[-1].replace(",", "")) * scale
    return found


def test_text_print_summary_per_kernel():
    """`ncu --print-summary per-kernel` as text (ncu 2024.x, RTX 40xx): one line per kernel
    (`name (grid)x(block), Device 0, CC 8.9, Invocations 4`) and tables of `Minimum  Maximum
    Average` columns; one row per kernel holding its averages, as the --csv summary gives."""
    path = DATA / "2024.x" / "heat-eq-print-summary-per-kernel.txt"
    m = schema.validate(ncu_text.read_metrics(path, "s"), schema.METRICS)
    assert list(m["name"]) == [
        "add_heat_kernel_3d(float *, int, int, int)",
        "heat_kernel_3d_color(float *, uchar4 *)",
        "heat_kernel_3d_sim(float *, float *, BoundaryCondition)",
    ]
    assert list(m["kernel_id"]) == [0, 1, 2]  # 34 ==PROF== launches, not one per kernel
    assert list(m["grid"]) == ["(2, 2, 2)", "(125, 125, 13)", "(63, 63, 1)"]
    assert list(m["block"]) == ["(8, 8, 8)", "(8, 8, 8)", "(16, 16, 1)"]
    assert list(m["duration_ns"]) == [round(v) for v in summary_averages(path, "Duration")]
    assert list(m["duration_ns"]) == [2_070, 3_060_000, 3_220_000]  # 2.07 us, 3.06 ms, 3.22 ms
    for column, row in [
        ("sm_throughput_pct", "Compute (SM) Throughput"),
        ("dram_throughput_pct", "DRAM Throughput"),
        ("achieved_occupancy_pct", "Achieved Occupancy"),
        ("registers", "Registers Per Thread"),
    ]:
        assert list(m[column]) == pytest.approx(summary_averages(path, row)), column
    assert list(m["registers"]) == [16, 16, 29]


def test_text_old_print_summary_padded_cells_one_kernel():
    """ncu 2021.x's `--print-summary`: a `Device 0` line, the kernel's line `name, Block Size
    256, Grid Size 8192, 1 invocations` written again above each of its ten sections, raw metric
    names, and cells padded to their columns' widths with the values left-aligned. One kernel,
    its Averages, and every row of its tables with Minimum and Maximum."""
    path = DATA / "2021.x" / "kitsune-raytrace-print-summary.log"
    tables = ncu_text.read_tables(path, "s")
    m = schema.validate(tables["metrics"], schema.METRICS)
    assert list(m["name"]) == ["PathTracer(int, Pixel *, int)"]
    assert list(m["kernel_id"]) == [1]  # its `==PROF== Profiling "PathTracer..." - 1` line
    assert (list(m["grid"]), list(m["block"])) == (["8192"], ["256"])
    assert list(m["duration_ns"]) == [16_997_685_000]  # gpu__time_duration.sum 16.997685 second
    assert list(m["sm_throughput_pct"]) == [56.418769]
    assert list(m["dram_throughput_pct"]) == [0.000002]
    assert list(m["achieved_occupancy_pct"]) == [34.837718]
    assert list(m["registers"]) == [73]
    c = tables["counters"]
    assert len(c) == 212 and set(c["kernel_id"]) == {1}
    assert c["section"].nunique() == 10
    row = c[c["metric"] == "smsp__pcsamp_warps_issue_stalled_dispatch_stall"].iloc[0]
    assert (row["unit"], row["min"], row["max"], row["value"]) == ("warp", 9541, 9541, 19082)
    waves = c[c["metric"] == "launch__waves_per_multiprocessor"]  # (no unit)
    assert list(waves["section"]) == ["GPU Speed Of Light Throughput", "Launch Statistics"]
    assert list(waves["value"]) == [25.283951] * 2 and waves["unit"].isna().all()


def test_text_kernel_name_wrapped_onto_its_own_line():
    """A pasted document whose kernel lines were wrapped: the name on one line, the launch shape
    and `, Context 1, Stream 7, ...` on the next. The name is the line above, not the shape."""
    path = DATA / "2024.x" / "heat-eq-doc-wrapped-kernel-lines.txt"
    m = schema.validate(ncu_text.read_metrics(path, "s"), schema.METRICS)
    fused = "heat_kernel_2d_fused(float *, float *, uchar4 *, int, int, float, float, float, float, BoundaryCondition)"  # noqa: E501
    plain = (
        "heat_kernel_2d(float *, float *, int, int, float, float, float, float, BoundaryCondition)"  # noqa: E501
    )
    color = "heat_to_color_kernel_2d(float *, uchar4 *, int, int)"
    assert list(m["name"]) == [fused, fused, plain, color, plain, color]
    assert set(m["grid"]) == {"(63, 63, 1)"} and set(m["block"]) == {"(16, 16, 1)"}
    assert list(m["duration_ns"].iloc[[0, 2, 3]]) == [99_680, 59_740, 42_880]  # 99.68 us, ...
    assert list(m["dram_read_bytes"].iloc[[1, 4, 5]]) == [4_020_000, 4_010_000, 4_010_000]


def test_text_kernel_lines_edited_down_to_cc_and_notes_after_values():
    """A README whose author cut `, Context 1, Stream 7, Device 0` from the kernel lines (`name
    (131072, 1, 1)x(256, 1, 1), CC 8.9`) and wrote notes after values (`93.58   # <- ...`): the
    launches are read in file order, said in a warning, and the notes are no part of a value."""
    path = DATA / "2024.x" / "eppie-learn-cuda-readme-edited-kernel-lines.md"
    with reader_notes.trimmed() as notes:
        tables = ncu_text.read_tables(path, "s")
    m = schema.validate(tables[schema.METRICS.name], schema.METRICS)
    assert list(m["name"]) == [
        "copy_scalar(const float *, float *, int)",
        "copy_strided(const float *, float *, int)",
        "copy_vec4(const float4 *, float4 *, int)",
    ]
    assert list(m["kernel_id"]) == [0, 1, 2]
    assert list(m["grid"]) == ["(131072, 1, 1)", "(131072, 1, 1)", "(32768, 1, 1)"]
    assert list(m["duration_ns"]) == [242_210, 1_480_000, 239_200]  # us 242.21, ms 1.48, ...
    assert list(m["dram_throughput_pct"]) == [93.58, 84.61, 93.76]  # (two with a note after)
    assert list(m["sm_throughput_pct"]) == [8.96, 2.76, 2.22]
    c = tables[schema.COUNTERS.name]
    first = c[c["kernel_id"] == 0]
    assert len(first) == 9 and len(c) == 9 + 5 + 4
    memory = first[first["metric"] == "Memory Throughput"].iloc[0]
    assert (memory["unit"], memory["value"], memory["text"]) == ("%", 93.58, "93.58")
    assert [str(n) for n in notes] == [
        "line 152: 3 of the 3 kernel lines end at `, CC X.Y` without ncu's `Context N, Stream "
        "N` (edited by hand): launches numbered in file order"
    ]
    assert not notes[0].partial


def test_text_2019_metrics_table_whose_rules_were_cut_to_one_dash_run():
    """OLCF's Summit guide quotes a 2019 `--metrics` run whose rules were cut to one dash run,
    shorter than the row, and whose kernel line starts with a stray `[` (its `[pid] app@host`
    line cut away by hand): the row is cut at its blanks, its value and unit kept, and the
    kernel named without the `[`, in a warning that says so."""
    path = DATA / "2019.x" / "olcf-summit-guide-metrics-rule-cut-short.txt"
    with reader_notes.trimmed() as notes:
        tables = ncu_text.read_tables(path, "s")
    m = schema.validate(tables[schema.METRICS.name], schema.METRICS)
    assert list(m["name"]) == ["compute_gemm"] and list(m["kernel_id"]) == [0]
    c = tables[schema.COUNTERS.name]
    assert len(c) == 1
    row = c.iloc[0]
    assert row["metric"] == "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
    assert (row["unit"], row["value"], row["text"]) == ("%", 43.44, "43.44")
    assert (row["section"], row["name"]) == ("Command line profiler metrics", "compute_gemm")
    assert [str(n) for n in notes] == [
        "line 3: 1 kernel line(s) start with a stray `[` (what is left of ncu's `[pid] app@host` "
        "line, edited by hand): read as `compute_gemm`"
    ]


def test_text_one_dash_run_opens_a_table_only_right_under_a_section_line(tmp_path):
    """Synthetic, from the Summit guide's cut: a mapped metric in a table whose rule is one
    dash run gives its value in the METRICS unit (msecond -> ns; a count's blank unit), and the
    program's own `-----` lines after a launch open no table (its `Duration` line is not ncu's)."""
    path = tmp_path / "ncu.txt"
    path.write_text(
        "  k(int), 2019-Aug-08 12:48:39, Context 1, Stream 7\n"
        "    Section: GPU Speed Of Light\n"
        "    ----------------------------------------------------------------------\n"
        "    Duration                                     msecond                1.25\n"
        "    Registers Per Thread                                                  40\n"
        "    ----------------------------------------------------------------------\n"
        "  j(int), 2019-Aug-08 12:48:40, Context 1, Stream 7\n"
        "-----------------\n"
        "    Duration                                     msecond                9.99\n"
        "-----------------\n"
    )
    m = ncu_text.read_metrics(path, "s")
    assert list(m["name"]) == ["k(int)", "j(int)"]
    assert m["duration_ns"].iloc[0] == 1_250_000 and m["registers"].iloc[0] == 40
    assert m["duration_ns"].isna().iloc[1]


def test_a_line_ending_in_cc_without_a_launch_shape_is_no_kernel_line():
    """`, CC 8.9` alone ends lines that are no kernel line (a device list): the launch shape
    before it is needed."""
    assert ncu_walk.launch_shape("GPU 0: RTX 4090, CC 8.9") is None
    assert ncu_walk.launch_shape("k(int) (2, 1, 1)x(32, 1, 1), CC 8.9") == (
        "k(int)",
        "(2, 1, 1)",
        "(32, 1, 1)",
    )
    assert ncu_walk.without_note("    # SMs    SM    128") == "    # SMs    SM    128"
    assert ncu_walk.without_note("  Duration  us  1.5   # <- slow") == "  Duration  us  1.5"
    row = "    Registers Per Thread       #    40"  # (a unit `#`, no note)
    assert ncu_walk.without_note(row) == row


@pytest.mark.parametrize(
    "path, said",
    [
        (
            DATA / "2024.3.2" / "tornadovm-nvgpuctrperm-error.log",
            "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA "
            "GPU Performance Counters on the target device 0.",
        ),
        (
            DATA / "2026.2.1" / "tornadovm-connect-error.log",
            "==ERROR== Nsight Compute failed to connect to the CUDA driver",
        ),
    ],
)
def test_error_only_output_is_refused_with_ncus_own_line(path, said):
    with pytest.raises(ParseError) as exc:
        ncu_text.read_metrics(path, "s")
    message = str(exc.value)
    assert str(path) in message and said in message and "profiled no kernel" in message
    assert "\n" not in message


def test_no_kernels_profiled_warning_is_quoted(tmp_path):
    """The warning ncu writes when a filter matched nothing (its words, as ncu prints them)."""
    path = tmp_path / "ncu.txt"
    path.write_text(
        "==PROF== Connected to process 1929595 (/home/u/cnn)\n"
        "==PROF== Disconnected from process 1929595\n"
        "==WARNING== No kernels were profiled.\n"
    )
    with pytest.raises(ParseError, match="it said '==WARNING== No kernels were profiled.'"):
        ncu_text.read_metrics(path, "s")


def test_text_bad_value_and_misfit_row_name_their_line(tmp_path):
    src = DATA / "2022.x" / "matrix_sums.profile1-simple.output"
    text = src.read_text()
    bad = text.replace("msecond                          11.97", "msecond" + " " * 25 + "-11.97")
    path = tmp_path / "bad.txt"
    path.write_text(bad)
    line = next(i for i, ln in enumerate(bad.splitlines(), 1) if "-11.97" in ln)
    with pytest.raises(ParseError, match=f"line {line}, metric 'Duration': '-11.97' is negative"):
        ncu_text.read_metrics(path, "s")
    wide = "msecond " + "1" * 40 + ".97"  # a value wider than its column
    bad = text.replace("msecond                          11.97", wide)
    path.write_text(bad)
    line = next(i for i, ln in enumerate(bad.splitlines(), 1) if "1111.97" in ln)
    with pytest.raises(ParseError, match=f"line {line}: a metric row does not fit its table"):
        ncu_text.read_metrics(path, "s")


def test_a_summary_row_whose_cells_run_together_does_not_fit(tmp_path):
    """heat-eq's per-kernel summary (2024.x) with the blank between a Duration row's Minimum and
    Maximum cells filled (`1.950   2.27`): the row does not fit its table, so it is refused, as
    its counter was left out (the metric reader checked the blanks around the unit and before
    the Average only, and read it; `ncu_text` now cuts rows as `ncu_text_counters` does)."""
    text = (DATA / "2024.x" / "heat-eq-print-summary-per-kernel.txt").read_text()
    row = "    Duration                         us     1.95     2.27     2.07\n"
    assert text.count(row) == 1  # line 55
    path = tmp_path / "summary.txt"
    path.write_text(text.replace(row, row.replace("1.95 ", "1.950")))
    with pytest.raises(ParseError, match="line 55: a metric row does not fit its table"):
        ncu_text.read_metrics(path, "s")


def test_text_long_lines_are_linear(tmp_path):
    from test_parse_values import deadline

    text = (DATA / "2023.x" / "ppc-max-flops.txt").read_text()
    path = tmp_path / "long.txt"
    tail = " " * 300_000 + ", Context 1\n" + "x" * 300_000 + ", Context 1, Stream\n"
    path.write_text(text + tail + "    " + "-" * 300_000 + " " + "- " * 100_000 + "\n")
    with deadline(20):
        assert len(ncu_text.read_metrics(path, "s")) == 1


# --- `ncu --csv --print-summary per-kernel` ----------------------------------------------------


def test_per_kernel_summary_csv(tmp_path):
    """No whole per-kernel summary CSV was found in public repositories (only excerpts with
    elided rows), so this one is built here from the real H100 details page: its header and
    layout as ncu 2025.x prints them (`"Process ID","Process Name",...,"Invocations",...,
    "Minimum","Maximum","Average"`), one row per kernel shape and metric, the values the min,
    max and mean over the launches of the real file."""
    table = csv_rows(DETAILS)
    h = {name: i for i, name in enumerate(table[0])}
    groups: dict[tuple, dict[tuple, list[float]]] = {}
    for r in table[1:]:
        shape = (r[h["Kernel Name"]], r[h["Block Size"]], r[h["Grid Size"]])
        key = (r[h["Section Name"]], r[h["Metric Name"]], r[h["Metric Unit"]])
        cell = r[h["Metric Value"]].replace(",", "")
        if re.fullmatch(r"[0-9.]+", cell):
            groups.setdefault(shape, {}).setdefault(key, []).append(float(cell))
    head = '"Process ID","Process Name","Host Name","Kernel Name","Block Size","Grid Size",'
    head += '"Device","CC","Invocations","Section Name","Metric Name","Metric Unit",'
    head += '"Minimum","Maximum","Average"'
    lines = ["==PROF== Connected to process 543 (/usr/bin/python3.12)", head]
    for (kernel, block, grid), metrics in groups.items():
        for (section, metric, unit), vals in metrics.items():
            stats = [min(vals), max(vals), sum(vals) / len(vals)]
            cells = ["543", "python3.12", "127.0.0.1", kernel, block, grid, "0", "9.0"]
            cells += [str(len(vals)), section, metric, unit] + [f"{v:,.2f}" for v in stats]
            lines.append(",".join(f'"{c}"' for c in cells))
    path = tmp_path / "summary.csv"
    path.write_text("\n".join(lines) + "\n")
    m = schema.validate(ncu_csv.read_metrics(path, "s"), schema.METRICS)
    assert list(m["name"]) == ["scale", "relu"] and list(m["kernel_id"]) == [0, 1]
    for k, kernel in enumerate(["scale", "relu"]):
        durations = [
            float(r[h["Metric Value"]].replace(",", ""))
            for r in table[1:]
            if r[h["Kernel Name"]] == kernel and r[h["Metric Name"]] == "Duration"
        ]
        assert len(durations) == 8  # ns in this file
        assert m["duration_ns"].iloc[k] == round(float(f"{sum(durations) / 8:.2f}"))
    assert set(m["registers"]) == {16} and set(m["grid"]) == {"(4096, 1, 1)"}


def test_a_launch_number_that_is_a_digit_but_not_decimal_is_not_a_crash(tmp_path):
    """'²'.isdigit() is true and int('²') fails: such a line's number is not used, and the
    launches are numbered in order, as for any line whose number cannot be read."""
    source = Path(__file__).parent / "data/ncu/2022.x/matrix_sums.profile1-simple.output"
    text = source.read_text(encoding="utf-8")
    weird = tmp_path / "sup.output"
    weird.write_text(text.replace('"row_sums" - 0:', '"row_sums" - \u00b2:', 1), encoding="utf-8")
    table = ncu_text.read_metrics(weird, "s")
    assert table["kernel_id"].tolist() == [0, 1]  # in order: one line's number was unreadable
    assert table.equals(ncu_text.read_metrics(source, "s"))  # (the file numbers them 0, 1)


def test_device_ordinal_of_a_superscript_digit_is_none():
    from profiler.parse import gpuops

    assert gpuops.device_ordinal("\u00b2") is None
    assert gpuops.device_ordinal(" 3 ") == 3


def test_a_failed_launch_is_refused_with_ncus_error_before_the_bad_value():
    """A real capture whose launch failed: ncu printed `==ERROR== LaunchFailed` and then a
    table of `(!) nan`. The refusal says what ncu said first, then the first bad value."""
    path = DATA / "2023.x" / "dd2360-launch-failed-nan.txt"
    with pytest.raises(ParseError) as exc:
        ncu_text.read_metrics(path, "s")
    message = str(exc.value)
    assert "ncu said '==ERROR== LaunchFailed'; line 21, metric 'DRAM Throughput': '(!) nan'" in (
        message
    )
    assert "\n" not in message


def test_a_bad_value_without_an_ncu_error_is_refused_as_before(tmp_path):
    source = DATA / "2023.x" / "dd2360-launch-failed-nan.txt"
    path = tmp_path / "no-error.txt"
    text = source.read_text(encoding="utf-8")
    path.write_text(text.replace("==ERROR==", "==INFO=="), encoding="utf-8")
    with pytest.raises(ParseError) as exc:
        ncu_text.read_metrics(path, "s")
    assert "ncu said" not in str(exc.value)
    assert "line 21, metric 'DRAM Throughput'" in str(exc.value)  # the first in file order


SECTION_PAGE = NCU.parent / "2025.x" / "codegandee-memory-workload-section.csv"


def test_details_page_that_ends_on_a_metric_row_is_whole():
    """CodeGandee/llm-perf-opt's page of one section (Memory Workload Analysis) and no rules:
    ncu writes a metric row's cells up to `Metric Value` and one comma, so its last row has
    16 of the header's 20 cells (it was refused as truncated); its seven metrics, as printed."""
    tables = ncu_csv.read_tables(SECTION_PAGE, "s")
    counters = tables["counters"]
    assert list(counters["metric"]) == [
        "Memory Throughput", "Mem Busy", "Max Bandwidth", "L1/TEX Hit Rate",
        "L2 Compression Ratio", "L2 Hit Rate", "Mem Pipes Busy",
    ]  # fmt: skip
    assert list(counters["value"]) == [345.14, 8.59, 19.66, 40.73, 0.0, 27.66, 7.55]
    assert list(counters["unit"][:2]) == ["Gbyte/s", "%"]
    assert set(counters["section"]) == {"Memory Workload Analysis"}
    assert len(tables["metrics"]) == 1 and tables["metrics"]["kernel_id"].tolist() == [0]


def test_details_page_cut_inside_a_metric_value_is_refused(tmp_path):
    text = SECTION_PAGE.read_text()
    path = tmp_path / "cut.csv"
    path.write_text(text[: text.rindex('"7.55",')])  # the last row stops before its value
    with pytest.raises(ParseError, match="the last row has fewer than the header's 16 cells"):
        ncu_csv.read_tables(path, "s")


@pytest.mark.parametrize(
    ("found", "cut"),
    [
        ('"Duration","ns","5,856",', '"Duration","ns",5,856,'),  # the value's quotes lost
        ('"scale","1","13"', '"sc,ale","1","13"'),  # a comma in the kernel name, unquoted
    ],
)
def test_details_page_metric_row_split_by_an_unquoted_comma_is_refused(tmp_path, found, cut):
    """The real H100 page with one row's cell split by a comma outside quotes: its cells after
    the split move right, so `Metric Value` holds a piece of another cell (the value `5,856`
    read as 5 ns). ncu leaves a metric row's rule cells empty, so the row is refused."""
    text = DETAILS.read_text()
    assert found in text
    path = tmp_path / "split.csv"
    path.write_text(text.replace(found, cut.replace('"sc,ale"', "sc,ale"), 1))
    with pytest.raises(ParseError, match="launch '0', metric .*: its row has a cell after Metric"):
        ncu_csv.read_tables(path, "s")
    ncu_csv.read_tables(DETAILS, "s")  # the page as ncu wrote it is read


@pytest.mark.parametrize(
    ("name", "kernel"),
    [
        ("gpu-anatomy-sync-load-cc12-metrics.cu", "sync_load"),
        ("gpu-anatomy-cp-async-cc12-metrics.cu", "cp_async"),
    ],
)
def test_text_on_compute_capability_12_dram_bytes_op_names(name, kernel):
    """ncu text of a CC 12.0 GPU kept in a CUDA file's comment: its DRAM byte counters are named
    `dram__bytes_op_read.sum` and `dram__bytes_op_write.sum` (Blackwell GB20x has no
    `dram__bytes_read.sum`) and give dram_read_bytes and dram_write_bytes, in Mbyte as printed."""
    path = DATA / "2025.x" / name
    text = path.read_text()
    m = schema.validate(ncu_text.read_metrics(path, "s"), schema.METRICS)
    assert list(m["name"]) == [f"{kernel}(const float *, float *)"]
    for column, metric in [("dram_read_bytes", "read"), ("dram_write_bytes", "write")]:
        printed = re.search(rf"dram__bytes_op_{metric}\.sum +Mbyte +([\d.]+)", text)
        assert printed is not None
        assert list(m[column]) == [round(float(printed.group(1)) * 1e6)]
    registers = re.search(r"launch__registers_per_thread +register/thread +(\d+)", text)
    assert registers is not None and list(m["registers"]) == [int(registers.group(1))]


def test_a_launch_with_no_section_table_is_said_by_name_and_line():
    path = Path(__file__).parent / "data" / "ncu" / "2025.x" / "codealign-ncu-no-sections-es-cut.md"
    text = path.read_text(encoding="utf-8").splitlines()
    line = next(i for i, ln in enumerate(text, 1) if ln.startswith("  gemv_naive_kernel("))
    assert not any("Section:" in ln for ln in text)
    with pytest.warns(reader_notes.ReadNote) as said:
        metrics = ncu_text.read_metrics(path, "s")
    notes = [str(w.message) for w in said if "no `Section:` table" in str(w.message)]
    assert notes == [
        f"line {line}: the launch of 'gemv_naive_kernel(const float *, const float *, float *, "
        "int, int)' has no `Section:` table under the kernel line: no metric values; the row "
        "holds the kernel's name, grid and block only"
    ]
    assert (metrics["grid"].tolist(), metrics["block"].tolist()) == (["(4, 1, 1)"], ["(256, 1, 1)"])
    assert metrics[["duration_ns", "sm_throughput_pct", "registers"]].isna().all().all()


def test_a_page_without_its_metric_unit_column_is_refused(tmp_path):
    """A details page whose `Metric Unit` header cell is mangled leaves its values without
    units: refused, naming the column (not a KeyError)."""
    text = (NCU / "details-sections.csv").read_text()
    page = tmp_path / "page.csv"
    page.write_text(text.replace('"Metric Unit"', '"Metric Uni;"', 1))
    with pytest.raises(ParseError, match="has Metric Value and Metric Name but no Metric Unit"):
        ncu_csv.read_tables(page, "s")


def test_a_capture_whose_summary_lacks_its_metric_unit_column_keeps_the_rest(tmp_path, capsys):
    """The device fuzz's crash: a capture's ncu per-kernel summary whose `Metric Unit` header
    cell became `Metric Uni;` crashed the import with a KeyError. Now that section is left out
    with a warning that says why, and the capture's nsys tables import."""
    from test_import_pasted import imported

    text = (DATA.parent / "captures" / "vernier-nsys-csv-then-ncu-csv-elided-cut.md").read_text()
    capture = tmp_path / "capture.md"
    capture.write_text(text.replace('"Metric Unit"', '"Metric Uni;"', 1))
    run, said = imported(capture, tmp_path, capsys)
    assert "ncu-csv output left out: its header has Average and Metric Name but no Metric " in said
    assert len(run.table("gpu_activities")) and "counters" not in run.tables
