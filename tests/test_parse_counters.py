"""Every metric and event the profilers print, kept in `counters` as printed (issue 14): real
files' rows, counted and read, for nvprof (text and CSV, metrics and events) and Nsight Compute
(text and CSV)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pandas as pd
import pytest

from profiler import schema
from profiler.parse import ncu_counters, ncu_csv, ncu_text, nvprof
from profiler.parse.nvprof_counters import read_cell

DATA = Path(__file__).parent / "data"
NVPROF = DATA / "nvprof"


def metric_rows(path: Path) -> int:
    """The metric and event rows of an nvprof text file: lines under a `Kernel:` line that
    start with their Invocations."""
    rows, inside = 0, False
    for line in path.read_text(encoding="utf-8").splitlines():
        body = line.strip()
        inside = inside or body.startswith("Kernel:")
        rows += inside and body[:1].isdigit()
    return rows


def csv_rows(path: Path) -> int:
    """The data rows of an nvprof `--csv` metric or event file (each starts with its device)."""
    return sum(line.startswith('"Tesla') for line in path.read_text().splitlines())


def one(counters: pd.DataFrame, kernel: str, metric: str) -> pd.Series:
    """The row of `kernel`'s (name start) `metric`."""
    mine = counters["name"].str.startswith(kernel) & (counters["metric"] == metric)
    assert mine.sum() == 1, (kernel, metric)
    return counters[mine.to_numpy()].iloc[0]


@pytest.mark.parametrize(
    "cell, number, unit",
    [
        ("97.19%", 97.19, "%"),
        (" 7.2244GB/s", 7.2244, "GB/s"),
        ("0.000000B/s", 0.0, "B/s"),
        ("Low (3)", 3.0, ""),
        ("Idle (0)", 0.0, ""),
        ("1,024", 1024.0, ""),
        ("-2.5", -2.5, ""),
        ("1.5e+03", 1500.0, ""),
        ("n/a", math.nan, ""),
        ("Max (x)", math.nan, ""),
        (pd.NA, math.nan, ""),
    ],
)
def test_a_cell_reads_as_its_number_and_unit(cell, number, unit):
    got, got_unit = read_cell(cell)
    assert got_unit == unit
    assert (math.isnan(got) and math.isnan(number)) or got == number


def test_nvprof_text_metrics_every_row():
    """lbp's one thrust kernel: seven metrics, each as printed, throughputs in GB/s kept so."""
    path = NVPROF / "8.x" / "lbp-text-metrics.txt"
    tables = nvprof.read_log(path, "s")
    counters = schema.validate(tables["counters"], schema.COUNTERS)
    assert len(counters) == metric_rows(path) == 7
    assert counters["kernel_id"].tolist() == [0] * 7
    assert counters["name"].tolist() == [tables["metrics"]["name"].iloc[0]] * 7
    row = one(counters, "void thrust::", "dram_read_throughput")
    assert (row["value"], row["unit"], row["text"]) == (7.2243, "GB/s", "7.2243GB/s")
    assert (row["min"], row["max"], row["invocations"]) == (7.2244, 7.2244, 1)
    row = one(counters, "void thrust::", "gld_efficiency")
    assert (row["value"], row["unit"], row["text"]) == (44.48, "%", "44.48%")
    assert counters["section"].isna().all()


def test_nvprof_csv_metrics_every_row():
    """j3d27pt's `--csv --metrics all`: every row, `Low (3)` as 3, GB/s as printed."""
    path = NVPROF / "8.x" / "j3d27pt-csv-metrics.csv"
    counters = nvprof.read_log(path, "s")["counters"]
    assert len(counters) == csv_rows(path) == 124
    row = one(counters, "__kernel___forma_kernel__0__", "dram_utilization")
    assert (row["value"], row["text"]) == (3.0, "Low (3)") and pd.isna(row["unit"])
    row = one(counters, "__kernel___forma_kernel__0__", "dram_read_throughput")
    assert (row["min"], row["max"], row["value"]) == (24.048094, 24.731131, 24.389612)
    assert (row["unit"], row["invocations"]) == ("GB/s", 2)


