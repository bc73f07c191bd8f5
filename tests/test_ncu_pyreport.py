"""`profgen import` of real Nsight Compute reports without ncu: read with NVIDIA's report reader
for Python (`ncu_report`, a test dependency), on two public reports in tests/data/ncu/reports.
The expected values are read from each report through the reader's own API (in a process of
its own), not through the page profgen writes, and the README's facts of each file are checked
too. Nothing here loads the reader into the test's process: ncu-report 2025.3.1 crashed it."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from profiler import store
from profiler.cli import main
from profiler.collect import ncu as ncu_tool
from profiler.collect import ncu_pyreport, tools
from profiler.errors import ProfgenError, ProfilerRunError, ToolNotFound

REPORTS = Path(__file__).parent / "data" / "ncu" / "reports"
YZWANG = REPORTS / "yzwang-profile.ncu-rep"
EVOZONE = REPORTS / "evozone-matrixmul.nsight-cuprof-report"


def no_ncu(env=None):
    raise ToolNotFound("ncu (Nsight Compute) was not found on PATH: install Nsight Compute")


# Reads a report with the reader's own API, in a process of its own as profgen runs it (in the
# test's process, ncu-report 2025.3.1 crashed on `IMetric.unit()`, with pandas loaded): each
# launch's name, duration, registers and block shape, and the value and unit of `METRICS`.
FACTS = """
import json, sys
import ncu_report
context = ncu_report.load_report(sys.argv[1])
out = []
for r in range(context.num_ranges()):
    span = context.range_by_idx(r)
    for a in range(span.num_actions()):
        action = span.action_by_idx(a)
        names = list(action.metric_names())
        value = lambda m: action[m].value() if m in names else None
        block = [value("launch__block_dim_" + axis) for axis in "xyz"]
        out.append({
            "name": action.name(ncu_report.IAction.NameBase_DEMANGLED),
            "duration_ns": value("gpu__time_duration.sum"),
            "registers": value("launch__registers_per_thread"),
            "block": None if None in block else "(%d, %d, %d)" % tuple(map(int, block)),
            "metrics": {m: [value(m), action[m].unit()] for m in sys.argv[2:] if m in names},
            "names": names,
        })
print(json.dumps(out))
"""
SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"


def launches(report: Path, *metrics: str) -> list[dict]:
    """Each launch of `report` as the reader's API gives it (`FACTS`), None where the report
    holds no such metric."""
    done = subprocess.run(
        [sys.executable, "-c", FACTS, str(report), *metrics],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def imported(tmp_path: Path, report: Path, capsys) -> tuple[store.Run, str]:
    """`profgen import` of `report` (copied into a folder of its own); the run and stderr."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / report.name).write_bytes(report.read_bytes())
    code = main(["import", "--model", "m", "--stage", f"s={folder / report.name}",
                 "--out", str(tmp_path / "out")])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert [p.name for p in folder.iterdir()] == [report.name]  # nothing written beside it
    return store.load_run(Path(captured.out.strip().splitlines()[-1])), captured.err


def test_a_report_is_read_without_ncu(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ncu_tool, "find_ncu", no_ncu)
    run, err = imported(tmp_path, YZWANG, capsys)
    metrics = run.table("metrics").reset_index(drop=True)
    expected = launches(YZWANG)
    assert metrics["name"].tolist() == [e["name"] for e in expected]
    assert metrics["name"].tolist() == ["kernel_A(double *, int, int)",
                                        "kernel_C(double *, const double *, int)"]  # fmt: skip
    assert metrics["duration_ns"].tolist() == [1_168_077_824, 993_024]
    assert metrics["duration_ns"].tolist() == [int(e["duration_ns"]) for e in expected]
    assert metrics["registers"].tolist() == [int(e["registers"]) for e in expected] == [16, 16]
    assert metrics["block"].tolist() == [e["block"] for e in expected] == ["(64, 1, 1)"] * 2
    assert metrics["grid"].tolist() == ["(256000, 1, 1)"] * 2
    said = json.loads((run.path / "run.json").read_text())["inputs"][0]["warnings"]
    assert said == [f"{tmp_path / 'in' / YZWANG.name}: read with {ncu_pyreport.PACKAGE}: "
                    "ncu was not found"]  # fmt: skip
    assert "report reader for Python" in err


