"""The server loop's own cost on the CPU: how much Python time a request and a batch take.

The engine answers at once (`SimulatedEngine` with no service time, or the stream engine over
the host stand-in for the device, which runs the same Python as on a GPU minus the CUDA calls),
so the loop, not the device, is all there is: over a closed-loop point of `DURATION_S`, the
window's length over the requests answered is the Python time per request, over the batches
the Python time per batch. `extra_info` holds both (`ns_per_request`, `ns_per_batch`); the
timed value is the whole point (fixed window plus drain), so compare the extra_info numbers.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for serve_fakes

from serve_fakes import HostDevice, RowSumStage, SimulatedEngine  # noqa: E402

from profiler.collect.serve.engines import EngineOptions, StreamEngine  # noqa: E402
from profiler.collect.serve.loop import Batching, Load, Server, run_point  # noqa: E402

DURATION_S = 0.3
POOL = np.random.default_rng(0).standard_normal((1024, 4)).astype(np.float32)
#: (clients, max batch, lanes): C=1 single requests (the per-request path), a full batch per
#: round trip, and more clients than one batch over four lanes (batches pipelined)
POINTS = [(1, 1, 1), (64, 64, 1), (256, 256, 1), (1024, 256, 4)]


def _simulated(batch: int, lanes: int) -> Any:
    return SimulatedEngine(lambda x: x * 2, POOL, lanes=lanes, fixed_ns=0, per_item_ns=0)


def _streams(batch: int, lanes: int) -> Any:
    stages = []
    for _ in range(lanes):
        stage = RowSumStage()
        stage.prepare(None, batch)
        stages.append(stage)
    return StreamEngine(stages, HostDevice(), POOL, EngineOptions(batch, lanes, False, 1))


def _ignore(*args: Any) -> None:
    """The sampled-answer check's place in the loop, doing nothing."""


ENGINES = {"simulated": _simulated, "streams": _streams}


@pytest.mark.parametrize("engine_kind", list(ENGINES))
@pytest.mark.parametrize(("clients", "batch", "lanes"), POINTS, ids=lambda v: str(v))
def test_bench_serve_loop(
    benchmark: Any, engine_kind: str, clients: int, batch: int, lanes: int
) -> None:
    make = ENGINES[engine_kind]
    load = Load("closed", concurrency=clients, warmup_s=0.0, duration_s=DURATION_S)

    def point() -> Server:
        engine = make(batch, lanes)
        server = Server(engine, Batching(batch, 0), POOL, 1, time.perf_counter_ns)
        engine.mark_reference(time.perf_counter_ns)
        run_point(server, load, _ignore)
        return server

    server = benchmark.pedantic(point, rounds=3, iterations=1)
    rec = server.records.arrays()
    requests, batches = len(rec["request_client"]), len(rec["batch_lane"])
    assert requests >= clients and batches >= 1
    assert rec["batch_items"].sum() == requests  # every request answered, in some batch
    benchmark.extra_info.update(
        ns_per_request=DURATION_S * 1e9 / requests,
        ns_per_batch=DURATION_S * 1e9 / batches,
        mean_batch=requests / batches,
    )
