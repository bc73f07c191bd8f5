"""Speed target: parse a 1,000,000-row `cuda_gpu_trace` CSV in under 2 s on a 2-core machine.

The file is built in a temporary folder from the rows of the real H100 capture
(tests/data/nsys/2025.3.1/overlap), repeated with shifted start times. Run with
`pytest tests/benchmarks/test_bench_parse.py --benchmark-enable` to time it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from profiler import schema
from profiler.parse import nsys_csv

ROWS = 1_000_000
SOURCE = (
    Path(__file__).parent.parent / "data" / "nsys" / "2025.3.1" / "overlap" / "cuda_gpu_trace.csv"
)


@pytest.fixture(scope="module")
def big_trace_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    header, *rows = SOURCE.read_text().splitlines()
    span = 10_000_000  # ns between copies of the capture, longer than the capture itself
    out, n = [header], 0
    while n < ROWS:
        offset = (n // len(rows)) * span
        for row in rows[: ROWS - n]:
            start, rest = row.split(",", 1)
            out.append(f"{int(start) + offset},{rest}")
        n = len(out) - 1
    folder = tmp_path_factory.mktemp("bigtrace")
    (folder / "big_cuda_gpu_trace.csv").write_text("\n".join(out) + "\n")
    return folder


def test_parse_million_row_gpu_trace(benchmark, big_trace_dir):
    tables = benchmark.pedantic(
        nsys_csv.read_stats_dir, args=(big_trace_dir, "bench"), rounds=3, iterations=1
    )
    trace = schema.validate(tables["gpu_trace"], schema.GPU_TRACE)
    assert len(trace) == ROWS
    assert trace["kind"].value_counts().to_dict() == {"memcpy": ROWS // 2, "kernel": ROWS // 2}
    assert trace["start_ns"].is_monotonic_increasing
