"""The host side of a comparison, benchmarked: `evaluate` on two runs, writing and reading a
baseline, and the Markdown and JUnit outputs.

The runs are the pair recorded on the H100 (`tests/data/runs/regress-pair/base` and `slow`,
run directories or baseline files) when present, else two synthetic LeNet runs
(`tests/regress_factory.py`) with a GPU trace of about 120,000 rows each; `extra_info["data"]`
says which. In the default test run benchmarks are disabled and each runs once, as a test.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for regress_factory

from regress_factory import make_run  # noqa: E402

from profiler import baseline, store  # noqa: E402
from profiler.analyze import regress  # noqa: E402
from profiler.render.junit import junit_xml  # noqa: E402
from profiler.render.markdown import summary_markdown  # noqa: E402

PAIR = Path(__file__).resolve().parents[1] / "data" / "runs" / "regress-pair"
FC = ("fc_coalesced", "fc1_kernel")


def _recorded(name: str) -> Path | None:
    return next((p for p in (PAIR / name, PAIR / f"{name}.json") if p.exists()), None)


@pytest.fixture(scope="module")
def pair() -> tuple[store.Run, store.Run, str]:
    base, slow = _recorded("base"), _recorded("slow")
    if base is not None and slow is not None:
        return baseline.load_reference(base), baseline.load_reference(slow), "recorded"
    return make_run(1, launches=500), make_run(2, launches=500, kernel_scale={FC: 1.5}), "synthetic"


@pytest.fixture(scope="module")
def regressions(pair: tuple[store.Run, store.Run, str]) -> Any:
    base, new, _ = pair
    return regress.evaluate(base, new, regress.default_checks())


def test_bench_evaluate(benchmark: Any, pair: tuple[store.Run, store.Run, str]) -> None:
    base, new, data = pair
    benchmark.extra_info["data"] = data
    out = benchmark(regress.evaluate, base, new, regress.default_checks())
    assert regress.exit_code(out) == 1


def test_bench_baseline_write_and_load(
    benchmark: Any, pair: tuple[store.Run, store.Run, str], tmp_path: Path
) -> None:
    base, _, data = pair
    benchmark.extra_info["data"] = data

    def round_trip() -> store.Run:
        return baseline.load_reference(baseline.write_baseline(base, tmp_path / "baseline.json"))

    ref = benchmark(round_trip)
    assert len(ref.table("stages")) == len(base.table("stages"))


def test_bench_summary_markdown(
    benchmark: Any, pair: tuple[store.Run, store.Run, str], regressions: Any
) -> None:
    _, new, data = pair
    benchmark.extra_info["data"] = data
    text = benchmark(summary_markdown, new, regressions)
    assert "#### Regressions" in text


def test_bench_junit_xml(benchmark: Any, regressions: Any) -> None:
    xml = benchmark(junit_xml, regressions)
    assert "<failure" in xml
