"""Every metric and event the profilers print, kept in `counters` as printed (issue 14): real
files' rows, counted and read, for nvprof (text and CSV, metrics and events) and Nsight Compute
(text and CSV)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from profiler import schema
from profiler.parse import nvprof
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
