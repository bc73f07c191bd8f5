"""Assembling a stage's tables: summaries cover only what happened inside the stage's repeats.

On real CUPTI records of the `no_sync` stage (tests/data/cupti/13.0.1), the worker's own
cudaDeviceSynchronize calls between repeats, outside the `lenet:no_sync` range (the first one
15 ms long, while CUPTI starts up), must not count as the stage's API time.
"""

from __future__ import annotations

from pathlib import Path

from profiler.analyze.assemble import assemble_tables, attributed, with_summaries
from profiler.parse import cupti

RECORDS = Path(__file__).parent / "data" / "cupti" / "13.0.1" / "lenet-no_sync.npz"


def traces() -> dict:
    gpu, api, ranges = cupti.read_traces(RECORDS, "no_sync")
    return {"gpu_trace": gpu, "api_trace": api, "range_trace": ranges}


def test_api_calls_outside_the_stage_range_are_not_the_stages():
    part = attributed(traces(), "lenet")
    api = part["api_trace"]
    repeats = part["range_trace"].query("level == 0")
    assert len(repeats) == 3 and set(api["repeat"]) == {-1, 0, 1, 2}
    outside = api[api["repeat"] < 0]
    assert set(outside["name"]) == {"cudaDeviceSynchronize"}
    for row in outside.itertuples():  # really outside every stage range instance
        inside = (repeats["start_ns"] <= row.start_ns) & (row.start_ns < repeats["end_ns"])
        assert not inside.any()
    calls = with_summaries(part)["api_calls"].set_index("name")
    syncs = api[(api["name"] == "cudaDeviceSynchronize") & (api["repeat"] >= 0)]
    assert calls.loc["cudaDeviceSynchronize", "calls"] == len(syncs) == 3  # one per infer call
    assert calls.loc["cudaDeviceSynchronize", "total_ns"] == syncs["duration_ns"].sum()
    assert calls["calls"].sum() == (api["repeat"] >= 0).sum()


def test_gpu_work_is_all_inside_the_repeats():
    part = attributed(traces(), "lenet")
    assert (part["gpu_trace"]["repeat"] >= 0).all()
    activities = with_summaries(part)["gpu_activities"]
    assert activities["calls"].sum() == len(part["gpu_trace"])


def test_without_stage_ranges_everything_is_summarised():
    """An import with no profgen stage range: no repeat is known, nothing is dropped."""
    part = traces()
    tables = assemble_tables([part], "elsewhere")
    assert tables["api_calls"]["calls"].sum() == len(part["api_trace"])


def test_the_report_derives_the_same_summaries_as_the_sweep():
    """A run saved without its summaries (e.g. assembled elsewhere) gets them in the report by
    the same rule: the stage's repeats only, stage by stage; a stage whose trace knows no
    repeats (an import) keeps every row."""
    import pandas as pd

    from profiler.render.context import with_summaries as report_summaries
    from profiler.store import Run

    part = attributed(traces(), "lenet")
    sweep = with_summaries(part)["api_calls"]
    imported = part["api_trace"].assign(stage="imported", repeat=-1).astype({"stage": "string"})
    both = pd.concat([part["api_trace"], imported], ignore_index=True)
    run = report_summaries(Run(meta={}, tables={"api_trace": both}))
    report = run.table("api_calls")
    mine = report[report["stage"] == "no_sync"].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, sweep.reset_index(drop=True))
    theirs = report[report["stage"] == "imported"]
    assert theirs["calls"].sum() == len(imported)  # nothing known: nothing dropped


def test_any_string_names_a_phase_and_comes_back_as_written(monkeypatch):
    """ONNX node names hold `/`; NVTX carries them encoded (ncu's filter syntax uses `/` and
    `@`), and the tables give them back as written."""
    from profiler import ranges

    name = "/layer1/layer1.0/conv1/Conv@100%"
    text = ranges.encode(name)
    assert "/" not in text and "@" not in text and ranges.decode(text) == name
    assert ranges.encode("conv1") == "conv1"  # plain names are untouched
    seen = []

    class Recorder:
        def push(self, n):
            seen.append(n)

        def pop(self):
            pass

    monkeypatch.setattr(ranges, "_nvtx", False)
    ranges.set_recorder(Recorder())
    try:
        with ranges.range(name):
            pass
    finally:
        ranges.set_recorder(None)
    assert seen == [text]
    part = traces()
    rng = part["range_trace"]
    renamed = rng["name"].where(rng["level"] == 0, text)
    part["range_trace"] = rng.assign(name=renamed.astype("string"))
    tables = assemble_tables([part], "lenet")
    assert name in set(tables["ranges"]["name"]) and name in set(tables["gpu_trace"]["range"])
    assert text not in set(tables["ranges"]["name"])
