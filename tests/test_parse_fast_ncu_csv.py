"""ncu's CSV pages read as bytes, with cells as objects and each distinct cell read once
(`ncu_csv.read_tables`, `ncu_counters.details`), give what the string reader they replaced
gave: every table, or the same error.

The oracle below is that reader as it was (the whole text decoded, ncu's `==` lines cut out
with a regular expression, every cell a `string`, each metric name compared row by row, every
value cell parsed), kept here only to hold the fast reader to it, on the ncu CSV files under
tests/data and on mutated copies of them: lines dropped, doubled, cut short, CRLF line ends,
tabs, non-ASCII blanks, `==PROF==` lines inside the table, rows with more cells than the header,
and value cells whose numbers pandas reads in another dtype when they are read together.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_parse_fast_paths import mutants

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import (
    bounded_names,
    csvtext,
    ncu_counters,
    ncu_csv,
    ncu_details,
    ncu_metrics,
    ncu_nvtx,
    ncu_says,
    values,
)
from profiler.parse.table_origin import LineCounter, Origin

DATA = Path(__file__).parent / "data"
TOOL_LINE = re.compile(r"^==[^\n]*(?:\n|\Z)", re.MULTILINE)
HEADER = re.compile(r'^"?(?:ID"?,"?Process ID|Process ID"?,"?Process Name)"?,', re.MULTILINE)

# --- the oracle: the string reader ----------------------------------------------------------


def old_fence(text: str, start: int) -> int:
    """Where a table a README fenced ends: the first fence line under the header, of a mark
    (```` ``` ```` or `~~~`) that also comes above it."""
    ends = [len(text)]
    for mark in ("```", "~~~"):
        line = re.compile(rf"^[ \t]{{0,3}}{mark}", re.MULTILINE).search(text, start + 1)
        if mark in text[:start] and line is not None:
            ends.append(line.start())
    return min(ends)


_ASCII_BLANKS = " \t\r\n\x0b\x0c"  # what `bytes.strip` strips


def old_tail(text: str, start: int) -> int:
    """Where the lines after a pasted table's last row start (the line after the last one led
    by a quote, not by three: a Python string's closing quotes), when they are neither ncu's
    (`==`) nor an elision mark and other text than ncu's lines comes before the header at
    `start`."""
    last = text.rfind('\n"', start) + 1 or start
    while last > start and text.startswith('"""', last):
        last = text.rfind('\n"', start, last - 1) + 1 or start
    end = text.find("\n", last) + 1
    tail = text[end:].strip(_ASCII_BLANKS) if end else ""
    before = text[:start].split("\n")[:-1]
    ncu_only = all(line.startswith("==") or not line.strip(_ASCII_BLANKS) for line in before)
    if not tail or tail.startswith(("==", "...", "\u2026")) or ncu_only:
        return len(text)
    return end


def old_read_tables(path: Path, stage: str) -> dict[str, pd.DataFrame]:
    head = csvtext.read_head(path, ncu_csv.EXPECTED)
    if not (re.search(r"^==[A-Z]+==", head, re.MULTILINE) or HEADER.search(head)):
        raise ParseError(path, ncu_csv.EXPECTED, "no such header nor ==PROF== line at its start")
    text = csvtext.read_text(path, ncu_csv.EXPECTED)
    match = HEADER.search(text)
    if match is None:
        said = ncu_says.nothing_profiled(text, "no such header found")
        raise ParseError(path, ncu_csv.EXPECTED, said)
    text = text[: old_fence(text, match.start())]
    text = text[: old_tail(text, match.start())]
    origin = old_table(text, match.start(), path)
    header = csvtext.header_cells(str(origin.text).split("\n", 1)[0])
    csvtext.check_header(header, path, ncu_csv.EXPECTED)
    table = csvtext.read_csv_text(origin.text, origin)
    csvtext.check_last_row(origin, ncu_details.row_cells(header), len(table) - 1)  # (the rule)
    if "Metric Name" in table.columns and "Metric Value" in table.columns:
        ncu_details.check_metric_rows(table, origin)  # (the rule: a split row is refused)
        launches, found = old_details(table, origin)
        counters = lambda: old_counters(table, stage)  # noqa: E731
    elif "Metric Name" in table.columns and "Average" in table.columns:
        table = ncu_csv._by_kernel(table)
        launches, found = old_details(table, origin, value="Average")
        counters = lambda: old_counters(table, stage, "Average")  # noqa: E731
    else:
        units: dict[str, str] = {}
        if len(table) and "ID" in table and pd.isna(table["ID"].iloc[0]):
            units = {str(c): ("" if pd.isna(u) else str(u)) for c, u in table.iloc[0].items()}
            table = table.iloc[1:].reset_index(drop=True)
            origin = dataclasses.replace(origin, skip=1)
        launches, found = ncu_csv._raw(table, units, origin)
        counters = lambda: ncu_counters.raw(table, units, stage)  # noqa: E731
    ranges = ncu_nvtx.csv_ranges(launches)
    metrics = ncu_metrics.metrics_table(launches, found, stage, origin, ranges)
    return {schema.METRICS.name: metrics, schema.COUNTERS.name: counters()}


def old_table(text: str, start: int, path: Path) -> Origin:
    lines = LineCounter(text)
    first = lines.at(start)
    pieces, dropped, pos = [], [], start
    for tool in TOOL_LINE.finditer(text, start):
        pieces.append(text[pos : tool.start()])
        dropped.append(lines.at(tool.start()))
        pos = tool.end()
    pieces.append(text[pos:])
    return Origin(path, ncu_csv.EXPECTED, "".join(pieces), first, dropped=tuple(dropped))


def old_details(table: pd.DataFrame, origin: Origin, value: str = "Metric Value"):
    rows = table[table["Metric Name"].notna()]
    launches = table.drop_duplicates("ID").reset_index(drop=True)
    found = {}
    for field, (kind, names) in ncu_metrics.METRICS.items():
        for name in names:
            hits = rows[rows["Metric Name"] == name].drop_duplicates("ID")
            if hits.empty:
                continue
            units = hits["Metric Unit"].fillna("").astype(str)
            factor = units.map(
                lambda u, k=kind, n=name: ncu_metrics.unit_factor(k, u, origin.path, n)
            )
            number = values.numbers(
                hits[value], origin, name, ncu_metrics.RULES[kind], factor.to_numpy(dtype="float64")
            )
            by_id = pd.Series(number.to_numpy(), index=hits["ID"].to_numpy())
            found[field] = pd.Series(launches["ID"].map(by_id).to_numpy(dtype="float64"))
            break
    return launches, found


def old_text(cells: pd.Series) -> pd.Series:
    codes, distinct = pd.factorize(cells.to_numpy(dtype=object))
    return bounded_names.coded_strings(codes, [str(c).strip() or pd.NA for c in distinct])


def old_counters(table: pd.DataFrame, stage: str, value: str = "Metric Value") -> pd.DataFrame:
    rows = table[table["Metric Name"].notna().to_numpy()]
    summary = value == "Average"
    number = lambda c: values.loose_numbers(rows[c]) if c in rows else None  # noqa: E731
    got = {
        "kernel_id": ncu_counters._ids(rows["ID"]),
        "name": ncu_counters._names(rows["Kernel Name"]),
        "section": old_text(rows["Section Name"]) if "Section Name" in rows else None,
        "metric": old_text(rows["Metric Name"]),
        "unit": old_text(rows["Metric Unit"]) if "Metric Unit" in rows else None,
        "value": values.loose_numbers(rows[value]),
        "text": old_text(rows[value]),
        "invocations": number("Invocations") if summary else None,
        "min": number("Minimum") if summary else None,
        "max": number("Maximum") if summary else None,
    }
    return ncu_counters.frame(got, stage)


# --- the comparison -------------------------------------------------------------------------


def _is_csv(path: Path) -> bool:
    try:
        head = path.read_bytes()[:65536].decode("utf-8", "replace")
    except OSError:
        return False
    return HEADER.search(head) is not None


FILES = sorted(p for p in DATA.rglob("*") if "ncu" in str(p) and p.is_file() and _is_csv(p))
SUMMARY = "\n".join(
    [
        "==PROF== Connected to process 543 (/usr/bin/python3.12)",
        '"Process ID","Process Name","Host Name","Kernel Name","Block Size","Grid Size","Device",'
        '"CC","Invocations","Section Name","Metric Name","Metric Unit","Minimum","Maximum",'
        '"Average"',
        '"543","python3.12","h","scale","(256, 1, 1)","(4096, 1, 1)","0","9.0","16","GPU Speed Of'
        ' Light Throughput","Duration","usecond","5.12","6.08","5,856.5"',
        '"543","python3.12","h","scale","(256, 1, 1)","(4096, 1, 1)","0","9.0","16","Launch '
        'Statistics","Registers Per Thread","register/thread","16","16","16"',
        '"543","python3.12","h","add","(128, 1, 1)","(8, 1, 1)","0","9.0","2","GPU Speed Of'
        ' Light Throughput","Duration","ns","n/a","","7"',
        '"543","python3.12","h","add","(128, 1, 1)","(8, 1, 1)","0","9.0","2","","","","","",""',
    ]
)


_RUN_ON = "a quote left open in it runs on past the line"


def outcome(read, path: Path):
    """The tables `read` gives, or its error's message."""
    try:
        return read(path, "s")
    except (ParseError, KeyError) as exc:
        return f"{type(exc).__name__}: {exc}"


def same(path: Path) -> None:
    new, old = outcome(ncu_csv.read_tables, path), outcome(old_read_tables, path)
    if isinstance(old, str) or isinstance(new, str):
        if isinstance(old, str) and isinstance(new, str) and _RUN_ON in new:
            return  # both refuse; the new reader first names a header a quote runs on from
        assert new == old
        return
    assert new.keys() == old.keys()
    for name in old:
        pd.testing.assert_frame_equal(new[name], old[name], check_exact=True)
        assert new[name].to_csv() == old[name].to_csv()


def test_the_files_are_found():
    assert {p.name for p in FILES} >= {"details-sections.csv", "raw-metrics.csv"}


def test_per_kernel_summary(tmp_path: Path):
    for k, text in enumerate(mutants(SUMMARY + "\n", seed=3)):
        out = tmp_path / f"s{k}.csv"
        out.write_text(text, encoding="utf-8")
        same(out)


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_files(path: Path, tmp_path: Path):
    same(path)
    for k, text in enumerate(mutants(path.read_text(encoding="utf-8"), seed=len(path.name))):
        out = tmp_path / f"m{k}.csv"
        out.write_text(text, encoding="utf-8")
        same(out)


def _hostile(text: str) -> list[str]:
    """The details page edited where the fast reader does something of its own."""
    at = text.index('"ID",')
    body = text[at:].split("\n")
    prof = "==PROF== Disconnected from process 543"
    return [
        text[:at] + "\n".join([body[0], prof, *body[1:4], prof + "\r", *body[4:]]),  # == lines
        text[:at] + "\n".join([body[0], prof, prof, "==", *body[1:3], prof, prof, *body[3:]]),
        text[:at] + "\n".join([*body[:-1], "==WARNING== last"]),  # ... the last one
        text[:at] + "\n".join([*body, "==ERR== a=b"]) + "\n",
        "=x=\n" + text.replace("fixture", "a == b", 1),  # `=` that no tool line starts
        text[:at] + "\n".join([body[0], body[1] + '""', *body[2:]]),  # a cell more
        text[:at] + "\n".join([body[0], body[1] + ",,,,,,,", *body[2:]]),  # cells more, empty
        text[:at] + "\n".join([body[0], *body[1:3], body[3] + ',"","","","","",""', *body[4:]]),
        text.replace('"Duration","ns","5,856"', '"Duration","usecond"," 5.856 "', 1),
        text.replace('"Duration","ns","5,856"', '"Duration","parsec","5"', 1),
        text.replace('"Duration","ns","5,856"', '"Duration","ns","-1"', 1),
        text.replace('"hz","2,601,092,896.17"', '"hz","18446744073709551615"', 1).replace(
            '"cycle","9,241"', '"cycle","-9223372036854775809"', 1
        ),
        text.replace('"hz","2,601,092,896.17"', '"hz","12345678901234567891"', 1).replace(
            '"cycle","9,241"', '"cycle",""', 1
        ),
        text.replace('"cycle","9,241"', '"cycle","1e400"', 1).replace('"%","23.48"', '"%","nan"'),
        text.replace('"ns","5,856"', '"ns","n/a"').replace('"hz"', '"Hz é\u00a0"', 2),
        text.replace('"0","543"', '"","543"', 1),
        text.replace('"scale"', '"s' + "x" * 2000 + '"'),
        text.replace("\n", "\r\n"),
        text[:at] + body[0] + "\n",
    ]


def test_hostile_details_pages(tmp_path: Path):
    text = (DATA / "ncu" / "2025.3.1" / "details-sections.csv").read_text(encoding="utf-8")
    for k, edited in enumerate(_hostile(text)):
        out = tmp_path / f"h{k}.csv"
        out.write_text(edited, encoding="utf-8")
        same(out)


def test_the_oracle_can_tell():
    """A value read per distinct cell where the dtype would differ, and a row more: the
    comparison sees a changed table (so that a test above can fail)."""
    cells = pd.Series(["18446744073709551615", "-1", None], dtype=object)
    coded = ncu_counters.Coded.of(cells.to_numpy())
    assert coded.numbers().tolist()[:2] == values.loose_numbers(cells).tolist()[:2]
    with pytest.raises(AssertionError):
        pd.testing.assert_series_equal(
            pd.Series(coded.numbers()), pd.Series(np.array([1.0, -1.0, np.nan]))
        )


@pytest.mark.parametrize("read", [pd.Categorical, lambda c: pd.Series(c, dtype="category")])
def test_categories_are_coded_as_the_cells(read):
    """A categorical column (how a details page's repeated columns are read) codes its cells
    by its own categories, in their order: the same strings, numbers and missing cells as the
    cells factorised one by one."""
    cells = [" b ", "10", None, "a", "10", "", " b "]
    objects = ncu_counters.Coded.of(np.array(cells, dtype=object))
    coded = ncu_counters.Coded.of(read(cells))
    assert list(coded.distinct) == ["", " b ", "10", "a"]  # sorted: not the factorised order
    assert coded.stripped().tolist() == objects.stripped().tolist()
    assert coded.numbers().tolist() == pytest.approx(objects.numbers().tolist(), nan_ok=True)
