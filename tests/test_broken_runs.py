"""The broken-input corpus for the commands that read stored runs and baselines: `show`,
`report`, `compare` and `baseline`.

Each case starts from a good run directory (or a good baseline file written from it), breaks
one thing, and feeds it to every command that reads it. A broken input is refused with exit 2
(bad input: never 1, which CI reads as a regression, and never a traceback) and ONE line on
stderr naming the broken file; an input that is odd but whole is read (exit 0). A few cases
break only what one command needs (an `inf` average is fine to show, but a baseline cannot
hold it): `fine` names the commands that must succeed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest
from clirun import Outcome, assert_refused, profgen
from regress_factory import make_run

from profiler import baseline, schema, store
from profiler.analyze import timeline

RUN_COMMANDS = ("show", "report", "compare-new", "compare-base", "baseline")
BASELINE_COMMANDS = ("compare-new", "compare-base")


@dataclass(frozen=True)
class Case:
    """One broken input: `edit` breaks the run directory (or the baseline file) it is given;
    `names` is the file the refusal must name, relative to the run directory (or "" for the
    baseline file itself); commands in `fine` must succeed instead."""

    id: str
    edit: Callable[[Path], None]
    names: str = "run.json"
    fine: tuple[str, ...] = field(default=())


# --- how runs are broken ----------------------------------------------------------------------


def write(name: str, data: bytes | str) -> Callable[[Path], None]:
    def edit(run_dir: Path) -> None:
        path = run_dir / name
        path.write_bytes(data if isinstance(data, bytes) else data.encode())

    return edit


def meta(**changes: object) -> Callable[[Path], None]:
    def edit(run_dir: Path) -> None:
        content = json.loads((run_dir / "run.json").read_text())
        content.update(changes)
        (run_dir / "run.json").write_text(json.dumps(content))

    return edit


def cell(table: str, column: str, value: str, row: int = 0) -> Callable[[Path], None]:
    def edit(run_dir: Path) -> None:
        path = run_dir / f"{table}.csv"
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
        df.loc[row, column] = value
        df.to_csv(path, index=False)

    return edit


def text(table: str, change: Callable[[str], str]) -> Callable[[Path], None]:
    def edit(run_dir: Path) -> None:
        path = run_dir / f"{table}.csv"
        path.write_text(change(path.read_text()))

    return edit


def fifo(name: str) -> Callable[[Path], None]:
    def edit(run_dir: Path) -> None:
        (run_dir / name).unlink()
        os.mkfifo(run_dir / name)

    return edit


def directory(name: str) -> Callable[[Path], None]:
    def edit(run_dir: Path) -> None:
        (run_dir / name).unlink()
        (run_dir / name).mkdir()

    return edit


def huge_run_json(run_dir: Path) -> None:
    with (run_dir / "run.json").open("w") as fh:
        fh.write('{"schema_version": 1, "pad": "' + "x" * store.RUN_JSON_LIMIT + '"}')


def remove(name: str) -> Callable[[Path], None]:
    return lambda run_dir: (run_dir / name).unlink()


def good_meta(run_dir: Path) -> dict[str, object]:
    return dict(json.loads((run_dir / "run.json").read_text()))


RUN_CASES = [
    # run.json that is not a run's metadata
    Case("run.json a list", write("run.json", "[]")),
    Case("run.json null", write("run.json", "null")),
    Case("run.json a string", write("run.json", '"a run"')),
    Case("run.json UTF-16", write("run.json", '{"schema_version": 1}'.encode("utf-16"))),
    Case("run.json binary", write("run.json", bytes(range(256)) * 4)),
    Case("run.json nested 100,000 deep", write("run.json", "[" * 100_000 + "]" * 100_000)),
    Case("run.json nested 500 deep", write("run.json", '{"a": ' * 500 + "1" + "}" * 500)),
    Case("run.json huge", huge_run_json),
    Case("run.json empty", write("run.json", "")),
    Case("run.json truncated", write("run.json", '{"schema_version": 1, "tables": ["st')),
    Case("run.json NaN", write("run.json", '{"schema_version": NaN}')),
    Case("run.json 5000 digits", write("run.json", '{"schema_version": 1' + "0" * 5000 + "}")),
    Case("run.json 1e400", write("run.json", '{"schema_version": 1e400}')),
    Case("run.json a FIFO", fifo("run.json")),
    Case("run.json a directory", directory("run.json")),
    Case("schema version a string", meta(schema_version="1")),
    Case("schema version true", meta(schema_version=True)),
    Case("a future schema version", meta(schema_version=schema.SCHEMA_VERSION + 1)),
    Case("schema version 0", meta(schema_version=0)),
    Case("tables a string", meta(tables="stages")),
    Case("tables an unknown name", meta(tables=["stages", "nope"])),
    Case("tables a path", meta(tables=["../../etc/passwd"])),
    Case("tables a number", meta(tables=[1])),
    Case("tables twice", meta(tables=["stages", "stages"])),
    Case("machine a list", meta(machine=["H100"])),
    Case("settings a string", meta(settings="fast")),
    Case("settings.items text", meta(settings={"items": "many"})),
    Case("settings.items 1e30", meta(settings={"items": 1e30})),
    Case("ceilings a string value", meta(ceilings={"d2d_bytes_per_s": "fast"})),
    Case("git a list", meta(git=["abc"])),
    Case("model an object", meta(model={"name": "lenet"})),
    Case("trimmed a list", meta(trimmed=["gpu_trace"])),
    Case("trimmed kept > of", meta(trimmed={"gpu_trace": {"kept": 9, "of": 5}})),
    # table files
    Case("1.5 in an integer column", cell("stages", "items", "1.5"), "stages.csv"),
    Case(
        "duration past uint64",
        cell("gpu_trace", "duration_ns", "18446744073709551616"),
        "gpu_trace.csv",
    ),
    Case("a 5000-digit count", cell("gpu_activities", "calls", "9" * 5000), "gpu_activities.csv"),
    Case("text in a number column", cell("samples", "wall_ns", "fast"), "samples.csv"),
    Case("text in a float column", cell("gpu_activities", "avg_ns", "slow"), "gpu_activities.csv"),
    Case("1.2.3 in a float column", cell("stages", "max_rel_err", "1.2.3"), "stages.csv"),
    Case("a negative duration", cell("gpu_trace", "duration_ns", "-5"), "gpu_trace.csv"),
    Case("a negative sample", cell("samples", "wall_ns", "-1"), "samples.csv"),
    Case("an empty required cell", cell("stages", "order", ""), "stages.csv"),
    Case(
        "a missing column", text("samples", lambda t: t.replace(",wall_ns", "", 1)), "samples.csv"
    ),
    Case(
        "an extra column",
        text("samples", lambda t: t.replace("wall_ns", "wall_ns,x", 1)),
        "samples.csv",
    ),
    Case(
        "a repeated column",
        text("samples", lambda t: t.replace("stage,", "stage,stage,", 1)),
        "samples.csv",
    ),
    Case("a NUL byte", text("stages", lambda t: t.replace("PASS", "PA\0SS", 1)), "stages.csv"),
    Case("a ragged row", text("samples", lambda t: t + "x,timed,1,2,3,4\n"), "samples.csv"),
    Case("an empty table file", write("samples.csv", ""), "samples.csv"),
    Case("a non-UTF-8 table", write("stages.csv", b"stage\xff\n"), "stages.csv"),
    Case("a table that is a FIFO", fifo("gpu_trace.csv"), "gpu_trace.csv"),
    Case("a table that is a directory", directory("samples.csv"), "samples.csv"),
    Case("a listed table missing", remove("gpu_activities.csv"), "gpu_activities.csv"),
    # whole as tables, wrong as a run to compare
    Case(
        "a stage twice",
        text("stages", lambda t: t + t.splitlines()[1] + "\n"),
        "stages.csv",
        fine=("show", "report"),
    ),
    Case(
        "a stages table with no rows",
        text("stages", lambda t: t.splitlines()[0] + "\n"),
        "stages.csv",
        fine=("show", "report"),
    ),
    Case(
        "an unknown status",
        cell("stages", "status", "MAYBE"),
        "stages.csv",
        fine=("show", "report"),
    ),
    Case(
        "Avg = inf",
        cell("gpu_activities", "avg_ns", "inf"),
        "gpu_activities.csv",
        fine=("show", "report", "compare-new", "compare-base"),
    ),
    # odd but whole: read as they are
    Case("unknown run.json fields", meta(future={"a": [1]}), fine=RUN_COMMANDS),
    Case(
        "a byte-order mark",
        lambda d: write("run.json", b"\xef\xbb\xbf" + (d / "run.json").read_bytes())(d),
        fine=RUN_COMMANDS,
    ),
    Case(
        "columns reordered",
        text(
            "samples",
            lambda t: (
                "\n".join(",".join(reversed(line.split(","))) for line in t.splitlines()) + "\n"
            ),
        ),
        fine=RUN_COMMANDS,
    ),
    Case(
        "an integral float in an integer column",
        cell("samples", "repeat", "0.0"),
        fine=RUN_COMMANDS,
    ),
]


def baseline_edit(change: Callable[[dict], object]) -> Callable[[Path], None]:
    """Break a baseline file's parsed content (`change` edits it in place)."""

    def edit(path: Path) -> None:
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))

    return edit


