"""Summary rows ordered by total, longest first, then by name (`nvprof_summary._order`), against
`sort_values` (the pandas oracle): whole totals are sorted as distinct integer keys
(`_by_total`), other totals stably; ties, negative, huge and fractional totals, NaN, -0.0, and
repeated, prefixed and empty names."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from profiler.parse import nvprof_summary

NAMES = ["", "a", "ab", "a b", "b", "cudaFunction1", "cudaFunction10", "cudaFunction2", "~", "A"]
TOTALS = [0.0, -0.0, 1.0, 2.0, 7.0, 1e6, -3.0, 2.0**53, 2.0**60, 0.5, float("nan")]


def frame(seed: int) -> pd.DataFrame:
    rng = random.Random(seed)
    count = rng.choice([1, 2, 5, 50, 700])
    totals = TOTALS[:7] if seed % 3 else TOTALS  # whole totals in range: the integer keys
    names = [rng.choice(NAMES) + rng.choice(["", str(rng.randrange(30))]) for _ in range(count)]
    total = [rng.choice(totals) for _ in range(count)]
    return pd.DataFrame({"name": pd.Series(names, dtype="string"), "total_ns": total})


def oracle(df: pd.DataFrame) -> list[int]:
    by = df.sort_values(["total_ns", "name"], ascending=[False, True], kind="stable")
    return by.index.tolist()


@pytest.mark.parametrize("seed", range(40))
def test_order_as_sort_values(seed: int):
    df = frame(seed)
    names = df["name"].tolist()
    sizes = np.array([len(n) for n in names], dtype=np.int64)
    wide = int(sizes.max()) + 1
    text = np.array([n.encode("ascii") for n in names], dtype=f"S{wide}")
    expected = oracle(df)
    assert nvprof_summary._order(df, sizes, text).tolist() == expected
    assert nvprof_summary._order(df).tolist() == expected


def test_whole_totals_take_the_integer_keys(monkeypatch):
    """Whole totals are sorted without a stable sort (the path is taken), to the same order."""
    df = pd.DataFrame(
        {"name": pd.Series(["b", "a", "c", "a"], dtype="string"), "total_ns": [2.0, 2.0, 5.0, 2.0]}
    )
    calls = []
    argsort = np.argsort

    def spy(a, *args, **kwargs):
        calls.append(kwargs.get("kind"))
        return argsort(a, *args, **kwargs)

    monkeypatch.setattr(nvprof_summary.np, "argsort", spy)
    assert nvprof_summary._order(df).tolist() == oracle(df) == [2, 1, 3, 0]
    assert calls == ["stable", None]  # by name, stable; then the distinct keys
