"""The engines on the CPU: any stage through its infer (one lane, staging where the stage keeps
its input), and the stream engine's lanes, staging, device times and graphs through a host
stand-in for the device."""

from __future__ import annotations

import time

import numpy as np
import pytest
from serve_fakes import HostDevice, RowSumStage

from profiler.collect.runtimes import CpuRuntime
from profiler.collect.serve.engines import (
    EngineOptions,
    InferEngine,
    StreamEngine,
    stream_support,
)
from profiler.collect.serve.loop import Batching, Load, Server, run_point
from profiler.errors import UsageError

POOL = np.random.default_rng(0).standard_normal((64, 4)).astype(np.float32)


def prepared(batch: int = 8) -> RowSumStage:
    stage = RowSumStage()
    stage.prepare(None, batch)
    return stage


def serve(engine, clients: int = 6, batch: int = 8) -> tuple[Server, list]:
    server = Server(engine, Batching(batch, 10_000), POOL, 1, time.perf_counter_ns)
    engine.mark_reference(time.perf_counter_ns)
    answers: list = []
    run_point(
        server,
        Load("closed", concurrency=clients, warmup_s=0, duration_s=0.05),
        lambda first, items, outs: answers.extend(zip(items.tolist(), outs.copy(), strict=True)),
    )
    return server, answers


def test_infer_engine_serves_any_stage_on_one_lane() -> None:
    class Pinned(RowSumStage):
        def host_input(self, x):
            self.staged = x.copy()
            return self.staged

    stage = Pinned()
    engine = InferEngine(stage, CpuRuntime(), POOL, 8)
    assert engine.lanes == 1 and engine.staging is stage.staged  # the stage's own staging
    server, answers = serve(engine)
    assert answers
    for item, out in answers:
        np.testing.assert_allclose(out, POOL[item : item + 1].sum(axis=1, keepdims=True) * 2)
    assert (server.records.arrays()["batch_h2d_ns"] == -1).all()  # no device times


@pytest.mark.parametrize(("lanes", "graphs"), [(1, False), (3, False), (2, True)])
def test_stream_engine_lanes_stage_copy_and_time(lanes: int, graphs: bool) -> None:
    device = HostDevice()
    stages = [prepared() for _ in range(lanes)]
    engine = StreamEngine(stages, device, POOL, EngineOptions(8, lanes, graphs, 1))
    assert engine.lanes == lanes
    server, answers = serve(engine, clients=12)
    for item, out in answers:
        np.testing.assert_allclose(
            out, POOL[item : item + 1].sum(axis=1, keepdims=True) * 2, rtol=1e-6
        )
    rec = server.records.arrays()
    assert (rec["batch_h2d_ns"] >= 0).all()  # every batch's device times were read
    # lanes are dealt round robin (the one free longest first), even when one would do
    assert rec["batch_lane"][: 2 * lanes].tolist() == list(range(lanes)) * 2
    assert (rec["batch_h2d_ns"] <= rec["batch_compute_ns"]).all()
    assert (rec["batch_compute_ns"] <= rec["batch_d2h_ns"]).all()
    assert (rec["batch_d2h_ns"] <= rec["batch_end_ns"]).all()
    if graphs:  # one graph per batch size per lane, captured up front; every batch replays one
        assert device.captures == 8 * lanes
        assert device.launches == len(rec["batch_lane"])
    else:  # every batch enqueued, plus the warm-up's smallest and largest batch per lane
        warm = [n for s in stages for n in s.enqueued[:2]]
        assert sorted(set(warm)) == [1, 8]
        assert device.captures == 0
        assert sum(len(s.enqueued) for s in stages) == len(rec["batch_lane"]) + 2 * lanes


def test_stream_engine_reads_a_batch_times_before_its_events_are_recorded_again() -> None:
    """A lane takes turns with two event sets, so a finished batch's times can be read later
    (in the loop's idle time); the third batch reuses the first one's set, and the first one's
    times must still be its own."""
    engine = StreamEngine([prepared()], HostDevice(), POOL, EngineOptions(8))
    engine.mark_reference(time.perf_counter_ns)
    first = engine.submit(0, 2)
    engine.submit(0, 2)
    time.sleep(0.005)
    third = engine.submit(0, 2)
    assert third.events is first.events  # the same set, recorded again
    assert first.device_times()["end_ns"] < third.device_times()["h2d_ns"] - 4_000_000


def test_stream_engine_captures_only_the_sizes_requests_make() -> None:
    device = HostDevice()
    StreamEngine([prepared(12)], device, POOL[:60].reshape(-1, 4), EngineOptions(12, 1, True, 4))
    assert device.captures == 3  # 4, 8 and 12 items


def test_stream_engine_refuses_buffers_that_do_not_match_the_inputs() -> None:
    with pytest.raises(UsageError, match="device input"):
        StreamEngine([prepared()], HostDevice(), np.zeros((8, 5), np.float32), EngineOptions(8))
    with pytest.raises(UsageError, match="fewer than"):
        StreamEngine([prepared(4)], HostDevice(), POOL, EngineOptions(8))


def test_stream_support_says_why_not() -> None:
    assert stream_support(prepared(), "cupy") is None
    assert "runtime is cpu" in stream_support(prepared(), "cpu")
    assert "stream protocol" in stream_support(object(), "torch")

    class Syncing(RowSumStage):
        serves_on_streams = False

    assert "synchronises" in stream_support(Syncing(), "cupy")


