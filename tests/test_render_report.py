"""The report's page and charts: a compact staged table (one line a stage, the technique a click
away), a readable roofline (numbered points, a numbered table), run text that plotly cannot read
as HTML, and names that cost bounded space."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import markupsafe
import plotly.graph_objects as go
import pytest
from hostile import HTML, MEGA, PLOTLY, edited, rekey, rename_kernel, rename_range, retitle
from runfactory import METRICS_RUN, build_run, sample_run

from profiler import store
from profiler.render import charts, html
from profiler.render.context import build_context
from profiler.render.escape import NAME_LIMIT, TEXT_LIMIT


@pytest.fixture(scope="module")
def sample_page() -> str:
    return html.render_report(sample_run())


def staged_rows(page: str) -> list[str]:
    table = page.split('<table class="staged">')[1].split("</table>")[0]
    return table.split("<tbody>")[1].split("</tr>")[:-1]


def test_staged_table_has_one_line_per_stage(sample_page: str) -> None:
    rows = staged_rows(sample_page)
    assert len(rows) == 10
    for row in rows:
        assert "<br" not in row  # nothing is stacked inside a cell
        summary = row.split("<summary class=\"stage-line\">")[1].split("</summary>")[0]
        assert "technique" not in summary and len(summary) < 400
    technique = sample_run().table("stages").set_index("stage").loc["conv_opt", "technique"]
    conv = next(r for r in rows if "conv_opt" in r)
    details = conv.split("<details>")[1].split("</details>")[0]
    assert html_text(technique) in details.split("</summary>")[1]  # a click away


def html_text(text: str) -> str:
    """`text` as jinja2's autoescape writes it."""
    return str(markupsafe.escape(text))


def test_failed_stage_says_why_a_click_away() -> None:
    page = html.render_report(store.load_run(METRICS_RUN))
    torch_cpu = next(r for r in staged_rows(page) if "torch_cpu" in r)
    reason = torch_cpu.split('<p class="reason fail">')[1].split("</p>")[0]
    assert reason.startswith("ERROR: profiler output unreadable")
    assert 'title="profiler output unreadable' in torch_cpu  # the verdict's tooltip


def test_roofline_points_are_numbered_in_table_order() -> None:
    roof = build_context(store.load_run(METRICS_RUN))["roofline"]
    points = [r["point"] for r in roof["rows"] if r["point"] is not None]
    assert points and points[0] == 1
    firsts = [r["point"] for r in roof["rows"] if r["labelled"]]
    assert firsts == list(range(1, len(firsts) + 1))  # numbered down the table
    assert set(points) == set(firsts)  # a repeated number is an earlier row's
    unplaced = [r for r in roof["rows"] if r["point"] is None]
    assert all(not (r["intensity"] or 0) > 0 or not (r["flops_per_s"] or 0) > 0 for r in unplaced)


def figures_of(run: store.Run, monkeypatch: pytest.MonkeyPatch) -> list[go.Figure]:
    """Every figure the report of `run` draws."""
    drawn: list[go.Figure] = []
    real = charts.figure_html

    def keep(fig: go.Figure, div_id: str) -> str:
        drawn.append(fig)
        return real(fig, div_id)

    monkeypatch.setattr(charts, "figure_html", keep)
    build_context(run)
    return drawn


def strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Every (key, string) in a figure's JSON."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from strings(v, k)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v, key)
    elif isinstance(value, str):
        yield key, value
    elif hasattr(value, "tolist"):
        yield from strings(value.tolist(), key)


OWN_TAGS = re.compile(r"<br>|<extra></extra>")


def test_plotly_gets_no_html_from_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    run = edited(
        build_run(),
        [
            retitle("overlap_fusion", HTML),
            retitle("cuda_baseline", PLOTLY),
            rename_kernel("relu", PLOTLY),
            rename_kernel("scale", HTML),
            rename_range("compute", HTML),
            rekey("conv_opt", "<b>conv</b>"),
        ],
    )
    figures = figures_of(run, monkeypatch)
    assert len(figures) == 6  # stage times, two breakdowns, timeline, roofline, batch sweep
    seen = set()
    for fig in figures:
        for key, text in strings(fig.to_plotly_json()):
            assert not re.search(r"<(?!br>)[a-z/]", OWN_TAGS.sub("", text)), (key, text)
            if key in ("hovertemplate", "texttemplate"):  # where `%{...}` is read: ours only
                assert not any(s in text for s in ("bold", "click", "conv")), (key, text)
            seen.add(text)
    shown = "&lt;a href=\"javascript:alert(1)\"&gt;click&lt;/a&gt;"
    assert any(shown in text for text in seen)  # the title, as text
    assert any("&lt;b&gt;bold&lt;/b&gt;" in text for text in seen)


def test_a_megabyte_name_costs_little(monkeypatch: pytest.MonkeyPatch) -> None:
    run = edited(
        sample_run(),
        [
            rename_kernel("Linear_ReLu_Fused", MEGA),
            rename_kernel("[CUDA memcpy HtoD]", MEGA + "x"),
            retitle("overlap_fusion", MEGA),
            rename_range("h2d", MEGA),
        ],
    )
    page = html.render_report(run)
    assert len(page) < len(html.render_report(sample_run())) + 500_000
    longest = max(len(m) for m in re.findall(r"huge_kernel[^<\"]*", page))
    assert longest <= TEXT_LIMIT + len("&gt;") - 1  # clipped, then its `>` escaped
    for fig in figures_of(run, monkeypatch):
        assert max(len(t) for _, t in strings(fig.to_plotly_json())) < 4 * NAME_LIMIT


def test_templates_escape_everything_but_chart_fragments() -> None:
    env = html.environment()
    names = env.list_templates()
    assert names and all(env.autoescape(n) is True for n in names)  # type: ignore[operator]
    charts_only = re.compile(r"\{\{\s*(charts\.\w+|\w+\.html|t\.html)\s*\|\s*safe\s*\}\}")
    for name in names:
        source = (html.templates_dir() / name).read_text()
        unsafe = re.findall(r"\{\{[^}]*\|\s*safe[^}]*\}\}", source)
        assert all(charts_only.fullmatch(u) for u in unsafe), (name, unsafe)
        assert "Markup(" not in source and "autoescape false" not in source, name
