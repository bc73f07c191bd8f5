"""Where a served batch's host time goes, on the GPU: the stream engine for LeNet's
overlap_fusion, each step of a batch timed on its own (median of REPS, microseconds) at batch
1 and 256: the gather into the pinned staging buffer, each call `submit` makes, a poll, the
spin on the query until the batch is done, copying the outputs out, reading the four device
times. (The second device call's probe timed a blocking cudaEventSynchronize in place of the
spin; the loop no longer blocks.)
`python3 scripts/serve_ab/probe.py`"""

import time

import numpy as np

from profiler.collect import runtimes
from profiler.collect.loading import load_study
from profiler.collect.serve import worker
from profiler.collect.serve.engines import EngineOptions

REPS = 300
NAMES = (
    "gather",
    "record0",
    "h2d",
    "record1",
    "kernels",
    "rec+d2h+rec",
    "query",
    "spin to done",
    "query done",
    "outputs",
    "4 elapsed",
)
clock = time.perf_counter_ns
study = load_study("variants.lenet.study:STUDY")
spec = study.get("overlap_fusion")
model = study.load_model()
pool = study.make_inputs(1024)
runtime = runtimes.adapter(spec.runtime)


def med(samples: list[int]) -> str:
    return f"{np.median(samples) / 1e3:7.1f}"


for graphs in (False, True):
    engine, _ = worker.build_engine(spec, runtime, model, pool, EngineOptions(256, 1, graphs, 1))
    engine.mark_reference(clock)
    lane, d = engine.lanes_[0], engine.device
    print(f"pinned staging: {type(lane.h_in_handle).__name__}, graphs {graphs}")
    for n in (1, 256):
        t: dict[str, list[int]] = {}
        starts = (np.arange(n) * 3) % 1000
        for _ in range(REPS):
            marks = [clock()]
            engine.gather(0, pool, starts, 1)
            marks.append(clock())
            ev = lane.events[0]
            d.record(ev[0], lane.stream)
            marks.append(clock())
            lane.h2d(n, lane.stream)
            marks.append(clock())
            d.record(ev[1], lane.stream)
            marks.append(clock())
            if lane.graphs:
                d.launch(lane.graphs[n], lane.stream)
            else:
                lane.stage.enqueue(n, lane.stream)
            marks.append(clock())
            d.record(ev[2], lane.stream)
            lane.d2h(n, lane.stream)
            d.record(ev[3], lane.stream)
            marks.append(clock())
            d.query(ev[3])
            marks.append(clock())
            while not d.query(ev[3]):  # the loop polls: spin on the query until done
                pass
            marks.append(clock())
            d.query(ev[3])
            marks.append(clock())
            lane.h_out[:n].copy()
            marks.append(clock())
            for e in ev:
                d.elapsed_ms(engine.ref_event, e)
            marks.append(clock())
            for name, a, b in zip(NAMES, marks[:-1], marks[1:], strict=True):
                t.setdefault(name, []).append(b - a)
        print(f"  n={n:4d}: " + " | ".join(f"{k} {med(v)}" for k, v in t.items()))
    engine.close()
