"""Reading a run directory back (`store.load_run`): what a good run gives, and how a bad run.json
or table file is refused (the error's class, the file and the field or cell it names).

The command-level corpus (one line, exit 2, no traceback, for every command) is
tests/test_broken_runs.py; these tests hold the library's contract.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from regress_factory import make_run

from profiler import schema, store
from profiler.errors import DataError, RunNotFound, SchemaError

SAMPLE = Path(__file__).resolve().parent / "data" / "runs" / "lenet-h100-schema1-cupti"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    path = tmp_path / "run"
    path.mkdir()
    store.save_run(make_run(1, profiled=2, launches=1), path)
    return path


def edit_meta(run_dir: Path, **changes: object) -> None:
    meta = json.loads((run_dir / "run.json").read_text())
    meta.update(changes)
    (run_dir / "run.json").write_text(json.dumps(meta))


def test_a_saved_run_reads_back_whole(run_dir: Path) -> None:
    run = make_run(1, profiled=2, launches=1)
    back = store.load_run(run_dir)
    assert sorted(back.tables) == sorted(run.tables)
    for name, df in run.tables.items():
        pd.testing.assert_frame_equal(back.tables[name], df)
    assert back.path == run_dir and back.meta["schema_version"] == schema.SCHEMA_VERSION


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[]", "expected a JSON object, got a list"),
        (b"null", "expected a JSON object, got null"),
        (b'"run"', 'expected a JSON object, got "run"'),
        ('{"schema_version": 1}'.encode("utf-16"), "not UTF-8 text"),
        (bytes(range(256)), "not UTF-8 text"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b"[" * 40 + b"]" * 40, "nested 40 deep"),
        (b'{"schema_version": 1, "x": NaN}', "NaN is not a JSON number"),
        (b'{"schema_version": 1e400}', "out of range"),
        (b'{"schema_version": 1' + b"0" * 5000 + b"}", "an integer of 5001 digits"),
        (b'{"schema_version": true}', "schema version true"),
        (b'{"schema_version": "1"}', 'schema version "1"'),
        (b'{"schema_version": 99}', "schema version 99, this profgen reads 1, 2"),
        (b"{not json", "not valid JSON"),
    ],
)
def test_a_run_json_that_is_not_a_run_is_refused_naming_it(
    run_dir: Path, content: bytes, message: str
) -> None:
    (run_dir / "run.json").write_bytes(content)
    with pytest.raises((RunNotFound, DataError)) as err:
        store.load_run(run_dir)
    assert str(run_dir / "run.json") in str(err.value)
    assert message in str(err.value)
    assert err.value.exit_code == 2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"tables": "stages"}, 'tables: expected a list, got "stages"'),
        ({"tables": [1]}, "tables[0]: expected a non-empty string, got 1"),
        ({"tables": ["../../etc/passwd"]}, "tables[0]: expected one of"),
        ({"tables": ["stages", "stages"]}, "tables: expected each table once"),
        ({"machine": [1]}, "machine: expected an object, got a list"),
        ({"settings": "fast"}, 'settings: expected an object, got "fast"'),
        ({"settings": {"items": "many"}}, "settings.items: expected a non-negative integer"),
        ({"settings": {"images": 1e30}}, "settings.images: expected a non-negative integer"),
        ({"ceilings": {"d2d_bytes_per_s": "fast"}}, "ceilings.d2d_bytes_per_s: expected a number"),
        ({"model": ["lenet"]}, "model: expected a non-empty string, got a list"),
        ({"stages": [None]}, "stages[0]: expected a non-empty string, got null"),
        ({"trimmed": ["gpu_trace"]}, "trimmed: expected an object, got a list"),
        ({"trimmed": {"gpu_trace": {"kept": 5}}}, "trimmed.gpu_trace.of: expected a non-negative"),
        ({"trimmed": {"gpu_trace": {"kept": 9, "of": 5}}}, "trimmed.gpu_trace.kept: expected"),
    ],
)
def test_a_malformed_run_json_field_is_named(
    run_dir: Path, changes: dict[str, object], message: str
) -> None:
    edit_meta(run_dir, **changes)
    with pytest.raises(RunNotFound) as err:
        store.load_run(run_dir)
    assert str(err.value).startswith(f"{run_dir / 'run.json'}: ")
    assert message in str(err.value)


def test_unknown_run_json_fields_and_an_error_ceiling_are_fine(run_dir: Path) -> None:
    edit_meta(run_dir, future_field={"a": [1]}, ceilings={"error": "no GPU"}, model="")
    assert store.load_run(run_dir).meta["future_field"] == {"a": [1]}


def test_a_huge_run_json_is_refused_before_parsing(run_dir: Path) -> None:
    with (run_dir / "run.json").open("w") as fh:
        fh.write('{"schema_version": 1, "pad": "')
        fh.write("x" * store.RUN_JSON_LIMIT)
        fh.write('"}')
    with pytest.raises(DataError, match="bytes allowed"):
        store.load_run(run_dir)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_not_read(run_dir: Path) -> None:
    """A FIFO would block the reader forever: refused before a byte is read."""
    (run_dir / "samples.csv").unlink()
    os.mkfifo(run_dir / "samples.csv")
    with pytest.raises(DataError, match="not a regular file"):
        store.load_run(run_dir)
    (run_dir / "run.json").unlink()
    os.mkfifo(run_dir / "run.json")
    with pytest.raises(DataError, match="not a regular file"):
        store.load_run(run_dir)


def csv_lines(run_dir: Path, table: str) -> list[str]:
    return (run_dir / f"{table}.csv").read_text().splitlines()


def set_cell(run_dir: Path, table: str, column: str, value: str, row: int = 1) -> None:
    lines = csv_lines(run_dir, table)
    header = lines[0].split(",")
    cells = lines[row].split(",")
    cells[header.index(column)] = value
    lines[row] = ",".join(cells)
    (run_dir / f"{table}.csv").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("table", "column", "value", "message"),
    [
        ("samples", "wall_ns", "1.5", "column 'wall_ns', row 1: '1.5' is not an integer"),
        ("samples", "wall_ns", "fast", "column 'wall_ns', row 1: 'fast' is not an integer"),
        ("samples", "wall_ns", "18446744073709551616", "past the 64-bit integer range"),
        ("samples", "wall_ns", "9" * 5000, "past the 64-bit integer range"),
        ("samples", "wall_ns", "", "column 'wall_ns', row 1: '' is empty"),
        ("samples", "wall_ns", "-5", "column 'wall_ns', row 1: '-5' is negative"),
        ("gpu_trace", "duration_ns", "-1", "column 'duration_ns', row 1: '-1' is negative"),
        ("gpu_trace", "bytes", "-8", "column 'bytes', row 1: '-8' is negative"),
        ("stages", "median_ns", "1e400", "column 'median_ns', row 1: '1e400' is not an integer"),
        ("gpu_activities", "time_pct", "lots", "column 'time_pct', row 1: 'lots' is not a number"),
    ],
)
def test_a_bad_cell_is_named_by_file_column_and_row(
    run_dir: Path, table: str, column: str, value: str, message: str
) -> None:
    set_cell(run_dir, table, column, value)
    with pytest.raises(SchemaError) as err:
        store.load_run(run_dir)
    assert str(err.value).startswith(f"{run_dir / (table + '.csv')}: ")
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: "", "empty file"),
        (lambda t: t.replace("wall_ns", "wall"), "missing column(s) 'wall_ns'"),
        (lambda t: t.replace("wall_ns", "wall_ns,extra", 1), "unexpected column(s) 'extra'"),
        (lambda t: t.replace("stage,", "stage,stage,", 1), "repeated column(s) 'stage'"),
        (lambda t: t.replace("timed", "tim\0ed", 1), "line 2: a NUL byte"),
        (lambda t: t + "a,timed,1,2,3,4\n", "Expected 4 fields"),
    ],
)
def test_a_damaged_table_file_is_refused_naming_it(run_dir: Path, edit, message: str) -> None:  # type: ignore[no-untyped-def]
    path = run_dir / "samples.csv"
    path.write_text(edit(path.read_text()))
    with pytest.raises(SchemaError) as err:
        store.load_run(run_dir)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value)


def test_columns_in_another_order_and_integral_floats_read_back(run_dir: Path) -> None:
    """What pandas and a spreadsheet may write and is still the same table."""
    path = run_dir / "samples.csv"
    before = store.load_run(run_dir).table("samples")
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df = df[list(reversed(df.columns))]
    df["repeat"] = df["repeat"] + ".0"
    df.to_csv(path, index=False)
    pd.testing.assert_frame_equal(store.load_run(run_dir).table("samples"), before)


def test_trimmed_tables_reads_both_forms() -> None:
    assert store.trimmed_tables({}) == {}
    assert store.trimmed_tables(
        {"trimmed": {"gpu_trace": {"kept": 3, "of": 90}, "api_trace": {"kept": 7, "of": 7}}}
    ) == {"gpu_trace": store.Trim(3, 90)}
    legacy = {
        "gpu_trace": "first profiled repeat, at most 3000 rows per stage (90545 -> 3109)",
        "api_trace": "cut somehow",
    }
    assert store.trimmed_tables({"trimmed": legacy}) == {
        "gpu_trace": store.Trim(3109, 90545),
        "api_trace": store.Trim(None, None),
    }
    with pytest.raises(store.FieldError, match="trimmed.nope"):
        store.trimmed_tables({"trimmed": {"nope": {"kept": 1, "of": 2}}})


def test_the_committed_sample_reads_and_says_it_is_trimmed() -> None:
    run = store.load_run(SAMPLE)
    trims = store.trimmed_tables(run.meta)
    assert trims["gpu_trace"] == store.Trim(kept=len(run.table("gpu_trace")), of=90545)
    assert set(trims) == {"gpu_trace", "api_trace", "range_trace"}


# --- columns added after runs were written ---------------------------------------------------

# the nsys sample's stages table as recorded (5d7fdf4), before `timing` existed
SAMPLE_V2 = Path(__file__).resolve().parent / "data" / "runs" / "lenet-h100-v2-before-timing"


def test_a_stages_table_written_before_timing_reads_as_host_timed() -> None:
    """The nsys sample of 5d7fdf4 was written before `timing` existed: its times were the
    host clock around `infer`, and that is what they read back as."""
    header = (SAMPLE_V2 / "stages.csv").read_text().split("\n", 1)[0]
    assert "timing" not in header
    stages = store.load_run(SAMPLE_V2).table("stages")
    assert set(stages["timing"]) == {schema.HOST} and stages["timing_range"].isna().all()


def test_an_old_import_reads_as_imported_not_pass(tmp_path: Path) -> None:
    """Before IMPORTED existed an import called its stages PASS: they read back as IMPORTED,
    with no timing (they had no time); a sweep's PASS stays PASS."""
    for source in ("import", None):
        path = tmp_path / str(source)
        path.mkdir()
        run = make_run(1, profiled=2, launches=1)
        stages = run.tables["stages"].drop(columns=["timing", "timing_range"])
        stages["median_ns"] = pd.array([None] * len(stages), dtype="Int64")
        store.save_run(store.Run({**run.meta, "source": source}, run.tables), path)
        stages.to_csv(path / "stages.csv", index=False)  # as an older profgen wrote it
        back = store.load_run(path).table("stages")
        if source == "import":
            assert set(back["status"]) == {schema.IMPORTED} and back["timing"].isna().all()
        else:
            assert set(back["status"]) == {schema.PASS} and set(back["timing"]) == {schema.HOST}
