"""Run text made safe for each target (`profiler.render.escape`) and the one set of number
formatters every renderer uses (`profiler.render.units`).

The Markdown checks render with a real CommonMark parser (markdown-it-py, with tables as GFM has
them and raw HTML allowed, as GitHub's job summaries allow it) and look at the HTML it makes; the
XML checks parse with the standard library.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
from markdown_it import MarkdownIt

from profiler.render import escape, units

HOSTILE = [
    "x`</code><img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "<javascript:alert(2)>",
    "![i](http://example.com/x.png)",
    "a | b\nc\r\nd",
    "\x1b[31mred\x1b[0m \x07bell",
    "*em* _em_ ~~del~~ $x^2$",
    "``double`` and `single",
    "back\\slash\\|pipe",
    "<b>bold</b> &amp; &lt;",
    "`",
    " ",
]


def gfm(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def cell_html(cell: str) -> str:
    """The HTML of one Markdown table cell."""
    page = gfm(f"| head | other |\n| --- | --- |\n| {cell} | tail |\n")
    body = page.split("<tbody>")[1]
    first = body.split("<td>")[1].split("</td>")[0]
    assert "<td>tail</td>" in body, page  # the row kept its two cells
    return first


@pytest.mark.parametrize("value", HOSTILE)
def test_markdown_text_renders_literally(value: str) -> None:
    shown = cell_html(escape.markdown_text(value))
    for tag in ("<img", "<a ", "<b>", "<em>", "<strong>", "<del>", "<code>", "<s>"):
        assert tag not in shown, (value, shown)
    assert shown.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == (
        " ".join(value.split()).replace("\x1b", "\\x1b").replace("\x07", "\\x07")
    )


@pytest.mark.parametrize("value", HOSTILE)
def test_markdown_code_is_one_code_span(value: str) -> None:
    span = escape.markdown_code(value)
    shown = cell_html(span)
    if not value.strip():
        assert span == "" and shown == ""
        return
    assert shown.startswith("<code>") and shown.endswith("</code>")
    assert shown.count("<code>") == 1 and "<img" not in shown and "<a " not in shown
    inner = shown[len("<code>") : -len("</code>")]
    literal = inner.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    literal = literal.replace("&quot;", '"')
    expected = " ".join(value.split()).replace("\x1b", "\\x1b").replace("\x07", "\\x07")
    assert literal.strip() == expected.strip()


def test_markdown_code_outside_a_table_keeps_pipes() -> None:
    assert escape.markdown_code("a|b", in_table=False) == "`a|b`"
    assert gfm(escape.markdown_code("a`b", in_table=False)) == "<p><code>a`b</code></p>\n"


@pytest.mark.parametrize("value", [*HOSTILE, "nul\x00 vt\x0b ff\x0c \ufffe \ud800 \u202e rlo"])
def test_xml_text_is_well_formed(value: str) -> None:
    safe = escape.xml_text(value)
    element = ET.Element("case", {"name": safe})
    element.text = safe
    back = ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert back.get("name") is not None and "\x00" not in back.get("name", "")
    assert "\\x00" in escape.xml_text("a\x00b") and "\\x1b" in escape.xml_text("\x1b[0m")


def test_terminal_text_sends_no_control_character() -> None:
    shown = escape.terminal("a\x1b[31mb\x9bc\u202ed\r\ne\tf\x7f")
    assert shown == "a\\x1b[31mb\\x9bc\\u202ed e f\\x7f"
    assert all(ch.isprintable() for ch in shown)


def test_plotly_text_is_escaped_html() -> None:
    assert escape.plotly_text('<a href="javascript:alert(1)">x</a>') == (
        '&lt;a href="javascript:alert(1)"&gt;x&lt;/a&gt;'
    )
    assert escape.plotly_text("a & b\nc") == "a &amp; b c"


def test_clip_keeps_head_and_tail() -> None:
    long = "void kernel<" + "x" * 10_000 + ">(int)"
    clipped = escape.clip(long)
    assert len(clipped) == escape.NAME_LIMIT and clipped.startswith("void kernel<")
    assert clipped.endswith(">(int)") and escape.ELLIPSIS in clipped
    assert escape.clip("short") == "short" and escape.clip(None) == "" and escape.clip(pd.NA) == ""
    for render in (escape.terminal, escape.xml_text, escape.markdown_text, escape.plotly_text):
        for hostile in ("\x1b" * 1_000_000, "<" * 1_000_000, "\\" * 1_000_000):
            assert len(render(hostile)) <= 5 * escape.NAME_LIMIT, render
    assert len(escape.markdown_code("`" * 1_000_000)) <= 3 * escape.NAME_LIMIT


@pytest.mark.parametrize(
    ("ns", "shown"),
    [
        (362, "362ns"),
        (78_786, "78.79us"),
        (5_568_070, "5.568ms"),
        (999_999, "1ms"),
        (999.6, "1us"),
        (1_234_567_890, "1.235s"),
        (2.5e12, "2500s"),
        (None, "-"),
        (pd.NA, "-"),
        (math.nan, "-"),
    ],
)
def test_duration(ns: object, shown: str) -> None:
    assert units.duration(ns) == shown


def test_one_speedup_formatter() -> None:
    assert units.speedup(0.0037371) == "0.003737x" and units.speedup(48.9327) == "48.93x"
    assert units.speedup(1869.2) == "1869x" and units.speedup(math.inf) == "∞"
    assert units.speedup(None, missing="—") == "—"
    assert units.gain(1.5) == "+50.0%" and units.gain(0.96) == "-4.0%"
    assert units.gain(math.inf) == "+∞" and units.gain(math.nan) == "-"
