"""The comparison with a baseline as JUnit XML, so CI systems show regressions as failed tests.

One test case per check per stage (stage checks) or per kernel of a stage (kernel checks):
`classname` is `profgen.<check>` and `name` is the stage key, or `<stage>::<kernel>`. A
regression is a `<failure>` whose message has the numbers; a stage that did not PASS in either
run is an `<error>` (the comparison exits 3); a skipped stage, a stage or kernel found in one
run only, and one whose numbers are of different kinds in the two runs (an imported stage:
`incomparable`) are `<skipped>`, with the reason; an unchanged or improved metric passes. An
IMPORTED stage is never an error. Standard library XML only.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pandas as pd

from profiler.render.comparison import Row, describe
from profiler.render.escape import TEXT_LIMIT, xml_text

SUITE = "profgen.regressions"
_OUTCOME = {
    "regression": "failure",
    "failed": "error",
    "skipped": "skipped",
    "missing": "skipped",
    "incomparable": "skipped",  # an imported stage measured another way: neither pass nor fail
}


def junit_xml(regressions: pd.DataFrame, suite: str = SUITE) -> str:
    """JUnit XML of a comparison (one `<testsuite>` inside `<testsuites>`).

    Args:
        regressions: DataFrame with `schema.REGRESSIONS` columns (may be empty).
        suite: the test suite's name.

    Returns: the XML document as text, with its declaration.
    """
    cases = [_case(row) for row in regressions.to_dict("records")]
    counts = {
        kind: sum(1 for c in cases if c.find(kind) is not None)
        for kind in ("failure", "error", "skipped")
    }
    attrs = {
        "name": xml_text(suite),
        "tests": str(len(cases)),
        "failures": str(counts["failure"]),
        "errors": str(counts["error"]),
        "skipped": str(counts["skipped"]),
        "time": "0",
    }
    root = ET.Element("testsuites", {k: attrs[k] for k in ("name", "tests", "failures", "errors")})
    testsuite = ET.SubElement(root, "testsuite", attrs)
    testsuite.extend(cases)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _case(row: Row) -> ET.Element:
    stage = xml_text(row["stage"])
    name = f"{stage}::{xml_text(row['name'])}" if isinstance(row["name"], str) else stage
    classname = f"profgen.{xml_text(row['check'])}"
    case = ET.Element("testcase", {"classname": classname, "name": name, "time": "0"})
    outcome = _OUTCOME.get(str(row["verdict"]))
    if outcome is not None:
        message = xml_text(describe(row), TEXT_LIMIT)
        child = ET.SubElement(case, outcome, {"message": message})
        if outcome != "skipped":
            child.set("type", str(row["verdict"]))
            child.text = message
    return case
