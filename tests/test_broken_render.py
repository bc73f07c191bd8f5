"""Hostile content and bad output paths through every command that renders: `report`, `show`,
`compare --summary/--junit` (and the Chrome traces a sweep writes).

Hostile runs are copies of the committed H100 sample run (`reports/sample-lenet-h100-cupti`) with
one table or run.json edited in tmp_path: titles with HTML, rich markup, terminal escape codes and
Markdown; names with control characters; megabyte names; a stage key that is a path. Each must
render, bounded in size, with nothing interpreted: no tag, link or image in the HTML or the
Markdown, no escape code on the terminal, well-formed XML.

Bad outputs (a directory, a device, a command's own input, a planted link) are refused with one
line and exit 2 (see tests/clirun.py), and what they point at is untouched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from clirun import assert_refused, profgen
from markdown_it import MarkdownIt
from runfactory import SAMPLE_RUN

from profiler import schema, store
from profiler.errors import EXIT_USAGE, UsageError
from profiler.render import chrome_trace

BASELINE = SAMPLE_RUN.parents[1] / "reports" / "baselines" / "lenet-h100.json"
MB = 1_000_000
REPORT_LIMIT = 5 * MB  # the sample's report is about 2 MB


def copy_run(tmp_path: Path, name: str = "run") -> Path:
    """The sample run's tables and run.json (not its raw/ folder nor its report)."""
    dest = tmp_path / name
    shutil.copytree(SAMPLE_RUN, dest, ignore=shutil.ignore_patterns("raw", "report.html"))
    return dest


def edit_table(run: Path, name: str, change: Callable[[pd.DataFrame], None]) -> None:
    """Apply `change` to one table of the run on disk, in place."""
    tbl = schema.table(name)
    df = schema.read_csv(run / f"{name}.csv", tbl)
    change(df)
    schema.write_csv(df, tbl, run / f"{name}.csv")


# --- bad output paths ------------------------------------------------------------------------


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return copy_run(tmp_path)