def test_nvprof_csv_events_every_row():
    """j3d27pt's `--csv --events all`: 141 events of one kernel."""
    path = NVPROF / "8.x" / "j3d27pt-csv-events.csv"
    counters = nvprof.read_log(path, "s")["counters"]
    assert len(counters) == csv_rows(path) == 141 and set(counters["kernel_id"]) == {0}
    row = one(counters, "__kernel___forma_kernel__0__", "tex0_cache_sector_misses")
    assert (row["value"], row["text"]) == (13733664, "13733664") and pd.isna(row["unit"])


def test_a_tegra_events_log_none_of_which_maps_imports_as_counters():
    """A Jetson's `nvprof --events all` (texture and L2 sector counts...): once refused, as no
    event is a column of the metrics table; now every event is read (not its Total column)."""
    path = NVPROF / "9.x" / "minmax-tegra-x1-events.log"
    tables = nvprof.read_log(path, "s")
    assert list(tables) == ["counters"]
    counters = tables["counters"]
    assert len(counters) == metric_rows(path) == 71
    row = one(counters, "GPU_minmax(Nim*", "l2_subp1_read_tex_sector_queries")
    assert (row["value"], row["min"], row["max"]) == (1608, 1608, 1608) and pd.isna(row["unit"])
    assert one(counters, "GPU_minmax", "active_cycles")["text"] == "119909"


def test_nvprof_text_metrics_of_several_kernels_and_levels():
    """gameoflife's `--metrics all` of one kernel, 100 invocations: every row, levels read."""
    path = NVPROF / "8.x" / "gameoflife-text-metrics-prompt.txt"
    counters = nvprof.read_log(path, "s")["counters"]
    assert len(counters) == metric_rows(path)
    assert set(counters["invocations"]) == {100}
    levels = counters[counters["text"].str.endswith(")")]
    assert len(levels) and levels["unit"].isna().all() and levels["value"].notna().all()


# --- Nsight Compute CSV -------------------------------------------------------------------------

NCU = DATA / "ncu"


def ncu_csv_table(path: Path) -> list[dict[str, str]]:
    """The file's CSV rows from its header on (ncu's `==PROF==` lines and the program's output
    above it left out), read with the csv module."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID",'))
    body = [line for line in lines[start:] if not line.startswith("==")]
    return list(csv.DictReader(body))


def test_ncu_csv_details_page_every_metric_row():
    """The H100 details page: every row that names a metric (rule rows do not), each launch's
    section display names with their units, values with thousands separators read."""
    path = NCU / "2025.3.1" / "details-sections.csv"
    tables = ncu_csv.read_tables(path, "s")
    counters = schema.validate(tables["counters"], schema.COUNTERS)
    rows = [r for r in ncu_csv_table(path) if r["Metric Name"]]
    assert len(counters) == len(rows) == 640
    assert counters["kernel_id"].tolist() == [int(r["ID"]) for r in rows]
    assert set(counters["kernel_id"]) == set(tables["metrics"]["kernel_id"])
    first = rows[0]
    assert counters.iloc[0][["section", "metric", "unit", "text"]].tolist() == [
        first["Section Name"],
        first["Metric Name"],
        first["Metric Unit"],
        first["Metric Value"],
    ]
    threads = counters[(counters["kernel_id"] == 15) & (counters["metric"] == "Threads")]
    assert threads[["value", "unit", "text"]].values.tolist() == [
        [1_048_576, "thread", "1,048,576"]
    ]
    assert threads["section"].tolist() == ["Launch Statistics"] and threads["name"].tolist() == [
        "relu"
    ]


def test_ncu_csv_raw_page_every_metric_cell():
    """The H100 raw page: one row per launch and metric column (not the launch's identity or
    NVTX columns), the unit from the units row."""
    path = NCU / "2025.3.1" / "raw-metrics.csv"
    counters = ncu_csv.read_tables(path, "s")["counters"]
    rows = ncu_csv_table(path)
    units, launches = rows[0], rows[1:]
    identity = ncu_counters.IDENTITY
    columns = [c for c in units if c not in identity and "Domain:" not in c]
    assert len(counters) == sum(bool(r[c]) for r in launches for c in columns)
    printed = [c for c in columns if launches[0][c]]  # the first launch's cells, in order
    assert counters["metric"].tolist()[: len(printed)] == printed
    launch = launches[15]
    row = counters[
        (counters["kernel_id"] == int(launch["ID"]))
        & (counters["metric"] == "dram__bytes_read.sum")
    ].iloc[0]
    assert (row["unit"], row["text"]) == (
        units["dram__bytes_read.sum"],
        launch["dram__bytes_read.sum"],
    )
    assert row["value"] == float(launch["dram__bytes_read.sum"].replace(",", ""))
    assert pd.isna(row["section"]) and pd.isna(row["invocations"])


def test_ncu_csv_with_nvtx_columns_every_metric_row():
    """A 2022.x `--csv --nvtx` capture (ykt-gcn, Paddle): fourteen launches' `--metrics` rows."""
    path = NCU / "2022.x" / "ykt-gcn-paddle-nvtx-csv.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID",'))
    rows = list(csv.DictReader(line for line in lines[start:] if not line.startswith("==")))
    counters = ncu_csv.read_tables(path, "s")["counters"]
    assert len(counters) == len(rows) == 140
    row = counters[(counters["kernel_id"] == 4) & (counters["metric"] == "gpu__time_duration.sum")]
    assert row[["unit", "text", "value"]].values.tolist() == [["nsecond", "5,664", 5664.0]]


