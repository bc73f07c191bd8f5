"""CI outputs: the JUnit XML parses and counts what it should; the Markdown summary has the
staged table and the regressions; the compare table's formats."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from io import StringIO

import pandas as pd
import pytest
from regress_factory import make_run

from profiler import schema
from profiler.analyze import regress
from profiler.render.comparison import format_change, format_comparison, format_ns
from profiler.render.junit import junit_xml
from profiler.render.markdown import summary_markdown

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
    assert "fc1\\|odd'name" in row
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


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (1_234_567_890, "1.235 s"),
        (1.5e6, "1.5 ms"),
        (13_700_000, "13.7 ms"),
        (2500, "2.5 us"),
        (999, "999 ns"),
        (math.nan, "-"),
        (pd.NA, "-"),
    ],
)
def test_format_ns(ns, text):
    assert format_ns(ns) == text


def test_format_change():
    assert format_change(1.5) == "+50.0%" and format_change(0.96) == "-4.0%"
    assert format_change(math.nan) == "-"
