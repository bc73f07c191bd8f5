"""Hostile content and bad output paths through every command that renders: `report`, `show`,
`compare --summary/--junit` (and the Chrome traces a sweep writes).

Hostile runs are copies of the H100 LeNet run (`tests/data/runs/lenet-h100-schema1-cupti`) with
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
from dataclasses import dataclass
from pathlib import Path

import pytest
from clirun import assert_refused, profgen
from hostile import (
    ANSI,
    CONTROL,
    HTML,
    LONG,
    MARKDOWN,
    MARKUP,
    MEGA,
    PLOTLY,
    Edit,
    rekey,
    rename_kernel,
    rename_range,
    retitle,
    set_meta,
    set_stage_field,
    write_edited_copy,
)
from markdown_it import MarkdownIt
from runfactory import SAMPLE_RUN

from profiler import store
from profiler.errors import EXIT_USAGE, UsageError
from profiler.render import chrome_trace, html

BASELINE = SAMPLE_RUN.parent / "lenet-h100-schema1-baseline.json"
MB = 1_000_000
REPORT_LIMIT = 5 * MB  # the sample's report is about 2 MB


def copy_run(tmp_path: Path, name: str = "run") -> Path:
    """The sample run's tables and run.json (not its raw/ folder nor its report)."""
    dest = tmp_path / name
    shutil.copytree(SAMPLE_RUN, dest, ignore=shutil.ignore_patterns("raw", "report.html"))
    return dest


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
    argv = ["compare", BASELINE, run_dir, "--allow-mismatch", "--summary", tmp_path / "summary.md"]
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


CONTROL_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]")


# --- hostile content -------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A hostile run: the sample with `edits` applied."""

    id: str
    edits: tuple[Edit, ...]


CASES = [
    Case("title-html", (retitle("conv_opt", HTML),)),
    Case("title-rich-markup", (retitle("conv_opt", MARKUP),)),
    Case("title-escape-codes", (retitle("conv_opt", ANSI),)),
    Case("title-markdown", (retitle("conv_opt", MARKDOWN),)),
    Case("title-control-chars", (retitle("conv_opt", CONTROL),)),
    Case("title-plotly-markup", (retitle("overlap_fusion", PLOTLY),)),
    Case("title-1mb", (retitle("overlap_fusion", MEGA),)),
    Case("technique-html-1mb", (set_stage_field("conv_opt", technique=HTML + MEGA),)),
    Case(
        "reason-everything",
        (set_stage_field("pinned", status="FAIL", reason=f"{ANSI}\n{HTML}\n{MARKDOWN}\n{MARKUP}"),),
    ),
    Case("kernel-html", (rename_kernel("Conv1_ReLu_Pool1", HTML),)),  # in the timeline too
    Case("kernel-control-chars", (rename_kernel("Conv1_ReLu", CONTROL + "k"),)),
    Case("kernel-escapes-markup", (rename_kernel("Linear_ReLu_Fused", ANSI + MARKUP + PLOTLY),)),
    Case("kernel-1mb", (rename_kernel("Linear_ReLu_Fused", MEGA),)),
    Case("copy-100kb", (rename_kernel("[CUDA memcpy DtoH]", LONG),)),
    Case("range-html-100kb", (rename_range("h2d", HTML), rename_range("d2h", LONG))),
    Case("stage-key-path", (rekey("pinned", "../../<b>pinned</b>\x1b[31m|`x`"),)),
    Case(
        "run-json",
        (
            set_meta(
                model=HTML,
                model_title=MEGA,
                command=MARKDOWN + ANSI,
                machine_gpu=ANSI + MARKUP,
                trimmed={"gpu_trace": {"kept": 1, "of": 2, "rule": HTML}},
            ),
        ),
    ),
]

# what must never appear in an HTML page, whatever the run holds: tags in the page, and tags in
# the charts' data (plotly's JSON writes `<` as `\u003c`; plotly draws `<a href>`, `<b>`...)
TAGS = ("<img src=x", '<a href="javascript', "<script>alert", "<b>bold", "<b>pinned")
RAW = (*TAGS, *(t.replace("<", "\\u003c").replace(">", "\\u003e") for t in TAGS))
BOUND = 2 * MB  # no output of a hostile run grows by more than this
GROWTH = 500_000  # what the report of a hostile run may weigh more than the sample's


@pytest.fixture(scope="module")
def sample_report_size(tmp_path_factory: pytest.TempPathFactory) -> int:
    run = write_edited_copy(tmp_path_factory.mktemp("sample") / "run", [])
    return len(html.render_report(store.load_run(run)))


@pytest.fixture(scope="module", params=CASES, ids=[c.id for c in CASES])
def hostile_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    case: Case = request.param
    return write_edited_copy(tmp_path_factory.mktemp(case.id) / "run", case.edits)


def assert_nothing_raw(text: str, where: str) -> None:
    """No tag, link or image in HTML or Markdown, no control character anywhere."""
    for raw in RAW:
        assert raw not in text, (where, raw)
    assert_no_controls(text, where)


def assert_no_controls(text: str, where: str) -> None:
    """Nothing a terminal would obey (a terminal shows HTML and rich markup as text)."""
    control = CONTROL_CHARS.search(text)
    assert control is None, (where, repr(text[max(control.start() - 40, 0) : control.end() + 40]))


def test_report_of_a_hostile_run(hostile_run: Path, sample_report_size: int, capsys) -> None:  # type: ignore[no-untyped-def]
    result = profgen(["report", hostile_run], capsys)
    assert result.code == 0, result.err
    page = (hostile_run / "report.html").read_text()
    assert len(page) < sample_report_size + GROWTH < REPORT_LIMIT
    assert_nothing_raw(page, "report.html")


@pytest.mark.parametrize("table", ["stages", "gpu_activities", "api_calls", "ranges"])
def test_show_of_a_hostile_run(hostile_run: Path, table: str, capsys) -> None:  # type: ignore[no-untyped-def]
    result = profgen(["show", hostile_run, "--table", table], capsys)
    assert result.code == 0, result.err
    assert len(result.out) < 100_000 and result.err == ""
    assert_no_controls(result.out.replace("\n", " "), f"show {table}")
    if table == "stages":
        assert max(len(line) for line in result.out.splitlines()) <= 120


def test_compare_of_a_hostile_run(hostile_run: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    summary, junit = tmp_path / "summary.md", tmp_path / "junit.xml"
    argv = ["compare", BASELINE, hostile_run, "--summary", summary, "--junit", junit]
    result = profgen([*argv, "--allow-mismatch"], capsys)
    assert result.code in (0, 1, 3), result.err
    assert "Traceback" not in result.err and len(result.out) < BOUND
    assert_no_controls(result.out.replace("\n", " "), "compare")
    assert_no_controls(result.err.replace("\n", " "), "compare's warnings")
    markdown = summary.read_text()
    assert len(markdown) < BOUND
    page = gfm(markdown)
    for tag in ("<img", "<a ", "<script", "<b>"):
        assert tag not in page, tag
    assert_nothing_raw(page.replace("\n", " "), "summary as GitHub renders it")
    assert_no_controls(markdown.replace("\n", " "), "summary")
    xml = junit.read_text()
    assert len(xml) < BOUND
    ET.fromstring(xml)  # well-formed
    assert_nothing_raw(xml.replace("\n", " "), "junit")