def test_report_into_a_directory_is_refused(run_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    before = sorted(p.name for p in run_dir.iterdir())
    result = profgen(["report", run_dir, "-o", run_dir], capsys)
    assert_refused(result, EXIT_USAGE, "--output", "is a directory")
    assert sorted(p.name for p in run_dir.iterdir()) == before


@pytest.fixture
def device(tmp_path: Path) -> Path:
    """/dev/full, or (when this process could replace it: root) a node of the same device made
    in tmp_path, so that a regression replaces nothing of the system's."""
    if not os.access("/dev", os.W_OK):
        return Path("/dev/full")
    node = tmp_path / "full"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    return node


def test_report_onto_a_device_is_refused(run_dir: Path, device: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    result = profgen(["report", run_dir, "-o", device], capsys)
    assert_refused(result, EXIT_USAGE, str(device), "not a regular file")
    assert device.is_char_device()


def test_report_onto_a_fifo_is_refused(tmp_path: Path, run_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = profgen(["report", run_dir, "-o", fifo], capsys)
    assert_refused(result, EXIT_USAGE, "fifo", "not a regular file")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_report_over_its_own_input_is_refused(run_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    target = run_dir / "stages.csv"
    before = target.read_bytes()
    result = profgen(["report", run_dir, "-o", target], capsys)
    assert_refused(result, EXIT_USAGE, "stages.csv", "input of this command")
    assert target.read_bytes() == before
    result = profgen(["report", run_dir, "-o", run_dir / "run.json"], capsys)
    assert_refused(result, EXIT_USAGE, "run.json", "input of this command")


def test_a_planted_temporary_link_is_not_written_through(run_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    victim = run_dir.parent / "victim"
    victim.write_text("precious\n")
    for name in (".report.html.tmp", ".report.html.partial", "report.html.tmp"):
        (run_dir / name).symlink_to(victim)
    result = profgen(["report", run_dir], capsys)
    assert result.code == 0, result.err
    assert victim.read_text() == "precious\n"
    assert (run_dir / "report.html").is_file() and not (run_dir / "report.html").is_symlink()
    assert (run_dir / "report.html").stat().st_size > 100_000


def test_a_report_that_is_a_link_is_refused(run_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    victim = run_dir.parent / "victim"
    victim.write_text("precious\n")
    (run_dir / "report.html").symlink_to(victim)
    result = profgen(["report", run_dir], capsys)
    assert_refused(result, EXIT_USAGE, "report.html", "not a regular file")
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize(
    ("flag", "target", "fragments"),
    [
        ("--junit", "{dir}", ("--junit", "is a directory")),
        ("--summary", "{dir}", ("--summary", "is a directory")),
        ("--summary", "{baseline}", ("--summary", "input of this command")),
        ("--junit", "{run}/run.json", ("--junit", "input of this command")),
        ("--summary", "{run}/gpu_activities.csv", ("--summary", "input of this command")),
        ("--summary", "{device}", ("--summary", "not a regular file")),
    ],
)
def test_compare_outputs_that_cannot_be_written_are_refused(  # type: ignore[no-untyped-def]
    tmp_path: Path,
    run_dir: Path,
    device: Path,
    capsys,
    flag: str,
    target: str,
    fragments: tuple[str, ...],
) -> None:
    baseline = tmp_path / "baseline.json"
    shutil.copyfile(BASELINE, baseline)
    before = {p: p.read_bytes() for p in [baseline, *run_dir.iterdir()] if p.is_file()}
    out = target.format(dir=tmp_path, baseline=baseline, run=run_dir, device=device)
    result = profgen(["compare", baseline, run_dir, flag, out], capsys)
    assert_refused(result, EXIT_USAGE, *fragments)
    assert result.out == ""  # refused before comparing
    assert {p: p.read_bytes() for p in before} == before


def test_summary_and_junit_into_one_file_is_refused(tmp_path: Path, run_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "ci.txt"
    result = profgen(["compare", BASELINE, run_dir, "--summary", out, "--junit", out], capsys)
    assert_refused(result, EXIT_USAGE, "--summary and --junit are the same file")
    assert not out.exists()


def test_compare_outputs_do_not_follow_planted_links(tmp_path: Path, run_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    for name in (".summary.md.tmp", ".junit.xml.tmp"):
        (tmp_path / name).symlink_to(victim)
    argv = ["compare", BASELINE, run_dir, "--summary", tmp_path / "summary.md"]
    result = profgen([*argv, "--junit", tmp_path / "junit.xml"], capsys)
    assert result.code in (0, 1), result.err
    assert victim.read_text() == "precious\n"
    assert (tmp_path / "summary.md").read_text().startswith("## profgen: lenet")
    ET.fromstring((tmp_path / "junit.xml").read_text())


def test_chrome_traces_are_written_safely(tmp_path: Path) -> None:
    run = store.load_run(SAMPLE_RUN)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    raw = tmp_path / "raw"
    (raw / "pinned").mkdir(parents=True)
    (raw / "pinned" / ".trace.json.tmp").symlink_to(victim)  # a planted temporary: not followed
    (raw / "no_sync").mkdir()
    (raw / "no_sync" / "trace.json").symlink_to(victim)  # a link as the target: refused
    with pytest.raises(UsageError, match="not a regular file"):
        chrome_trace.write_traces(run, raw)
    os.unlink(raw / "no_sync" / "trace.json")
    written = chrome_trace.write_traces(run, raw)
    assert victim.read_text() == "precious\n"
    assert raw / "pinned" / "trace.json" in written and all(p.is_file() for p in written)


def test_a_stage_key_cannot_lead_a_trace_out_of_raw(tmp_path: Path) -> None:
    run = store.load_run(SAMPLE_RUN)
    trace = run.tables["gpu_trace"]
    trace["stage"] = trace["stage"].replace({"pinned": "../../escaped", "no_sync": ".."})
    written = chrome_trace.write_traces(run, tmp_path / "raw")
    assert all(p.resolve().is_relative_to((tmp_path / "raw").resolve()) for p in written)
    assert {p.parent.name for p in written} >= {"_._.._escaped", "_."}
    assert not (tmp_path / "escaped").exists()
    doc = json.loads(next(p for p in written if p.parent.name == "_.").read_text())
    assert doc["otherData"]["stage"] == ".."


def gfm(text: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(text)


CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e]")
