"""The server loop and its load generators, in one thread that polls (no thread hand-offs).

One loop plays both sides so that what is timed is the server, not Python's thread switches:

- **closed loop**: C clients, each sends a request of R items, waits for its answer and sends
  the next at once (no think time); latency runs from the send to the answer;
- **open loop**: requests at a fixed rate with Poisson (exponential) gaps, scheduled in advance;
  latency runs from the *scheduled* send time, so a server that falls behind is charged for the
  requests it kept waiting (no coordinated omission).

The server batches dynamically: a batch leaves when it holds `max_batch` items, or when its
oldest request has waited `max_wait_ns`, whichever comes first, and only when a lane (a stream
of the engine) is free. Batches never split a request. Every timestamp is host
`time.perf_counter_ns()`; the engine adds the device's own times per batch.

The loop records arrays, not objects, per request and per batch (`Records`); statistics are
computed later by `profiler.analyze.serving`.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from profiler.errors import UsageError

Clock = Callable[[], int]


@dataclass(frozen=True)
class Load:
    """What the load generator does: `mode` closed (`concurrency` clients) or open (`rate_rps`
    requests a second), `request_items` items a request, for `warmup_s` then `duration_s`."""

    mode: str
    concurrency: int = 1
    rate_rps: float = 0.0
    request_items: int = 1
    warmup_s: float = 0.5
    duration_s: float = 2.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.mode not in ("closed", "open"):
            raise UsageError(f"load mode {self.mode!r}: closed or open")
        if self.mode == "closed" and self.concurrency < 1:
            raise UsageError("closed loop: concurrency must be at least 1")
        if self.mode == "open" and not self.rate_rps > 0:
            raise UsageError("open loop: the request rate must be positive")
        if self.request_items < 1 or self.duration_s <= 0 or self.warmup_s < 0:
            raise UsageError("request items must be >= 1, duration > 0 and warm-up >= 0")


@dataclass(frozen=True)
class Batching:
    """The server's batching rule: up to `max_batch` items or `max_wait_ns` of waiting."""

    max_batch: int
    max_wait_ns: int

    def __post_init__(self) -> None:
        if self.max_batch < 1 or self.max_wait_ns < 0:
            raise UsageError("max batch must be >= 1 and max wait >= 0")


def poisson_schedule(rate_rps: float, start_ns: int, end_ns: int, seed: int) -> np.ndarray:
    """Send times (ns) of a Poisson process of `rate_rps` from `start_ns` until `end_ns`."""
    rng = np.random.default_rng(seed)
    span_s = (end_ns - start_ns) / 1e9
    count = int(rate_rps * span_s * 1.2 + 10 * np.sqrt(rate_rps * span_s + 1) + 10)
    gaps = rng.exponential(1e9 / rate_rps, count)
    times = start_ns + np.cumsum(gaps)
    while times[-1] < end_ns:  # pragma: no cover - 10 sigma past the expectation
        more = times[-1] + np.cumsum(rng.exponential(1e9 / rate_rps, count))
        times = np.concatenate([times, more])
    return times[times < end_ns].astype(np.int64)


REQUEST_FIELDS = ("client", "item", "sched_ns", "arrive_ns", "dispatch_ns", "reply_ns", "batch")
BATCH_FIELDS = (
    "lane",
    "items",
    "requests",
    "dispatch_ns",
    "launched_ns",
    "done_ns",
    "h2d_ns",
    "compute_ns",
    "d2h_ns",
    "end_ns",
)


@dataclass
class Records:
    """What one point recorded, as growing lists turned into arrays by `arrays`.

    Per request: client, first item, scheduled send, arrival at the server, dispatch (its batch
    left the queue), reply (answer handed back), batch id. Per batch: lane, items, requests,
    host times (dispatch, launched: the host finished issuing it, done: the host saw it
    finish) and the engine's device times (ns on the host clock, -1 when unknown): H2D start,
    compute start, D2H start, end.
    """

    requests: dict[str, list[int]] = field(default_factory=lambda: {k: [] for k in REQUEST_FIELDS})
    batches: dict[str, list[int]] = field(default_factory=lambda: {k: [] for k in BATCH_FIELDS})

    def arrays(self) -> dict[str, np.ndarray]:
        out = {f"request_{k}": np.asarray(v, np.int64) for k, v in self.requests.items()}
        out.update({f"batch_{k}": np.asarray(v, np.int64) for k, v in self.batches.items()})
        return out


@dataclass
class Request:
    client: int
    item: int  # index of the first item in the input pool
    sched_ns: int
    arrive_ns: int
    dispatch_ns: int = 0


