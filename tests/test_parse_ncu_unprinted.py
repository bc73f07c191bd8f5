"""ncu text whose `==PROF== Profiling` lines name more launches than it holds results of: ncu
prints a result for each launch it profiled (unless `--print-summary` sums them up), so the
file is a cut of its output and says so. The real file's source: tests/data/ncu/README.md."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from profiler.parse import ncu_text, reader_notes

TCPTX = (
    Path(__file__).parent
    / "data"
    / "ncu"
    / "2024.x"
    / "tensorcoreptx-int4-three-profiled-one-printed.txt"
)


def test_a_file_with_fewer_results_than_profiled_launches_is_read_and_said_partial():
    """TensorCorePTX: three `Profiling "int4_ptx_3stage_db" - 0/1/2` lines, one result. The one
    result is read (its Duration, occupancy and registers as printed), with a partial note."""
    text = TCPTX.read_text()
    assert len(re.findall(r'^==PROF== Profiling "', text, re.MULTILINE)) == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = ncu_text.read_metrics(TCPTX, "s")
    notes = [w.message for w in caught if isinstance(w.message, reader_notes.ReadNote)]
    assert [str(n) for n in notes] == [
        "line 2: ncu's `==PROF== Profiling` lines name 3 profiled launches and the file holds "
        "the results of 1: the others are not in it (cut out?); launches numbered in file order"
    ]
    assert notes[0].partial
    duration = re.search(r"^ +Duration +us +([0-9.]+)$", text, re.MULTILINE)
    occupancy = re.search(r"^ +Achieved Occupancy +% +([0-9.]+)$", text, re.MULTILINE)
    assert duration is not None and occupancy is not None
    assert len(m) == 1 and m["name"].iloc[0].startswith("int4_ptx_3stage_db(")
    assert m["duration_ns"].iloc[0] == round(float(duration[1]) * 1000)  # 56.16 us
    assert m["achieved_occupancy_pct"].iloc[0] == pytest.approx(float(occupancy[1]))


def read_notes(path: Path) -> list[str]:
    """The read notes `ncu_text.read_metrics` of `path` gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ncu_text.read_metrics(path, "s")
    return [str(w.message) for w in caught if isinstance(w.message, reader_notes.ReadNote)]


def test_a_per_kernel_summary_is_not_said_cut(tmp_path):
    """`--print-summary per-kernel` sums launches up (`, Invocations N` on its kernel lines): no
    note, though it names more launches than it has results."""
    text = TCPTX.read_text().replace("CC 8.9", "CC 8.9, Invocations 3")
    path = tmp_path / "summary.txt"
    path.write_text(text)
    assert not any("profiled launches" in s for s in read_notes(path))


def test_a_launch_named_once_per_replay_pass_counts_once(tmp_path):
    """`--replay-mode application` runs the program once per pass and names each launch again
    (`- 0: Application replay pass 2`): launches are counted by their number, so no note."""
    text = TCPTX.read_text()
    again = re.sub(r'(==PROF== Profiling "[^"]*") - [12]:', r"\1 - 0:", text)
    path = tmp_path / "passes.txt"
    path.write_text(again)
    assert not any("profiled launches" in s for s in read_notes(path))
