"""Summaries of their top rows only (what people paste): their rows are imported, and a warning
says which section, its line and how much of its time the rows cover: in the parser
(`reader_notes.TrimmedTable`), on the terminal, in run.json, in the stage's technique (the report)
and under `profgen show`'s stages table. Shares above 100% are still refused. Whole-line cuts
of real pastes from GitHub issues (tests/data/*/README.md)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest
from clirun import profgen

from profiler import store
from profiler.errors import ParseError
from profiler.parse import nsys_capture, nvprof, reader_notes, table_origin, values

DATA = Path(__file__).parent / "data"
DREAMGO = DATA / "nvprof" / "9.x" / "dreamgo-43-top-rows.txt"
LLAMACPP = DATA / "nvprof" / "9.x" / "llamacpp-1375-top-rows-fenced.md"
PYTORCH = DATA / "nsys" / "2022.x" / "pytorch-95347-kern-top-rows.txt"
TIMEMACHINE = DATA / "captures" / "timemachine-1225-nsys-top-rows.md"
TAIL = "a trimmed table; its totals are of the rows shown"


def imported(capsys, tmp: Path, path: Path):  # type: ignore[no-untyped-def]
    result = profgen(["import", "--model", "m", "--out", tmp, "--stage", f"s={path}"], capsys)
    assert result.code == 0, result.err
    run_dir = Path(result.out.strip().splitlines()[-1])
    return result.err, store.load_run(run_dir), run_dir


def test_nvprof_top_gpu_rows_are_read_and_said_trimmed():
    with pytest.warns(reader_notes.TrimmedTable) as said:
        tables = nvprof.read_log(DREAMGO, "s")
    assert [str(w.message) for w in said] == [
        f"the GPU activities rows at line 5 cover 93.18% of its time: {TAIL}"
    ]
    gpu = tables["gpu_activities"]
    assert len(gpu) == 4 and "api_calls" not in tables
    top = gpu.iloc[0]
    assert top["name"] == "turing_h1688cudnn_256x64_sliced1x2_ldg8_relu_exp_small_nhwc_tn_v1"
    assert (top["total_ns"], top["calls"], top["avg_ns"]) == (14_962_500_000, 535_192, 27_957)
    assert (top["min_ns"], top["max_ns"]) == (15_392, 117_020)
    assert gpu["total_ns"].sum() == 14_962_500_000 + 8_722_990_000 + 7_200_010_000 + 916_780_000


def test_fenced_nvprof_summary_with_its_api_calls_trimmed():
    """All five GPU rows (100.01%: no warning), the top three API rows of a fenced paste."""
    with pytest.warns(reader_notes.TrimmedTable) as said:
        tables = nvprof.read_log(LLAMACPP, "s")
    assert [str(w.message) for w in said] == [
        f"the API calls rows at line 8 cover 96.90% of its time: {TAIL}"
    ]
    assert len(tables["gpu_activities"]) == 5
    api = tables["api_calls"]
    assert list(api["name"]) == ["cudaDeviceSynchronize", "cudaMallocHost", "cudaMemcpyAsync"]
    row = api.iloc[2]
    assert (row["total_ns"], row["calls"], row["avg_ns"]) == (694_010_000, 68_229, 10_171)
    assert (row["min_ns"], row["max_ns"]) == (2_280, 5_795_800)


def test_nsys_text_top_kernel_rows_are_read_and_said_trimmed():
    with pytest.warns(reader_notes.TrimmedTable) as said:
        tables = nsys_capture.read_stats_stdout(PYTORCH, "s")
    assert [str(w.message) for w in said] == [
        f"the cuda_gpu_kern_sum rows at line 5 cover 59.20% of its time: {TAIL}"
    ]
    kernels = tables["gpu_activities"]
    assert len(kernels) == 2
    row = kernels.iloc[1]
    assert row["name"] == "triton_mm_0d1d2d"
    assert (row["total_ns"], row["calls"], row["avg_ns"]) == (2_957_846_739, 7_310, 404_630.2)
    assert (row["min_ns"], row["max_ns"]) == (196_575, 1_394_841)


def test_import_says_a_stage_is_trimmed_on_the_terminal_in_run_json_and_its_technique(
    tmp_path, capsys
):
    err, run, run_dir = imported(capsys, tmp_path, DREAMGO)
    note = f"the GPU activities rows at line 5 cover 93.18% of its time: {TAIL}"
    assert f"profgen: warning: stage s: {DREAMGO}: {note}" in err
    meta = json.loads((run_dir / store.RUN_JSON).read_text())
    assert meta["inputs"][0]["warnings"] == [f"{DREAMGO}: {note}"]
    stage = run.table("stages").iloc[0]
    assert stage["technique"] == f"imported from nvprof output; partial: {note}"
    assert run.table("gpu_activities")["total_ns"].sum() == stage["median_ns"]
    assert note in (run_dir / "report.html").read_text()
    shown = profgen(["show", run_dir, "--table", "stages"], capsys).out
    assert f"partial s: {note}" in " ".join(shown.split())  # (wrapped to the terminal)


def test_a_trimmed_table_under_markdown_and_another_blocks_tail(tmp_path, capsys):
    """The fenced tail of an earlier block, a heading, then the top rows of cuda_api_sum."""
    err, run, _ = imported(capsys, tmp_path, TIMEMACHINE)
    note = f"the cuda_api_sum rows at line 12 cover 96.20% of its time: {TAIL}"
    assert f"{TIMEMACHINE}: {note}" in err
    assert f"partial: {note}" in run.table("stages").iloc[0]["technique"]
    api = run.table("api_calls")
    assert len(api) == 7 and api["name"].iloc[0] == "cudaLaunchKernel"
    assert (api["total_ns"].iloc[0], api["calls"].iloc[0]) == (1_575_151_965, 411_939)


def test_trimmed_sections_of_a_capture_are_said_with_the_captures_lines(tmp_path, capsys):
    """nvprof's and nsys's top rows after prompts: a capture of two sections, each trimmed."""
    path = tmp_path / "both.txt"
    nvprof_run = "$ nvprof ./target/release/dream_go --self-play 1\n" + DREAMGO.read_text()
    nsys_run = "$ nsys profile --stats=true python repro.py\n" + PYTORCH.read_text()
    path.write_text(nvprof_run + nsys_run)
    err, run, _ = imported(capsys, tmp_path / "out", path)
    gpu = f"the GPU activities rows at line 6 cover 93.18% of its time: {TAIL}"
    kern = f"the cuda_gpu_kern_sum rows at line 15 cover 59.20% of its time: {TAIL}"
    assert f"{path}: {gpu}" in err and f"{path}: {kern}" in err
    technique = run.table("stages").iloc[0]["technique"]
    assert technique.startswith("imported from a terminal capture: ")
    assert f"partial: {gpu}" in technique and f"partial: {kern}" in technique
    assert len(run.table("gpu_activities")) == 4  # nvprof's section gave the table first


def test_each_nvprof_run_of_a_file_is_said_trimmed_in_its_own_stage(tmp_path, capsys):
    """The paste twice, as two runs (another PID): two stages, each with its own note."""
    path = tmp_path / "runs.txt"
    path.write_text(DREAMGO.read_text() + DREAMGO.read_text().replace("30905", "30906"))
    err, run, _ = imported(capsys, tmp_path / "out", path)
    stages = run.table("stages").set_index("stage")["technique"]
    for key, line in (("s.1", 5), ("s.2", 13)):
        note = f"the GPU activities rows at line {line} cover 93.18% of its time: {TAIL}"
        assert f"{path}: {note}" in err
        assert stages[key].endswith(f"; partial: {note}")
        assert stages[key].count("partial:") == 1


def test_a_whole_table_gives_no_warning(recwarn):
    nvprof.read_log(DATA / "nvprof" / "9.x" / "cuda-stream-summary.txt", "s")
    assert not [w for w in recwarn if issubclass(w.category, reader_notes.TrimmedTable)]


def test_shares_above_100_are_still_refused():
    origin = table_origin.Origin(Path("f"), "x", "h\nr0\nr1\n")
    with pytest.raises(ParseError, match="API calls rows add up to 110.00% of the time, more"):
        values.check_shares(pd.Series([60.0, 50.0]), 0.01, origin, "API calls")
    values.check_shares(pd.Series([60.0, 40.01]), 0.01, origin, "API calls")  # rounding


def test_trimmed_gathers_each_warning_once_and_passes_others_on():
    origin = table_origin.Origin(Path("f"), "x", "h\nr0\n\nr1\nr2\n")
    with pytest.warns(UserWarning, match="other"), reader_notes.trimmed() as found:
        for _ in range(2):
            values.check_shares(pd.Series([50.0, 20.0]), 0.01, origin, "GPU activities", 1)
        warnings.warn("other", UserWarning, stacklevel=1)
    assert [(str(t), t.line) for t in found] == [
        (f"the GPU activities rows at line 4 cover 70.00% of its time: {TAIL}", 4)
    ]