class Server:
    """The dynamic batcher over an engine's lanes; the caller's loop calls `poll` and `offer`.

    The engine (see `profiler.collect.serve.engines`) has `lanes`, `gather(lane, pool,
    starts, r)`, which copies the requests' items into the lane's staging buffer, and
    `submit(lane, n)`, which returns a pending batch with `done()`, `outputs()` and
    `device_times()` (host-clock ns of H2D start, compute start, D2H start and end; {} when
    the engine has no device clock).
    """

    def __init__(self, engine: Any, batching: Batching, pool: np.ndarray, r: int, clock: Clock):
        if r > batching.max_batch:
            raise UsageError(f"a request of {r} items does not fit a batch of {batching.max_batch}")
        self.engine, self.batching, self.pool, self.r, self.clock = engine, batching, pool, r, clock
        self.queue: deque[Request] = deque()
        self.free = deque(range(engine.lanes))  # the lane free longest goes first: round robin
        self.flight: dict[int, tuple[Any, list[Request], tuple[int, ...]]] = {}
        self.records = Records()
        self.batch_count = 0

    def offer(self, req: Request) -> None:
        self.queue.append(req)

    def ready(self, now: int) -> bool:
        """True when a batch should leave now: a free lane and a full batch or an old request."""
        if not self.queue or not self.free:
            return False
        full = len(self.queue) * self.r >= self.batching.max_batch
        return full or now - self.queue[0].arrive_ns >= self.batching.max_wait_ns

    def dispatch(self, now: int) -> None:
        lane = self.free.popleft()
        take = min(len(self.queue), self.batching.max_batch // self.r)
        reqs = [self.queue.popleft() for _ in range(take)]
        for req in reqs:
            req.dispatch_ns = now
        n = take * self.r
        self.engine.gather(lane, self.pool, [q.item for q in reqs], self.r)
        pending = self.engine.submit(lane, n)
        self.flight[lane] = (pending, reqs, (lane, n, take, now, self.clock()))

    def poll(self) -> list[tuple[Request, np.ndarray, int]]:
        """Finish every lane whose batch is done: returns (request, its outputs, reply time)
        triples, the reply stamped as soon as the batch's outputs are split off; the device's
        times are read after that (they are not part of answering) and everything recorded."""
        out: list[tuple[Request, np.ndarray, int]] = []
        for lane, (pending, reqs, host) in list(self.flight.items()):
            if not pending.done():
                continue
            done = self.clock()
            outputs = pending.outputs()
            r = self.r
            answered = [(q, outputs[i * r : (i + 1) * r]) for i, q in enumerate(reqs)]
            reply = self.clock()
            del self.flight[lane]
            self.free.append(lane)
            out.extend((q, o, reply) for q, o in answered)
            self._record(host, done, pending.device_times(), reqs, reply)
        return out

    def _record(
        self,
        host: tuple[int, ...],
        done: int,
        device: dict[str, int],
        reqs: list[Request],
        reply: int,
    ) -> None:
        batch_id = self.batch_count
        self.batch_count += 1
        b = self.records.batches
        for key, value in zip(BATCH_FIELDS[:5], host, strict=True):
            b[key].append(value)
        b["done_ns"].append(done)
        for key in ("h2d_ns", "compute_ns", "d2h_ns", "end_ns"):
            b[key].append(int(device.get(key, -1)))
        r = self.records.requests
        for req in reqs:
            r["client"].append(req.client)
            r["item"].append(req.item)
            r["sched_ns"].append(req.sched_ns)
            r["arrive_ns"].append(req.arrive_ns)
            r["dispatch_ns"].append(req.dispatch_ns)
            r["reply_ns"].append(reply)
            r["batch"].append(batch_id)

    @property
    def busy(self) -> bool:
        return bool(self.flight or self.queue)


Check = Callable[[int, np.ndarray], None]


@dataclass
class Window:
    """The point's time window (host ns): warm-up from `start`, measured from `measure` to
    `end`; `stopped` when the last request was answered."""

    start: int
    measure: int
    end: int
    stopped: int = 0


def run_point(
    server: Server, load: Load, check: Check, clock: Clock = time.perf_counter_ns
) -> Window:
    """Drive `server` under `load` for its warm-up and duration, then drain it.

    `check(item, outputs)` sees every answer (it samples them itself). Returns the window.
    """
    start = clock()
    measure = start + int(load.warmup_s * 1e9)
    win = Window(start, measure, measure + int(load.duration_s * 1e9))
    pool_n = len(server.pool)
    slots = max(pool_n - load.request_items + 1, 1)
    seq = 0

    def send(client: int, sched: int, now: int) -> None:
        nonlocal seq
        item = (seq * load.request_items) % slots
        seq += 1
        server.offer(Request(client, item, sched, now))

    if load.mode == "closed":
        for c in range(load.concurrency):
            send(c, start, start)
        _closed(server, load, win, send, check, clock)
    else:
        schedule = poisson_schedule(load.rate_rps, start, win.end, load.seed)
        _open(server, schedule, win, send, check, clock)
    win.stopped = clock()
    return win


def _closed(server: Server, load: Load, win: Window, send: Any, check: Check, clock: Clock) -> None:
    while True:
        now = clock()
        if server.ready(now):
            server.dispatch(now)
            continue
        answered = server.poll()
        if answered:
            # each client sends its next request the moment it was answered: the loop's own
            # time from here to the queue is charged to that request (as queueing)
            now = clock()
            for req, outputs, reply in answered:
                check(req.item, outputs)
                if reply < win.end:
                    send(req.client, reply, now)
        elif not server.busy and now >= win.end:
            return


def _open(
    server: Server, schedule: np.ndarray, win: Window, send: Any, check: Check, clock: Clock
) -> None:
    i, total = 0, len(schedule)
    sched_list = schedule.tolist()
    while True:
        now = clock()
        while i < total and sched_list[i] <= now:
            send(i, sched_list[i], now)
            i += 1
        if server.ready(now):
            server.dispatch(now)
            continue
        answered = server.poll()
        if answered:
            for req, outputs, _ in answered:
                check(req.item, outputs)
        elif i >= total and not server.busy:
            return
