"""Batch-size curves and where the study's own stages and the frameworks cross (pure analysis),
and the report's batch section that shows them."""

from __future__ import annotations

import pandas as pd
import pytest

from profiler import schema
from profiler.analyze import sweep
from profiler.render import charts

ITEMS = 4096
#: per-item microseconds at batch 1, 16, 256, 4096: the known study's shape (custom wins small
#: batches, a framework catches up at large ones) plus a custom stage that wins only at the end
PER_ITEM_US = {
    "torch": (150.0, 10.0, 0.9, 0.30),
    "jax": (60.0, 4.0, 0.30, 0.05),
    "one_kernel": (20.0, 1.5, 0.20, 0.08),
    "uint8": (25.0, 2.0, 0.25, 0.04),
}
ROLES = {"torch": "framework", "jax": "framework", "one_kernel": "step", "uint8": "step"}
BATCHES = (1, 16, 256, 4096)


def batch_sweep(per_item_us=PER_ITEM_US) -> pd.DataFrame:
    rows = []
    for stage, times in per_item_us.items():
        for batch, us in zip(BATCHES, times, strict=True):
            total = int(us * 1e3 * ITEMS)
            rows.append(
                {
                    "stage": stage,
                    "batch": batch,
                    "items": ITEMS,
                    "repeats": 3,
                    "median_ns": total,
                    "min_ns": total,
                    "max_ns": total,
                    "batch_median_ns": total // (ITEMS // batch),
                }
            )
    df = schema.conform(pd.DataFrame(rows), schema.BATCH_SWEEP)
    return schema.validate(df, schema.BATCH_SWEEP)


def versus() -> pd.DataFrame:
    return sweep.batch_versus(sweep.batch_curves(batch_sweep()), ROLES)


def test_each_framework_meets_the_fastest_custom_stage_of_each_batch() -> None:
    df = versus().set_index(["framework", "batch"])
    assert len(df) == 2 * len(BATCHES)
    assert df.loc[("torch", 1), "custom"] == "one_kernel"
    assert df.loc[("torch", 4096), "custom"] == "uint8"  # the fastest at 4096 is another stage
    assert df.loc[("jax", 4096), "speedup"] == pytest.approx(0.05 / 0.04)
    assert df.loc[("torch", 1), "speedup"] == pytest.approx(150 / 20)
    assert df.loc[("jax", 256), "speedup"] == pytest.approx(0.30 / 0.20)


def test_crossings_say_from_which_batch_to_which_custom_is_faster() -> None:
    slow = dict(PER_ITEM_US, jax=(60.0, 4.0, 0.18, 0.03))  # jax wins from batch 256 on
    cross = sweep.batch_crossings(
        sweep.batch_versus(sweep.batch_curves(batch_sweep(slow)), ROLES)
    ).set_index("framework")
    torch, jax = cross.loc["torch"], cross.loc["jax"]
    assert (torch["faster_from"], torch["faster_to"], torch["faster"]) == (1, 4096, 4)
    assert pd.isna(torch["first_slower"])
    assert (jax["faster_from"], jax["faster_to"], jax["first_slower"]) == (1, 16, 256)
    assert jax["faster"] == 2 and jax["min_speedup_batch"] == 4096
    assert jax["min_speedup"] == pytest.approx(0.03 / 0.04)
    assert torch["max_speedup_batch"] == 1 and torch["max_speedup"] == pytest.approx(7.5)


def test_a_framework_never_beaten_has_no_range() -> None:
    fast = dict(PER_ITEM_US, jax=(1.0, 0.1, 0.01, 0.001))
    cross = sweep.batch_crossings(
        sweep.batch_versus(sweep.batch_curves(batch_sweep(fast)), ROLES)
    ).set_index("framework")
    assert pd.isna(cross.loc["jax", "faster_from"]) and cross.loc["jax", "faster"] == 0
    assert cross.loc["jax", "first_slower"] == 1


def test_without_frameworks_or_roles_there_is_nothing_to_cross() -> None:
    curves = sweep.batch_curves(batch_sweep())
    assert sweep.batch_versus(curves, {}).empty
    assert sweep.batch_versus(curves, {"one_kernel": "step"}).empty
    assert sweep.batch_crossings(sweep.batch_versus(curves, {})).empty


def test_the_section_carries_the_crossings_and_dashes_the_frameworks() -> None:
    section = charts.batch_sweep_section(batch_sweep(), ROLES)
    assert {r["framework"] for r in section["crossings"]} == {"torch", "jax"}
    assert len(section["versus"]) == 8 and len(section["rows"]) == 16
    assert '"dash":"dash"' in section["html"].replace(" ", "")
    assert "torch (framework)" in section["html"]
    plain = charts.batch_sweep_section(batch_sweep())  # no roles: the curves alone
    assert plain["crossings"] == [] and "(framework)" not in plain["html"]
