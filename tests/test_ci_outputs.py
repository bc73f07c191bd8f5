"""CI outputs: the JUnit XML parses and counts what it should, whatever the kernel names hold;
the Markdown summary has the staged table and the regressions, and no run text can turn into
HTML, a link or an image in it (rendered by a real CommonMark parser); the compare table's
formats, integer nanoseconds written as integers."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from io import StringIO

import pandas as pd
import pytest
from markdown_it import MarkdownIt
from regress_factory import make_run
from runfactory import sample_run

from profiler import schema
from profiler.analyze import regress
from profiler.render import units
from profiler.render.comparison import format_comparison
from profiler.render.junit import junit_xml
from profiler.render.markdown import summary_markdown

format_ns = units.duration

FC = ("fc_coalesced", "fc1_kernel")


@pytest.fixture(scope="module")
def slow() -> tuple:
    new = make_run(2, kernel_scale={FC: 1.5}, status={"pinned": "FAIL", "torch_gpu": "SKIPPED"})
    return new, regress.evaluate(make_run(1), new, regress.default_checks())


def test_junit_has_one_case_per_row_and_counts_failures(slow):
    _, table = slow
    root = ET.fromstring(junit_xml(table))
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == len(table) == int(suite.get("tests"))
    failures = [c for c in cases if c.find("failure") is not None]
    errors = [c for c in cases if c.find("error") is not None]
    skipped = [c for c in cases if c.find("skipped") is not None]
    n_regressions = int((table["verdict"] == "regression").sum())
    assert n_regressions >= 1
    assert len(failures) == int(suite.get("failures")) == int(root.get("failures")) == n_regressions
    assert len(errors) == int(suite.get("errors")) == 2  # pinned, under both checks
    assert len(skipped) == int(suite.get("skipped")) == 2  # torch_gpu, under both checks
    kernel = next(c for c in failures if c.get("name") == "fc_coalesced::fc1_kernel")
    assert kernel.get("classname") == "profgen.kernel:total:10%"
    message = kernel.find("failure").get("message")
    row = table[(table["name"] == "fc1_kernel") & (table["stage"] == "fc_coalesced")].iloc[0]
    assert format_ns(row["base_ns"]) in message and format_ns(row["new_ns"]) in message
    assert f"+{(row['ratio'] - 1) * 100:.1f}%" in message and "threshold 10%" in message
    assert "of the stage's GPU time" in message


def test_junit_of_no_comparison_is_an_empty_suite():
    root = ET.fromstring(junit_xml(schema.empty(schema.REGRESSIONS)))
    assert root.find("testsuite").get("tests") == "0"


def test_junit_escapes_kernel_names():
    table = regress.evaluate(make_run(1), make_run(2), [regress.parse_check("kernel:total:10%")])
    table["name"] = table["name"].str.replace(
        "fc1_kernel", 'void fc1<float, 4>(float const*, "x" & y)'
    )
    root = ET.fromstring(junit_xml(table))
    names = [c.get("name") for c in root.iter("testcase")]
    assert 'fc_coalesced::void fc1<float, 4>(float const*, "x" & y)' in names


def test_markdown_has_the_staged_table_and_the_regressions(slow):
    run, table = slow
    text = summary_markdown(run, table)
    assert "| # | Stage | Time for 10,000 images |" in text
    stages = run.table("stages")
    lines = text.splitlines()
    for stage in stages["stage"]:
        assert any(line.startswith("| ") and f"`{stage}`" in line for line in lines)
    fc = stages.set_index("stage").loc["fc_coalesced"]
    assert f"{fc['median_ns'] / 1e9:.4g}s" in text  # time for all images, in seconds
    assert "#### Regressions" in text and "`fc1_kernel`" in text
    assert "**FAIL**" in text and "#### Failed stages" in text and "pinned" in text
    regressions = [line for line in lines if line.startswith("| `kernel:total:10%`")]
    assert len(regressions) == int(
        ((table["verdict"] == "regression") & (table["metric"] == "kernel")).sum()
    )


def test_markdown_without_a_baseline():
    run = make_run(1)
    text = summary_markdown(run, schema.empty(schema.REGRESSIONS))
    assert "Not compared with a baseline" in text and "Regressions" not in text
    assert text.count("\n| ") == 2 + len(run.table("stages"))  # header, separator, one per stage


def test_markdown_escapes_pipes_in_cells():
    run = make_run(1, kernel_scale={FC: 1.5})
    table = regress.evaluate(make_run(2), run, regress.default_checks())
    table["name"] = table["name"].str.replace("fc1_kernel", "fc1|odd`name")
    text = summary_markdown(run, table)
    row = next(line for line in text.splitlines() if "fc1" in line)
    assert "``fc1\\|odd`name``" in row  # a code span no backtick closes, the pipe escaped
    assert row.count(" | ") == 7  # eight cells


def test_format_comparison_csv_and_json_round_trip(slow):
    _, table = slow
    back = pd.read_csv(StringIO(format_comparison(table, "csv")))
    assert list(back.columns) == schema.REGRESSIONS.names and len(back) == len(table)
    rows = json.loads(format_comparison(table, "json"))
    assert len(rows) == len(table) and rows[0]["check"] == "stage:median:100%"
    text = format_comparison(table, "text")
    assert text.splitlines()[0].split() == [
        "check",
        "stage",
        "kernel",
        "before",
        "after",
        "change",
        "significance",
        "share",
        "verdict",
    ]
    counts = table["verdict"].value_counts()
    assert text.splitlines()[-1] == (
        f"{counts['regression']} regression{'s' if counts['regression'] > 1 else ''}, 2 failed, "
        f"{counts['unchanged']} unchanged, 2 skipped"
    )
    assert len(text.splitlines()) == 1 + len(table) + 1
    with pytest.raises(ValueError):
        format_comparison(table, "xml")


def test_format_ns_is_the_reports_duration():
    assert format_ns(1_234_567_890) == "1.235s" and format_ns(2500) == "2.5us"
    assert format_ns(math.nan) == format_ns(pd.NA) == "-"


HOSTILE_TITLE = "Evil `</code><img src=x onerror=alert(1)>` [click](javascript:alert(1)) | cell"
HOSTILE_REASON = "<img src=x>\n| forged | row |\n<javascript:alert(2)> **bold**"
HOSTILE_KERNEL = "fc1|odd`name\nnext <a href='javascript:x'>a</a>"


@pytest.fixture(scope="module")
def hostile() -> tuple:
    run = make_run(1, kernel_scale={FC: 1.5}, status={"pinned": "FAIL"})
    stages = run.tables["stages"]
    stages["title"] = stages["title"].where(stages["stage"] != "conv_opt", HOSTILE_TITLE)
    stages["reason"] = stages["reason"].where(stages["stage"] != "pinned", HOSTILE_REASON)
    run.meta["command"] = "profgen sweep `x` <img src=x>"
    run.meta["model"] = "<script>alert(1)</script>"
    table = regress.evaluate(make_run(2), run, regress.default_checks())
    table["name"] = table["name"].str.replace("fc1_kernel", HOSTILE_KERNEL)
    return run, table


def gfm(text: str) -> str:
    """Markdown as GitHub renders a job summary: GFM tables, raw HTML allowed."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(text)