def test_every_metric_of_the_report_is_a_counter(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ncu_tool, "find_ncu", no_ncu)
    run, _ = imported(tmp_path, YZWANG, capsys)
    counters = run.table("counters")
    launch = launches(YZWANG, "gpu__time_duration.sum", SM)[1]
    rows = counters[counters["kernel_id"] == 1].set_index("metric")
    duration, unit = launch["metrics"]["gpu__time_duration.sum"]
    assert rows.loc["gpu__time_duration.sum", "value"] == duration == 993_024
    assert rows.loc["gpu__time_duration.sum", "unit"] == unit == "ns"
    assert rows.loc[SM, "value"] == pytest.approx(launch["metrics"][SM][0], rel=1e-15)
    assert set(rows.index) <= set(launch["names"])
    assert len(rows) >= 0.9 * len(launch["names"])  # (metrics without a value: no row)


def test_a_2019_cuprof_report_is_known_and_read(tmp_path, capsys, monkeypatch):
    """Nsight Compute 2019 named its reports .nsight-cuprof-report. This one holds launch
    statistics and occupancy only: names and registers, no duration and no grid dimensions."""
    monkeypatch.setattr(ncu_tool, "find_ncu", no_ncu)
    run, _ = imported(tmp_path, EVOZONE, capsys)
    metrics = run.table("metrics").reset_index(drop=True)
    expected = launches(EVOZONE)
    assert len(metrics) == len(expected) == 8
    assert metrics["name"].tolist() == [e["name"] for e in expected]
    assert metrics["name"].str.contains("matrixMulCUDA_int<", regex=False).tolist() == [
        False, True] * 4  # fmt: skip
    assert metrics["registers"].tolist() == [16] * 8
    assert metrics["duration_ns"].isna().all() and metrics["grid"].isna().all()
    assert run.meta["inputs"][0]["kind"] == "ncu-rep"


def test_a_report_ncu_fails_on_is_read_by_the_reader(tmp_path, capsys, monkeypatch):
    """ncu 2025.3.1 crashes on the 2019 report (on the H100 host): the reader reads it, and
    the note says that ncu failed and how."""

    def crashed(cmd, log_path, timeout, **kwargs):
        with open(log_path, "ab") as log:
            log.write(b"$ " + " ".join(map(str, cmd)).encode() + b"\nSegmentation fault\n")
        raise ProfilerRunError(cmd, 139, "Segmentation fault")

    monkeypatch.setattr(ncu_tool, "find_ncu", lambda env=None: Path("/opt/fake/ncu"))
    monkeypatch.setattr(tools, "run_tool", crashed)
    run, _ = imported(tmp_path, EVOZONE, capsys)
    assert len(run.table("metrics")) == 8
    said = run.meta["inputs"][0]["warnings"][0]
    assert said.endswith(": /opt/fake/ncu --import failed on it (exited with status 139)")
    raw = (run.path / "raw" / "s" / "ncu-import.csv").read_text()
    assert raw.startswith("$ /opt/fake/ncu --import") and "Segmentation fault" in raw


def test_without_the_reader_the_child_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ncu_pyreport, "MODULE", "ncu_report_not_installed_here")
    page = tmp_path / "page.csv"
    assert ncu_pyreport.main([str(YZWANG), str(page)]) == ncu_pyreport.NO_READER
    assert capsys.readouterr().err.strip() == f"{ncu_pyreport.PACKAGE} is not installed"
    assert not page.exists()


