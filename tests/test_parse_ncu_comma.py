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

from profiler.parse import lines, ncu_comma, ncu_text, reader_notes

NCU = Path(__file__).parent / "data" / "ncu"
HEAT = NCU / "2024.x" / "heat-eq-print-summary-per-kernel.txt"  # five columns, right-aligned
KITSUNE = NCU / "2021.x" / "kitsune-raytrace-print-summary.log"  # five columns, left-aligned
OLCF = NCU / "2019.x" / "olcf-summit-guide-metrics-rule-cut-short.txt"  # one dash run
HANDSON = NCU / "2020.x" / "handson-ax-decimal-comma.txt"  # real: three columns
BLOG = NCU / "2023.x" / "blog-two-runs-fenced-one-space-indent.md"  # two runs, --metrics
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
    return tables, [str(w.message) for w in caught if issubclass(w.category, reader_notes.ReadNote)]


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
    is written back as C wrote it, byte for byte."""
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


def test_an_unmapped_counter_with_a_decimal_comma_is_read_so(tmp_path):
    """OLCF's one metric (line 6, `%  43.44` in C) is no mapped one, so the plain read takes the
    de_DE copy: its counter was NaN (`43,44` is no C number: a group holds three digits). The
    page shows the decimal comma, so it is read so, said in a note."""
    got, said = read(localised(OLCF, tmp_path))
    want, _ = read(OLCF)
    [counter] = got["counters"].to_dict("records")
    assert (counter["text"], counter["value"]) == ("43,44", 43.44)
    assert counter["value"] == want["counters"]["value"].iloc[0]
    assert said[0] == (
        "line 6: the `Command line profiler metrics` section's numbers are read with a decimal "
        "comma ('43,44'): ncu ran in a locale that writes them so"
    )


def test_the_page_is_judged_once(tmp_path):
    """The blog's two `--metrics` runs (lines 11-12 and 44-45: `65,536`, `2,097,152`, then
    `65,536`, `262,144`), de_DE: the second section's `65.536` and `262.144` could be C's
    65.536 and 262.144, but the first's `2.097.152` (two points) shows the page's decimal comma:
    every counter of the page is read so, as the C original's (was: 65.536 and 262.144)."""
    got, said = read(localised(BLOG, tmp_path))
    want, _ = read(BLOG)
    assert got["counters"]["text"].tolist() == ["65.536", "2.097.152", "65.536", "262.144"]
    assert got["counters"]["value"].tolist() == [65_536, 2_097_152, 65_536, 262_144]
    assert got["counters"]["value"].tolist() == want["counters"]["value"].tolist()
    assert "('2.097.152')" in said[0]


def test_a_page_of_two_locales_is_judged_by_section():
    """A page whose sections mix the forms (the de_DE blog's runs pasted above ppc-max-flops'
    C run, decimal points and all: two machines) is judged by section: the C run is left as it
    is, byte for byte; the blog's first section, whose `2.097.152` shows the decimal comma, is
    read so; its second, whose `65.536` and `262.144` alone do not tell, is left as printed."""
    ppc = (NCU / "2023.x" / "ppc-max-flops.txt").read_bytes()
    data = de_de(BLOG.read_text()).encode() + b"\n" + ppc
    comma = ncu_comma.rewritten(data, lines.split(data))
    assert comma is not None and comma.data.endswith(b"\n" + ppc)
    blog = comma.data[: -len(ppc)]
    assert b" 65536\n" in blog and b" 2097152\n" in blog
    assert b" 65.536\n" in blog and b" 262.144\n" in blog


@pytest.mark.parametrize(
    ("cell", "shown"),
    [
        ("43,44", True),
        ("0,016", True),
        ("51859,821", True),
        ("1,792799", True),
        ("2.097.152", True),
        ("4.374,00", True),
        ("13 181 137", True),
        ("1.407", False),  # C's 1.407 too
        ("32,032", False),  # C's 32032 too
        ("10,485,760", False),
        ("529,381.71", False),
    ],
)
def test_may_show_finds_every_deciding_cell_at_a_rows_end(cell, shown):
    """The fast search finds each form `decides` (and blank groups) as a row's last cell."""
    row = f"    Elapsed Cycles        cycle {cell:>14}\n".encode()
    assert ncu_comma.may_show(row) == shown
    assert ncu_comma.may_show(row.replace(b"\n", b"\r\n")) == shown


@pytest.mark.parametrize("path", [NCU / "2023.x" / "ppc-max-flops.txt", BLOG, HEAT, KITSUNE])
def test_may_show_passes_c_pages_by(path):
    """Real C pages (decimal points, comma groups) hold no such token: read once, as before."""
    assert not ncu_comma.may_show(path.read_bytes())


def test_a_c_page_whose_kernels_are_templates_is_read_once(tmp_path, monkeypatch):
    """A kernel line's template arguments (`gemm<128,64>`, here written over the real page's
    kernel name) look like decimal commas, but only table rows are searched: the page is not
    rewritten and read again."""
    text = (NCU / "2023.x" / "ppc-max-flops.txt").read_text()
    templated = tmp_path / "templated.txt"
    templated.write_text(text.replace("gpu_kernel (", "void gemm<128,64,2> ("))
    assert ncu_comma.may_show(templated.read_bytes())  # the whole text would be read twice
    looked = []
    monkeypatch.setattr(ncu_comma, "rewritten", lambda *args: looked.append(args))
    tables = ncu_text.read_tables(templated, "s")
    assert looked == []
    assert set(tables["metrics"]["name"]) == {"void gemm<128,64,2>"}
