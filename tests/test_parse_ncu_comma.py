"""Nsight Compute's text in a locale with a decimal comma, in every layout of its tables (issue
14): `ncu_comma` read only the three-column `Section:` tables (name, unit, value); the
`--print-summary per-kernel` tables of five columns (Minimum, Maximum, Average: right-aligned
in 2024.x, padded left-aligned in 2021.x) and the `--metrics` table whose rule is one dash run
(2019.x) are read so too; a counter read so keeps its cell as the file printed it (`text`).

The decimal-comma files are made here from real ones (tests/data/ncu): their table rows'
numbers rewritten the way a de_DE locale prints them, the point and the comma swapped
(`4,374.00` -> `4.374,00`, `1.792799` -> `1,792799`), in the value columns only, widths kept.
No real ncu output of these layouts in such a locale is known.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pandas as pd
import pytest

from profiler.parse import lines, ncu_comma, ncu_text, values

NCU = Path(__file__).parent / "data" / "ncu"
HEAT = NCU / "2024.x" / "heat-eq-print-summary-per-kernel.txt"  # five columns, right-aligned
KITSUNE = NCU / "2021.x" / "kitsune-raytrace-print-summary.log"  # five columns, left-aligned
OLCF = NCU / "2019.x" / "olcf-summit-guide-metrics-rule-cut-short.txt"  # one dash run
HANDSON = NCU / "2020.x" / "handson-ax-decimal-comma.txt"  # real: three columns
_SWAP = str.maketrans(".,", ",.")


def de_de(text: str) -> str:
    """`text` with the numbers of its table rows (the lines under a dash rule, past the name
    column) written as de_DE writes them."""
    out, rule = [], None
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("-") and set(stripped) <= {"-", " "}:
            rule = [m.start() for m in re.finditer("-+", line)]
        elif not line.startswith(" ") or not stripped:
            rule = None
        elif rule and not stripped.startswith(("Metric Name", "Section:")):
            cut = rule[1] if len(rule) > 1 else len(line.rstrip()) - len(stripped.split("  ")[-1])
            swapped = re.sub("[0-9][0-9.,]*", lambda m: m[0].translate(_SWAP), line[cut:])
            line = line[:cut] + swapped
        out.append(line)
    return "\n".join(out)


def read(path: Path) -> tuple[dict[str, pd.DataFrame], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tables = ncu_text.read_tables(path, "s")
    return tables, [str(w.message) for w in caught if issubclass(w.category, values.ReadNote)]


def localised(path: Path, tmp: Path) -> Path:
    out = tmp / path.name
    out.write_text(de_de(path.read_text()))
    return out


@pytest.mark.parametrize("path", [HEAT, KITSUNE], ids=["2024-right", "2021-left"])
def test_a_per_kernel_summary_with_a_decimal_comma_reads_as_its_c_original(path, tmp_path):
    """Every metric and every counter (value, Minimum, Maximum) of the de_DE copy is the C
    original's; the plain read refused the copy (`'11,00' is not a number`)."""
    comma = localised(path, tmp_path)
    assert comma.read_text() != path.read_text()
    want, _ = read(path)
    got, said = read(comma)
    pd.testing.assert_frame_equal(got["metrics"], want["metrics"])
    columns = ["kernel_id", "section", "metric", "unit", "value", "min", "max"]
    pd.testing.assert_frame_equal(got["counters"][columns], want["counters"][columns])
    assert len(said) == 1 and "read with a decimal comma" in said[0]


def test_the_summary_values_are_the_files(tmp_path):
    """heat-eq's add_heat_kernel_3d (line 45, 4 invocations), de_DE: lines 52 and 55."""
    got, said = read(localised(HEAT, tmp_path))
    assert said == [
        "line 50: the `GPU Speed Of Light Throughput` section's numbers are read with a decimal "
        "comma ('8,66'): ncu ran in a locale that writes them so"
    ]
    m = got["metrics"].set_index("name").loc["add_heat_kernel_3d(float *, int, int, int)"]
    assert (m["duration_ns"], m["dram_throughput_pct"]) == (2_070, 11.00)  # `1,95 2,27 2,07`
    c = got["counters"]
    cycles = c[(c["metric"] == "Elapsed Cycles") & (c["kernel_id"] == m["kernel_id"])].iloc[0]
    assert (cycles["min"], cycles["max"], cycles["value"]) == (4_374, 5_139, 4_661)
    assert cycles["text"] == "4.661,00"  # the Average cell as the file prints it


def test_a_metrics_table_of_one_dash_run_is_rewritten_as_c_prints_it():
    """OLCF's `--metrics` table (2019.x, its rule one dash run), de_DE: its value cell `43,44`
    is written back as C wrote it, byte for byte. (Its one metric is no mapped one, so the
    plain read takes the file; the rewrite is tried only when a mapped metric fails.)"""
    data = de_de(OLCF.read_text()).encode()
    assert b"43,44" in data
    comma = ncu_comma.rewritten(data, lines.split(data))
    assert comma is not None and comma.data == OLCF.read_bytes()
    assert (comma.cell, comma.section, comma.line) == ("43,44", "Command line profiler metrics", 6)


def test_a_left_aligned_summary_is_rewritten_in_place():
    """kitsune's 2021.x summary pads its cells left-aligned: the rewrite keeps them so (the C
    original back, byte for byte), `256,000000` included (six digits after the comma: no
    group; its Launch Statistics section shows no other sign of the decimal comma)."""
    data = de_de(KITSUNE.read_text()).encode()
    assert b"  256,000000  256,000000  256,000000 \n" in data
    comma = ncu_comma.rewritten(data, lines.split(data))
    assert comma is not None and comma.data == KITSUNE.read_bytes()


def test_a_counter_read_with_a_decimal_comma_keeps_its_cell_as_printed():
    """The real 2020 decimal-comma file: `text` is the cell as the file prints it (lines 5-14:
    `875,84`, `13 181 137`, `12 837 852,30`), `value` its number (was: `875.84`, `13181137`)."""
    got, _ = read(HANDSON)
    c = got["counters"].set_index("metric")
    printed = {
        "Memory Frequency": ("875,84", 875.84),
        "Elapsed Cycles": ("13 181 137", 13_181_137),
        "SM Active Cycles": ("12 837 852,30", 12_837_852.30),
        "Duration": ("10,55", 10.55),
    }
    for metric, (text, value) in printed.items():
        assert (c.loc[metric, "text"], c.loc[metric, "value"]) == (text, value), metric
