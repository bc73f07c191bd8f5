"""Issue 14's "Honest imported runs", end to end through the CLI on the LeNet study's eight real
nvprof logs (tests/data/nvprof/9.x/lenet): one run, every stage IMPORTED, its time the summed
GPU time its log prints (the logs hold summaries, no trace to take a span from), a whole-program
total unless `--repeats` says how many repeats ran, and nothing the logs do not say: no "Time
for 0 images", no unknown header row or figure, no "repeat -1". The expected times are summed
here from each log's own text (`reference_rows`, exact), independent of the parser.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from clirun import profgen
from test_import_nvprof import LENET, STEPS, reference_rows

from profiler import schema, store


def gpu_time(step: str) -> int:
    """The log's GPU activities, summed: what the staged table's time must be."""
    rows = reference_rows(LENET / f"{step}.txt")["GPU activities"]
    return sum(int(row["total_ns"]) for row in rows)  # type: ignore[call-overload]


def run_cli(capsys: pytest.CaptureFixture[str], out: Path, *extra: str) -> tuple[Path, str]:
    argv = ["import", "--model", "lenet", "--out", out, *extra]
    argv += [a for step in STEPS for a in ("--stage", f"{step}={LENET / f'{step}.txt'}")]
    result = profgen(argv, capsys)
    assert result.code == 0 and result.err == "", result.err
    return Path(result.out.strip()), result.out


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> store.Run:
    from profiler.importer import import_run

    stages = [(step, str(LENET / f"{step}.txt")) for step in STEPS]
    return store.load_run(import_run("lenet", stages, {}, tmp_path_factory.mktemp("lenet")))


def staged_section(page: str) -> str:
    return page.split('id="staged-table"')[1].split("</section>")[0]


def test_the_cli_prints_only_the_run_directory(tmp_path, capsys):
    path, out = run_cli(capsys, tmp_path)
    assert out == f"{path}\n" and path.parent == tmp_path and path.name.startswith("lenet-")
    assert (path / "report.html").is_file()


def test_each_stage_is_imported_and_timed_by_its_logs_gpu_time(whole):
    stages = whole.table("stages")
    assert list(stages["stage"]) == STEPS
    assert set(stages["status"]) == {schema.IMPORTED} and set(stages["timing"]) == {schema.GPU_TIME}
    assert list(stages["median_ns"]) == [gpu_time(step) for step in STEPS]
    # by hand: 352.50ms + 226.20ms + 72.233ms + 13.746ms + 7.6724ms
    by_hand = 352_500_000 + 226_200_000 + 72_233_000 + 13_746_000 + 7_672_400
    assert stages["median_ns"].iloc[0] == by_hand


def test_the_staged_table_names_the_span_and_says_whole_program(whole):
    page = (whole.path / "report.html").read_text()
    staged = staged_section(page)
    assert '<th class="num">Whole-program time</th>' in staged
    assert staged.count("summed GPU time, whole program") == len(STEPS)
    assert "Time for 0" not in page and "Time for" not in staged
    assert "the input has no trace to take a span from" in staged


def test_repeats_make_the_time_per_repeat(tmp_path, capsys):
    path, _ = run_cli(capsys, tmp_path, "--repeats", "4")
    run = store.load_run(path)
    stages = run.table("stages")
    assert list(stages["median_ns"]) == [round(gpu_time(step) / 4) for step in STEPS]
    staged = staged_section((path / "report.html").read_text())
    assert '<th class="num">Time per repeat</th>' in staged
    assert staged.count("summed GPU time, per repeat (/ 4)") == len(STEPS)


def test_nothing_unknown_is_shown(whole):
    """The logs give no GPU, driver, copy sizes or pinned bandwidth: those rows are left out,
    never printed as unknown or as dashes."""
    page = (whole.path / "report.html").read_text()
    header = page.split('id="run"')[1].split("</section>")[0]
    assert "unknown" not in header.lower() and ">GPU<" not in header and ">Driver<" not in header
    tables = page.split('id="stage-tables"')[1].split("</section>")[0]
    assert "of pinned" not in tables and "HtoD whole program" not in tables
    assert "DtoH whole program" not in tables
    assert tables.count("memcpy share of GPU time") == len(STEPS)
    assert not re.search(r"\bunknown\b", re.sub(r"<script.*?</script>", "", page, flags=re.S))


def test_the_timeline_never_says_repeat_minus_one(whole):
    page = (whole.path / "report.html").read_text()
    timeline = page.split('id="timeline"')[1].split("</section>")[0]
    assert "This run has no GPU trace." in timeline and "repeat -1" not in page


def test_show_leaves_out_columns_no_stage_has_and_explains_the_time(whole, capsys):
    result = profgen(["show", whole.path, "--table", "stages"], capsys)
    lines = result.out.splitlines()
    assert lines[0] == "role step, timing gpu_time"
    assert lines[1].split() == ["stage", "title", "status", "median"]
    assert [line.split()[2] for line in lines[2:10]] == [schema.IMPORTED] * 8
    note = " ".join(lines[10:])
    assert note.startswith("IMPORTED: made from profiler output found elsewhere")
    assert note.endswith("per repeat when repeats is given, else for the whole program")
    assert "…" not in note and all(len(line) <= 120 for line in lines[10:])