def test_without_ncu_or_the_reader_the_refusal_names_both(tmp_path, capsys, monkeypatch):
    def no_reader(report, page, ncu, timeout):  # what `read` raises for the child's NO_READER
        raise ToolNotFound(f"{ncu_pyreport.PACKAGE} is not installed")

    monkeypatch.setattr(ncu_tool, "find_ncu", no_ncu)
    monkeypatch.setattr(ncu_pyreport, "read", no_reader)
    rep = tmp_path / "x.ncu-rep"
    rep.write_bytes(YZWANG.read_bytes())
    code = main(["import", "--model", "m", "--stage", f"s={rep}", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 4 and len(err.strip().splitlines()) == 1
    assert "an Nsight Compute report, read through `ncu --import`, and ncu (Nsight" in err
    assert "or install NVIDIA's report reader for Python (`pip install ncu-report`)" in err


@pytest.mark.parametrize(
    ("returncode", "said"),
    [
        (ncu_pyreport.NO_READER, "is not installed"),
        (ncu_pyreport.UNREAD, "found no profiled launch"),
        (-11, "crashed on it (was killed by signal SIGSEGV)"),
    ],
)
def test_the_child_s_end_is_told_apart(tmp_path, monkeypatch, returncode, said):
    """A reader that crashes (native code) ends its child process, not profgen."""

    def ended(cmd, **kwargs):
        assert cmd[1:3] == ["-m", "profiler.collect.ncu_pyreport"]
        return subprocess.CompletedProcess(cmd, returncode, "", f"x\nreader: {said}\n")

    monkeypatch.setattr(ncu_pyreport.subprocess, "run", ended)
    expected = ToolNotFound if returncode == ncu_pyreport.NO_READER else ProfgenError
    with pytest.raises(expected, match=said.replace("(", r"\(").replace(")", r"\)")) as raised:
        ncu_pyreport.read(YZWANG, tmp_path / "page.csv", None, 10.0)
    assert (type(raised.value) is ToolNotFound) is (returncode == ncu_pyreport.NO_READER)


def test_a_file_the_reader_cannot_load_is_refused_with_its_reason(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ncu_tool, "find_ncu", no_ncu)
    rep = tmp_path / "broken.ncu-rep"
    rep.write_bytes(YZWANG.read_bytes()[:5000])
    code = main(["import", "--model", "m", "--stage", f"s={rep}", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 4 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"profgen: error: {rep}: an Nsight Compute report, read through")
    assert "ncu (Nsight Compute) was not found on PATH: install Nsight Compute; NVIDIA's" in err
    assert "report reader for Python found no profiled launch in it (a report cut short" in err
    gone = tmp_path / "gone.ncu-rep"
    with pytest.raises(ProfgenError, match="report reader for Python could not load it"):
        ncu_pyreport.read(gone, tmp_path / "page.csv", None, 120.0)


def test_the_page_is_ncu_raw_page_layout(tmp_path):
    """The header leads with the raw page's own columns (so `ncu_csv` knows it), a units row
    follows, and each launch is numbered from 0 in the report's order."""
    page = tmp_path / "page.csv"
    ncu_pyreport.read(YZWANG, page, None, 120.0)  # (in a child process, as an import runs it)
    rows = list(csv.reader(io.StringIO(page.read_text())))
    header, units, *launch_rows = rows
    assert header[:4] == ["ID", "Process ID", "Process Name", "Kernel Name"]
    assert header[len(ncu_pyreport.IDENTITY) :] == sorted(header[len(ncu_pyreport.IDENTITY) :])
    assert units[header.index("gpu__time_duration.sum")] == "ns"
    assert units[: len(ncu_pyreport.IDENTITY)] == [""] * len(ncu_pyreport.IDENTITY)
    assert [r[0] for r in launch_rows] == ["0", "1"]
    assert [r[header.index("CC")] for r in launch_rows] == ["7.5", "7.5"]
    frame = pd.DataFrame(launch_rows, columns=header)
    assert frame["launch__registers_per_thread"].tolist() == ["16", "16"]
