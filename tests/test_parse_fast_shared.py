"""The shared speed-ups (gpuops.trace_table sorts its fields before it builds the table;
values._reasons answers the common all-fine case in one pass) change no result: each is held to
the code it replaced, on the fields of every real trace fixture and on edited copies."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import gpuops, nsys_capture, nsys_csv, nvprof, values

ROOTS = [Path(__file__).parent / "data" / "nsys", Path(__file__).parent / "data" / "nvprof"]
SHARED = Path("/work/shared/fixtures")


def old_strings(values: list[object], codes: np.ndarray, index: pd.Index) -> pd.Series:
    """`gpuops.strings` as it was: the codes remapped, the taken cells copied."""
    cells = np.array([pd.NA if v is None else v for v in values] + [pd.NA], dtype=object)
    pool = pd.array(cells, dtype="string")
    return pd.Series(pool.take(np.where(codes < 0, len(values), codes)), index=index)


def old_map_ints(series: pd.Series, func: Callable[[object], int | None]) -> pd.Series:
    """`gpuops.map_ints` as it was."""
    values, codes = gpuops.lookup(series, func)
    pool = np.array([-1 if v is None else v for v in values] + [-1], dtype="int64")
    ints = pool[np.where(codes < 0, len(values), codes)]
    mask = np.array([v is None for v in values] + [True])[np.where(codes < 0, len(values), codes)]
    return pd.Series(pd.arrays.IntegerArray(np.where(mask, 0, ints), mask), index=series.index)


def old_describe(
    name: pd.Series,
    grid_x: pd.Series,
    nbytes: pd.Series,
    src: pd.Series | None,
    dst: pd.Series | None,
) -> dict[str, pd.Series]:
    """`gpuops.describe` as it was (its `_kind_codes` inline); `strings` is `old_strings`
    while the old table is built."""
    cats, ncodes = gpuops.lookup(name, lambda v: v)
    is_kernel = grid_x.notna().to_numpy()
    has_bytes = nbytes.notna().to_numpy() & ~is_kernel
    if src is not None and dst is not None:
        has_src = src.notna().to_numpy()
        two_kinds = has_src & dst.notna().to_numpy()
        is_copy, is_set = has_bytes & two_kinds, has_bytes & has_src & ~two_kinds
    else:
        memset = np.array([gpuops.is_memset_label(c) for c in cats] + [False])[ncodes]
        is_copy, is_set = has_bytes & ~memset, has_bytes & memset
    kind = np.select([is_kernel, is_copy, is_set], [0, 1, 2], -1)
    direction = gpuops._direction_codes(ncodes, cats, kind == 1, src, dst)
    labels = [schema.copy_label(k) for k in schema.COPY_KINDS] + [schema.MEMSET_LABEL]
    final = np.where((kind == 1) & (direction >= 0), len(cats) + direction, ncodes)
    final = np.where(kind == 2, len(cats) + len(schema.COPY_KINDS), final)
    return {
        "kind": old_strings(list(gpuops.KINDS), kind, name.index),
        "name": old_strings(cats + labels, final, name.index),
        "copy_kind": old_strings(
            list(schema.COPY_KINDS), np.where(kind == 1, direction, -1), name.index
        ),
        "src_kind": gpuops._kinds(src, kind >= 1, name.index),
        "dst_kind": gpuops._kinds(dst, kind == 1, name.index),
    }


def old_trace_table(f: pd.DataFrame, stage: str) -> pd.DataFrame:
    """`gpuops.trace_table` as it was: the table built, then sorted."""
    na = pd.Series(pd.NA, index=f.index, dtype="Int64")

    def col(name: str) -> pd.Series:
        return f[name] if name in f else na

    ops = old_describe(f["name"], col("grid_x"), col("bytes"), f.get("src"), f.get("dst"))
    shared = (col("ssmem").fillna(0) + col("dsmem").fillna(0)).where(
        col("ssmem").notna() | col("dsmem").notna()
    )
    fields = {
        "stage": old_strings([stage], np.zeros(len(f), dtype="int64"), f.index),
        "repeat": -1,
        **ops,
        "start_ns": f["start"],
        "end_ns": f["start"] + f["duration"],
        "duration_ns": f["duration"],
        "device": old_map_ints(f["device"], gpuops.device_ordinal) if "device" in f else na,
        "correlation_id": col("corr"),
        "shared_bytes": shared,
        **{name: col(name) for name in gpuops._TRACE_INTS},
    }
    out = pd.DataFrame(fields, index=f.index, copy=False)
    known = out["kind"].notna().to_numpy()
    out = schema.conform(out if known.all() else out[known], schema.GPU_TRACE, fill=("range",))
    if not out["start_ns"].is_monotonic_increasing:
        out = out.sort_values("start_ns", kind="stable", ignore_index=True)
    return schema.validate(out, schema.GPU_TRACE)


def old_reasons(number: np.ndarray, scaled: np.ndarray, rule: values.Rule) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        missing = np.isnan(number)
        checks = [
            ~missing & ~np.isfinite(number),
            number < 0,
            ~(np.abs(scaled) < rule.most) & ~missing,
            (np.floor(number) != number) & ~missing if rule.whole else np.zeros(len(number), bool),
        ]
    return np.select(checks, [1, 2, 3, 4], 0)


def _files() -> list[Path]:
    roots = ROOTS + ([SHARED] if SHARED.is_dir() else [])
    return sorted(p for root in roots for p in root.rglob("*") if p.suffix in (".csv", ".txt"))


def _readers(path: Path) -> list[Callable[[], object]]:
    readers: list[Callable[[], object]] = [
        lambda: nsys_capture.read_stats_stdout(path, "s"),
        lambda: nvprof.read_log(path, "s"),
    ]
    if path.name in ("cuda_gpu_trace.csv", "gputrace.csv"):
        readers.append(lambda: nsys_csv.read_gpu_trace(path, "s"))
    return readers


@pytest.fixture(scope="module")
def trace_fields() -> list[pd.DataFrame]:
    """The fields every real fixture hands to `gpuops.trace_table`."""
    seen: list[pd.DataFrame] = []
    real = gpuops.trace_table

    def spy(f: pd.DataFrame, stage: str) -> pd.DataFrame:
        seen.append(f.copy())
        return real(f, stage)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gpuops, "trace_table", spy)
        for path in _files():
            for read in _readers(path):
                try:
                    read()
                except (ParseError, ValueError, KeyError):
                    pass
    assert len(seen) >= 5
    return seen


def _variants(f: pd.DataFrame, rng: np.random.Generator) -> list[pd.DataFrame]:
    """The fields as read, shuffled, with ties, with rows of no kind, with only those rows out
    of order, with a start time missing, and with an index of labels."""
    n = len(f)
    out = [f, f.iloc[rng.permutation(n)]]
    tied = f.iloc[rng.permutation(n)].copy()
    tied["start"] = (tied["start"] // 1000 * 1000).astype(tied["start"].dtype)
    out.append(tied)
    if n >= 3:
        unknown = f.copy()
        rows = rng.choice(n, size=max(1, n // 3), replace=False)
        for name in ("grid_x", "bytes"):
            if name in unknown:
                unknown.loc[unknown.index[rows], name] = pd.NA
        out += [unknown, unknown.iloc[rng.permutation(n)]]
        # only rows of no kind out of order (the kept rows are in order)
        ordered = unknown.sort_values("start", kind="stable").reset_index(drop=True)
        gone = ordered.index[
            ordered.get("grid_x", pd.Series(pd.NA, index=ordered.index)).isna()
            & ordered.get("bytes", pd.Series(pd.NA, index=ordered.index)).isna()
        ]
        if len(gone):
            ordered.loc[gone, "start"] = ordered["start"].max() - ordered.loc[gone, "start"]
        out.append(ordered)
        missing = f.iloc[rng.permutation(n)].copy()
        missing["start"] = missing["start"].astype("Int64")
        missing.iloc[0, missing.columns.get_loc("start")] = pd.NA
        out.append(missing)
        labelled = f.iloc[rng.permutation(n)]
        out.append(labelled.set_axis(pd.Index(range(10, 10 + 3 * n, 3)), axis=0))
    return out


def _same(f: pd.DataFrame) -> None:
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(gpuops, "strings", old_strings)  # (what `gpuops._kinds` calls)
            want: pd.DataFrame | str = old_trace_table(f, "s")
    except Exception as exc:  # noqa: BLE001 - the same error is the contract
        want = f"{type(exc).__name__}: {exc}"
    try:
        got: pd.DataFrame | str = gpuops.trace_table(f, "s")
    except Exception as exc:  # noqa: BLE001
        got = f"{type(exc).__name__}: {exc}"
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
        return
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.index.equals(want.index) and type(got.index) is type(want.index)


def test_trace_table_as_before_on_every_fixture_and_edited_copies(trace_fields):
    rng = np.random.default_rng(7)
    for f in trace_fields:
        for variant in _variants(f, rng):
            _same(variant)


def test_trace_table_as_before_on_a_large_shuffled_trace(trace_fields):
    big = max(trace_fields, key=len)
    rng = np.random.default_rng(3)
    many = pd.concat([big] * max(1, 20_000 // max(1, len(big))), ignore_index=True)
    many["start"] = many["start"] + pd.Series(rng.integers(0, 10**6, len(many)), dtype="Int64")
    for variant in _variants(many, rng):
        _same(variant)


def test_reasons_as_before():
    rng = np.random.default_rng(5)
    cells = np.array([0.0, -0.0, 1.0, 2.5, -1.0, np.nan, np.inf, -np.inf, 1e300, 4.6e18, 7.0])
    for rule in (values.COUNT, values.TIME, values.SIZE, values.Rule("x", most=10.0)):
        for _ in range(200):
            number = rng.choice(cells, size=int(rng.integers(0, 6)))
            for factor in (1.0, 1e3, 0.0, rng.choice([0.0, 1.0, np.nan, 1e-3], len(number))):
                with np.errstate(over="ignore", invalid="ignore"):
                    scaled = number * factor
                got = values._reasons(number, scaled, rule)
                want = old_reasons(number, scaled, rule)
                assert got.tolist() == want.tolist() and got.dtype == want.dtype


@pytest.mark.parametrize("dtype", ["int8", "int16", "int64"])
def test_strings_and_map_ints_as_before(dtype):
    """Code -1 (a missing row) and a None value are NA, whatever the codes' width."""
    rng = np.random.default_rng(11)
    values: list[object] = ["a", "c (2)", None, "7", ""]
    codes = rng.integers(-1, len(values), 500).astype(dtype)
    index = pd.Index(range(5, 505))
    got, want = gpuops.strings(values, codes, index), old_strings(values, codes, index)
    pd.testing.assert_series_equal(got, want, check_exact=True)
    assert got.isna().sum() == (codes == -1).sum() + (codes == 2).sum() > 0
    labels = pd.Series(pd.Categorical.from_codes(codes.clip(-1, 4), categories=list("vwxyz")))
    labels = labels.cat.rename_categories(["x (1)", "none", "3", "y (0)", "z"])
    pd.testing.assert_series_equal(
        gpuops.map_ints(labels, gpuops.device_ordinal),
        old_map_ints(labels, gpuops.device_ordinal),
        check_exact=True,
    )
