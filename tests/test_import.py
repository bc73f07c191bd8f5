"""`profgen import` end to end through `profiler.cli.main`, on the real captures in tests/data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from clirun import assert_refused, profgen

from profiler import schema, store
from profiler.analyze import activities
from profiler.cli import main
from profiler.errors import ToolNotFound
from profiler.importer import REASON
from profiler.parse import ncu_csv, nsys_csv

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
    assert set(stages["status"]) == {schema.IMPORTED} and set(stages["reason"]) == {REASON}
    # no repeats said: the time is the GPU span of each whole capture, first start to last end
    trace = run.table("gpu_trace")
    spans = trace.groupby("stage")["end_ns"].max() - trace.groupby("stage")["start_ns"].min()
    assert list(stages["median_ns"]) == [spans["demo"], spans["overlap"]]
    assert set(stages["timing"]) == {schema.GPU_SPAN} and set(stages["repeats"]) == {0}
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
    inputs = tmp_path / "in"
    inputs.mkdir()
    rep = inputs / "overlap.nsys-rep"
    rep.write_bytes(b"\x00binary report\x00")
    path = run_import(capsys, tmp_path / "out", f"overlap={rep}")
    assert calls and calls[0][:2] == ["/opt/fake/nsys", "stats"]
    assert "--force-export=true" in calls[0]
    given = Path(calls[0][-1])  # a copy in a temporary folder: nsys writes its .sqlite there
    assert given.parent != inputs and not given.parent.exists()  # removed afterwards
    assert [p.name for p in inputs.iterdir()] == ["overlap.nsys-rep"]
    run = store.load_run(path)
    assert (
        len(run.table("gpu_trace")) == 32
        and (path / "raw" / "overlap" / "overlap.nsys-rep").is_file()
    )


NO_CUDA_LOG = DATA / "nsys" / "2025.3.1" / "no-cuda-report" / "nsys-stats.log"


def test_nsys_report_without_cuda_data_is_refused_saying_what_nsys_skipped(
    tmp_path, capsys, monkeypatch
):
    """A report with no CUDA or NVTX data (NiuHuangxiaozi/assignment2-systems's mf.nsys-rep):
    nsys writes every CSV empty and says `SKIPPED: ... does not contain ...` in its log (the
    real log, tests/data); the refusal says what nsys found missing (it said only that the
    tables have no rows)."""
    from profiler.collect import nsys as nsys_tool
    from profiler.collect import tools

    def fake_run_tool(cmd, log_path, timeout, **kwargs):  # what nsys 2025.3.1 wrote on the H100
        prefix = Path(cmd[cmd.index("--output") + 1])
        for report in cmd[cmd.index("--report") + 1].split(","):
            prefix.with_name(f"{prefix.name}_{report}.csv").write_text("")
        shutil.copy(NO_CUDA_LOG, log_path)

    monkeypatch.setattr(nsys_tool, "find_nsys", lambda env=None: Path("/opt/fake/nsys"))
    monkeypatch.setattr(tools, "run_tool", fake_run_tool)
    rep = tmp_path / "mf.nsys-rep"
    rep.write_bytes(b"\x00binary report\x00")
    result = profgen(
        ["import", "--model", "m", "--stage", f"mf={rep}", "--out", tmp_path / "o"], capsys
    )
    assert_refused(result, 2, str(rep))
    assert result.err.strip().endswith(
        "(nsys skipped the reports profgen reads: the profile holds no 'CUDA kernel data nor "
        "CUDA trace data' (recorded without `-t cuda`?), and the tables it printed hold no GPU "
        "work)"
    )


def test_sqlite_runs_nsys_stats_without_export(tmp_path, capsys, monkeypatch):
    from profiler.collect import nsys as nsys_tool
    from profiler.collect import tools

    seen: list[tuple[list[str], bytes]] = []

    def fake_run_tool(cmd, log_path, timeout, **kwargs):
        seen.append((cmd, Path(cmd[-1]).read_bytes()))
        prefix = Path(cmd[cmd.index("--output") + 1])
        name = f"{prefix.name}_cuda_gpu_trace.csv"
        shutil.copy(OVERLAP / "cuda_gpu_trace.csv", prefix.with_name(name))

    monkeypatch.setattr(nsys_tool, "find_nsys", lambda env=None: Path("/opt/fake/nsys"))
    monkeypatch.setattr(tools, "run_tool", fake_run_tool)
    db = tmp_path / "overlap.sqlite"
    db.write_bytes(b"SQLite format 3\x00...")
    path = run_import(capsys, tmp_path / "out", f"overlap={db}")
    cmd, given = seen[0]
    assert given == db.read_bytes() and Path(cmd[-1]).suffix == ".sqlite"
    assert not any(a.startswith("--force-export") for a in cmd)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "overlap.sqlite"]
    assert len(store.load_run(path).table("gpu_trace")) == 32
    assert store.load_run(path).meta["inputs"][0]["kind"] == "nsys-rep"


def test_ncu_report_runs_ncu_import(tmp_path, capsys, monkeypatch):
    from profiler.collect import ncu as ncu_tool
    from profiler.collect import tools

    calls = []

    def fake_run_tool(cmd, log_path, timeout, **kwargs):  # ncu --import prints the CSV
        calls.append(cmd)
        with open(log_path, "ab") as log:
            log.write(b"$ " + " ".join(cmd).encode() + b"\n" + NCU_RAW.read_bytes())

    monkeypatch.setattr(ncu_tool, "find_ncu", lambda env=None: Path("/opt/fake/ncu"))
    monkeypatch.setattr(tools, "run_tool", fake_run_tool)
    rep = tmp_path / "counters.ncu-rep"
    rep.write_bytes(b"\x00binary report\x00")
    path = run_import(capsys, tmp_path / "out", f"counters={rep}")
    assert calls[0][:3] == ["/opt/fake/ncu", "--import", str(rep)]
    assert calls[0][3:] == ["--csv", "--page", "raw", "--print-units", "base"]
    run = store.load_run(path)
    expected = ncu_csv.read_metrics(NCU_RAW, "counters")
    got = run.table("metrics").reset_index(drop=True)
    assert len(got) == 16 and list(got["duration_ns"]) == list(expected["duration_ns"])
    assert run.meta["inputs"][0]["kind"] == "ncu-rep"
    assert (path / "raw" / "counters" / "counters.ncu-rep").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counters.ncu-rep", "out"]


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


# --- what an import keeps, and how it fails -----------------------------------------------------


def test_only_the_files_read_are_copied(tmp_path, capsys):
    """A folder's regular report CSVs are read and copied; a symbolic link (here to a secret
    outside the folder) is neither read nor copied, and neither are non-CSV files."""
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$SECRET-HASH:19000:0:99999:7:::\n")
    folder = tmp_path / "stage"
    shutil.copytree(DEMO, folder)
    (folder / "evil_cuda_api_trace.csv").symlink_to(secret)
    (folder / "cuda_gpu_trace_copy.csv.lnk").symlink_to(secret)
    (folder / "notes.txt").write_text("not a report\n")
    (folder / "unrelated.csv").write_text("a,b\n1,2\n")
    path = run_import(capsys, tmp_path / "out", f"s={folder}")
    copied = sorted(p.name for p in (path / "raw" / "s").iterdir())
    assert copied == sorted(
        nsys_csv.report_files(folder)[r].name
        for r in nsys_csv.REPORTS
        if r in nsys_csv.report_files(folder)
    )
    assert "evil_cuda_api_trace.csv" not in copied and "notes.txt" not in copied
    assert all(not (path / "raw" / "s" / n).is_symlink() for n in copied)
    for file in path.rglob("*"):
        if file.is_file():
            assert b"SECRET-HASH" not in file.read_bytes(), file
    listed = json.loads((path / "run.json").read_text())["inputs"][0]["raw"]
    assert sorted(Path(p).name for p in listed) == copied


def test_a_named_link_is_followed_once(tmp_path, capsys):
    """A link given on the command line is the user's choice: resolved, read and copied as the
    regular file it points to."""
    link = tmp_path / "kern.csv"
    link.symlink_to(DEMO / "cuda_gpu_kern_sum.csv")
    path = run_import(capsys, tmp_path / "out", f"k={link}")
    copy = path / "raw" / "k" / "cuda_gpu_kern_sum.csv"
    assert copy.is_file() and not copy.is_symlink()
    assert copy.read_bytes() == (DEMO / "cuda_gpu_kern_sum.csv").read_bytes()


@pytest.mark.parametrize(
    "key",
    [
        "k" * 256,
        "k" * 65,
        "a/b",
        "../up",
        "..",
        ".hidden",
        "-x",
        "_x",
        "a\x00b",
        "a\nb",
        "a b",
        "caf\u00e9",
        "a+b",
    ],
)
def test_bad_stage_keys_are_refused(tmp_path, capsys, key):
    argv = ["import", "--model", "m", f"--stage={key}={DEMO}", "--out", tmp_path]
    assert_refused(profgen(argv, capsys), 2, "--stage", "a stage key is letters, digits and _.-")
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("key", ["k" * 64, "a.b-c_d", "0", "Stage_2.v1"])
def test_good_stage_keys(tmp_path, capsys, key):
    path = run_import(capsys, tmp_path, f"{key}={DEMO / 'cuda_gpu_kern_sum.csv'}")
    assert (path / "raw" / key / "cuda_gpu_kern_sum.csv").is_file()


@pytest.mark.parametrize("model", ["m" * 65, "m\n", "a/b", ""])
def test_bad_model_names_are_refused(tmp_path, capsys, model):
    result = profgen(
        ["import", "--model", model, "--stage", f"a={DEMO}", "--out", tmp_path], capsys
    )
    assert_refused(result, 2, "--model")


def test_report_exists_before_the_run_gets_its_name(tmp_path, capsys, monkeypatch):
    seen = []
    finish = store.finish_run

    def checking_finish(tmp, final=None):
        seen.append((tmp / "report.html").is_file() and (tmp / "run.json").is_file())
        return finish(tmp, final)

    monkeypatch.setattr(store, "finish_run", checking_finish)
    path = run_import(capsys, tmp_path, f"demo={DEMO}")
    assert seen == [True] and (path / "report.html").is_file()
    assert str(path) in (path / "report.html").read_text()  # it names the final directory


def test_interrupt_while_rendering_leaves_no_run(tmp_path, capsys, monkeypatch):
    from profiler.render import html

    def interrupted(run, path):
        raise KeyboardInterrupt

    monkeypatch.setattr(html, "write_report", interrupted)
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"a={DEMO}", "--out", out], capsys)
    assert result.code == 130
    assert list(out.iterdir()) == []  # neither a final-named run nor a .partial one


def test_full_disk_leaves_no_run_and_exits_4(tmp_path, capsys, monkeypatch):
    import errno

    from profiler.render import html

    def full(run, path):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(html, "write_report", full)
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"a={DEMO}", "--out", out], capsys)
    assert_refused(result, 4, f"--out {out}", "No space left on device")
    assert list(out.iterdir()) == []


def test_out_that_is_a_file_is_refused(tmp_path, capsys):
    out = tmp_path / "file"
    out.write_text("x")
    result = profgen(["import", "--model", "m", "--stage", f"a={DEMO}", "--out", out], capsys)
    assert_refused(result, 2, str(out), "not a directory")


def test_report_named_like_an_option_reaches_nsys_as_a_file(tmp_path, capsys, monkeypatch):
    from profiler.collect import nsys as nsys_tool
    from profiler.collect import tools

    calls = []

    def fake_run_tool(cmd, log_path, timeout, **kwargs):
        calls.append(cmd)
        prefix = Path(cmd[cmd.index("--output") + 1])
        for f in OVERLAP.glob("*.csv"):
            shutil.copy(f, prefix.with_name(f"{prefix.name}_{f.name}"))

    monkeypatch.setattr(nsys_tool, "find_nsys", lambda env=None: Path("/opt/fake/nsys"))
    monkeypatch.setattr(tools, "run_tool", fake_run_tool)
    monkeypatch.chdir(tmp_path)
    Path("--help.nsys-rep").write_bytes(b"\x00report\x00")
    path = run_import(capsys, Path("out"), "overlap=--help.nsys-rep")
    cmd = calls[0]
    assert Path(cmd[-1]).is_absolute() and Path(cmd[-1]).name == "report.nsys-rep"  # a copy
    assert not any(a.startswith("--help") for a in cmd)
    assert (path / "raw" / "overlap" / "--help.nsys-rep").is_file()


def test_command_builders_never_pass_a_path_as_an_option(tmp_path, monkeypatch):
    from profiler.collect import ncu, nsys

    monkeypatch.chdir(tmp_path)
    stats = nsys.stats_cmd(Path("nsys"), Path("--help.nsys-rep"), Path("-o"))
    assert stats[-1] == str(tmp_path / "--help.nsys-rep")
    assert stats[stats.index("--output") + 1] == str(tmp_path / "-o")
    imported = ncu.import_cmd(Path("ncu"), Path("--help.ncu-rep"))
    assert imported[2] == str(tmp_path / "--help.ncu-rep")
    prof = nsys.profile_cmd(Path("nsys"), Path("--version"), ["-evil", "--arg"])
    assert f"--output={tmp_path / '--version'}" in prof and prof[-2:] == ["./-evil", "--arg"]
    cmd = ncu.profile_cmd(Path("ncu"), "m:s", Path("--list-sets"), ["-p", "-q"])
    assert cmd[cmd.index("--log-file") + 1] == str(tmp_path / "--list-sets")
    assert cmd[-2:] == ["./-p", "-q"]
    assert nsys.profile_cmd(Path("n"), Path("/o"), ["python3", "-m", "w"])[-3:] == [
        "python3",
        "-m",
        "w",
    ]


def test_stage_with_no_rows_is_refused(tmp_path, capsys):
    lines = (NCU_RAW).read_text().splitlines()
    only = tmp_path / "header.csv"
    only.write_text("\n".join(lines[:5]) + "\n")  # preamble, header, units row
    result = profgen(
        ["import", "--model", "m", "--stage", f"a={only}", "--out", tmp_path / "o"], capsys
    )
    assert_refused(result, 2, str(only), "no rows to import")


def test_import_sets_its_processs_huge_pages_and_string_storage(tmp_path, capsys, monkeypatch):
    from profiler.parse import pages

    calls = []
    monkeypatch.setattr(pages, "set_huge_pages", lambda enabled: calls.append(enabled))
    monkeypatch.setattr(pages, "set_string_storage", lambda storage: calls.append(storage))
    assert main(["import", "--model", "m", "--stage", f"a={DEMO}", "--out", str(tmp_path)]) == 0
    assert calls == [False, "python"]


def test_set_string_storage_changes_new_string_columns_and_gives_the_old_one_back():
    from profiler.parse import pages

    before = pages.set_string_storage("python")
    try:
        assert pd.array(["a"], dtype="string").dtype.storage == "python"
        assert pages.set_string_storage("pyarrow") == "python"
        assert pd.get_option("mode.string_storage") == "pyarrow"
    finally:
        pages.set_string_storage(before)
    assert pd.get_option("mode.string_storage") == before


def test_set_huge_pages_changes_numpys_advice_and_gives_the_old_one_back():
    from profiler.parse import pages

    before = pages.set_huge_pages(False)
    try:
        if before is None:
            pytest.skip("this NumPy cannot change its huge-page advice")
        assert pages.set_huge_pages(True) is False
        assert pages.set_huge_pages(True) is True
    finally:
        if before is not None:
            pages.set_huge_pages(before)
