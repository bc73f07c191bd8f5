"""The nsys CSV speed-ups change no result; each is held to what it replaced:

- `nsys_fields._read_fast` reads the trace columns profgen does not use as objects, not as
  `string` columns: the fields, or the error, are those of the old reader (every unused column
  a string) on every real trace CSV and on edited copies (text, thousands separators, `None`,
  huge numbers in an unused column; a row with a cell too many or too few; quotes, CRLF, a
  byte-order mark, non-ASCII names);
- `csvtext.last_row_cells` looks at the end of the text only: it counts what the old one
  (`rstrip` of all of it) counted, on hostile ends (long blank runs, one long line, CRLF,
  non-ASCII characters across the window's edge), as str and as bytes.
"""

from __future__ import annotations

import random
from pathlib import Path

import fast_paths
import pandas as pd
import pytest

from profiler.errors import ParseError
from profiler.parse import csvtext, nsys_csv, nsys_fields
from profiler.parse.table_origin import Origin

DATA = Path(__file__).parent / "data" / "nsys"
TRACES = sorted(DATA.rglob("*cuda_gpu_trace.csv"))


def old_read_fast(
    source: str | bytes, header: list[str], cols: nsys_fields.Columns, origin: Origin
) -> pd.DataFrame | None:
    """The reader before: every column profgen does not use read as a string."""
    try:
        return csvtext.read_csv_text(
            source, origin, usecols=list(cols), dtype=nsys_fields.fast_dtypes(cols)
        )
    except ParseError:
        return None


def old_last_row_cells(text: str | bytes) -> int:
    if isinstance(text, bytes):
        data = text.rstrip(b"\r\n \t")
        last = data[data.rfind(b"\n") + 1 :].decode("utf-8", "replace")
    else:
        last = text.rstrip("\r\n \t")
        last = last[last.rfind("\n") + 1 :]
    return len(csvtext.header_cells(last)) if last else 0


def read(source: str | bytes) -> fast_paths.Outcome:
    """The trace's fields (as `read_report` gives them), or the error."""
    text = source if isinstance(source, str) else source.decode("utf-8", "replace")
    header = text.lstrip("\ufeff").split("\n", 1)[0].rstrip("\r")
    origin = Origin(Path("trace.csv"), "nsys cuda_gpu_trace CSV", source)
    report = "cuda_gpu_trace"
    return fast_paths.outcome(lambda: {"f": nsys_csv.read_report(source, header, report, origin)})


def assert_as_before(source: str | bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    got = read(source)
    with monkeypatch.context() as m:
        m.setattr(nsys_fields, "_read_fast", old_read_fast)
        ref = read(source)
    fast_paths.assert_same(got, ref, lambda f: f)


def _cells_edit(rng: random.Random) -> str:
    return rng.choice(
        ["n/a", "1,234.5", "None", "1e999", "-3", "", "abc def", "nan", "Ünïcode", " 7 ", "0x10"]
    )


def edited(text: str, seed: int) -> list[str]:
    """Copies of a trace CSV with one unused or used cell, or a row, edited."""
    rng = random.Random(seed)
    lines = text.rstrip("\n").split("\n")
    header = csvtext.header_cells(lines[0])
    out = [text, text.replace("\n", "\r\n"), "\ufeff" + text, text + "\n\n"]
    for _ in range(12):
        i = rng.randrange(1, len(lines))
        cells = csvtext.header_cells(lines[i])
        j = rng.randrange(len(header))
        action = rng.random()
        if action < 0.5 and len(cells) == len(header):
            cells[j] = _cells_edit(rng)
        elif action < 0.65:
            cells.append("9")  # a cell too many
        elif action < 0.8:
            cells.pop()  # a cell too few
        else:
            cells[-1] = f'"{cells[-1]}, <int, float>"'
        row = ",".join(cells)
        out.append("\n".join([*lines[:i], row, *lines[i + 1 :]]) + "\n")
    column = rng.choice([h for h in header if nsys_fields.key(h)[0] in ("throughput", "ctx")])
    at = header.index(column)
    rows = [csvtext.header_cells(line) for line in lines[1:]]
    for cells in rows:
        cells[at] = _cells_edit(rng)
    out.append("\n".join([lines[0], *(",".join(c) for c in rows)]) + "\n")
    extra = [lines[0] + ",Note", *(f"{line},note {k % 3}" for k, line in enumerate(lines[1:]))]
    out.append("\n".join(extra) + "\n")  # a column nsys may add, of text
    return out


@pytest.mark.parametrize("path", TRACES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_trace_fields_as_before_on_real_traces_and_edited_copies(path, monkeypatch):
    text = path.read_text(encoding="utf-8")
    for k, variant in enumerate(edited(text, len(path.name))):
        assert_as_before(variant.encode("utf-8"), monkeypatch)
        if k < 6:
            assert_as_before(variant, monkeypatch)


def test_real_traces_take_the_fast_path(monkeypatch):
    """Every real trace is read by `_read_fast` (else the tests above compare the slow path
    with itself)."""
    taken: list[bool] = []
    fast = nsys_fields._read_fast

    def spy(*args):  # type: ignore[no-untyped-def]
        got = fast(*args)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(nsys_fields, "_read_fast", spy)
    for path in TRACES:
        nsys_csv.read_gpu_trace(path, "s")
    assert taken and all(taken)


def test_no_column_is_read_as_a_string(monkeypatch):
    """The fast read names a dtype for every column, so none falls to `string` (the cost this
    speed-up removes)."""
    seen: list[dict[str, object]] = []
    read_csv_text = csvtext.read_csv_text

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(kwargs["dtype"])
        return read_csv_text(*args, **kwargs)

    monkeypatch.setattr(csvtext, "read_csv_text", spy)
    nsys_csv.read_gpu_trace(TRACES[0], "s")
    header = csvtext.header_cells(TRACES[0].read_text().split("\n", 1)[0])
    assert len(seen) == 1 and set(seen[0]) == set(header) and "string" not in seen[0].values()


def hostile_ends() -> list[str]:
    window = 8192
    ends = [
        "",
        "\n",
        " \t\r\n" * 5000,
        "a,b,c",
        "a,b,c\n",
        "h1,h2\n1,2\r\n",
        "h\n" + "x," * 9000 + "y\n",
        "h\n" + "x," * 9000 + "y" + " \n" * 9000,
        "h\n1,2,3" + "\n" * 20000,
        "h\n" + "é," * 5000 + "ü\n",
        "é" * (window - 3) + "\n" + "1,é,3\n",
        "h\n1,2\n" + " " * (window - 1) + "é,b\n",
        "\n".join("x" * (window - 2) for _ in range(3)),
        "h\n" + "a" * (window - 1) + "\n",
        "h\n" + "a" * window + "\n",
        "h\n" + "a" * (window + 1),
        "\ufeffh1,h2\n1,2",
    ]
    return ends


@pytest.mark.parametrize("text", hostile_ends(), ids=range(len(hostile_ends())))
def test_last_row_cells_as_before(text):
    assert csvtext.last_row_cells(text) == old_last_row_cells(text)
    data = text.encode("utf-8")
    assert csvtext.last_row_cells(data) == old_last_row_cells(data)
    for cut in (1, 2, 3):  # a multi-byte character cut at the end
        assert csvtext.last_row_cells(data[:-cut]) == old_last_row_cells(data[:-cut])
