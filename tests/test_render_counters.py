"""The report's counters section (issue 14): an imported run's counters, per stage a grid of its
first kernels against its first counters, each as the profiler printed it, saying how many are
left out; rendered in the page, in the navigation after the per-layer section."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiler import store
from profiler.importer import import_run
from profiler.render import counter_section, html
from profiler.render.context import build_context

DATA = Path(__file__).parent / "data"
DETAILS = DATA / "ncu" / "2025.3.1" / "details-sections.csv"
EVENTS = DATA / "nvprof" / "9.x" / "minmax-tegra-x1-events.log"
SUMMARY = DATA / "nvprof" / "9.x" / "cfd-text-gpu-summary.txt"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> store.Run:
    stages = [("ncu", str(DETAILS)), ("events", str(EVENTS)), ("summary", str(SUMMARY))]
    return store.load_run(import_run("m", stages, {}, tmp_path_factory.mktemp("runs")))


def test_each_stage_with_counters_has_a_grid(run: store.Run) -> None:
    ctx = build_context(run)
    grids = ctx["counters"]
    assert [g["stage"] for g in grids] == ["ncu", "events"]  # the summary has none
    ncu, events = grids
    assert (ncu["kernels"], ncu["counters"]) == (16, 40)  # 16 launches, 40 section rows
    assert len(ncu["rows"]) == 16 and len(ncu["columns"]) == counter_section.COUNTERS
    assert (ncu["kernels_left"], ncu["counters_left"]) == (0, 40 - counter_section.COUNTERS)
    assert ncu["columns"][2] == {
        "metric": "Elapsed Cycles",
        "section": "GPU Speed Of Light Throughput",
    }
    first = ncu["rows"][0]
    assert (first["kernel_id"], first["name"]) == (0, "scale")
    assert first["cells"][2] == "9,241 cycle" and first["cells"][3] == "23.48 %"
    assert (events["kernels"], events["counters"], events["counters_left"]) == (1, 71, 59)
    assert events["columns"][0] == {"metric": "tex0_cache_sector_queries", "section": None}
    assert events["rows"][0]["cells"][:2] == ["3123", "649"]
    ids = [s["id"] for s in ctx["sections"]]
    assert "counters" in ids and "roofline" in ids and ids.index("counters") > ids.index("roofline")


def test_the_page_shows_the_grids_and_what_is_left_out(run: store.Run, tmp_path: Path) -> None:
    page = html.write_report(run, tmp_path / "report.html").read_text()
    section = page[page.index('<section id="counters">') :]
    section = section[: section.index("</section>")]
    assert section.count('<table class="counters">') == 2
    assert "16 kernels and 40 counters; not shown here: 28 counters." in section
    assert "1 kernel and 71 counters; not shown here: 59 counters." in section
    assert '<td class="num">9,241 cycle</td>' in section
    assert '<a href="#counters">Counters</a>' in page


def test_a_run_without_counters_has_no_section(tmp_path: Path) -> None:
    path = import_run("m", [("summary", str(SUMMARY))], {}, tmp_path)
    ctx = build_context(store.load_run(path))
    assert ctx["counters"] is None and "counters" not in [s["id"] for s in ctx["sections"]]


def test_a_grid_caps_its_kernels(run: store.Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(counter_section, "KERNELS", 3)
    (ncu, _) = counter_section.counter_section(run, {})  # type: ignore[misc]
    assert [r["kernel_id"] for r in ncu["rows"]] == [0, 1, 2] and ncu["kernels_left"] == 13
