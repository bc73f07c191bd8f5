"""Each LeNet stage timed with pytest-benchmark (marked gpu), for users who gate on
`--benchmark-compare-fail`.

A round is what the sweep times: `infer` over all 10,000 benchmark images (one call, as the
sweep's default batch is every image), between two device synchronisations: `setup` waits for
the device before the round, and the round ends with another wait. A stage's `infer` takes and
returns host arrays, so it is synchronous already (its output copy waits for its kernels); the
waits make that explicit and keep one round's leftover work out of the next. Preparing (upload,
compile, allocate) happens once per stage, outside the timing, and the last round's logits are
checked against the float64 reference so a fast wrong kernel cannot pass as a benchmark.

    tox -e gpu                                   # or:
    pytest tests/benchmarks/test_bench_lenet_gpu.py -m gpu --benchmark-enable \\
        --benchmark-autosave --benchmark-compare --benchmark-compare-fail=median:5%

`PROFGEN_BENCH_ROUNDS` (default 5) and `PROFGEN_BENCH_WARMUP` (default 2) set the rounds.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from profiler.collect import runtimes
from variants.lenet.study import STUDY

pytestmark = pytest.mark.gpu

IMAGES = 10_000
ROUNDS = int(os.environ.get("PROFGEN_BENCH_ROUNDS", "5"))
WARMUP = int(os.environ.get("PROFGEN_BENCH_WARMUP", "2"))


@pytest.fixture(scope="module")
def lenet() -> tuple[Any, np.ndarray, np.ndarray]:
    """The shipped model, its 10,000 benchmark images and their float64 reference logits."""
    model = STUDY.load_model()
    images = STUDY.make_inputs(IMAGES)
    return model, images, STUDY.run_reference(images, model)


@pytest.mark.parametrize("key", [s.key for s in STUDY.stages])
def test_bench_lenet_stage(
    benchmark: Any, lenet: tuple[Any, np.ndarray, np.ndarray], key: str
) -> None:
    model, images, ref = lenet
    spec = STUDY.get(key)
    runtime = runtimes.adapter(spec.runtime)
    why = runtime.missing() or runtimes.missing_needs(spec.needs)
    if why:
        pytest.skip(f"{key}: {why}")
    stage = spec.build()
    stage.prepare(model, len(images))
    try:
        x = stage.host_input(images)

        def setup() -> None:
            runtime.synchronize()

        def one_round() -> np.ndarray:
            out = np.asarray(stage.infer(x))
            runtime.synchronize()
            return out

        benchmark.group = "lenet-stages"
        benchmark.extra_info.update(
            stage=key, title=spec.title, images=len(images), batch=len(images)
        )
        out = benchmark.pedantic(
            one_round, setup=setup, rounds=ROUNDS, warmup_rounds=WARMUP, iterations=1
        )
    finally:
        stage.release()
    verdict = STUDY.compare_for(spec).check(out, ref)
    assert verdict.passed, f"{key}: {verdict.reason}"
