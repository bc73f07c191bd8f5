"""nvprof's summaries, second round of speed-ups (issue 14: a million-row text summary in under
2 s), held to the code they replace:

- `summary_tables` finds each row type's rows once (per run of rows of one type) rather than by
  a `groupby` and a string comparison per table, takes only the rows and columns it keeps (the
  stage made once), does not measure the API names twice, and orders rows by two stable sorts
  rather than one `lexsort`; its reference, `reference_summary_tables`, is the old code verbatim.
- `text_rows` tokenizes the table's own text with `tokens.split_lines` (`split_text` in one pass
  over the bytes), reads each numeric column once per distinct token (`_by_value`), cuts the
  names out of the bytes at once (`_rest`), builds its numbers as one block and checks the shares
  per row type without a `groupby` (`_check_shares_of`); its reference is `reference_text_rows`
  of tests/test_parse_fast_summary.py (every cell read, no `groupby` spared).

Both are run on every real nvprof summary (text and `--csv`) under tests/data and
/work/shared/fixtures and on mutated copies of them (`mutants`), and on made-up tables with what
real ones rarely hold: missing names and types, other row types, names past `MAX_NAME`, names
ending with a NUL or not ASCII, ties in the totals, several tables, sums past 2**62; made-up text
tables with few distinct cells and one fault (a bad cell repeated further down, a short row,
shares that do not add up, a blank line); and `split_lines` against `split_text` with slices of
a few bytes.
"""

from __future__ import annotations

import random
from pathlib import Path

import fast_paths
import numpy as np
import pandas as pd
import pytest
from test_parse_fast_paths import mutants
from test_parse_fast_summary import reference_text_rows

from profiler import schema
from profiler.parse import (
    bounded_names,
    nvprof,
    nvprof_summary,
    nvprof_summary_cells,
    nvprof_summary_text,
    tokens,
    values,
)
from profiler.parse.nvprof_summary import API, GPU, _gpu_kinds, _sorted_by_pandas
from profiler.parse.table_origin import Origin

DATA = Path(__file__).parent / "data"
SHARED = Path("/work/shared/fixtures")


# --- the reference: `summary_tables` as it was -------------------------------------------------


def reference_summary_tables(
    parts: list[tuple[Origin, pd.DataFrame]], stage: str, file: Origin
) -> dict[str, pd.DataFrame]:
    _check_one_summary(parts, file)
    rows = pd.concat([p for _, p in parts], ignore_index=True)
    if rows.empty:
        line = parts[0][0].first_line
        raise nvprof_summary.NoRows(  # (its kind, as `summary_tables` raises it)
            file.path, file.expected, f"the summary at line {line} has no rows (truncated?)"
        )
    if rows["name"].isna().any():
        raise file.error("a summary row has no name (truncated file?)")
    for row_type, group in rows.groupby("type", sort=False):
        values.check_total(group["total"], file, f"Time of {row_type}")
    df = _in_ns(rows, stage)
    out = {}
    gpu = df[df["type"] == GPU]
    if not gpu.empty:
        out["gpu_activities"] = _conform(_gpu_kinds(gpu), schema.GPU_ACTIVITIES)
    api = df[df["type"] == API]
    if not api.empty:
        out["api_calls"] = _conform(api, schema.API_CALLS)
    return out


def _in_ns(rows: pd.DataFrame, stage: str) -> pd.DataFrame:
    return rows.assign(
        stage=stage,
        name=bounded_names.cap_names(rows["name"].astype("string")),
        avg_ns=rows["avg"],
        total_ns=rows["total"].round(),
        min_ns=rows["min"].round(),
        max_ns=rows["max"].round(),
    )


def _check_one_summary(parts: list[tuple[Origin, pd.DataFrame]], file: Origin) -> None:
    lines = [origin.first_line for origin, rows in parts if (rows["type"] == GPU).any()]
    if len(lines) > 1:
        shown = ", ".join(str(n) for n in lines[:8])
        raise file.error(
            f"one run with {len(lines)} GPU activity summaries (lines {shown}; one per device?); "
            "profgen reads one summary per stage"
        )


