"""`profgen import` of an Nsight Systems export (.sqlite) without nsys: read with Python's sqlite3
(`profiler.collect.nsys_sqlite`), on the public export in tests/data/nsys/2025.3.2, whose
values its author's nsys printed (tests/gpu/test_import_reports.py checks them through nsys)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from profiler import store
from profiler.cli import main
from profiler.collect import nsys as nsys_tool
from profiler.collect import nsys_sqlite
from profiler.errors import ToolNotFound

EXPORT = Path(__file__).parent / "data" / "nsys" / "2025.3.2" / "qiyue-report1.sqlite"
# What nsys printed for it on its author's desktop (README-zh_CN.md lines 72-79), in ns:
# name -> (calls, total, min, max)
AUTHOR_PRINTED = {
    "matrixMulKernel(float *, float *, float *, int)": (1, 2_644_050, 2_644_050, 2_644_050),
    "[CUDA memcpy HtoD]": (2, 1_154_050, 576_465, 577_585),
    "[CUDA memcpy DtoH]": (1, 1_008_390, 1_008_390, 1_008_390),
}


def no_nsys(env=None):
    raise ToolNotFound("nsys (Nsight Systems) was not found on PATH: install Nsight Systems")


def imported(db: Path, tmp_path: Path, capsys) -> tuple[int, store.Run | None, str]:
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    shutil.copy(db, folder / db.name)
    code = main(["import", "--model", "m", "--stage", f"s={folder / db.name}",
                 "--out", str(tmp_path / "out")])  # fmt: skip
    captured = capsys.readouterr()
    assert [p.name for p in folder.iterdir()] == [db.name]  # nothing written beside it
    run = store.load_run(Path(captured.out.strip().splitlines()[-1])) if code == 0 else None
    return code, run, captured.err


def test_an_export_is_read_without_nsys(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(nsys_tool, "find_nsys", no_nsys)
    code, run, err = imported(EXPORT, tmp_path, capsys)
    assert code == 0, err
    act = run.table("gpu_activities").set_index("name")
    got = {
        n: tuple(int(act.loc[n, c]) for c in ("calls", "total_ns", "min_ns", "max_ns"))
        for n in act.index
    }
    assert got == AUTHOR_PRINTED
    trace = run.table("gpu_trace")
    copies = trace[trace["kind"] == "memcpy"]
    assert copies["bytes"].astype(int).tolist() == [4_194_304] * 3  # exact (nsys prints 4.194 MB)
    assert copies["src_kind"].tolist() == ["pageable", "pageable", "device"]
    kernel = trace[trace["kind"] == "kernel"].iloc[0]
    assert (kernel["grid_x"], kernel["block_x"], kernel["registers"]) == (64, 16, 40)
    calls = run.table("api_calls").set_index("name")
    assert int(calls.loc["cudaMalloc", "calls"]) == 3 and int(calls.loc["cudaMemcpy", "calls"]) == 3
    assert "cudaMalloc_v3020" not in calls.index
    said = run.meta["inputs"][0]["warnings"]
    assert said == [f"{tmp_path / 'in' / EXPORT.name}: read with Python's sqlite3 (its CUDA "
                    "traces, no NVTX ranges): nsys was not found"]  # fmt: skip
    assert "read with Python's sqlite3" in err


def test_an_older_export_without_the_copy_kind_table_names_copies_alike(tmp_path):
    db = tmp_path / "old.sqlite"
    shutil.copy(EXPORT, db)
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE ENUM_CUDA_MEMCPY_OPER")
        con.execute("DROP TABLE ENUM_CUDA_MEM_KIND")
    nsys_sqlite.stats_dir(db, tmp_path / "csv")
    text = (tmp_path / "csv" / "cuda_gpu_trace.csv").read_text()
    assert text.count("[CUDA memcpy Host-to-Device]") == 2
    assert text.count("[CUDA memcpy Device-to-Host]") == 1
    assert text.count(",Pageable,Device,") == 2


def test_api_names_are_cut_as_nsys_cuts_them(tmp_path):
    """nsys's cuda_api_trace drops a name's last six characters when they start `_v`: it
    printed `cudaMalloc_v3020` as `cudaMalloc` but kept `cuGetProcAddress_v2` and
    `cudaStreamIsCapturing_v10000` (nsys 2025.3.1 on the H100 host:
    tests/gpu/test_import_reports.py)."""
    db = tmp_path / "v2.sqlite"
    shutil.copy(EXPORT, db)
    with sqlite3.connect(db) as con:
        for old, new in [("cuModuleGetLoadingMode", "cuGetProcAddress_v2"),
                         ("cudaLaunchKernel_v7000", "cudaStreamIsCapturing_v10000")]:  # fmt: skip
            con.execute("UPDATE StringIds SET value = ? WHERE value = ?", (new, old))
    nsys_sqlite.stats_dir(db, tmp_path / "csv")
    names = [line.split(",")[2] for line in (tmp_path / "csv" / "cuda_api_trace.csv").open()]
    assert names[:3] == ["Name", "cuGetProcAddress_v2", "cudaMalloc"]
    assert "cudaStreamIsCapturing_v10000" in names and "cudaMemcpy" in names


def test_an_export_without_cuda_activity_is_refused_saying_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(nsys_tool, "find_nsys", no_nsys)
    db = tmp_path / "cpu-only.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
        con.execute("CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INT)")
    code, _, err = imported(db, tmp_path, capsys)
    assert code == 4 and len(err.strip().splitlines()) == 1
    assert "nsys (Nsight Systems) was not found on PATH: install Nsight Systems; the export " in err
    assert "holds no CUDA kernel, memory or API activity (recorded without `-t cuda`?)" in err


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"SQLite format 3\x00", "Python's sqlite3 could not read it (file is not a database)"),
        (b"", "it is no Nsight Systems export: it has no StringIds table"),
    ],
)
def test_a_file_sqlite3_cannot_use_is_refused_with_its_reason(
    tmp_path, capsys, monkeypatch, body, said
):
    monkeypatch.setattr(nsys_tool, "find_nsys", no_nsys)
    db = tmp_path / "x.sqlite"
    db.write_bytes(body)
    code, _, err = imported(db, tmp_path, capsys)
    assert code == 4 and len(err.strip().splitlines()) == 1
    assert err.rstrip().endswith(f"install Nsight Systems; {said}")
