"""The report header's Timing row says how the run's times were taken: the repeats, and, for
runs that record it (`settings.timing`), where the clock starts and when outputs are checked."""

from __future__ import annotations

from profiler.collect import harness
from profiler.render import header


def _timing_row(meta):
    return {r["label"]: r["value"] for r in header.header_rows(meta)}.get("Timing")


def test_a_sweep_says_its_outputs_are_checked_after_the_timed_repeats():
    meta = {"settings": {"repeat": 30, "warmup": 2, "timing": harness.TIMING}}
    row = _timing_row(meta)
    assert row.startswith("median of 30 timed repeats after 2 warm-ups; host clock")
    assert "checked after the last timed repeat" in row


def test_a_run_recorded_before_the_timing_setting_keeps_the_short_row():
    assert _timing_row({"settings": {"repeat": 10, "warmup": 2}}) == (
        "median of 10 timed repeats after 2 warm-ups")
