"""`profgen show` end to end through `profiler.cli.main`, on runs imported from tests/data."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pandas as pd
import pytest

from profiler import schema, store
from profiler.cli import main
from profiler.render import text, units

DATA = Path(__file__).parent / "data"
DEMO, OVERLAP = DATA / "nsys" / "2025.3.1" / "demo", DATA / "nsys" / "2025.3.1" / "overlap"
NVPROF_TEXT = DATA / "nvprof" / "9.x" / "cuda-stream-summary.txt"


@pytest.fixture
def nsys_run(tmp_path, capsys) -> Path:
    argv = [
        "import",
        "--model",
        "fx",
        "--out",
        str(tmp_path),
        "--stage",
        f"demo={DEMO}",
        "--stage",
        f"overlap={OVERLAP}",
        "--title",
        "overlap=Two streams",
    ]
    assert main(argv) == 0
    path = Path(capsys.readouterr().out.strip().splitlines()[-1])
    return path


def show(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["show", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_gpu_activities_csv(nsys_run, capsys):
    code, out, _ = show(capsys, str(nsys_run), "--table", "gpu_activities", "--format", "csv")
    assert code == 0
    df = pd.read_csv(io.StringIO(out))
    assert list(df.columns) == schema.GPU_ACTIVITIES.names
    assert list(df["stage"]) == ["demo"] * 3 + ["overlap"] * 4
    demo = df[df["stage"] == "demo"].set_index("name")
    # cuda_gpu_kern_sum.csv: addone 33153 ns over 3 instances; mem_time_sum: D2H 5568070 ns
    assert demo.loc["addone", "total_ns"] == 33153 and demo.loc["addone", "calls"] == 3
    assert demo.loc["[CUDA memcpy DtoH]", "total_ns"] == 5568070
    assert demo.loc["[CUDA memcpy DtoH]", "copy_kind"] == "DtoH"
    assert pd.api.types.is_integer_dtype(df["total_ns"]) and pd.api.types.is_integer_dtype(
        df["min_ns"]
    )
    assert df.groupby("stage")["time_pct"].sum().tolist() == pytest.approx([100, 100])


def test_stage_filter_and_json(nsys_run, capsys):
    code, out, _ = show(
        capsys, str(nsys_run), "--table", "gpu_activities", "--stage", "overlap", "--format", "json"
    )
    assert code == 0
    records = json.loads(out)
    assert [r["name"] for r in records] == [
        "[CUDA memcpy DtoH]",
        "[CUDA memcpy HtoD]",
        "scale",
        "relu",
    ]
    assert records[2]["copy_kind"] is None and records[2]["bytes"] is None
    assert records[0]["bytes"] == 33552000 and isinstance(records[0]["total_ns"], int)
    code, out, _ = show(
        capsys, str(nsys_run), "--table", "ranges", "--format", "json", "--stage", "demo"
    )
    assert json.loads(out) == [
        {
            "stage": "demo",
            "name": "stage:demo",
            "calls": 1,
            "total_ns": 494882583,
            "avg_ns": 494882583.0,
            "min_ns": 494882583,
            "max_ns": 494882583,
            "gpu_total_ns": 43036074,
            "gpu_ops": 5,
        }
    ]


def test_text_looks_like_nvprof(nsys_run, capsys):
    code, out, _ = show(capsys, str(nsys_run), "--table", "gpu_activities")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "==PROF== stage demo"
    assert (
        lines[1]
        == "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name"
    )
    assert (
        lines[2] == " GPU activities:   94.04%  5.5681ms         1  5.5681ms  5.5681ms  5.5681ms"
        "  [CUDA memcpy DtoH]"
    )
    assert (
        lines[4]
        == "                    0.56%  33.153us         3  11.051us  10.977us  11.168us  addone"
    )
    assert "==PROF== stage overlap: Two streams" in lines


def test_text_reproduces_real_nvprof_output(tmp_path, capsys):
    """An nvprof summary, imported and shown again, reads exactly as nvprof printed it."""
    assert (
        main(["import", "--model", "nv", "--out", str(tmp_path), "--stage", f"s={NVPROF_TEXT}"])
        == 0
    )
    run = Path(capsys.readouterr().out.strip().splitlines()[-1])
    shown = []
    for table in ("gpu_activities", "api_calls"):
        code, out, _ = show(capsys, str(run), "--table", table)
        assert code == 0
        shown += [ln for ln in out.splitlines() if not ln.startswith("==PROF==")][1:]
    original = NVPROF_TEXT.read_text().splitlines()[4:]
    assert shown == original


def test_other_tables_as_aligned_columns(nsys_run, capsys):
    code, out, _ = show(capsys, str(nsys_run), "--table", "stages")
    lines = out.splitlines()
    # what every stage shares; an import has no items, batch or warm-ups and was told no repeats
    assert code == 0 and lines[0] == "role step, timing gpu_span"
    assert lines[1].split()[:3] == ["stage", "title", "status"]
    assert "median" in lines[1].split() and "technique" not in lines[1]
    assert lines[2].startswith("demo ") and "Two streams" in lines[3]
    assert lines[2].split()[2] == "IMPORTED" and lines[4].startswith("IMPORTED: made from")
    note = " ".join(lines[4:])  # wrapped to the width, never clipped
    assert note.endswith("else for the whole program") and all(len(ln) <= 120 for ln in lines)
    code, out, _ = show(capsys, str(nsys_run), "--table", "gpu_trace", "--stage", "demo")
    assert code == 0 and len(out.splitlines()) == 1 + 5 and "319.69us" in out


def test_unknown_table(nsys_run, capsys):
    code, out, err = show(capsys, str(nsys_run), "--table", "kernels")
    assert code == 2 and out == ""
    assert (
        "unknown table 'kernels'" in err
        and "gpu_activities" in err
        and len(err.strip().splitlines()) == 1
    )


def test_unknown_stage(nsys_run, capsys):
    code, _, err = show(capsys, str(nsys_run), "--table", "gpu_activities", "--stage", "nope")
    assert code == 2 and "unknown stage 'nope'" in err and "demo, overlap" in err


def test_table_the_run_lacks(nsys_run, capsys):
    code, _, err = show(capsys, str(nsys_run), "--table", "metrics")
    assert code == 2 and "no metrics table" in err and "--metrics" in err


def test_not_a_run(tmp_path, capsys):
    code, _, err = show(capsys, str(tmp_path), "--table", "stages")
    assert code == 2 and str(tmp_path) in err


def test_format_table_library_call(nsys_run):
    run = store.load_run(nsys_run)
    csv_text = text.format_table(run, "api_calls", stage="demo", fmt="csv")
    assert csv_text.splitlines()[0] == ",".join(schema.API_CALLS.names)
    assert len(csv_text.splitlines()) == 1 + 15


@pytest.mark.parametrize(
    "ns, shown",
    [
        (928, "928ns"),
        (1_826_000, "1.8260ms"),
        (62_822_000, "62.822ms"),
        (870_170, "870.17us"),
        (8_569_440_000, "8.56944s"),
        (17_246_000_000, "17.2460s"),
        (999_999, "1.0000ms"),
        (999.6, "1.0000us"),
        (pd.NA, "-"),
    ],
)
def test_nvprof_time(ns, shown):
    assert units.nvprof_duration(ns) == shown


METRICS_RUN = Path(__file__).resolve().parent / "data" / "runs" / "lenet-h100-schema1-metrics"


def test_stages_text_fits_120_columns(capsys):
    code, out, _ = show(capsys, str(METRICS_RUN), "--table", "stages")
    lines = out.splitlines()
    assert code == 0 and max(len(line) for line in lines) <= text.WIDTH == 120
    shared = "items 10000, batch 10000, warmup 2, repeats 10, timing host, topk_mismatches 0"
    assert lines[0] == shared
    header = lines[1].split()
    assert header[:4] == ["stage", "title", "role", "status"] and "technique" not in header
    assert {"median", "min", "max", "max_rel_err", "profiled_median"} <= set(header)
    rows = {line.split()[0]: line for line in lines[2:12]}
    assert list(rows) == [
        "torch_cpu", "torch_gpu", "cuda_baseline", "batch_parallel", "conv_opt", "fc_opt",
        "no_sync", "pinned", "fc_coalesced", "overlap_fusion",
    ]  # fmt: skip
    assert "Framework CPU baseline     framework  ERROR" in rows["torch_cpu"]
    assert "127.58ms" in rows["torch_cpu"] and "Image-parallel inference" in rows["batch_parallel"]
    assert "Copy/compute overlap and…" in rows["overlap_fusion"]  # clipped to fit, never wrapped
    assert lines[12].startswith("ERROR torch_cpu: profiler output unreadable: ")
    assert len(lines) == 13


def test_csv_writes_whole_nanoseconds_as_integers(nsys_run, capsys):
    code, out, _ = show(capsys, str(nsys_run), "--table", "ranges", "--format", "csv")
    assert code == 0
    demo = next(line for line in out.splitlines() if line.startswith("demo,stage:demo,"))
    assert demo == "demo,stage:demo,1,494882583,494882583,494882583,494882583,43036074,5"
    code, out, _ = show(capsys, str(nsys_run), "--table", "ranges", "--format", "json")
    assert all(type(r["avg_ns"]) is int for r in json.loads(out) if r["calls"] == 1)


def test_text_escapes_what_a_terminal_would_obey(nsys_run, capsys):
    run = store.load_run(nsys_run)
    stages, acts = run.tables["stages"], run.tables["gpu_activities"]
    stages.loc[stages["stage"] == "overlap", "title"] = "\x1b]0;owned\x07[bold]Two[/] \u202eevil"
    acts.loc[acts["name"] == "scale", "name"] = "scale\x1b[2J\rmasked\n" + "x" * 1_000_000
    store.save_run(run, nsys_run)
    for table in ("stages", "gpu_activities"):
        code, out, _ = show(capsys, str(nsys_run), "--table", table)
        assert code == 0
        assert not any(ch in out for ch in "\x1b\x07\r\u202e"), table
        assert len(out) < 20_000
    assert "scale\\x1b[2J masked" in out and "\\x1b]0;owned\\x07[bold]Two[/] \\u202eevil" in out


def test_a_reader_that_stops_early_gets_a_quiet_exit_141_not_a_crash(tmp_path):
    import subprocess
    import sys

    sample = Path(__file__).resolve().parents[1] / "reports" / "sample-lenet-h100-cupti"
    code = "import sys; from profiler.cli import main; sys.exit(main())"
    argv = [sys.executable, "-c", code, "show", str(sample), "--table", "gpu_trace"]
    proc = subprocess.Popen(
        [*argv, "--format", "csv"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)},
    )
    assert proc.stdout is not None
    proc.stdout.close()  # like `| true`: gone before profgen's first write (it imports first)
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.wait(timeout=60) == 141 and err == "", err
    assert not list(tmp_path.rglob("crash-*.log"))
