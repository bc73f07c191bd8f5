"""The server loop and its load generators, on the CPU with a simulated engine: batching
bounds, the wait rule, every request answered once, Little's law in closed loop, open-loop
latency from the scheduled send time, and the Poisson schedule."""

from __future__ import annotations

import time

import numpy as np
import pytest
from serve_fakes import SimulatedEngine, TimedPending

from profiler.analyze import serving
from profiler.collect.serve.loop import Batching, Load, Server, poisson_schedule, run_point
from profiler.errors import UsageError

POOL = np.arange(256 * 4, dtype=np.float32).reshape(256, 4)


def double(x: np.ndarray) -> np.ndarray:
    return x * 2


def run(engine, load: Load, batching: Batching, r: int = 1):
    server = Server(engine, batching, POOL, r, time.perf_counter_ns)
    answers: list[tuple[int, np.ndarray]] = []

    def check(first: int, items: np.ndarray, outs: np.ndarray) -> None:
        answers.extend(zip(items.tolist(), outs.copy(), strict=True))

    window = run_point(server, load, check)
    return server, window, answers


def facts(load: Load, batching: Batching, window, r: int = 1) -> dict:
    return {
        "label": "p",
        "mode": load.mode,
        "concurrency": load.concurrency,
        "rate_rps": load.rate_rps,
        "request_items": r,
        "max_batch": batching.max_batch,
        "max_wait_us": batching.max_wait_ns / 1000,
        "streams": 1,
        "graphs": False,
        "engine": "simulated",
        "checked": 0,
        "failures": [],
        "window": {"measure_ns": window.measure, "end_ns": window.end},
    }


def test_batches_never_exceed_max_batch_nor_split_a_request() -> None:
    engine = SimulatedEngine(double, POOL, lanes=2, fixed_ns=100_000)
    load = Load("closed", concurrency=20, request_items=3, warmup_s=0.02, duration_s=0.15)
    server, _, answers = run(engine, load, Batching(16, 20_000), r=3)
    assert max(engine.sizes) <= 15 and all(n % 3 == 0 for n in engine.sizes)
    assert max(engine.sizes) == 15  # 20 clients keep the queue full: full batches leave
    for item, out in answers:  # each answer is its own request's items, doubled
        np.testing.assert_array_equal(out, POOL[item : item + 3] * 2)
    rec = server.records.arrays()
    assert len(answers) == len(rec["request_client"])
    assert rec["batch_items"].sum() == 3 * len(answers)


def test_a_lone_request_waits_for_max_wait_then_leaves() -> None:
    engine = SimulatedEngine(double, POOL, fixed_ns=10_000, per_item_ns=0)
    load = Load("closed", concurrency=1, warmup_s=0.0, duration_s=0.1)
    server, _, _ = run(engine, load, Batching(8, 2_000_000))
    rec = server.records.arrays()
    waited = rec["request_dispatch_ns"] - rec["request_arrive_ns"]
    # never before T; and it does leave at T (the min: a busy shared CPU may deschedule the loop)
    assert (waited >= 2_000_000).all() and waited.min() < 2_600_000
    assert set(engine.sizes) == {1}


def test_no_wait_sends_at_once_and_full_queue_does_not_wait() -> None:
    engine = SimulatedEngine(double, POOL, fixed_ns=10_000)
    load = Load("closed", concurrency=1, warmup_s=0.0, duration_s=0.05)
    server, _, _ = run(engine, load, Batching(8, 0))
    rec = server.records.arrays()
    assert np.percentile(rec["request_dispatch_ns"] - rec["request_arrive_ns"], 25) < 200_000


