"""`profgen import` of real report files, made here by the real tools (marked gpu).

A tiny CuPy program (one named kernel, launched `LAUNCHES` times) runs under `nsys profile` and
under `ncu`; the .nsys-rep, its .sqlite export (`nsys export`) and the .ncu-rep are imported,
each from a folder of its own. What profgen reads must be what the tools print themselves:
the kernel's count and total time from `nsys stats --report cuda_gpu_kern_sum`, and each
launch's duration and registers from `ncu --import --csv --page raw`. profgen must leave the
input folders as they were (`nsys stats` would write a .sqlite beside a .nsys-rep). The tools'
versions and the compared values are printed (run with -s to see them).
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from profiler import store
from profiler.cli import main
from profiler.collect import ncu as ncu_tool
from profiler.collect import nsys as nsys_tool

pytestmark = pytest.mark.gpu

KERNEL = "profgen_tiny_scale"
LAUNCHES = 7
NCU_LAUNCHES = 2
PROGRAM = f"""
import cupy as cp

n = 1 << 20
scale = cp.RawKernel(r'''
extern "C" __global__ void {KERNEL}(float* x, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 1.5f + 1.0f;
}}''', "{KERNEL}")
x = cp.ones(n, dtype=cp.float32)
for _ in range({LAUNCHES}):
    scale(((n + 255) // 256,), (256,), (x, cp.int32(n)))
cp.cuda.runtime.deviceSynchronize()
print("sum", float(x.sum()))
"""


def run(cmd: list[str], cwd: Path) -> str:
    done = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, (cmd, done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout


def csv_table(text: str, first: str) -> pd.DataFrame:
    """The CSV table in a tool's stdout whose header's first cell is `first` (banners and the
    program's output around it ignored), every cell a string."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.lstrip('"').startswith(first))
    body = []
    for line in lines[start:]:
        if not line.strip():
            break
        body.append(line)
    rows = list(csv.reader(io.StringIO("\n".join(body))))
    return pd.DataFrame(rows[1:], columns=rows[0])


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three report files, each alone in its folder, and the tools' own numbers."""
    root = tmp_path_factory.mktemp("reports")
    (root / "tiny.py").write_text(PROGRAM)
    nsys, ncu = nsys_tool.find_nsys(), ncu_tool.find_ncu()
    print("\n" + run([nsys, "--version"], root).strip())
    print(run([ncu, "--version"], root).strip().splitlines()[-1])
    for name in ("rep", "db", "ncu", "ref"):
        (root / name).mkdir()
    run(
        [nsys, "profile", "--trace=cuda", "--sample=none", "--cpuctxsw=none",
         "--force-overwrite=true", "--output", root / "rep" / "tiny", sys.executable, "tiny.py"],
        root,
    )  # fmt: skip
    rep = root / "rep" / "tiny.nsys-rep"
    run(
        [nsys, "export", "--type", "sqlite", "--force-overwrite=true",
         "--output", root / "db" / "tiny.sqlite", rep],
        root,
    )  # fmt: skip
    run(
        [ncu, "--kernel-name", KERNEL, "--launch-count", NCU_LAUNCHES, "--force-overwrite",
         "--export", root / "ncu" / "tiny", sys.executable, "tiny.py"],
        root,
    )  # fmt: skip
    shutil.copy(rep, root / "ref" / "tiny.nsys-rep")  # nsys stats writes beside its input
    return {
        "nsys-rep": rep,
        "sqlite": next((root / "db").glob("*.sqlite")),
        "ncu-rep": next((root / "ncu").glob("*.ncu-rep")),
        "ref": root / "ref" / "tiny.nsys-rep",
        "root": root,
    }


def imported(reports: dict[str, Path], kind: str, capsys: pytest.CaptureFixture[str]):
    """Import one report file; the input folder must be as it was."""
    folder = reports[kind].parent
    before = sorted((p.name, p.stat().st_size) for p in folder.iterdir())
    out = reports["root"] / f"out-{kind}"
    argv = ["import", "--model", "tiny", "--stage", f"s={reports[kind]}", "--out", str(out)]
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert sorted((p.name, p.stat().st_size) for p in folder.iterdir()) == before
    return store.load_run(Path(captured.out.strip().splitlines()[-1]))


def nsys_kernel_summary(reports: dict[str, Path]) -> tuple[int, int]:
    """(instances, total ns) of the kernel, as `nsys stats` prints them."""
    nsys = nsys_tool.find_nsys()
    text = run(
        [nsys, "stats", "--report", "cuda_gpu_kern_sum", "--format", "csv", "--timeunit", "ns",
         "--force-export=true", reports["ref"]],
        reports["root"],
    )  # fmt: skip
    table = csv_table(text, "Time")
    row = table[table["Name"].str.contains(KERNEL, regex=False)].iloc[0]
    total = next(c for c in table.columns if c.startswith("Total Time"))
    return int(row["Instances"].replace(",", "")), int(float(row[total].replace(",", "")))


@pytest.mark.parametrize("kind", ["nsys-rep", "sqlite"])
def test_nsys_report_gives_what_nsys_stats_prints(reports, kind, capsys):
    run_ = imported(reports, kind, capsys)
    instances, total_ns = nsys_kernel_summary(reports)
    act = run_.table("gpu_activities")
    row = act[act["name"] == KERNEL]
    trace = run_.table("gpu_trace")
    kernels = trace[trace["name"] == KERNEL]
    print(f"{kind}: nsys stats {instances} x, {total_ns} ns; profgen "
          f"{row['calls'].tolist()} x, {row['total_ns'].tolist()} ns")  # fmt: skip
    assert instances == LAUNCHES and len(row) == 1 and int(row["calls"].iloc[0]) == instances
    assert abs(int(row["total_ns"].iloc[0]) - total_ns) <= instances  # rounding, 1 ns a launch
    assert len(kernels) == LAUNCHES and abs(int(kernels["duration_ns"].sum()) - total_ns) <= 7
    assert run_.meta["inputs"][0]["kind"] == "nsys-rep"


def test_ncu_report_gives_what_ncu_prints(reports, capsys):
    run_ = imported(reports, "ncu-rep", capsys)
    ncu = ncu_tool.find_ncu()
    text = run(
        [ncu, "--import", reports["ncu-rep"], "--csv", "--page", "raw", "--print-units", "base",
         "--metrics", "gpu__time_duration.sum,launch__registers_per_thread"],
        reports["root"],
    )  # fmt: skip
    table = csv_table(text, "ID")
    units = table.iloc[0]  # the units row
    rows = table.iloc[1:]
    assert units["gpu__time_duration.sum"] in ("ns", "nsecond")
    expected = [int(float(v.replace(",", ""))) for v in rows["gpu__time_duration.sum"]]
    registers = [int(v.replace(",", "")) for v in rows["launch__registers_per_thread"]]
    metrics = run_.table("metrics")
    print(f"ncu-rep: ncu {expected} ns, {registers} registers; profgen "
          f"{metrics['duration_ns'].tolist()} ns, {metrics['registers'].tolist()}")  # fmt: skip
    assert len(metrics) == NCU_LAUNCHES and set(metrics["name"]) == {KERNEL}
    assert all(abs(int(a) - b) <= 1 for a, b in zip(metrics["duration_ns"], expected, strict=True))
    assert metrics["registers"].astype(int).tolist() == registers
    assert run_.meta["inputs"][0]["kind"] == "ncu-rep"


# A report made elsewhere: nsys 2025.3.2 on its author's desktop (tests/data/nsys/README.md). What
# nsys printed for it there (`nsys profile --stats=true`, README-zh_CN.md lines 72-79), in ns:
# name -> (calls, total, min, max).
THIRD_PARTY = Path(__file__).resolve().parents[1] / "data" / "nsys" / "2025.3.2"
AUTHOR_PRINTED = {
    "matrixMulKernel(float *, float *, float *, int)": (1, 2_644_050, 2_644_050, 2_644_050),
    "[CUDA memcpy HtoD]": (2, 1_154_050, 576_465, 577_585),
    "[CUDA memcpy DtoH]": (1, 1_008_390, 1_008_390, 1_008_390),
}


@pytest.mark.parametrize("name", ["qiyue-report1.nsys-rep", "qiyue-report1.sqlite"])
def test_third_party_report_gives_what_its_author_saw(tmp_path, name, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(THIRD_PARTY / name, folder / name)
    code = main(["import", "--model", "q", "--stage", f"a={folder / name}",
                 "--out", str(tmp_path / "out")])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert [p.name for p in folder.iterdir()] == [name]  # nothing written beside it
    run_ = store.load_run(Path(captured.out.strip().splitlines()[-1]))
    act = run_.table("gpu_activities").set_index("name")
    got = {
        n: tuple(int(act.loc[n, c]) for c in ("calls", "total_ns", "min_ns", "max_ns"))
        for n in act.index
    }
    print(f"{name}: {got}")
    assert got == AUTHOR_PRINTED
    trace = run_.table("gpu_trace")
    assert sorted(trace["duration_ns"].astype(int)) == [576_465, 577_585, 1_008_390, 2_644_050]
    assert set(trace.loc[trace["kind"] == "memcpy", "bytes"].astype(int)) == {4_194_000}


# Nsight Compute reports read by ncu and by NVIDIA's report reader for Python: the one ncu's own
# install holds (extras/python), since the GPU machine has no `pip install ncu-report`.
NCU_REPORTS = Path(__file__).resolve().parents[1] / "data" / "ncu" / "reports"


def import_alone(report: Path, tmp_path: Path, capsys) -> store.Run:
    """`profgen import` of `report` alone in a new folder of `tmp_path`: the run."""
    folder = tmp_path / f"in-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    shutil.copy(report, folder / report.name)
    code = main(["import", "--model", "r", "--stage", f"s={folder / report.name}",
                 "--out", str(folder / "out")])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return store.load_run(Path(captured.out.strip().splitlines()[-1]))


def import_metrics(report: Path, tmp_path: Path, capsys) -> tuple[pd.DataFrame, list[str]]:
    """`import_alone`'s metrics and warnings."""
    run_ = import_alone(report, tmp_path, capsys)
    return run_.table("metrics").reset_index(drop=True), run_.meta["inputs"][0].get("warnings", [])


def bundled_reader(monkeypatch) -> None:
    """ncu hidden: the import then reads a report with the `ncu_report` of an Nsight Compute
    install (`ncu_pyreport._bundled`), as a machine without `pip install ncu-report` does."""
    from profiler.collect import ncu_pyreport
    from profiler.errors import ToolNotFound

    assert any(f.is_dir() for f in ncu_pyreport._bundled(None))

    def hidden(env=None):
        raise ToolNotFound("ncu hidden by the test")

    monkeypatch.setattr(ncu_tool, "find_ncu", hidden)


@pytest.mark.parametrize("source", ["made here", "yzwang-profile.ncu-rep"])
def test_ncu_report_read_by_the_python_reader_gives_what_ncu_gives(
    reports, source, tmp_path, capsys, monkeypatch
):
    report = reports["ncu-rep"] if source == "made here" else NCU_REPORTS / source
    by_ncu, said = import_metrics(report, tmp_path, capsys)
    assert said == []
    bundled_reader(monkeypatch)
    by_reader, said = import_metrics(report, tmp_path, capsys)
    print(f"{source}: ncu {by_ncu['duration_ns'].tolist()} ns, reader "
          f"{by_reader['duration_ns'].tolist()} ns; {said}")  # fmt: skip
    assert said and "read with NVIDIA's report reader for Python" in said[0]
    for column in ("kernel_id", "name", "grid", "block", "duration_ns", "registers"):
        assert by_reader[column].tolist() == by_ncu[column].tolist(), column
    for column in ("sm_throughput_pct", "dram_throughput_pct", "achieved_occupancy_pct"):
        ncu_said, reader_said = by_ncu[column].to_numpy(), by_reader[column].to_numpy()
        # ncu's raw page prints percentages to 2 decimals (0.03); the reader gives the double
        assert reader_said == pytest.approx(ncu_said, abs=0.0051, nan_ok=True), column


def test_a_2019_report_is_read_here(tmp_path, capsys):
    """ncu 2025.3.1 crashed on this 2019 `.nsight-cuprof-report` on the H100 host; the import
    then reads it with the report reader of ncu's own install."""
    metrics, said = import_metrics(NCU_REPORTS / "evozone-matrixmul.nsight-cuprof-report",
                                   tmp_path, capsys)  # fmt: skip
    print(f"2019 report: {len(metrics)} launches; {said}")
    assert len(metrics) == 8 and metrics["registers"].tolist() == [16] * 8


@pytest.mark.parametrize("source", ["made here", "qiyue-report1.sqlite"])
def test_an_export_read_by_sqlite3_gives_what_nsys_stats_gives(
    reports, source, tmp_path, capsys, monkeypatch
):
    """The same .sqlite through `nsys stats` and, nsys hidden, through Python's sqlite3
    (`collect.nsys_sqlite`): the same GPU work and API calls; bytes exact where nsys's CSV
    rounds them to kB."""
    from profiler.errors import ToolNotFound

    db = reports["sqlite"] if source == "made here" else THIRD_PARTY / source
    by_nsys = import_tables(db, tmp_path, capsys)

    def hidden(env=None):
        raise ToolNotFound("nsys hidden by the test")

    monkeypatch.setattr(nsys_tool, "find_nsys", hidden)
    by_sqlite = import_tables(db, tmp_path, capsys)
    keys = ["start_ns", "duration_ns", "kind", "name", "grid_x", "block_x", "registers", "stream"]
    nsys_gpu, sqlite_gpu = (t["gpu_trace"].reset_index(drop=True) for t in (by_nsys, by_sqlite))
    print(f"{source}: nsys {len(nsys_gpu)} GPU rows, sqlite3 {len(sqlite_gpu)}")
    pd.testing.assert_frame_equal(sqlite_gpu[keys], nsys_gpu[keys], check_dtype=False)
    exact, rounded = sqlite_gpu["bytes"].dropna(), nsys_gpu["bytes"].dropna()
    assert len(exact) == len(rounded) and all(
        abs(int(e) - int(r)) < 1000 for e, r in zip(exact, rounded, strict=True)
    )
    api = ["start_ns", "duration_ns", "name", "correlation_id"]
    nsys_api, sqlite_api = (t["api_trace"].reset_index(drop=True) for t in (by_nsys, by_sqlite))
    pd.testing.assert_frame_equal(sqlite_api[api], nsys_api[api], check_dtype=False)


def import_tables(db: Path, tmp_path: Path, capsys) -> dict[str, pd.DataFrame]:
    """`import_alone`'s gpu_trace and api_trace."""
    run_ = import_alone(db, tmp_path, capsys)
    return {name: run_.table(name) for name in ("gpu_trace", "api_trace")}
