"""How an imported run is shown: IMPORTED neutrally, times that say what they are, no unknowns.

Every view of an import is checked: the HTML report (staged table, header, per-stage figures,
breakdown, timeline), the terminal's staged table, `profgen show` and the Markdown summary.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from clirun import profgen
from rich.console import Console

from profiler import schema, store
from profiler.render import html, markdown, terminal
from profiler.render.context import build_context

DATA = Path(__file__).parent / "data"
NSYS = DATA / "nsys" / "2025.3.1"
NVPROF_TEXT = DATA / "nvprof" / "9.x" / "cuda-stream-summary.txt"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> store.Run:
    """nvprof summaries (no repeats said), the nested nsys capture (3 repeats said) and demo."""
    from profiler import importer

    out = tmp_path_factory.mktemp("imports")
    stages = [
        ("text", str(NVPROF_TEXT)),
        ("nested", str(NSYS / "nested")),
        ("demo", str(NSYS / "demo")),
    ]
    return store.load_run(importer.import_run("m", stages, {}, out, repeats=[("nested", 3)]))


def test_the_staged_table_says_what_each_time_is(run: store.Run) -> None:
    staged = build_context(run)["staged"]
    rows = {r["stage"]: r for r in staged["rows"]}
    assert {r["verdict_class"] for r in rows.values()} == {"imported"}
    assert (staged["imported"], staged["measured"], staged["failed"]) == (3, 0, 0)
    assert staged["time_heading"] == "Time"  # per repeat for one stage, whole program for two
    assert rows["text"]["time_label"] == "summed GPU time, whole program"
    assert rows["nested"]["time_label"] == "GPU span, per repeat (/ 3)"
    assert rows["demo"]["time_label"] == "GPU span, whole program"
    assert rows["nested"]["time_note"].startswith("GPU span of the capture (first GPU activity")
    assert "per repeat (the total / 3 repeats, as given)" in rows["nested"]["time_note"]
    assert "how many repeats it ran was not given" in rows["demo"]["time_note"]


def test_one_kind_of_time_names_it_in_the_heading(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    for extra, heading in (([], "Whole-program time"), (["--repeats", "7"], "Time per repeat")):
        result = profgen(["import", "--model", "m", "--out", tmp_path,
                          "--stage", f"a={NSYS / 'demo'}", "--stage", f"b={NSYS / 'overlap'}",
                          *extra], capsys)  # fmt: skip
        page = (Path(result.out.strip()) / "report.html").read_text()
        assert f'<th class="num">{heading}</th>' in page and "Time for 0" not in page


def test_the_page_shows_imported_neutrally_and_nothing_unknown(run: store.Run) -> None:
    page = html.render_report(run)
    assert 'class="verdict imported"' in page and 'class="row-imported"' in page
    assert not re.search(r'class="verdict (pass|fail)"', page)
    assert "Time for 0" not in page and "repeat -1" not in page
    header = page.split('id="run"')[1].split("</section>")[0]
    assert "unknown" not in header and ">GPU<" not in header and ">Driver<" not in header
    assert "imported: no unprofiled timing" in header
    for label in ("Min – max", "Max rel. error", "Overhead", "vs baseline"):
        assert label not in page.split('id="staged-table"')[1].split("</section>")[0]
    assert ".verdict.imported { color: var(--imported); }" in page


def test_per_repeat_figures_say_whole_program_where_no_repeats_were_given(run: store.Run) -> None:
    ctx = build_context(run)
    stats = {s["stage"]: s["stats"] for s in ctx["stage_tables"]}
    assert stats["text"]["per"] == "whole program" and stats["text"]["repeats_label"] is None
    assert stats["nested"]["per"] == "a repeat" and stats["nested"]["repeats"] == 3
    acts = run.table("gpu_activities")
    nested_calls = int(acts.loc[acts["stage"] == "nested", "calls"].sum())
    assert stats["nested"]["ops_per_repeat"] == pytest.approx(nested_calls / 3)
    assert ctx["breakdown_per"] == "per repeat (whole program for demo, text)"
    assert "GPU time per repeat or whole program (ms)" in ctx["charts"]["breakdown_abs"]
    page = html.render_report(run)
    assert "HtoD whole program: bytes" in page and "HtoD a repeat: bytes" in page


def test_the_timeline_shows_the_whole_capture_never_repeat_minus_one(run: store.Run) -> None:
    tl = build_context(run)["timeline"]
    assert tl["stage"] == "demo" and tl["whole_capture"] and tl["repeat"] == -1
    assert "demo: whole capture" in tl["html"] and "repeat -1" not in tl["html"]
    page = html.render_report(run)
    timeline = page.split('id="timeline"')[1].split("</section>")[0]
    assert "the whole capture" in timeline and "repeat -1" not in timeline


def test_amdahl_sets_imported_stages_against_their_speedup_reference(run: store.Run) -> None:
    moves = build_context(run)["amdahl"]["transitions"]
    # demo (GPU span, whole program) against text (summed GPU time): another kind, no pair;
    # nested is per repeat: the only stage of its kind
    assert moves == []
    staged = build_context(run)["staged"]["rows"]
    assert all(r["speedup_prev"] is None for r in staged)


def test_the_terminal_shows_imported_in_a_neutral_colour(run: store.Run) -> None:
    stages = run.table("stages")
    text = terminal.staged_plain_text(stages, 0, "images")
    assert "Time (0 images)" not in text and text.splitlines()[0].split()[1] == "Time"
    assert "IMPORTED text: time is the summed GPU activity time" in text
    console = Console(force_terminal=True, color_system="standard", width=400)
    with console.capture() as cap:
        console.print(terminal.staged_rich_table(stages, 0, "images"))
    ansi = cap.get()
    assert "\x1b[34mIMPORTED" in ansi  # blue
    assert "\x1b[32m" not in ansi and "\x1b[31m" not in ansi and "\x1b[1;31m" not in ansi


def test_the_markdown_summary_shows_imported_plainly(run: store.Run) -> None:
    md = markdown.summary_markdown(run, schema.empty(schema.REGRESSIONS))
    assert "| Time |" in md and "Time for 0" not in md and "**IMPORTED**" not in md
    text_row = next(line for line in md.splitlines() if "`text`" in line)
    assert "930.5ms" in text_row or "0.9305s" in text_row
    assert "IMPORTED: time is the summed GPU activity time" in text_row
