"""Engines: how the server runs a batch of a stage. Any stage of any study serves.

- `InferEngine` (any stage): the stage's own `infer` on the batch, one lane, synchronous. The
  batch is gathered into a staging buffer the stage chose (`host_input`: page-locked for the
  stages whose technique is that). The device times are unknown: no H2D/compute/D2H split.
- `StreamEngine` (a stage that offers the stream protocol, below): S lanes, each with its own
  prepared instance of the stage, its own stream, page-locked input and output staging buffers
  and four timing events; per batch: H2D copy, the stage's kernels (or one captured CUDA graph
  for that batch size), D2H copy, all asynchronous on the lane's stream.

The stream protocol, for a class stage (LeNet's custom stages and its PyTorch stage have it):

    def serve_buffers(self) -> tuple[DeviceArray, DeviceArray]:
        '''The device input and output arrays `infer` uses, first axis = the prepared batch.'''
    def enqueue(self, n: int, stream) -> None:
        '''Issue the computation for the first n items of the input buffer into the output
        buffer on `stream` (the runtime's own stream object), without synchronising.'''
    serves_on_streams: bool   # optional; False for a stage that synchronises inside

Device arrays and streams are the stage runtime's own (CuPy or PyTorch, `devices`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from profiler.errors import UsageError

DEVICE_KEYS = ("h2d_ns", "compute_ns", "d2h_ns", "end_ns")


@dataclass(frozen=True)
class EngineOptions:
    """How to serve: the largest batch, the streams (lanes) and whether to use CUDA graphs."""

    max_batch: int
    streams: int = 1
    graphs: bool = False
    request_items: int = 1

    def __post_init__(self) -> None:
        if self.max_batch < 1 or self.streams < 1:
            raise UsageError("max batch and streams must be at least 1")


def gather_into(staging: np.ndarray, pool: np.ndarray, starts: Sequence[int], r: int) -> None:
    """Copy the `r` items of each request (first item `starts[k]`) into `staging`, request k
    at rows k*r..: one vectorised take, not a Python loop over the requests (which cost about
    a microsecond a request, 0.3 ms for a batch of 256)."""
    n = len(starts) * r
    if len(starts) == 1:
        staging[:n] = pool[starts[0] : starts[0] + r]
        return
    rows = (np.asarray(starts, dtype=np.intp)[:, None] + np.arange(r, dtype=np.intp)).ravel()
    if staging.dtype != pool.dtype or not staging.flags.c_contiguous:
        staging[:n] = pool[rows]  # a stage that keeps its input otherwise: numpy casts
        return
    np.take(pool, rows, axis=0, out=staging[:n], mode="clip")  # indices are valid: no buffer


def stream_support(stage: Any, runtime: str) -> str | None:
    """Why `stage` cannot be served by the stream engine (None: it can)."""
    if runtime not in ("cupy", "torch"):
        return f"its runtime is {runtime} (streams need cupy or torch)"
    if not (
        callable(getattr(stage, "serve_buffers", None))
        and callable(getattr(stage, "enqueue", None))
    ):
        return "it has no serve_buffers/enqueue (the stream protocol)"
    if not getattr(stage, "serves_on_streams", True):
        return "it synchronises the device inside each call"
    return None


class Done:
    """A batch already finished (the infer engine's)."""

    def __init__(self, outputs: np.ndarray):
        self._outputs = outputs

    def outputs(self) -> np.ndarray:
        return self._outputs

    def done(self) -> bool:
        return True

    def device_times(self) -> dict[str, int]:
        return {}


class InferEngine:
    """Any stage, through its `infer`: one lane (see the module doc)."""

    kind = "infer"

    def __init__(self, stage: Any, runtime: Any, pool: np.ndarray, max_batch: int):
        self.stage, self.runtime = stage, runtime
        staging = np.empty((max_batch, *pool.shape[1:]), dtype=pool.dtype)
        host_input = getattr(stage, "host_input", None)
        self.staging = host_input(staging) if callable(host_input) else staging
        self.lanes = 1
        self.stage.infer(self.staging[:1])  # first-call costs (lazy loading, handles): not timed
        self.runtime.synchronize()

    def gather(self, lane: int, pool: np.ndarray, starts: Sequence[int], r: int) -> None:
        gather_into(self.staging, pool, starts, r)

    def submit(self, lane: int, n: int) -> Done:
        out = np.asarray(self.stage.infer(self.staging[:n]))
        self.runtime.synchronize()
        return Done(out)

    def mark_reference(self, clock: Any) -> None:
        """Nothing to align: the infer engine has no device clock."""

    def close(self) -> None:
        release = getattr(self.stage, "release", None)
        if callable(release):
            release()


#: event sets a lane takes turns with: a finished batch's times can be read while the lane's next
#: batch runs (in the loop's idle time), and must be read before the set is recorded again
EVENT_SETS = 2


@dataclass
class Lane:
    stage: Any
    stream: Any
    d_in: Any
    d_out: Any
    h_in: np.ndarray
    h_in_handle: Any
    h_out: np.ndarray
    h_out_handle: Any
    events: list[list[Any]]  # EVENT_SETS sets of four: H2D start, compute start, D2H start, end
    h2d: Any = None  # copy(n, stream): the first n rows of h_in into d_in
    d2h: Any = None  # the first n rows of d_out into h_out
    graph_pool: Any = None
    graphs: dict[int, Any] = field(default_factory=dict)
    turn: int = 0  # the event set the next batch records
    last: list[Any] = field(default_factory=lambda: [None] * EVENT_SETS)  # its batch per set


class StreamPending:
    """A batch in flight on a lane: polled (`done`) every turn of the loop, so that is one
    device query and nothing else; `device_times` reads its four events once (the result is
    kept)."""

    def __init__(self, engine: StreamEngine, lane: Lane, n: int, events: list[Any]):
        self.engine, self.lane, self.n, self.events = engine, lane, n, events
        self._query, self._last = engine.device.query, events[-1]
        self._times: dict[str, int] | None = None

    def done(self) -> bool:
        return bool(self._query(self._last))

    def outputs(self) -> np.ndarray:
        """The batch's outputs, copied out of the lane's staging buffer (reused next batch)."""
        return self.lane.h_out[: self.n].copy()

    def device_times(self) -> dict[str, int]:
        """Host-clock ns of H2D start, compute start, D2H start and end (the batch is done)."""
        if self._times is None:
            e = self.engine
            self._times = {
                key: e.ref_host + int(e.device.elapsed_ms(e.ref_event, ev) * 1e6)
                for key, ev in zip(DEVICE_KEYS, self.events, strict=True)
            }
        return self._times


class StreamEngine:
    """S lanes of a stage that offers the stream protocol (see the module doc)."""

    kind = "streams"

    def __init__(
        self, stages: Sequence[Any], device: Any, pool: np.ndarray, options: EngineOptions
    ):
        self.device, self.options = device, options
        self.lanes_ = [self._lane(s, pool, options.max_batch) for s in stages]
        self.lanes = len(self.lanes_)
        self.ref_event = device.event()
        self.ref_host = 0
        self._warm(options)
        if options.graphs:
            self._capture_all()

    def _warm(self, options: EngineOptions) -> None:
        """One call of the smallest and largest batch on every lane: first-call costs (module
        loading, library handles, autotuning) are paid here, not in a point."""
        for lane in self.lanes_:
            for n in {
                options.request_items,
                options.max_batch - options.max_batch % options.request_items,
            }:
                self._issue(lane, n)
        self.device.synchronize()

    def _issue(self, lane: Lane, n: int) -> None:
        """The stage's work for a batch of `n` on the lane's stream (what a graph captures)."""
        lane.stage.enqueue(n, lane.stream)

    def _lane(self, stage: Any, pool: np.ndarray, max_batch: int) -> Lane:
        d = self.device
        d_in, d_out = stage.serve_buffers()
        in_shape, in_dtype = d.item_shape(d_in)
        item_bytes = int(np.prod(pool.shape[1:], dtype=np.int64)) * pool.dtype.itemsize
        if int(np.prod(in_shape, dtype=np.int64)) * np.dtype(in_dtype).itemsize != item_bytes:
            raise UsageError(
                f"the stage's device input holds {in_shape} {in_dtype} an item, the study's "
                f"inputs {pool.shape[1:]} {pool.dtype}"
            )
        if len(d_in) < max_batch or len(d_out) < max_batch:
            raise UsageError(f"the stage's buffers hold fewer than {max_batch} items")
        out_shape, out_dtype = d.item_shape(d_out)
        h_in, h_in_handle = d.pinned((max_batch, *pool.shape[1:]), pool.dtype)
        h_out, h_out_handle = d.pinned((max_batch, *out_shape), out_dtype)
        events = [[d.event() for _ in DEVICE_KEYS] for _ in range(EVENT_SETS)]
        lane = Lane(stage, d.stream(), d_in, d_out, h_in, h_in_handle, h_out, h_out_handle, events)
        lane.h2d, lane.d2h = d.h2d(d_in, h_in_handle), d.d2h(h_out_handle, d_out)
        return lane

    def _capture_all(self) -> None:
        """One graph per batch size a batch can have, per lane, captured now (not timed)."""
        for lane in self.lanes_:
            lane.graph_pool = self.device.graph_pool()
            sizes = range(
                self.options.request_items, self.options.max_batch + 1, self.options.request_items
            )
            for n in sizes:
                self._issue(lane, n)  # warm: torch wants one eager run first
            self.device.synchronize()
            for n in sizes:
                lane.graphs[n] = self.device.capture(
                    lambda lane=lane, n=n: self._issue(lane, n),
                    lane.stream,
                    lane.graph_pool,
                )
        self.device.synchronize()

    def gather(self, lane: int, pool: np.ndarray, starts: Sequence[int], r: int) -> None:
        gather_into(self.lanes_[lane].h_in, pool, starts, r)

    def submit(self, lane: int, n: int) -> StreamPending:
        """Issue one batch of `n` items on the lane's stream, nothing waited for: per batch, four
        event records, two copies and the stage's kernels (or one graph launch)."""
        ln = self.lanes_[lane]
        turn = self._take_turn(ln)
        record, s, ev = self.device.record, ln.stream, ln.events[turn]
        record(ev[0], s)
        ln.h2d(n, s)
        record(ev[1], s)
        self._compute(ln, n)
        record(ev[2], s)
        ln.d2h(n, s)
        record(ev[3], s)
        return self._pending(ln, turn, n)

    def _compute(self, ln: Lane, n: int) -> None:
        """The batch's work on the lane's stream: its size's graph, else the stage's own."""
        if ln.graphs:
            self.device.launch(ln.graphs[n], ln.stream)
        else:
            self._issue(ln, n)

    def _pending(self, ln: Lane, turn: int, n: int) -> StreamPending:
        """The batch just issued with event set `turn`, kept as that set's last batch."""
        pending = StreamPending(self, ln, n, ln.events[turn])
        ln.last[turn] = pending
        return pending

    def _take_turn(self, ln: Lane) -> int:
        """The event set the lane's next batch records (the sets take turns); the batch that
        last used it (done: the lane was free) has its times read first if nobody read them
        yet."""
        turn = ln.turn
        ln.turn = (turn + 1) % EVENT_SETS
        previous = ln.last[turn]
        if previous is not None:
            previous.device_times()
        return turn

    def mark_reference(self, clock: Any) -> None:
        """Align the device clock with the host's: a reference event recorded on an idle device,
        read against `clock()` once it has passed (device times are elapsed times from it; the
        host reads the clock a few microseconds after the event)."""
        self.device.synchronize()
        self.device.record(self.ref_event, self.lanes_[0].stream)
        self.device.synchronize()
        self.ref_host = clock()

    def close(self) -> None:
        self.device.synchronize()
        for lane in self.lanes_:
            lane.graphs.clear()
            release = getattr(lane.stage, "release", None)
            if callable(release):
                release()


def rows_support(stage: Any) -> str | None:
    """Why `stage` cannot read a server's requests in place (None: it offers to; whether the
    pool allows it is `bind_rows`'s to say)."""
    if not (
        callable(getattr(stage, "bind_rows", None))
        and callable(getattr(stage, "enqueue_rows", None))
    ):
        return "it has no bind_rows/enqueue_rows (requests read in place)"
    return None


class RowsEngine(StreamEngine):
    """S lanes of a stage that reads the requests where they lie (the rows protocol): the pool
    is page-locked host memory, a batch is the list of its requests' rows written into the
    lane's page-locked row buffer, and the stage's kernel reads those rows of the pool and
    writes the answers into the lane's page-locked output across PCIe. Per batch: two event
    records and the kernel (or its graph); no gather into staging, no copies. The device times
    have no H2D or D2H phase: the transfers are inside the compute time.

    The rows protocol, for a class stage (LeNet's one-kernel stages have it):

        def bind_rows(self, pool, rows, out) -> None:
            # serve images pool[rows[:n]] into out[:n] from now on (all page-locked host
            # memory, rows int32); UsageError when they cannot be read in place
        def enqueue_rows(self, n: int, stream) -> None:
            # issue that for the first n rows on `stream`, without synchronising
    """

    kind = "in-place"

    def _lane(self, stage: Any, pool: np.ndarray, max_batch: int) -> Lane:
        d = self.device
        _, d_out = stage.serve_buffers()
        out_shape, out_dtype = d.item_shape(d_out)
        rows, rows_handle = d.pinned((max_batch,), np.int32)
        rows[:] = 0  # valid rows for the warm-up and graph captures, before any batch
        h_out, h_out_handle = d.pinned((max_batch, *out_shape), out_dtype)
        stage.bind_rows(pool, rows, h_out)
        # two events a batch, start and end, listed as the four DEVICE_KEYS read: H2D and
        # compute start together, D2H start and end together
        events = []
        for _ in range(EVENT_SETS):
            start, end = d.event(), d.event()
            events.append([start, start, end, end])
        return Lane(stage, d.stream(), None, None, rows, rows_handle, h_out, h_out_handle, events)

    def _issue(self, lane: Lane, n: int) -> None:
        lane.stage.enqueue_rows(n, lane.stream)

    def gather(self, lane: int, pool: np.ndarray, starts: Sequence[int], r: int) -> None:
        """The requests' rows (request k's r items from starts[k]) into the lane's row buffer:
        the pool itself is not touched."""
        rows = self.lanes_[lane].h_in
        n = len(starts) * r
        if r == 1:
            rows[:n] = starts
        else:
            rows[:n] = (np.asarray(starts)[:, None] + np.arange(r)).ravel()

    def submit(self, lane: int, n: int) -> StreamPending:
        """Issue one batch of `n` rows on the lane's stream: two event records around the
        kernel (or its graph), nothing waited for."""
        ln = self.lanes_[lane]
        turn = self._take_turn(ln)
        record, s, ev = self.device.record, ln.stream, ln.events[turn]
        record(ev[0], s)
        self._compute(ln, n)
        record(ev[3], s)
        return self._pending(ln, turn, n)