def _conform(df: pd.DataFrame, tbl: schema.Table) -> pd.DataFrame:
    df = df.iloc[_order(df)]
    return schema.validate(
        schema.conform(df, tbl, fill=("bytes",) if "bytes" in tbl.names else ()), tbl
    )


def _order(df: pd.DataFrame) -> np.ndarray:
    total = df["total_ns"].to_numpy(dtype="float64", na_value=np.nan)
    names = df["name"].astype("string")
    plain = names.to_numpy(dtype=object) if len(names) and names.notna().all() else None
    sizes = None if plain is None else np.fromiter(map(len, plain), np.int64, len(plain))
    if sizes is None or int(sizes.max()) * 4 * len(names) > 256 * 2**20:
        return _sorted_by_pandas(df)
    text = np.array(plain, dtype=f"U{max(int(sizes.max()), 1)}")
    if (np.strings.str_len(text) != sizes).any():
        return _sorted_by_pandas(df)
    return np.lexsort((text, -total))


# --- real files -----------------------------------------------------------------------------


def summary_files() -> list[Path]:
    return [
        p
        for root in (DATA, SHARED)
        if root.is_dir()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and p.suffix in (".txt", ".md", ".log", ".csv")
        and "Time(%)" in p.read_text("utf-8", "replace")
    ]


FILES = summary_files()


def test_real_summaries_found():
    assert len(FILES) >= 10


