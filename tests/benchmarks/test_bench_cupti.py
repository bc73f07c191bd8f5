"""Turning 1,000,000 CUPTI activity records into the trace tables, benchmarked (target: under
2 s on a 2-core machine for the GPU trace).

The records are synthetic (`tests/cupti_factory.py`) but in the exact raw format the worker
writes (`profiler.collect.cupti.write_npz`): kernels, copies and memsets with one API call each
and nested ranges. In the default test run benchmarks are disabled and each runs once, as a test.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for cupti_factory

import cupti_factory  # noqa: E402

from profiler import schema  # noqa: E402
from profiler.analyze.attribution import attribute  # noqa: E402
from profiler.parse import cupti as parse_cupti  # noqa: E402

RECORDS = 1_000_000


@pytest.fixture(scope="module")
def raw_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cupti") / "cupti.npz"
    return cupti_factory.write(path, cupti_factory.synthetic(RECORDS, repeats=3))


def test_gpu_trace_from_1m_records(benchmark, raw_file):
    """File -> GPU_TRACE: load the arrays, build and sort the 1,000,000-row table."""
    gpu = benchmark.pedantic(
        lambda: parse_cupti.gpu_trace(parse_cupti.read_raw(raw_file), "s"), rounds=3, iterations=1
    )
    assert len(gpu) == RECORDS
    schema.validate(gpu, schema.GPU_TRACE)


def test_all_traces_and_attribution_1m(benchmark, raw_file):
    """File -> the three traces -> attribution of every op to its range and repeat."""

    def run():
        gpu, api, rng = parse_cupti.read_traces(raw_file, "s")
        return attribute(gpu, api, rng, stage_range="m:s")

    gpu, rng = benchmark.pedantic(run, rounds=1, iterations=1)
    assert gpu["range"].notna().all() and sorted(gpu["repeat"].unique()) == [0, 1, 2]
    assert rng.loc[rng["level"] == 0, "gpu_ops"].sum() == RECORDS