@pytest.mark.parametrize(("starts", "r"), [([5], 3), ([0, 7, 2], 1), ([9, 1, 30, 4], 4)])
def test_gather_puts_each_request_in_its_rows(starts: list[int], r: int) -> None:
    from profiler.collect.serve.engines import gather_into

    staging = np.full((16, 4), np.nan, np.float32)
    gather_into(staging, POOL, starts, r)
    expect = np.concatenate([POOL[s : s + r] for s in starts])
    np.testing.assert_array_equal(staging[: len(expect)], expect)
    assert np.isnan(staging[len(expect) :]).all()


def test_gather_casts_into_a_staging_buffer_of_another_dtype() -> None:
    from profiler.collect.serve.engines import gather_into

    staging = np.zeros((8, 4), np.float64)
    gather_into(staging, POOL, [3, 1], 2)
    np.testing.assert_array_equal(staging[:4], np.concatenate([POOL[3:5], POOL[1:3]]))


class ByteRowSumStage(RowSumStage):
    """RowSumStage over uint8 'device' input: its input format is quantised bytes, as
    LeNet's uint8_input keeps the IDX pixels."""

    def prepare(self, model, batch: int) -> None:
        super().prepare(model, batch)
        self.d_in = np.zeros((batch, 4), np.uint8)

    def host_input(self, x):
        return np.clip(np.rint(x * 10 + 100), 0, 255).astype(np.uint8)

    def reference_input(self, x):
        return self.host_input(x).astype(np.float32)


def test_serving_sends_the_stage_own_input_format_and_checks_on_what_it_holds() -> None:
    from profiler.collect.serve.worker import stage_inputs

    stage = ByteRowSumStage()
    pool, ref_x = stage_inputs(stage, POOL)
    assert pool.dtype == np.uint8 and ref_x.dtype == np.float32
    assert not np.array_equal(ref_x, POOL)  # checked on the bytes, not on the floats
    stage.prepare(None, 8)
    engine = StreamEngine([stage], HostDevice(), pool, EngineOptions(8, 1, True, 1))
    server = Server(engine, Batching(8, 10_000), pool, 1, time.perf_counter_ns)
    answers: list = []
    run_point(
        server,
        Load("closed", concurrency=6, warmup_s=0, duration_s=0.05),
        lambda first, items, outs: answers.extend(zip(items.tolist(), outs.copy(), strict=True)),
    )
    assert answers
    for item, out in answers:
        np.testing.assert_allclose(out, ref_x[item : item + 1].sum(axis=1, keepdims=True) * 2)


def test_serving_a_stage_without_input_hooks_sends_the_inputs_as_they_are() -> None:
    from profiler.collect.serve.worker import stage_inputs

    pool, ref_x = stage_inputs(RowSumStage(), POOL)
    assert pool is POOL and ref_x is POOL


@pytest.mark.parametrize(("lanes", "graphs", "r"), [(1, False, 1), (2, True, 1), (2, False, 3)])
def test_rows_engine_reads_the_requests_in_place(lanes: int, graphs: bool, r: int) -> None:
    from serve_fakes import RowsSumStage

    from profiler.collect.serve.engines import RowsEngine

    device = HostDevice()
    stages = [RowsSumStage() for _ in range(lanes)]
    for s in stages:
        s.prepare(None, 9)
    engine = RowsEngine(stages, device, POOL, EngineOptions(9, lanes, graphs, r))
    assert engine.kind == "in-place" and all(s.bound[0] is POOL for s in stages)
    server = Server(engine, Batching(9, 10_000), POOL, r, time.perf_counter_ns)
    engine.mark_reference(time.perf_counter_ns)
    answers: list = []
    run_point(
        server,
        Load("closed", concurrency=7, request_items=r, warmup_s=0, duration_s=0.05),
        lambda first, items, outs: answers.extend(zip(items.tolist(), outs.copy(), strict=True)),
    )
    assert len(answers) > 20
    for item, out in answers:  # each request's r rows, in order, from the pool itself
        np.testing.assert_allclose(
            out, POOL[item : item + r].sum(axis=1, keepdims=True) * 2, rtol=1e-6
        )
    assert all(not s.enqueued for s in stages)  # never the staging path
    rec = server.records.arrays()
    assert (rec["batch_h2d_ns"] == rec["batch_compute_ns"]).all()  # no copy phases
    assert (rec["batch_d2h_ns"] == rec["batch_end_ns"]).all()
    assert (rec["batch_compute_ns"] <= rec["batch_end_ns"]).all()
    if graphs:
        assert device.launches == len(rec["batch_lane"])


def test_build_engine_reads_in_place_when_it_can_and_says_why_not(monkeypatch) -> None:
    from serve_fakes import RowsSumStage

    from profiler.collect.serve import devices, worker
    from profiler.study import StageSpec

    monkeypatch.setitem(devices.DEVICES, "cupy", HostDevice)
    spec = StageSpec("rows", "Rows", "t", "custom", "cupy", RowsSumStage)
    engine, notes = worker.build_engine(spec, CpuRuntime(), None, POOL, EngineOptions(8, 2))
    assert engine.kind == "in-place" and engine.lanes == 2 and notes == []
    locked = POOL.copy()
    locked.flags.writeable = False
    engine, notes = worker.build_engine(spec, CpuRuntime(), None, locked, EngineOptions(8))
    assert engine.kind == "streams"
    assert notes == [
        "rows serves through staging and copies, not in place: the pool is not page-locked"
    ]