@pytest.mark.parametrize("clients", [1, 4, 16])
def test_littles_law_holds_in_closed_loop(clients: int) -> None:
    """Up to three tries: on a shared CPU a stall of the loop longer than a tenth of the window
    breaks the law for real (the requests in flight at the end are not counted), and the point
    is then rightly flagged; a generator that kept other than C requests in flight fails all."""
    ratios = []
    for _ in range(3):
        engine = SimulatedEngine(double, POOL, lanes=2, fixed_ns=200_000)
        load = Load("closed", concurrency=clients, warmup_s=0.05, duration_s=0.4)
        batching = Batching(8, 50_000)
        server, window, _ = run(engine, load, batching)
        row = serving.analyse_point(facts(load, batching, window), server.records.arrays()).row
        ratios.append(row["littles_ratio"])
        if abs(row["littles_ratio"] - 1) < serving.LITTLE_TOLERANCE:
            assert row["flag"] == ""
            break
    else:
        pytest.fail(f"Little's law broken in every try: {ratios}")
    # and the clients really were C: never more requests in flight than clients
    rec = server.records.arrays()
    t = np.sort(rec["request_sched_ns"])[len(rec["request_sched_ns"]) // 2]
    in_flight = ((rec["request_sched_ns"] <= t) & (rec["request_reply_ns"] > t)).sum()
    assert in_flight <= clients


def test_open_loop_latency_counts_from_the_scheduled_send() -> None:
    """A server too slow for the offered rate: latency grows with the backlog (no coordinated
    omission) and the point is flagged past its breaking point."""
    engine = SimulatedEngine(double, POOL, fixed_ns=1_000_000, per_item_ns=0)  # 1 ms a batch
    load = Load("open", rate_rps=20_000, warmup_s=0.0, duration_s=0.2)  # 20 requests a ms
    batching = Batching(4, 0)  # at most 4 per ms: 4,000 requests/s of capacity
    server, window, _ = run(engine, load, batching)
    rec = server.records.arrays()
    latency = rec["request_reply_ns"] - rec["request_sched_ns"]
    assert latency.max() > 100_000_000  # the last ones waited for the backlog, ~0.16 s
    assert (rec["request_arrive_ns"] >= rec["request_sched_ns"]).all()
    row = serving.analyse_point(facts(load, batching, window), rec).row
    assert "breaking point" in row["flag"]


def test_open_loop_under_capacity_keeps_up() -> None:
    engine = SimulatedEngine(double, POOL, lanes=2, fixed_ns=50_000)
    load = Load("open", rate_rps=2_000, warmup_s=0.05, duration_s=0.3, seed=3)
    batching = Batching(8, 20_000)
    server, window, _ = run(engine, load, batching)
    row = serving.analyse_point(facts(load, batching, window), server.records.arrays()).row
    assert row["flag"] == "", row["flag"]
    assert 0.8 * 2000 < row["requests_per_s"] < 1.2 * 2000


def test_poisson_schedule_has_the_rate_and_exponential_gaps() -> None:
    times = poisson_schedule(10_000, 0, 2_000_000_000, seed=1)
    assert abs(len(times) - 20_000) < 4 * np.sqrt(20_000)
    gaps = np.diff(times)
    assert abs(gaps.mean() - 100_000) < 3_000
    assert abs(gaps.std() / gaps.mean() - 1) < 0.05  # exponential: sd = mean
    assert (times < 2_000_000_000).all() and (gaps >= 0).all()
    np.testing.assert_array_equal(times, poisson_schedule(10_000, 0, 2_000_000_000, seed=1))


def test_load_and_batching_refuse_nonsense() -> None:
    with pytest.raises(UsageError):
        Load("closed", concurrency=0)
    with pytest.raises(UsageError):
        Load("open", rate_rps=0)
    with pytest.raises(UsageError):
        Batching(0, 0)
    with pytest.raises(UsageError, match="does not fit"):
        Server(SimulatedEngine(double, POOL), Batching(2, 0), POOL, 3, time.perf_counter_ns)


def _calls_per_batch(clients: int) -> float:
    """Python and C function calls the loop makes per batch at C = B = `clients`, with an engine
    that answers at once and the worker's sampled check (counted with sys.setprofile)."""
    import sys

    from profiler.collect.serve.worker import AnswerSample

    engine = SimulatedEngine(double, POOL, fixed_ns=0, per_item_ns=0)
    server = Server(engine, Batching(clients, 0), POOL, 1, time.perf_counter_ns)
    calls = 0

    def count(frame, event, arg) -> None:  # type: ignore[no-untyped-def]
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    load = Load("closed", concurrency=clients, warmup_s=0.0, duration_s=0.05)
    sys.setprofile(count)
    try:
        run_point(server, load, AnswerSample(64))
    finally:
        sys.setprofile(None)
    return calls / len(server.records.batches)


def test_python_work_per_batch_does_not_grow_with_the_batch() -> None:
    """The loop's Python is per batch, not per request: the calls a batch costs are the same for
    4 requests and for 128 (a loop over a batch's requests would add hundreds)."""
    small, large = _calls_per_batch(4), _calls_per_batch(128)
    assert large <= small + 10, (small, large)


def test_answer_sample_keeps_one_request_in_every_n_across_batches() -> None:
    from profiler.collect.serve.worker import AnswerSample

    sample = AnswerSample(8)
    first = 0
    for size in (3, 5, 64, 1, 200, 7):
        ids = np.arange(first, first + size)
        sample(first, ids * 10, np.stack([ids, -ids], axis=1)[:, None, :])
        first += size
    kept = list(sample.kept())
    assert [item for item, _ in kept] == [10 * i for i in range(0, first, 8)]
    assert sample.count == len(kept)
    for item, out in kept:  # each answer is its own request's
        np.testing.assert_array_equal(out, [[item // 10, -(item // 10)]])


def test_request_log_grows_and_records_keep_only_answered_requests() -> None:
    from profiler.collect.serve.loop import Records, RequestLog

    log = RequestLog(capacity=2)
    assert log.append(np.arange(3), np.arange(3) * 2, 100, 200, 3) == 0
    assert log.append(7, 9, 300, 400, 1) == 3  # one value for the whole block
    assert log.n == 4 and len(log.cols["client"]) >= 4
    assert log.cols["client"][:4].tolist() == [0, 1, 2, 7]
    assert log.cols["sched_ns"][:4].tolist() == [100, 100, 100, 300]
    log.cols["batch"][:2] = 0
    log.cols["reply_ns"][:2] = 500
    rec = Records(requests=log, batches=[(0, 2, 2, 150, 160, 490, -1, -1, -1, -1)])
    arrays = rec.arrays()
    assert arrays["request_client"].tolist() == [0, 1]  # the unanswered two are not records
    assert arrays["batch_items"].tolist() == [2] and arrays["batch_done_ns"].tolist() == [490]


def test_device_times_are_read_in_idle_turns_not_between_reply_and_dispatch() -> None:
    """At C=1 the loop reads a finished batch's device times while the next batch runs: the
    next request is dispatched before its predecessor's times are read, and every batch's
    times are read by the end of the point."""
    reads: list[tuple[int, int]] = []  # (batches dispatched so far, at the read)
    engine = SimulatedEngine(double, POOL, fixed_ns=300_000, per_item_ns=0)
    load = Load("closed", concurrency=1, warmup_s=0.0, duration_s=0.05)
    server = Server(engine, Batching(1, 0), POOL, 1, time.perf_counter_ns)
    read = TimedPending.device_times

    def counted(self):  # type: ignore[no-untyped-def]
        reads.append((engine.pendings.index(self), len(engine.pendings)))
        return read(self)

    TimedPending.device_times = counted  # type: ignore[method-assign]
    try:
        run_point(server, load, lambda first, items, answers: None)
    finally:
        TimedPending.device_times = read  # type: ignore[method-assign]
    rec = server.records.arrays()
    assert len(reads) == len(rec["batch_lane"]) > 20 and not server.unread
    assert (rec["batch_h2d_ns"] >= 0).all()
    # all but the last batch: read once the next one was already dispatched
    assert all(dispatched > index + 1 for index, dispatched in reads[:-1])
