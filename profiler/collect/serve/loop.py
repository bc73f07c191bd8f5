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

What is per request and what is per batch: the loop has no per-request Python objects and no
Python loop over a batch's requests. A request is a row of preallocated NumPy columns
(`RequestLog`: its row is its id, rows are in arrival order, so the queue is the rows not yet
dispatched); requests arrive in blocks (the clients a batch answered send again together; the
open loop's due arrivals are appended together), and a batch is a contiguous range of rows, so
dispatching, answering, re-sending and checking a batch are a fixed number of NumPy slice
operations whatever its size. The Python time per batch is therefore roughly constant and the
time per request falls as batches grow. Statistics (percentiles from log buckets, the latency
split, Little's law) are computed from these columns after the point by
`profiler.analyze.serving`, not in the loop.
"""

from __future__ import annotations

import bisect
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
DEVICE_FIELDS = ("h2d_ns", "compute_ns", "d2h_ns", "end_ns")


#: requests a second a closed-loop point is sized for (its log's columns are reserved for this
#: rate over the point, in virtual memory: pages are touched only as rows are written); past it
#: the log grows by doubling, a copy that pauses the loop once (LeNet served in place reached
#: 9 million a second, past the 5 million this was: the copy of 6.5 million rows paused the
#: loop for 100-200 ms, each point's max latency)
RATE_HINT = 20_000_000


class RequestLog:
    """Every request sent, one row each of int64 columns named as `REQUEST_FIELDS`: client,
    first item in the input pool, scheduled send, arrival at the server, dispatch (its batch
    left the queue), reply (answer handed back) and batch id; -1 until known. The row is the
    request's id. The columns are reserved up front (`np.empty`: no page is touched until its
    rows are written) and grow by doubling past that."""

    def __init__(self, capacity: int = 4096):
        self.cols = {k: np.empty(max(capacity, 1), np.int64) for k in REQUEST_FIELDS}
        self.n = 0

    def reserve(self, capacity: int) -> None:
        """Room for `capacity` requests in all, reserved now (before a point starts)."""
        if capacity > len(self.cols["client"]):
            self._grow(capacity)

    def append(self, client: Any, item: Any, sched: Any, arrive: int, k: int) -> int:
        """Append `k` requests (each argument an array of k or one value for all); returns the
        first one's id. Per block: a fixed number of slice assignments."""
        lo, hi = self.n, self.n + k
        if hi > len(self.cols["client"]):
            self._grow(max(hi, 2 * len(self.cols["client"])))
        c = self.cols
        c["client"][lo:hi] = client
        c["item"][lo:hi] = item
        c["sched_ns"][lo:hi] = sched
        c["arrive_ns"][lo:hi] = arrive
        c["dispatch_ns"][lo:hi] = -1
        c["reply_ns"][lo:hi] = -1
        c["batch"][lo:hi] = -1
        self.n = hi
        return lo

    def append_one(self, client: int, item: int, sched: int, arrive: int) -> int:
        """`append` of one request (C=1, or an open loop's lone arrival): item assignments,
        cheaper than slices."""
        lo = self.n
        if lo >= len(self.cols["client"]):
            self._grow(2 * len(self.cols["client"]))
        c = self.cols
        c["client"][lo], c["item"][lo], c["sched_ns"][lo], c["arrive_ns"][lo] = (
            client,
            item,
            sched,
            arrive,
        )
        c["dispatch_ns"][lo] = c["reply_ns"][lo] = c["batch"][lo] = -1
        self.n = lo + 1
        return lo

    def _grow(self, size: int) -> None:
        for k, col in self.cols.items():
            grown = np.empty(size, np.int64)
            grown[: self.n] = col[: self.n]
            self.cols[k] = grown


@dataclass
class Records:
    """What one point recorded: the requests' columns (`RequestLog`) and one row a batch.

    Per batch: lane, items, requests, host times (dispatch, launched: the host finished issuing
    it, done: the host saw it finish) and the engine's device times (ns on the host clock, -1
    when unknown): H2D start, compute start, D2H start, end.
    """

    requests: RequestLog = field(default_factory=RequestLog)
    batches: list[list[int]] = field(default_factory=list)

    def arrays(self) -> dict[str, np.ndarray]:
        """`request_<field>` of the answered requests (in the order they were sent) and
        `batch_<field>` of every batch, as int64 arrays."""
        log = self.requests
        answered = log.cols["batch"][: log.n] >= 0
        out = {f"request_{k}": v[: log.n][answered].copy() for k, v in log.cols.items()}
        table = np.asarray(self.batches, np.int64).reshape(len(self.batches), len(BATCH_FIELDS))
        out.update({f"batch_{k}": table[:, i].copy() for i, k in enumerate(BATCH_FIELDS)})
        return out


#: one batch answered: (first request id, end id, its outputs, one row per item, reply time)
Answered = tuple[int, int, np.ndarray, int]


class Server:
    """The dynamic batcher over an engine's lanes; the caller's loop calls `poll`, `offer`,
    `ready` and `dispatch`. Every method costs a fixed number of NumPy operations a call,
    whatever the number of requests it touches (see the module doc).

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
        self.per_batch = batching.max_batch // r  # requests a batch holds at most
        self.records = Records()
        self.log = self.records.requests
        self.head = 0  # the oldest request not dispatched: the queue is rows head..log.n
        self.free = deque(range(engine.lanes))  # the lane free longest goes first: round robin
        self.flight: list[tuple[Any, int, int, int, int, int]] = []  # in dispatch order
        self.unread: deque[tuple[list[int], Any]] = deque()  # batches whose device times wait

    def offer(self, client: Any, item: Any, sched: Any, arrive: int, k: int) -> int:
        """`k` requests arrive at `arrive` (see `RequestLog.append`); returns the first id.
        One request (k == 1) takes plain ints."""
        if k == 1:
            return self.log.append_one(client, item, sched, arrive)
        return self.log.append(client, item, sched, arrive, k)

    def ready(self, now: int) -> bool:
        """True when a batch should leave now: a free lane and a full batch or an old request."""
        queued = self.log.n - self.head
        if not queued or not self.free:
            return False
        if queued >= self.per_batch:
            return True
        return now - int(self.log.cols["arrive_ns"][self.head]) >= self.batching.max_wait_ns

    def dispatch(self, now: int) -> None:
        """The oldest requests, up to a batch, onto the lane free longest (per batch)."""
        lane = self.free.popleft()
        lo = self.head
        hi = min(self.log.n, lo + self.per_batch)
        self.head = hi
        cols = self.log.cols
        if hi - lo == 1:
            cols["dispatch_ns"][lo] = now
        else:
            cols["dispatch_ns"][lo:hi] = now
        self.engine.gather(lane, self.pool, cols["item"][lo:hi], self.r)
        pending = self.engine.submit(lane, (hi - lo) * self.r)
        self.flight.append((pending, lane, lo, hi, now, self.clock()))

    def poll(self) -> list[Answered]:
        """Finish every lane whose batch is done, one entry per batch: the reply is stamped as
        soon as the batch's outputs are out of the lane's buffer; the batch is recorded after
        that, its device times left to `settle` (they are not part of answering)."""
        out: list[Answered] = []
        running = []
        for entry in self.flight:
            pending = entry[0]
            if not pending.done():
                running.append(entry)
                continue
            done = self.clock()
            outputs = pending.outputs()
            reply = self.clock()
            _, lane, lo, hi, dispatched, launched = entry
            self.free.append(lane)
            out.append((lo, hi, outputs, reply))
            self._record(lane, lo, hi, (dispatched, launched, done), pending, reply)
        if out:
            self.flight = running
        return out

    def _record(
        self,
        lane: int,
        lo: int,
        hi: int,
        host: tuple[int, int, int],
        pending: Any,
        reply: int,
    ) -> None:
        batch_id = len(self.records.batches)
        cols = self.log.cols
        if hi - lo == 1:
            cols["reply_ns"][lo] = reply
            cols["batch"][lo] = batch_id
        else:
            cols["reply_ns"][lo:hi] = reply
            cols["batch"][lo:hi] = batch_id
        row = [lane, (hi - lo) * self.r, hi - lo, *host, -1, -1, -1, -1]
        self.records.batches.append(row)
        self.unread.append((row, pending))

    def settle(self, most: int = -1) -> None:
        """Read the device times of up to `most` (all: -1) finished batches into their rows: the
        loop calls it for one batch a turn when it has nothing else to do (while the GPU runs the
        next batches), not between a reply and the next dispatch, and for all after the point.
        Per batch: the engine's event reads."""
        while self.unread and most != 0:
            row, pending = self.unread.popleft()
            device = pending.device_times()
            row[6:10] = [int(device.get(k, -1)) for k in DEVICE_FIELDS]
            most -= 1

    @property
    def busy(self) -> bool:
        return bool(self.flight) or self.head < self.log.n


#: check(first request id, the requests' first items, their answers: one (r, ...) block a
#: request), called once a batch; it samples what it keeps itself
Check = Callable[[int, np.ndarray, np.ndarray], None]


@dataclass
class Window:
    """The point's time window (host ns): warm-up from `start`, measured from `measure` to
    `end`; `stopped` when the last request was answered."""

    start: int
    measure: int
    end: int
    stopped: int = 0


class Items:
    """Which pool items the next requests ask for: request s (in sending order) starts at item
    s*R modulo the pool's room, so consecutive requests cover the pool (per block: one arange)."""

    def __init__(self, pool_n: int, r: int):
        self.r, self.slots, self.seq = r, max(pool_n - r + 1, 1), 0

    def next(self, k: int) -> np.ndarray | int:
        s = self.seq
        self.seq += k
        if k == 1:  # one request (C=1): plain ints, cheaper than any array operation
            return (s * self.r) % self.slots
        return ((s + np.arange(k, dtype=np.int64)) * self.r) % self.slots


def run_point(
    server: Server, load: Load, check: Check, clock: Clock = time.perf_counter_ns
) -> Window:
    """Drive `server` under `load` for its warm-up and duration, then drain it.

    `check(first_id, items, answers)` sees every batch's answers (it samples them itself).
    Returns the window.
    """
    start = clock()
    measure = start + int(load.warmup_s * 1e9)
    win = Window(start, measure, measure + int(load.duration_s * 1e9))
    items = Items(len(server.pool), load.request_items)
    if load.mode == "closed":
        c = load.concurrency
        server.log.reserve(c + int(RATE_HINT * (load.warmup_s + load.duration_s)))
        clients = np.arange(c, dtype=np.int64) if c > 1 else 0
        server.offer(clients, items.next(c), start, start, c)
        _closed(server, win, items, check, clock)
    else:
        schedule = poisson_schedule(load.rate_rps, start, win.end, load.seed)
        server.log.reserve(len(schedule))
        _open(server, schedule, items, check, clock)
    win.stopped = clock()
    server.settle()
    return win


def _answers(server: Server, outputs: np.ndarray, k: int) -> np.ndarray:
    """A batch's outputs as one block of r rows a request (a view, no copy)."""
    return outputs.reshape(k, server.r, *outputs.shape[1:])


def _closed(server: Server, win: Window, items: Items, check: Check, clock: Clock) -> None:
    cols = server.log.cols
    while True:
        now = clock()
        if server.ready(now):
            server.dispatch(now)
            continue
        answered = server.poll()
        if answered:
            # the clients of each answered batch send their next requests the moment they were
            # answered: the loop's own time from there to the queue is charged to those requests
            # (as queueing)
            now = clock()
            for lo, hi, outputs, reply in answered:
                k = hi - lo
                if reply < win.end:
                    client = cols["client"][lo:hi] if k > 1 else int(cols["client"][lo])
                    server.offer(client, items.next(k), reply, now, k)
                check(lo, cols["item"][lo:hi], _answers(server, outputs, k))
        elif not server.busy and now >= win.end:
            return
        else:  # idle while the GPU runs: one finished batch's device times at most
            server.settle(1)


def _open(server: Server, schedule: np.ndarray, items: Items, check: Check, clock: Clock) -> None:
    i, total = 0, len(schedule)
    sched_list = schedule.tolist()
    cols = server.log.cols
    while True:
        now = clock()
        if i < total and sched_list[i] <= now:  # every request due by now arrives, as one block
            j = bisect.bisect_right(sched_list, now, i)
            k = j - i
            if k == 1:
                server.offer(i, items.next(1), sched_list[i], now, 1)
            else:
                server.offer(np.arange(i, j, dtype=np.int64), items.next(k), schedule[i:j], now, k)
            i = j
        if server.ready(now):
            server.dispatch(now)
            continue
        answered = server.poll()
        if answered:
            for lo, hi, outputs, _ in answered:
                check(lo, cols["item"][lo:hi], _answers(server, outputs, hi - lo))
        elif i >= total and not server.busy:
            return
        else:  # idle: arrivals may come at any time, so one batch's device times at most
            server.settle(1)