def read_both(path: Path, monkeypatch: pytest.MonkeyPatch):
    """`read_log` of `path` as it is, and with the reference `summary_tables`."""
    new = fast_paths.outcome(lambda: nvprof.read_log(path, "s"))
    with monkeypatch.context() as patch:
        patch.setattr(
            nvprof_summary,
            "summary_tables",
            lambda parts, stage, file, names=None: reference_summary_tables(parts, stage, file),
        )
        old = fast_paths.outcome(lambda: nvprof.read_log(path, "s"))
    return new, old


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_read_log_as_before(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    text = path.read_text("utf-8", "replace")
    for i, variant in enumerate(mutants(text, seed=len(path.name), count=10)):
        copy = tmp_path / f"{i}{path.suffix}"
        copy.write_text(variant, "utf-8")
        new, old = read_both(copy, monkeypatch)
        fast_paths.assert_same(new, old, lambda table: table)


# --- made-up tables ---------------------------------------------------------------------------

NAMES = ["cudaMalloc", "k(int)", "[CUDA memcpy HtoD]", "[CUDA memset]", "b", "a", "\u00e9t\u00e9"]


def made_rows(rng: random.Random, n: int, kinds: list) -> pd.DataFrame:
    """`n` summary rows (`nvprof_summary_cells.COLUMNS`) of row types `kinds`, with tied totals."""
    names = [rng.choice(NAMES) + rng.choice(["", "x", "y" * 3, "\0"]) for _ in range(n)]
    if n and rng.random() < 0.2:
        names[rng.randrange(n)] = "z" * (bounded_names.MAX_NAME + rng.choice([0, 1, 5]))
    if n and rng.random() < 0.1:
        names[rng.randrange(n)] = None
    total = [float(rng.choice([1.0, 2.5, 3.0, 1e3, rng.random() * 1e6])) for _ in range(n)]
    for _ in range(rng.choice([0, 0, 2, 3]) if n else 0):  # sums past 2**62 in some row types
        total[rng.randrange(n)] = 3e18
    out = {
        "type": pd.Series([rng.choice(kinds) for _ in range(n)], dtype="string"),
        "name": pd.Series(names, dtype="string"),
        "time_pct": pd.Series([rng.random() * 10 for _ in range(n)], dtype="float64"),
        "calls": pd.Series([float(rng.randrange(1, 9)) for _ in range(n)], dtype="float64"),
        "total": pd.Series(total, dtype="float64"),
        "avg": pd.Series([t / 3 for t in total], dtype="float64"),
        "min": pd.Series([t / 4 for t in total], dtype="float64"),
        "max": pd.Series(total, dtype="float64"),
    }
    return pd.DataFrame(out, columns=nvprof_summary_cells.COLUMNS)


@pytest.mark.parametrize("seed", range(60))
def test_made_up_tables_as_before(seed: int):
    rng = random.Random(seed)
    pools = [[GPU, API], [API], [GPU], [API, GPU, "OpenACC (excl)"], [API, None], ["Range"]]
    kinds = rng.choice(pools)
    parts = []
    for k in range(rng.choice([1, 1, 1, 2, 3])):
        origin = Origin(Path("x.txt"), nvprof.EXPECTED, "", 10 * k + 3)
        parts.append((origin, made_rows(rng, rng.choice([0, 1, 2, 7, 40, 300]), kinds)))
    if rng.random() < 0.3:  # a table not numbered from 0
        parts[0] = (parts[0][0], parts[0][1].iloc[::-1])
    file = Origin(Path("x.txt"), nvprof.EXPECTED)
    new = fast_paths.outcome(lambda: nvprof_summary.summary_tables(parts, "s", file))
    old = fast_paths.outcome(lambda: reference_summary_tables(parts, "s", file))
    fast_paths.assert_same(new, old, lambda table: table)


@pytest.mark.parametrize("seed", range(40))
def test_order_as_sort_values(seed: int):
    rng = random.Random(seed)
    rows = made_rows(rng, rng.choice([1, 5, 50, 500]), [API]).dropna(subset=["name"])
    df = rows.assign(total_ns=rows["total"].round())
    if rng.random() < 0.3:
        df.loc[df.index[0], "total_ns"] = np.nan
    sizes = np.fromiter(map(len, df["name"].to_numpy(dtype=object)), np.int64, len(df))
    want = _sorted_by_pandas(df)
    assert nvprof_summary._order(df).tolist() == want.tolist()
    assert nvprof_summary._order(df, sizes).tolist() == want.tolist()
    plain = df["name"].to_numpy(dtype=object)
    if all(name.isascii() and "\0" not in name for name in plain):  # as `Names` holds them
        text = np.array([name.encode("ascii") for name in plain], dtype=f"S{max(sizes, default=1)}")
        assert nvprof_summary._order(df, sizes, text).tolist() == want.tolist()


# --- text_rows ---------------------------------------------------------------------------------

HEADER = "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name"
TYPES = ["GPU activities:", "API calls:", "Range:", "OpenACC (excl):", "GPU activities :"]
TIMES = ["1.0ms", "928ns", "3.7970us", "1.2345us", "8.5s", "12.345ms", "0.00ns", "123.4567us"]
BAD = ["1.0xs", "1.2.3ms", "-1us", "1e400s", "us", "1,5ms", "12345678.9ms", "x", "5"]


def made_body(rng: random.Random, n: int) -> str:
    """`n` rows of a text summary with few distinct cells; some tables with one fault: a bad
    cell (repeated further down), a short row, shares that do not add up, a blank line."""
    fault = rng.choice(["none"] * 4 + ["cell", "short", "share", "blank"])
    types = rng.sample(TYPES[:4], 4)
    rows = []
    for i in range(n):
        new_type = i == 0 or (rng.random() < 0.05 and types)
        typed = (types.pop() if types else "") if new_type and rng.random() < 0.9 else ""
        share = "100.00%" if new_type else rng.choice(["0.00%", "0.00%", "0.01%"])
        cells = [share, rng.choice(TIMES), rng.choice(["1", "2", "10", "1000"])]
        cells += [rng.choice(TIMES) for _ in range(3)]
        name = rng.choice(["cudaMalloc", "k(int, float*)", "[CUDA memcpy HtoD]", "f" * 30])
        rows.append([typed, cells, name, rng.choice(["", "", "  ", "\r", "\t"])])
    at = rng.randrange(n)
    if fault == "cell":
        column, bad = rng.randrange(6), rng.choice(BAD + ["12.5", "%", "1%%", "100.0000001%"])
        for row in rows[at:]:
            if rng.random() < 0.5:
                row[1][column] = bad
    elif fault == "short":
        rows[at][1] = rows[at][1][: rng.choice([1, 3, 5])]
    elif fault == "share":
        rows[at][1][0] = rng.choice(["50.00%", "99.00%", "0.01%"])
    lines = []
    for typed, cells, name, tail in rows:
        row = "  ".join([*cells, name]) + tail
        lines.append(f"  {typed}  {row}" if typed else f"    {row}")
    if fault == "blank":
        lines.insert(at, rng.choice(["", "   "]))
    return "\n".join(lines) + rng.choice(["", "\n"])


@pytest.mark.parametrize("seed", range(250))
def test_made_up_text_rows_as_before(seed: int):
    rng = random.Random(seed)
    body = made_body(rng, rng.choice([1, 2, 5, 30, 200, 2000]))
    text = HEADER + "\n" + body
    if rng.random() < 0.05:
        text = text.replace("cudaMalloc", "cuda\0Malloc")
    data = text.encode("utf-8")
    origin = Origin(Path("x.txt"), nvprof.EXPECTED, text, 7)
    section = rng.choice([GPU, API])
    new = fast_paths.outcome(
        lambda: {"t": nvprof_summary_text.text_rows(origin, section, memoryview(data))}
    )
    old = fast_paths.outcome(lambda: {"t": reference_text_rows(origin, section)})
    fast_paths.assert_same(new, old, lambda table: table)


@pytest.mark.parametrize("seed", range(20))
def test_rest_as_tokens_rest(seed: int, monkeypatch: pytest.MonkeyPatch):
    rng = random.Random(seed)
    rows = [
        " ".join(
            rng.choice(["a", "bb", "\x0bc", "d\re", "1.0ms"]) for _ in range(rng.randrange(7, 12))
        )
        + rng.choice(["", " ", "\t"])
        for _ in range(rng.choice([1, 3, 50]))
    ]
    cut = tokens.split(rows)
    assert cut is not None
    want = cut.rest(6)
    got, named = nvprof_summary_text._rest(cut, 6, keyed=True)
    assert got == want and named is not None
    assert [t.decode("ascii") for t in named.text] == want
    assert named.sizes.tolist() == [len(name) for name in want]
    assert nvprof_summary_text._rest(cut, 6) == (want, None)
    monkeypatch.setattr(nvprof_summary_text, "_REST_BYTES", 0)
    assert nvprof_summary_text._rest(cut, 6, keyed=True) == (want, None)


@pytest.mark.parametrize("piece", [1, 2, 3, 7, 1 << 20])
def test_split_lines_as_split_text(piece: int, monkeypatch: pytest.MonkeyPatch):
    """`tokens.split_lines` finds what `split_text` finds, across the slices' edges too."""
    monkeypatch.setattr(tokens, "_SLICE", piece)
    rng = random.Random(piece)
    bits = ["a", "bb", " ", "  ", "\n", "\t", "\r", "\x0b", "\x1c", "1.0ms", "\n\n", "\u00e9"]
    for _ in range(300):
        text = "".join(rng.choice(bits) for _ in range(rng.randrange(0, 40)))
        raw = text.encode("utf-8") if rng.random() < 0.5 else None
        new, old = tokens.split_lines(text, raw), tokens.split_text(text, raw)
        if new is None or old is None:
            assert new is None and old is None
            continue
        assert new.text == old.text and new.codes.tobytes() == old.codes.tobytes()
        for field in ("start", "end", "first", "count"):
            got, want = getattr(new, field), getattr(old, field)
            assert got.dtype == want.dtype and got.tolist() == want.tolist(), field


@pytest.mark.parametrize("seed", range(60))
def test_made_up_logs_as_before(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Whole made-up text summaries through `read_log`: the names `text_rows_named` hands on
    (`Names`) order the tables as the reference orders them."""
    rng = random.Random(seed)
    body = made_body(rng, rng.choice([1, 5, 30, 300]))
    if rng.random() < 0.3:
        body = body.replace("cudaMalloc", rng.choice(["cudaMalloc\x01", "cuda Malloc", "Z"]))
    path = tmp_path / "log.txt"
    path.write_text("==1== Profiling result:\n" + HEADER + "\n" + body, "utf-8")
    new, old = read_both(path, monkeypatch)
    fast_paths.assert_same(new, old, lambda table: table)
