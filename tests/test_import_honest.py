"""An imported run says what it knows and no more (issue 14, "Honest imported runs").

An imported stage is IMPORTED, never PASS. Its staged-table time is the span the user names
(`--range`), else the GPU span of the capture, else its summed GPU time; divided by the repeats
the program ran when `--repeats` says how many, else a whole-program total. Every value below is
worked out from the input files themselves.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from clirun import assert_refused, profgen

from profiler import schema, store
from profiler.import_timing import REASON

DATA = Path(__file__).parent / "data"
NSYS = DATA / "nsys" / "2025.3.1"
DEMO, NESTED = NSYS / "demo", NSYS / "nested"
NVPROF_TEXT = DATA / "nvprof" / "9.x" / "cuda-stream-summary.txt"
NCU_RAW = DATA / "ncu" / "2025.3.1" / "raw-metrics.csv"


def imported(capsys: pytest.CaptureFixture[str], tmp: Path, *argv: str) -> store.Run:
    result = profgen(["import", "--model", "m", "--out", tmp, *argv], capsys)
    assert result.code == 0, result.err
    return store.load_run(result.out.strip().splitlines()[-1])


def stage_rows(run: store.Run) -> dict[str, dict[str, object]]:
    return {str(r["stage"]): r for r in run.table("stages").to_dict("records")}


def gpu_span(folder: Path) -> int:
    """First start to last end of the capture's cuda_gpu_trace, read here with plain csv."""
    trace = pd.read_csv(next(folder.glob("*cuda_gpu_trace.csv")))
    return int((trace["Start (ns)"] + trace["Duration (ns)"]).max() - trace["Start (ns)"].min())


def test_an_imported_stage_is_imported_never_pass(tmp_path, capsys):
    run = imported(capsys, tmp_path, "--stage", f"a={DEMO}", "--stage", f"b={NVPROF_TEXT}")
    stages = run.table("stages")
    assert list(stages["status"]) == [schema.IMPORTED, schema.IMPORTED]
    assert set(stages["reason"]) == {REASON} and schema.PASS not in set(stages["status"])
    assert list(stages["items"]) == [0, 0]  # an import knows no item count


def test_without_repeats_the_time_is_the_whole_capture_gpu_span(tmp_path, capsys):
    row = stage_rows(imported(capsys, tmp_path, "--stage", f"demo={DEMO}"))["demo"]
    assert row["timing"] == schema.GPU_SPAN and row["repeats"] == 0
    assert row["median_ns"] == gpu_span(DEMO) == 43_036_074
    assert pd.isna(row["min_ns"]) and pd.isna(row["max_ns"])  # no spread is invented


def test_repeats_divide_the_time_all_stages_or_one(tmp_path, capsys):
    run = imported(
        capsys,
        tmp_path,
        *("--stage", f"demo={DEMO}", "--stage", f"nested={NESTED}"),
        *("--repeats", "4", "--repeats", "nested=3"),
    )
    rows = stage_rows(run)
    assert (rows["demo"]["repeats"], rows["nested"]["repeats"]) == (4, 3)
    assert rows["demo"]["median_ns"] == round(gpu_span(DEMO) / 4)
    assert rows["nested"]["median_ns"] == round(gpu_span(NESTED) / 3)
    assert run.meta["settings"]["repeats"] == {"demo": 4, "nested": 3}
    assert "--repeats=4" in run.meta["command"] and "--repeats=nested=3" in run.meta["command"]


def test_a_summary_without_a_trace_is_timed_by_its_summed_gpu_time(tmp_path, capsys):
    row = stage_rows(imported(capsys, tmp_path, "--stage", f"s={NVPROF_TEXT}"))["s"]
    # the Time column of the log's seven GPU activities rows, in ms
    times = ["188.08ms", "184.84ms", "184.82ms", "124.15ms", "123.92ms", "123.01ms", "1.6781ms"]
    gpu_rows = NVPROF_TEXT.read_text().split("API calls:")[0]
    assert all(f"  {t}  " in gpu_rows for t in times) and row["timing"] == schema.GPU_TIME
    assert row["median_ns"] == round(sum(float(t[:-2]) for t in times) * 1e6)


def test_a_metrics_file_has_no_time(tmp_path, capsys):
    row = stage_rows(imported(capsys, tmp_path, "--stage", f"k={NCU_RAW}"))["k"]
    assert pd.isna(row["timing"]) and pd.isna(row["median_ns"])


def test_range_names_the_span_and_repeats_divide_it(tmp_path, capsys):
    """nvtx_sum of nested/: `profgen:compute`, 3 instances, 1,286,551 ns in all."""
    assert ",1286551,3," in (NESTED / "nsys_nvtx_sum.csv").read_text()
    run = imported(capsys, tmp_path, "--stage", f"n={NESTED}", "--range", "compute")
    row = stage_rows(run)["n"]
    assert (row["timing"], row["timing_range"], row["median_ns"]) == (
        schema.NVTX_RANGE,
        "compute",
        1_286_551,
    )
    run = imported(
        capsys, tmp_path, "--stage", f"n={NESTED}", "--range", "n=compute", "--repeats", "3"
    )
    assert stage_rows(run)["n"]["median_ns"] == round(1_286_551 / 3)
    assert run.meta["settings"]["ranges"] == {"n": "compute"}


def test_a_range_for_one_stage_and_the_gpu_span_for_the_other(tmp_path, capsys):
    run = imported(
        capsys, tmp_path, "--stage", f"n={NESTED}", "--stage", f"d={DEMO}", "--range", "n=inner"
    )
    rows = stage_rows(run)
    assert (rows["n"]["timing"], rows["n"]["median_ns"]) == (schema.NVTX_RANGE, 698_692)
    assert (rows["d"]["timing"], rows["d"]["median_ns"]) == (schema.GPU_SPAN, gpu_span(DEMO))


def test_a_range_that_matches_nothing_is_refused_naming_those_there_are(tmp_path, capsys):
    argv = ["import", "--model", "m", "--out", tmp_path, "--stage", f"n={NESTED}"]
    result = profgen([*argv, "--range", "comptue"], capsys)
    assert_refused(result, 2, "--range 'comptue' matches no NVTX range of stage 'n'", "'compute'")
    assert "'demo:stage'" in result.err and not any(tmp_path.iterdir())
    result = profgen(["import", "--model", "m", "--out", tmp_path, "--stage", f"t={NVPROF_TEXT}",
                      "--range", "x"], capsys)  # fmt: skip
    assert_refused(result, 2, "stage 't'", "has no NVTX ranges")


def test_run_json_says_what_the_user_said(tmp_path, capsys):
    run = imported(capsys, tmp_path, "--stage", f"demo={DEMO}")
    meta = json.loads((Path(str(run.path)) / "run.json").read_text())
    assert meta["settings"] == {
        "backend": "import",
        "stages": ["demo"],
        "repeats": {},
        "ranges": {},
    }
