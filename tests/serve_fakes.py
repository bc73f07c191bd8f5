"""CPU stand-ins for `profgen serve`'s tests: an engine whose batches take a known time on a
simulated device, a device whose streams are the host (so the stream engine runs on the CPU),
and a stage that offers the stream protocol over NumPy buffers."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from profiler.collect.serve.engines import gather_into


class TimedPending:
    def __init__(self, outputs: np.ndarray, ready_ns: int, start_ns: int, clock: Callable[[], int]):
        self._outputs, self.ready_ns, self.start_ns, self.clock = outputs, ready_ns, start_ns, clock
        self.polls = 0  # done() calls

    def outputs(self) -> np.ndarray:
        return self._outputs

    def done(self) -> bool:
        self.polls += 1
        return self.clock() >= self.ready_ns

    def device_times(self) -> dict[str, int]:
        span = self.ready_ns - self.start_ns
        marks = [self.start_ns + span * k // 10 for k in (0, 1, 9, 10)]
        return dict(zip(("h2d_ns", "compute_ns", "d2h_ns", "end_ns"), marks, strict=True))


class SimulatedEngine:
    """`lanes` lanes; a batch of n items is ready `fixed_ns + per_item_ns * n` after submit;
    outputs are `fn` of the staged items. Records every batch size it was given."""

    kind = "simulated"

    def __init__(
        self, fn, pool, lanes=1, fixed_ns=50_000, per_item_ns=1_000, clock=time.perf_counter_ns
    ):
        self.fn, self.lanes, self.clock = fn, lanes, clock
        self.fixed_ns, self.per_item_ns = fixed_ns, per_item_ns
        self.staging = [np.empty((0, *pool.shape[1:]), pool.dtype) for _ in range(lanes)]
        self.pool = pool
        self.sizes: list[int] = []
        self.pendings: list[TimedPending] = []
        self.busy_lanes: set[int] = set()
        self.overlaps = 0

    def gather(self, lane: int, pool: np.ndarray, starts: Sequence[int], r: int) -> None:
        staging = np.empty((len(starts) * r, *pool.shape[1:]), pool.dtype)
        gather_into(staging, pool, starts, r)  # the real engines' gather: vectorised
        self.staging[lane] = staging

    def submit(self, lane: int, n: int) -> TimedPending:
        assert len(self.staging[lane]) == n
        self.sizes.append(n)
        now = self.clock()
        ready = now + self.fixed_ns + self.per_item_ns * n
        pending = TimedPending(self.fn(self.staging[lane]), ready, now, self.clock)
        self.pendings.append(pending)
        return pending

    def mark_reference(self, clock: Any) -> None:
        pass

    def close(self) -> None:
        pass


class HostDevice:
    """The stream engine's device interface on the host: work runs when issued, events are host
    times, a 'graph' is the captured function (counted)."""

    name = "host"

    def __init__(self) -> None:
        self.captures = 0
        self.launches = 0

    def stream(self) -> Any:
        return object()

    def event(self) -> list[int]:
        return [0]

    def record(self, event: list[int], stream: Any) -> None:
        event[0] = time.perf_counter_ns()

    def query(self, event: list[int]) -> bool:
        return True

    def elapsed_ms(self, start: list[int], end: list[int]) -> float:
        return (end[0] - start[0]) / 1e6

    def pinned(self, shape, dtype):
        """Filled with what uninitialised memory may hold: an index past any pool, NaN."""
        dtype = np.dtype(dtype)
        poison = np.iinfo(dtype).max if dtype.kind in "iu" else np.nan
        arr = np.full(shape, poison, dtype)
        return arr, arr

    def item_shape(self, device_array):
        return tuple(device_array.shape[1:]), device_array.dtype

    def h2d(self, dst, src):
        def copy(n, stream) -> None:
            dst.reshape(len(dst), -1)[:n] = src.reshape(len(src), -1)[:n]

        return copy

    def d2h(self, dst, src):
        def copy(n, stream) -> None:
            dst[:n] = src[:n]

        return copy

    def capture(self, fn, stream, pool):
        self.captures += 1
        return fn

    def graph_pool(self) -> None:
        return None

    def launch(self, graph, stream) -> None:
        self.launches += 1
        graph()

    def synchronize(self) -> None:
        pass


class RowSumStage:
    """A stage with the stream protocol over NumPy 'device' buffers: out = row sums * 2."""

    def prepare(self, model: Any, batch: int) -> None:
        self.d_in = np.zeros((batch, 4), np.float32)
        self.d_out = np.zeros((batch, 1), np.float32)
        self.enqueued: list[int] = []

    def serve_buffers(self):
        return self.d_in, self.d_out

    def enqueue(self, n: int, stream: Any) -> None:
        self.enqueued.append(n)
        self.d_out[:n, 0] = self.d_in[:n].sum(axis=1) * 2

    def infer(self, x: np.ndarray) -> np.ndarray:
        return x.sum(axis=1, keepdims=True) * 2


class RowsSumStage(RowSumStage):
    """RowSumStage that also reads the requests in place (the rows protocol): enqueue_rows
    computes the bound pool's rows straight into the bound output. A read-only pool stands
    for one that is not page-locked: refused."""

    def bind_rows(self, pool: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
        if not pool.flags.writeable:
            from profiler.errors import UsageError

            raise UsageError("the pool is not page-locked")
        self.bound = (pool, rows, out)
        self.rows_enqueued: list[int] = []

    def enqueue_rows(self, n: int, stream: Any) -> None:
        pool, rows, out = self.bound
        self.rows_enqueued.append(n)
        out[:n, 0] = pool[rows[:n]].sum(axis=1) * 2
