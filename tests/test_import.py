"""`profgen import` end to end through `profiler.cli.main`, on the real captures in tests/data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from profiler import schema, store
from profiler.analyze import activities
from profiler.cli import main
from profiler.errors import ToolNotFound
from profiler.importer import REASON
from profiler.parse import nsys_csv

DATA = Path(__file__).parent / "data"
DEMO, OVERLAP = DATA / "nsys" / "2025.3.1" / "demo", DATA / "nsys" / "2025.3.1" / "overlap"
NCU_RAW = DATA / "ncu" / "2025.3.1" / "raw-metrics.csv"
NVPROF_TEXT = DATA / "nvprof" / "9.x" / "cuda-stream-summary.txt"
NVPROF_TRACE = DATA / "nvprof" / "8.x" / "contention-gpu-trace.csv"


def run_import(
    capsys: pytest.CaptureFixture[str], out: Path, *stages: str, titles: tuple[str, ...] = ()
) -> Path:
    argv = ["import", "--model", "fixtures", "--out", str(out)]
    argv += [a for s in stages for a in ("--stage", s)] + [
        a for t in titles for a in ("--title", t)
    ]
    assert main(argv) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    return Path(lines[-1])  # the run directory is the last line


def test_two_nsys_folders(tmp_path, capsys):
    path = run_import(
        capsys, tmp_path, f"demo={DEMO}", f"overlap={OVERLAP}", titles=("demo=One kernel",)
    )
    assert path.parent == tmp_path and path.name.startswith("fixtures-") and path.is_dir()
    assert not list(tmp_path.glob(".*partial"))
    run = store.load_run(path)
    meta = json.loads((path / "run.json").read_text())
    assert meta["source"] == "import" and meta["stages"] == ["demo", "overlap"]
    assert meta["command"].startswith("profgen import --model fixtures")
    assert [i["path"] for i in meta["inputs"]] == [str(DEMO.resolve()), str(OVERLAP.resolve())]
    assert (path / "raw" / "demo" / "cuda_gpu_trace.csv").read_bytes() == (
        DEMO / "cuda_gpu_trace.csv"
    ).read_bytes()
    assert (path / "raw" / "overlap" / "nvtx_sum.csv").is_file()
    stages = run.table("stages")
    assert list(stages["stage"]) == ["demo", "overlap"] and list(stages["order"]) == [0, 1]
    assert list(stages["title"]) == ["One kernel", "overlap"]
    assert set(stages["status"]) == {schema.PASS} and set(stages["reason"]) == {REASON}
    assert stages["median_ns"].isna().all()  # no timings in the inputs: missing, not invented
    act = run.table("gpu_activities")
    for key, folder in (("demo", DEMO), ("overlap", OVERLAP)):
        expected = activities.gpu_activities(nsys_csv.read_stats_dir(folder, key)["gpu_trace"])
        got = act[act["stage"] == key].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, expected, check_exact=False)
    assert list(pd.unique(act["stage"])) == ["demo", "overlap"]
    assert set(run.tables) >= {"gpu_trace", "gpu_activities", "api_calls", "ranges", "stages"}
    assert len(run.table("gpu_trace")) == 5 + 32
    report = (path / "report.html").read_text()
    assert "One kernel" in report and "[CUDA memcpy HtoD]" in report


def test_nvprof_ncu_and_stdout_inputs(tmp_path, capsys):
    stdout = DEMO / "nsys-stats-stdout.txt"
    path = run_import(
        capsys,
        tmp_path,
        f"text={NVPROF_TEXT}",
        f"trace={NVPROF_TRACE}",
        f"counters={NCU_RAW}",
        f"captured={stdout}",
    )
    run = store.load_run(path)
    act = run.table("gpu_activities")
    assert set(act["stage"]) == {"text", "trace", "captured"}
    assert len(act[act["stage"] == "text"]) == 7 and len(act[act["stage"] == "trace"]) == 3
    assert len(run.table("api_calls")[lambda d: d["stage"] == "text"]) == 17
    assert set(run.table("metrics")["stage"]) == {"counters"} and len(run.table("metrics")) == 16
    assert set(run.table("gpu_trace")["stage"]) == {"trace", "captured"}
    kinds = {i["stage"]: i["kind"] for i in run.meta["inputs"]}
    assert kinds == {
        "text": "nvprof",
        "trace": "nvprof",
        "counters": "ncu-csv",
        "captured": "nsys-text",
    }
    assert (path / "raw" / "counters" / "raw-metrics.csv").is_file()


def test_nsys_report_runs_nsys_stats(tmp_path, capsys, monkeypatch):
    from profiler.collect import nsys as nsys_tool
    from profiler.collect import tools

    calls = []

    def fake_run_tool(cmd, log_path, timeout, **kwargs):  # writes what `nsys stats --output` writes
        calls.append(cmd)
        prefix = Path(cmd[cmd.index("--output") + 1])
        for f in OVERLAP.glob("*.csv"):
            shutil.copy(f, prefix.with_name(f"{prefix.name}_{f.name}"))

    monkeypatch.setattr(nsys_tool, "find_nsys", lambda env=None: Path("/opt/fake/nsys"))
    monkeypatch.setattr(tools, "run_tool", fake_run_tool)
    rep = tmp_path / "overlap.nsys-rep"
    rep.write_bytes(b"\x00binary report\x00")
    path = run_import(capsys, tmp_path / "out", f"overlap={rep}")
    assert calls and calls[0][:2] == ["/opt/fake/nsys", "stats"] and str(rep) in calls[0]
    run = store.load_run(path)
    assert (
        len(run.table("gpu_trace")) == 32
        and (path / "raw" / "overlap" / "overlap.nsys-rep").is_file()
    )


def test_nsys_report_without_nsys(tmp_path, capsys, monkeypatch):
    from profiler.collect import nsys as nsys_tool

    def missing(env=None):
        raise ToolNotFound("nsys (Nsight Systems) was not found: install Nsight Systems")

    monkeypatch.setattr(nsys_tool, "find_nsys", missing)
    rep = tmp_path / "x.nsys-rep"
    rep.write_bytes(b"\x00")
    assert (
        main(["import", "--model", "m", "--stage", f"a={rep}", "--out", str(tmp_path / "o")]) == 4
    )
    err = capsys.readouterr().err
    assert "install Nsight Systems" in err
    assert not any((tmp_path / "o").iterdir())  # no half-written run left behind


@pytest.mark.parametrize(
    "content", [b"\x7fELF\x00\x01\x02" * 40, b"hello, world\nnothing to see\n", b""]
)
def test_bad_file_exits_2_with_one_line(tmp_path, capsys, content):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    code = main(
        [
            "import",
            "--model",
            "m",
            "--stage",
            f"good={DEMO}",
            "--stage",
            f"bad={bad}",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0] and "expected" in err[0]
    assert "Traceback" not in captured.err and captured.out == ""
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_corrupt_file_found_while_parsing(tmp_path, capsys):
    folder = tmp_path / "cut"
    folder.mkdir()
    text = (DEMO / "cuda_gpu_trace.csv").read_text()
    (folder / "cuda_gpu_trace.csv").write_text(text[: text.index("16384,1,1,256") + 5])
    code = main(
        ["import", "--model", "m", "--stage", f"a={folder}", "--out", str(tmp_path / "out")]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and str(folder / "cuda_gpu_trace.csv") in err[0]
    assert not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize(
    "argv_tail, message",
    [
        (["--stage", "a=/no/such/file"], "/no/such/file"),
        (["--stage", f"a={DEMO}", "--stage", f"a={OVERLAP}"], "given twice"),
        (["--stage", f"a={DEMO}", "--title", "b=Nope"], "unknown stage 'b'"),
        (["--stage", f"a/b={DEMO}"], "stage key"),
    ],
)
def test_usage_errors(tmp_path, capsys, argv_tail, message):
    code = main(["import", "--model", "m", "--out", str(tmp_path), *argv_tail])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_bad_model_name(tmp_path, capsys):
    assert (
        main(["import", "--model", "my model", "--stage", f"a={DEMO}", "--out", str(tmp_path)]) == 2
    )
    assert "--model" in capsys.readouterr().err


def test_summaries_derived_from_traces(tmp_path, capsys):
    nested = DATA / "nsys" / "2025.3.1" / "nested"
    run = store.load_run(run_import(capsys, tmp_path, f"nested={nested}"))
    tables = nsys_csv.read_stats_dir(nested, "nested")
    pd.testing.assert_frame_equal(run.table("api_calls"), activities.api_calls(tables["api_trace"]))
    pd.testing.assert_frame_equal(run.table("ranges"), tables["ranges"])  # nvtx_sum's CPU times
    assert len(run.table("api_trace")) == 82 and len(run.table("range_trace")) == 16


def test_single_nsys_report_file(tmp_path, capsys):
    run = store.load_run(run_import(capsys, tmp_path, f"k={DEMO / 'cuda_gpu_kern_sum.csv'}"))
    act = run.table("gpu_activities")
    assert list(act["name"]) == ["addone"] and act["total_ns"].iloc[0] == 33153
    assert run.meta["inputs"][0]["kind"] == "nsys-text"