def baseline_text(change: Callable[[str], str]) -> Callable[[Path], None]:
    return lambda path: path.write_text(change(path.read_text()))


def first_stage(data: dict) -> dict:
    return data["stages"][1]  # torch_gpu: it has samples, activities and trace repeats


BASELINE_CASES = [
    Case(
        "numbers over 4300 digits",
        baseline_text(lambda t: t.replace('"items": 10000', '"items":1' + "0" * 5000)),
    ),
    Case(
        "1e30 for a sample",
        baseline_edit(lambda d: first_stage(d)["timed_ns"].__setitem__(0, 1e30)),
    ),
    Case("1e30 for the item count", baseline_edit(lambda d: d.update(items=1e30))),
    Case("1.5 for an integer", baseline_edit(lambda d: first_stage(d).update(batch=1.5))),
    Case("Infinity", baseline_text(lambda t: t.replace('"items": 10000', '"items":Infinity'))),
    Case("NaN", baseline_text(lambda t: t.replace('"items": 10000', '"items":NaN'))),
    Case("1e400", baseline_text(lambda t: t.replace('"items": 10000', '"items":1e400'))),
    Case(
        "a string where a stage belongs",
        baseline_edit(lambda d: d["stages"].__setitem__(0, "torch_gpu")),
    ),
    Case(
        "a dict where the stages list belongs", baseline_edit(lambda d: d.update(stages={"a": 1}))
    ),
    Case("a list where the machine belongs", baseline_edit(lambda d: d.update(machine=["H100"]))),
    Case(
        "a list where an activity belongs",
        baseline_edit(lambda d: first_stage(d)["activities"].__setitem__(0, [1])),
    ),
    Case(
        "a negative sample",
        baseline_edit(lambda d: first_stage(d)["profiled_ns"].__setitem__(0, -5)),
    ),
    Case(
        "a negative total",
        baseline_edit(lambda d: first_stage(d)["activities"][0].update(total_ns=-1)),
    ),
    Case(
        "a boolean sample", baseline_edit(lambda d: first_stage(d)["timed_ns"].__setitem__(0, True))
    ),
    Case("a sample as text", baseline_edit(lambda d: first_stage(d).update(timed_ns="1,2,3"))),
    Case(
        "repeat totals of the wrong length",
        baseline_edit(lambda d: first_stage(d)["activities"][0]["repeat_totals_ns"].append(1)),
    ),
    Case(
        "trace repeats a string",
        baseline_edit(lambda d: first_stage(d).update(trace_repeats="0,1")),
    ),
    Case("an unknown status", baseline_edit(lambda d: first_stage(d).update(status="MAYBE"))),
    Case("a stage without a key", baseline_edit(lambda d: first_stage(d).update(stage=None))),
    Case("a stage twice", baseline_edit(lambda d: d["stages"].append(d["stages"][1]))),
    Case(
        "an unknown activity kind",
        baseline_edit(lambda d: first_stage(d)["activities"][0].update(kind="blob")),
    ),
    Case("a list for the item count", baseline_edit(lambda d: d.update(items=[10000]))),
    Case("no stages", baseline_edit(lambda d: d.update(stages=[]))),
    Case("not a baseline", baseline_edit(lambda d: d.pop("format"))),
    Case("version 99", baseline_edit(lambda d: d.update(version=99))),
    Case("version a string", baseline_edit(lambda d: d.update(version="1"))),
    Case("a list", baseline_text(lambda t: "[" + t + "]")),
    Case("nested 100,000 deep", baseline_text(lambda t: "[" * 100_000 + "]" * 100_000)),
    Case("UTF-16", lambda p: p.write_bytes(p.read_text().encode("utf-16"))),
    Case("truncated", baseline_text(lambda t: t[: len(t) // 2])),
    Case("a FIFO", lambda p: (p.unlink(), os.mkfifo(p))),
    Case("huge", baseline_text(lambda t: t[:-2] + ', "pad": "' + "x" * (16 << 20) + '"}\n')),
    Case(
        "unknown fields", baseline_edit(lambda d: d.update(future={"a": 1})), fine=BASELINE_COMMANDS
    ),
]


# --- running the commands ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A good run directory and a good baseline file written from it (read only: each test
    breaks a copy)."""
    tmp_path = tmp_path_factory.mktemp("good")
    run_dir = tmp_path / "good"
    run_dir.mkdir()
    store.save_run(make_run(1, profiled=2, launches=1), run_dir)
    return run_dir, baseline.write_baseline(store.load_run(run_dir), tmp_path / "good.json")


def run_command(command: str, broken: Path, good: Path, tmp: Path, capsys) -> Outcome:  # type: ignore[no-untyped-def]
    argv = {
        "show": ["show", broken, "--table", "stages"],
        "report": ["report", broken, "-o", tmp / "report.html"],
        "compare-new": ["compare", good, broken],
        "compare-base": ["compare", broken, good],
        "baseline": ["baseline", broken, "-o", tmp / "out.json"],
    }[command]
    return profgen(argv, capsys)


def check(result: Outcome, case: Case, command: str, named: Path) -> None:
    if command in case.fine:
        assert result.code == 0, (case.id, command, result.err)
        assert "Traceback" not in result.err
    else:
        assert_refused(result, 2, str(named))


@pytest.mark.parametrize("case", RUN_CASES, ids=[c.id for c in RUN_CASES])
@pytest.mark.parametrize("command", RUN_COMMANDS)
def test_a_broken_run(case: Case, command: str, good, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    good_run, _ = good
    broken = tmp_path / "broken"
    shutil.copytree(good_run, broken)
    case.edit(broken)
    result = run_command(command, broken, good_run, tmp_path, capsys)
    check(result, case, command, broken / case.names)


@pytest.mark.parametrize("case", BASELINE_CASES, ids=[c.id for c in BASELINE_CASES])
@pytest.mark.parametrize("command", BASELINE_COMMANDS)
def test_a_broken_baseline_file(case: Case, command: str, good, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    good_run, good_file = good
    broken = tmp_path / "broken.json"
    broken.write_bytes(good_file.read_bytes())
    case.edit(broken)
    result = run_command(command, broken, good_run, tmp_path, capsys)
    check(result, case, command, broken)


@pytest.mark.parametrize("command", ("show", "report", "baseline"))
def test_a_baseline_file_where_a_run_directory_belongs(
    command: str, good, tmp_path, capsys
) -> None:  # type: ignore[no-untyped-def]
    _, good_file = good
    result = run_command(command, good_file, good_file, tmp_path, capsys)
    assert_refused(result, 2, str(good_file), "not a profgen run")


def test_the_corpus_is_large() -> None:
    """The issue asks for at least 30 broken runs and baselines; each is fed to every command."""
    broken = [c for c in RUN_CASES + BASELINE_CASES if not c.fine]
    assert len(broken) >= 30 and len(RUN_CASES) >= 30 and len(BASELINE_CASES) >= 30


SOFTMAX_RUN = Path(__file__).resolve().parents[1] / "reports" / "sample-softmax-h100-cupti"


def test_a_range_with_a_gpu_start_and_no_end_is_left_off_the_timeline(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A recorded run whose range_trace lost a projected range's GPU end (the row cut after its
    GPU start, as a damaged or hand-edited file has it): the report is written, and the stage's
    timeline draws its other phases but not that one (it has no end to draw to)."""
    run_dir = tmp_path / "run"
    shutil.copytree(SOFTMAX_RUN, run_dir, ignore=shutil.ignore_patterns("raw", "report.html"))
    good = store.load_run(run_dir)
    ranges, trace = good.table("range_trace"), good.table("gpu_trace")
    stage = str(ranges["stage"].iloc[0])
    repeat = timeline.typical_repeat(trace, stage)
    before = timeline.timeline(trace, ranges, stage, repeat).phases
    table = pd.read_csv(run_dir / "range_trace.csv", dtype=str, keep_default_na=False)
    shown = (table["stage"] == stage) & (table["repeat"] == str(repeat))
    row = table.index[shown & (table["level"] == "1") & (table["gpu_start_ns"] != "")][0]
    table.loc[row, "gpu_end_ns"] = ""
    table.to_csv(run_dir / "range_trace.csv", index=False)

    result = profgen(["report", run_dir, "-o", tmp_path / "report.html"], capsys)

    assert result.code == 0 and "Traceback" not in result.err, result.err
    damaged = store.load_run(run_dir).table("range_trace")
    after = timeline.timeline(trace, damaged, stage, repeat).phases
    assert len(after) == len(before) - 1


SCHEMA1_RUN = Path(__file__).resolve().parent / "data" / "runs" / "lenet-h100-schema1-cupti"


@pytest.mark.parametrize("command", RUN_COMMANDS)
def test_a_schema_1_run_whose_stages_header_is_gone(command: str, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A run of schema version 1 (read through its upgrade) whose stages.csv lost its header
    line and the end of its first row (a fuzzed mutant's edit): refused naming the file, as a
    version-2 run is (the upgrade read the `stage` column before the columns were checked:
    KeyError)."""
    broken = tmp_path / "broken"
    shutil.copytree(SCHEMA1_RUN, broken, ignore=shutil.ignore_patterns("raw", "report.html"))
    text("stages", lambda t: t.split("\n", 1)[1][:120] + "\n" + t.split("\n", 2)[2])(broken)
    result = run_command(command, broken, SCHEMA1_RUN, tmp_path, capsys)
    assert_refused(result, 2, str(broken / "stages.csv"))


RUNS = Path(__file__).resolve().parent / "data" / "runs"


def double_row(table: str, key: str, instead_of: str) -> Callable[[Path], None]:
    """The row of `table` starting `key,` written again over the row starting `instead_of,` (a
    line moved onto another: the key is then listed twice)."""

    def change(t: str) -> str:
        lines = t.splitlines(keepends=True)
        row = next(line for line in lines if line.startswith(key + ","))
        return "".join(row if line.startswith(instead_of + ",") else line for line in lines)

    return text(table, change)


def repeat_row(table: str, start: str) -> Callable[[Path], None]:
    """The first row of `table` starting `start` written twice (a line doubled)."""

    def change(t: str) -> str:
        lines = t.splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if line.startswith(start))
        return "".join(lines[: at + 1] + lines[at:])

    return text(table, change)


def drop_row(table: str, start: str) -> Callable[[Path], None]:
    return text(
        table,
        lambda t: "".join(
            line for line in t.splitlines(keepends=True) if not line.startswith(start)
        ),
    )


DAMAGED_RECORDED = [
    (
        "resnet50-h100-phases",
        "a layer listed twice",
        double_row("layers", "res5.1/tail", "res5.2/conv1"),
    ),
    (
        "lenet-h100-schema1-nsys",
        "a stage listed twice",
        double_row("stages", "cuda_baseline", "batch_parallel"),
    ),
    (
        "lenet-h100-schema1-metrics",
        "a phase range gone (0 ns before, some after)",
        drop_row("ranges", "pinned,fc1,"),
    ),
    (
        "resnet50-h100-phases",
        "the reference's node range listed twice",
        repeat_row("ranges", "torch_gpu,res3.3/tail,"),
    ),
    (
        "resnet50-h100-phases",
        "a profiled median cut to its first digits (an infinite predicted gain)",
        cell("stages", "profiled_median_ns", "1322", row=1),
    ),
]


@pytest.mark.parametrize(
    ("run", "edit"),
    [(r, e) for r, _, e in DAMAGED_RECORDED],
    ids=[i for _, i, _ in DAMAGED_RECORDED],
)
def test_a_recorded_run_damaged_so_its_tables_disagree_is_still_reported(
    run, edit, tmp_path, capsys
) -> None:  # type: ignore[no-untyped-def]
    """Whole tables that disagree with each other (a key twice, a phase that one stage lost): the
    report is written (the first row of a key twice is used, an Amdahl gain that is 0 / 0 is
    left empty), not an internal error. Each was a crash of scripts/fuzz_runs.py."""
    broken = tmp_path / "broken"
    shutil.copytree(RUNS / run, broken, ignore=shutil.ignore_patterns("raw", "report.html"))
    before = {p.name: p.read_bytes() for p in broken.iterdir()}
    edit(broken)
    assert {p.name: p.read_bytes() for p in broken.iterdir()} != before  # the edit took
    result = profgen(["report", broken, "-o", tmp_path / "report.html"], capsys)
    assert result.code == 0 and "Traceback" not in result.err, result.err


def test_the_run_fuzz_script_runs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """scripts/fuzz_runs.py, the longer fuzz whose finds this file keeps, runs a few seconds over
    a recorded run and a baseline file, runs its commands and finds no crash."""
    script = Path(__file__).resolve().parents[1] / "scripts" / "fuzz_runs.py"
    argv = ["--out", tmp_path, "--seconds", "3", "--workers", "1", "--seed", "1"]
    sources = [SOFTMAX_RUN, RUNS / "regress-pair" / "base.json"]
    done = subprocess.run(
        [sys.executable, script, *argv, *sources], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("0 kinds of crash"), done.stdout
    assert int(done.stdout.split()[0]) > 0  # commands run
