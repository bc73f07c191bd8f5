"""`profgen serve` on the GPU (marked gpu): LeNet's stages through the stream engine, with and
without CUDA graphs, over one and several streams, every answer checked against the reference;
the device times are present and ordered; Little's law holds in a short closed loop."""

from __future__ import annotations

import time
from functools import cache

import numpy as np
import pytest

from profiler.analyze import serving
from profiler.collect import runtimes
from profiler.collect.serve import worker
from profiler.collect.serve.engines import EngineOptions
from profiler.collect.serve.loop import Batching, Load, Server, run_point

pytestmark = pytest.mark.gpu

CASES = [
    ("overlap_fusion", 1, False),
    ("overlap_fusion", 3, True),
    ("pinned", 2, False),
    ("fc_coalesced", 2, True),
    ("one_kernel", 2, True),
    ("uint8_input", 1, False),
    ("uint8_input", 2, True),
    ("torch_gpu", 1, False),
    ("torch_gpu", 2, True),
]

#: the stages that read the requests where they lie in the page-locked pool
IN_PLACE = {"one_kernel", "one_kernel_const", "uint8_input"}


@cache
def lenet():
    from profiler.collect.loading import load_study

    study = load_study("variants.lenet.study:STUDY")
    model = study.load_model()
    pool = study.make_inputs(512)
    ref = study.run_reference(pool, model)
    return study, model, pool, ref


def needs(spec) -> None:
    why = runtimes.adapter(spec.runtime).missing() or runtimes.missing_needs(spec.needs)
    if why:
        pytest.skip(why)


@pytest.mark.parametrize(("key", "streams", "graphs"), CASES)
def test_stream_engine_serves_right_answers(key: str, streams: int, graphs: bool) -> None:
    study, model, raw, raw_ref = lenet()
    spec = study.get(key)
    needs(spec)
    pool, ref_x = worker.stage_inputs(spec.build(), raw)  # uint8 bytes for uint8_input
    ref = raw_ref if ref_x is raw else study.run_reference(ref_x, model)
    runtime = runtimes.adapter(spec.runtime)
    engine, notes = worker.build_engine(
        spec, runtime, model, pool, EngineOptions(16, streams, graphs, 1)
    )
    kind = "in-place" if key in IN_PLACE else "streams"
    assert engine.kind == kind and engine.lanes == streams and not notes
    rule = study.compare_for(spec)
    bad: list[str] = []

    def check(first: int, items: np.ndarray, answers: np.ndarray) -> None:
        for item, out in zip(items.tolist(), answers, strict=True):  # every answer, not sampled
            verdict = rule.check(out, ref[item : item + 1])
            if not verdict.passed:
                bad.append(f"{item}: {verdict.reason}")

    try:
        server = Server(engine, Batching(16, 50_000), pool, 1, time.perf_counter_ns)
        engine.mark_reference(time.perf_counter_ns)
        load = Load("closed", concurrency=24, warmup_s=0.2, duration_s=0.4)
        window = run_point(server, load, check)
    finally:
        engine.close()
    assert not bad, bad[:3]
    arrays = server.records.arrays()
    b = arrays
    assert (b["batch_h2d_ns"] >= 0).all()
    assert (b["batch_h2d_ns"] <= b["batch_compute_ns"]).all()
    assert (b["batch_compute_ns"] <= b["batch_d2h_ns"]).all()
    assert (b["batch_d2h_ns"] <= b["batch_end_ns"]).all()
    # the device finished each batch before the host saw it done (clock alignment within 50 us)
    assert (b["batch_end_ns"] <= b["batch_done_ns"] + 50_000).all()
    facts = {
        "label": "p",
        "mode": "closed",
        "concurrency": 24,
        "request_items": 1,
        "max_batch": 16,
        "max_wait_us": 50,
        "streams": streams,
        "graphs": graphs,
        "engine": engine.kind,
        "checked": 1,
        "failures": [],
        "window": {"measure_ns": window.measure, "end_ns": window.end},
    }
    row = serving.analyse_point(facts, arrays).row
    assert row["batch_mean"] > 1
    assert abs(row["littles_ratio"] - 1) < serving.LITTLE_TOLERANCE, row
    assert 0 < row["gpu_busy_pct"] <= 100


@pytest.mark.parametrize(
    ("key", "opts", "kind", "said"),
    [
        # a one-kernel stage given a pageable pool: staging and copies, not in place
        ("one_kernel", EngineOptions(8, 1, False, 1), "streams", "must be page-locked"),
        # a stage without the stream protocol: its own infer on one lane
        ("cuda_baseline", EngineOptions(4, 2, True, 1), "infer", "one lane"),
    ],
)
def test_a_stage_that_cannot_serve_as_asked_falls_back_and_says_so(
    key: str, opts: EngineOptions, kind: str, said: str
) -> None:
    study, model, pool, _ = lenet()  # the study's own (pageable) inputs
    spec = study.get(key)
    needs(spec)
    engine, notes = worker.build_engine(spec, runtimes.adapter(spec.runtime), model, pool, opts)
    try:
        assert engine.kind == kind and engine.lanes == 1
        assert notes and said in notes[0]
    finally:
        engine.close()