def test_markdown_lets_no_run_text_become_html(hostile):
    run, table = hostile
    page = gfm(summary_markdown(run, table))
    for tag in ("<img", "<a ", "<a>", "<script", "<strong>bold"):
        assert tag not in page, tag
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # shown, as text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the model, in the heading


def test_markdown_rows_keep_their_cells(hostile):
    run, table = hostile
    page = gfm(summary_markdown(run, table))
    tables = page.split("<table>")[1:]
    staged_rows = tables[0].split("<tbody>")[1].split("<tr>")[1:]
    assert len(staged_rows) == len(run.table("stages"))
    assert all(r.count("<td") == 6 for r in staged_rows)
    conv = next(r for r in staged_rows if "conv_opt" in r)
    assert "[click](javascript:alert(1)) | cell" in conv  # the title, as text, in its cell
    pinned = next(r for r in staged_rows if "pinned" in r)
    assert "| forged | row |" in pinned  # the reason's newlines did not start a row
    regressions = tables[1].split("<tbody>")[1].split("<tr>")[1:]
    assert all(r.count("<td") == 8 for r in regressions)
    assert any("<code>fc1|odd`name next &lt;a href='javascript:x'&gt;a&lt;/a&gt;</code>" in r
               for r in regressions)


def test_markdown_speedups_read_as_in_the_report():
    text = summary_markdown(sample_run(), schema.empty(schema.REGRESSIONS))
    row = next(line for line in text.splitlines() if "`cuda_baseline`" in line)
    assert "| 0.003737x |" in row  # the report's 0.003737x, not 0.00x
    assert "| 1.561s |" in row


def test_junit_is_well_formed_whatever_the_names_hold():
    table = regress.evaluate(make_run(1), make_run(2), [regress.parse_check("kernel:total:10%")])
    nasty = "fc1\x00\x1b[31m\x0c\ufffe\ud800<&>\"'" + "x" * 1_000_000
    # (objects: a pyarrow-backed string column cannot hold the lone surrogate)
    table["name"] = table["name"].astype(object).str.replace("fc1_kernel", nasty, regex=False)
    table["stage"] = table["stage"].str.replace("fc_coalesced", "fc\x07coalesced", regex=False)
    text = junit_xml(table)
    root = ET.fromstring(text)  # well-formed XML 1.0
    names = [c.get("name") for c in root.iter("testcase")]
    odd = next(n for n in names if n.startswith("fc\\x07coalesced::fc1"))
    assert "\\x00\\x1b[31m\\x0c\\ufffe\\ud800<&>\"'" in odd
    assert len(text) < 1_000_000 and len(odd) < 1000


def test_compare_csv_writes_whole_nanoseconds_as_integers(slow):
    _, table = slow
    csv_text = format_comparison(table, "csv")
    back = pd.read_csv(StringIO(csv_text), dtype=str, keep_default_na=False)
    for col in ("base_ns", "new_ns"):
        written = back[col][back[col] != ""]
        assert len(written) and not written.str.endswith(".0").any(), col
        assert written.str.fullmatch(r"\d+").sum() >= len(written) // 2  # most medians are whole
    first = table["base_ns"].first_valid_index()
    assert float(table.loc[first, "base_ns"]).is_integer()
    assert back.loc[first, "base_ns"] == str(int(table.loc[first, "base_ns"]))
    rows = json.loads(format_comparison(table, "json"))
    assert any(isinstance(r["base_ns"], int) for r in rows)
