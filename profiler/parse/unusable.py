"""What a file profgen reads no table from is, when it is a known kind of profiler output that
holds none: the refusal then says what the file is and why profgen can't use it (issue 14),
instead of quoting its first line.

Only the start of the file that detection read (64 KiB) is looked at, line by line, with no
pattern that can backtrack:

- a list of Nsight Compute metric names (`ncu --query-metrics`): rows of a raw metric name
  (`unit__counter.suffix`), its type (`Counter`, `Ratio`, `Throughput`), unit and description,
  or the header `Metric Name ... Metric Description`;
- the output of Nsight Systems' expert-system rules (`nsys analyze`, or `nsys stats` run with
  them): `Processing [x.sqlite] with [.../rules/cuda_memcpy_sync.py]...`, advice and at most
  50 example rows per rule (not a stats report of all calls);
- the console output of `nsys profile` that ends at `Generating '....qdstrm'` with no stats
  table after it (the program or nsys failed before it wrote a report).
"""

from __future__ import annotations

from pathlib import PurePath

from profiler.parse import values

_METRIC_TYPES = ("Counter", "Ratio", "Throughput")
_METRIC_ROWS = 3  # rows of a metric list that make one (a header alone does too)
_RULE_MARK, _WITH = "Processing [", "] with ["


def describe(lines: list[str]) -> str | None:
    """What the file whose first lines are `lines` is and why profgen can't use it, when it is
    one of the kinds above; else None."""
    return _metric_list(lines) or _rule_output(lines) or _profile_without_report(lines)


def _metric_list(lines: list[str]) -> str | None:
    rows = 0
    for line in lines:
        if line.startswith("Metric Name") and "Metric Description" in line:
            rows = _METRIC_ROWS
        else:
            cells = line.split(None, 2)
            rows += len(cells) > 1 and "__" in cells[0] and cells[1] in _METRIC_TYPES
        if rows >= _METRIC_ROWS:
            return (
                "it is a list of Nsight Compute metric names with their descriptions, as "
                "`ncu --query-metrics` prints it: no measurements to import"
            )
    return None


def _rule_output(lines: list[str]) -> str | None:
    rules: dict[str, None] = {}  # the rules in order, once each
    report = ""
    for line in lines:
        if not line.startswith(_RULE_MARK) or _WITH not in line:
            continue
        source, script = line[len(_RULE_MARK) :].split(_WITH, 1)
        path = PurePath(script.split("]", 1)[0])
        if path.parent.name == "rules":
            rules[path.stem] = None
            report = report or source
    if not rules:
        return None
    names = ", ".join(list(rules)[:6]) + (", ..." if len(rules) > 6 else "")
    return (
        f"it is the output of Nsight Systems' expert-system rules (`nsys analyze`: {names}): "
        "advice with at most 50 example rows per rule, no stats report; import "
        f"{values.shown_cell(report, 120)} itself"
    )


def _profile_without_report(lines: list[str]) -> str | None:
    last = next((line.strip() for line in reversed(lines) if line.strip()), "")
    if not (last.startswith("Generating '") and last.endswith((".qdstrm'", ".nsys-rep'"))):
        return None
    said = next((line.strip() for line in lines if "error" in line.lower()), None)
    error = f"; the first error in it: {values.shown_cell(said, 200)}" if said else ""
    return (
        f"it is the console output of `nsys profile` that ends at {values.shown_cell(last, 120)}: "
        f"nsys printed no stats table after it (did the program or nsys fail?){error}"
    )