# --- Nsight Compute text ------------------------------------------------------------------------


def ncu_text_rows(path: Path) -> list[tuple[str, str]]:
    """(section, row) of every metric row of ncu's text tables: the lines between a table's
    opening rule (the second, when a `Metric Name` header follows the first) and its closing
    one."""
    out, section, rules, headed = [], "", 0, False
    for line in path.read_text(encoding="utf-8").splitlines():
        body = line.strip()
        if body.startswith("Section:"):
            section, rules, headed = body.removeprefix("Section:").strip(), 0, False
        elif body and not body.strip("- "):
            rules += 1
        elif body.startswith("Metric Name"):
            headed = True
        elif body and rules == (2 if headed else 1):
            out.append((section, body))
    return out


@pytest.mark.parametrize(
    "name",
    [
        "2020.x/matrix_sums-2a.txt",
        "2020.x/reductions-1b.txt",
        "2022.x/matrix_sums.profile1-simple.output",
        "2022.x/matrix_sums.profile2-flags.output",
        "2023.x/ppc-cp5-matmul.txt",
        "2023.x/ppc-max-flops.txt",
        "2024.x/heat-eq-print-summary-per-kernel.txt",
    ],
)
def test_ncu_text_every_metric_row(name):
    """Every row of every table, in order, under its section, its name, unit and value as the
    row prints them."""
    path = NCU / name
    counters = schema.validate(ncu_text.read_tables(path, "s")["counters"], schema.COUNTERS)
    rows = ncu_text_rows(path)
    assert len(counters) == len(rows)
    assert counters["section"].tolist() == [section for section, _ in rows]
    for (_, row), metric, text in zip(rows, counters["metric"], counters["text"], strict=True):
        assert row.startswith(metric + " ") and row.endswith(" " + text)


def test_ncu_text_counter_values():
    """ppc's max-flops kernel (2023.x): a section's display names, thousands separators read,
    a value that is no number kept as text, the launch's ID."""
    tables = ncu_text.read_tables(NCU / "2023.x" / "ppc-max-flops.txt", "s")
    counters = tables["counters"]
    assert set(counters["kernel_id"]) == set(tables["metrics"]["kernel_id"]) == {0}
    cycles = one(counters, "gpu_kernel", "Elapsed Cycles")
    assert (cycles["section"], cycles["unit"], cycles["value"], cycles["text"]) == (
        "GPU Speed Of Light Throughput",
        "cycle",
        1_532_524_284,
        "1,532,524,284",
    )
    memory = one(counters, "gpu_kernel", "Memory Throughput")  # not a metrics column
    assert (memory["unit"], memory["value"]) == ("%", 0.06)
    cache = one(counters, "gpu_kernel", "Function Cache Configuration")
    assert cache["text"] == "CachePreferNone" and math.isnan(cache["value"])
    assert pd.isna(cache["unit"])


def test_ncu_text_per_kernel_summary_keeps_minimum_and_maximum():
    """`--print-summary per-kernel` (2024.x): Average as the value, with Minimum and Maximum."""
    counters = ncu_text.read_tables(NCU / "2024.x" / "heat-eq-print-summary-per-kernel.txt", "s")[
        "counters"
    ]
    cycles = counters[counters["metric"] == "Elapsed Cycles"].iloc[0]
    assert (cycles["min"], cycles["max"], cycles["value"]) == (4374, 5139, 4661)
    assert cycles["text"] == "4,661.00" and cycles["unit"] == "cycle"
