"""Profiler output as people publish it (issue 14): in Markdown fenced with `~~~`, in a batch
job's log where the profiler aborted after its tables, in a web page's `<pre>` blocks, in a
Jupyter notebook's cell outputs. Each file is a real one from a public repository (see the
README of its folder), checked for the values it yields.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from clirun import assert_refused, profgen

from profiler import store
from profiler.errors import ToolNotFound
from profiler.parse import capture, published

DATA = Path(__file__).parent / "data"
TILDE_RUNS = DATA / "captures" / "nvprof-runs-tilde-fences.md"
ABORTED = DATA / "nvprof" / "9.x" / "openacc-nvprof-aborted.err"
CODELAB = DATA / "nvprof" / "9.x" / "fluidnumerics-codelab-smoother.html"
NOTEBOOK = DATA / "nsys" / "2021.2.4" / "ncar-miniweather-stats.ipynb"
SLIDES = DATA / "nsys" / "2021.2.4" / "ncar-miniweather-slides-cut.html"
PROSE_NOTEBOOK = DATA / "nsys" / "2023.x" / "ihpcss-2025-stats-in-markdown.ipynb"


def imported(capsys, tmp: Path, path: Path):  # type: ignore[no-untyped-def]
    """The run `profgen import` makes of the one stage `s=path`, and what it said on stderr."""
    argv = ["import", "--model", "pub", "--out", tmp, "--stage", f"s={path}"]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    return store.load_run(result.out.strip().splitlines()[-1]), result.err


def test_nvprof_runs_fenced_with_tildes_are_a_stage_each(tmp_path, capsys):
    """Eleven runs, each table closed by a `~~~` fence (line 28 is the first): not a row."""
    run, _ = imported(capsys, tmp_path, TILDE_RUNS)
    assert list(run.table("stages")["stage"]) == [f"s.{k}" for k in range(1, 12)]
    gpu = run.table("gpu_activities").set_index(["stage", "name"])
    # line 8: `80.19%  23.304ms  2  11.652ms  8.6804ms  14.623ms  [CUDA memcpy DtoH]`
    dtoh = gpu.loc[("s.1", "[CUDA memcpy DtoH]")]
    assert dtoh[["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        23_304_000,
        2,
        8_680_400,
        14_623_000,
    ]
    # lines 691-697: the last run's seven rows, above its API calls
    assert len(gpu.loc["s.11"]) == 7
    assert gpu.loc[("s.11", "warmup(float*, float*, float*, int, int)"), "total_ns"] == 47_904
    calls = run.table("api_calls").set_index(["stage", "name"])
    # line 12: `88.83%  566.38ms  2  283.19ms  376.90us  566.01ms  cudaMalloc`
    assert calls.loc[("s.1", "cudaMalloc"), ["total_ns", "min_ns"]].tolist() == [
        566_380_000,
        376_900,
    ]


def test_a_table_nvprof_printed_before_aborting_ends_at_its_message(tmp_path, capsys):
    """Line 36 (`nvprof: /dvs/...: Assertion `start <= end' failed.`) is no API calls row: the
    20 rows above it are the table (no kernels: `No kernels were profiled.`), and a warning
    quotes it: nvprof aborted, so its output may be incomplete."""
    run, err = imported(capsys, tmp_path, ABORTED)
    calls = run.table("api_calls").set_index("name")
    assert len(calls) == 20
    # line 16: `77.33%  200.72ms  1  200.72ms  200.72ms  200.72ms  cuDevicePrimaryCtxRetain`
    assert calls.loc["cuDevicePrimaryCtxRetain", "total_ns"] == 200_720_000
    # line 35: `0.00%  204ns  1  204ns  204ns  204ns  cuDriverGetVersion`
    assert calls.loc["cuDriverGetVersion", ["total_ns", "calls"]].tolist() == [204, 1]
    assert "gpu_activities" not in run.tables
    said = (
        f"{ABORTED}: line 36: nvprof aborted (\"nvprof: nvprof_openacc.c:386: push_activity_stack: "
        "Assertion `start <= end' failed.\"): its output may be incomplete"
    )
    assert run.meta["inputs"][0]["warnings"] == [said]
    assert said in err
    assert "; partial: line 36: nvprof aborted" in run.table("stages")["technique"][0]


def test_nvprof_aborting_on_the_files_first_line_is_found(tmp_path, capsys):
    """The same log with its line 36 moved to the top (stderr printed before stdout, as a
    job's merged log may have it): the abort is found on line 1 (was: no warning at all)."""
    lines = ABORTED.read_text().splitlines(True)
    moved = tmp_path / "aborted-first.err"
    moved.write_text("".join([lines[35], *lines[:35], *lines[36:]]))
    run, err = imported(capsys, tmp_path, moved)
    said = (
        f"{moved}: line 1: nvprof aborted (\"nvprof: nvprof_openacc.c:386: push_activity_stack: "
        "Assertion `start <= end' failed.\"): its output may be incomplete"
    )
    assert run.meta["inputs"][0]["warnings"] == [said]
    assert len(run.table("api_calls")) == 20


def test_nvprof_in_a_web_pages_pre_block(tmp_path, capsys):
    """The summary in lines 295-308 of a codelab page: its last row ends in `</code></pre>` and
    the page's prose follows (line 309), not a row; the page's other lines are skipped."""
    run, err = imported(capsys, tmp_path, CODELAB)
    gpu = run.table("gpu_activities").set_index("name")
    # line 297: `52.12%  4.6421ms  10  464.21us  427.18us  589.69us  [CUDA memcpy DtoH]`
    assert gpu.loc["[CUDA memcpy DtoH]", ["total_ns", "calls", "max_ns"]].tolist() == [
        4_642_100,
        10,
        589_690,
    ]
    calls = run.table("api_calls").set_index("name")
    assert len(calls) == 10  # lines 299-308
    # line 308: `0.00%  1.0790us  1  1.0790us  1.0790us  1.0790us  cuDeviceGetUuid</code></pre>`
    assert calls.loc["cuDeviceGetUuid", "total_ns"] == 1_079
    assert "HTML markup: read from its <pre> blocks" in err


def test_nsys_stats_in_a_notebooks_cell_output(tmp_path, capsys):
    """nsys 2021.2.4 tables printed by a notebook cell (lines 427-500 of its JSON), each named
    by its `Running [.../reports/NAME.py ...]` line; the cells' code is skipped."""
    run, err = imported(capsys, tmp_path, NOTEBOOK)
    calls = run.table("api_calls").set_index("name")
    # line 432: `98.9  311,045,408,877  829,502  374,978.5  480  4,110,831  672,951.6
    # cuStreamSynchronize `
    assert calls.loc["cuStreamSynchronize", ["total_ns", "calls", "min_ns"]].tolist() == [
        311_045_408_877,
        829_502,
        480,
    ]
    gpu = run.table("gpu_activities").set_index("name")
    # line 452: `34.8  107,763,085,030  46,083  2,338,456.4 ... compute_tendencies_z_369_gpu`
    kernel = gpu.loc["compute_tendencies_z_369_gpu"]
    assert kernel[["total_ns", "calls"]].tolist() == [107_763_085_030, 46_083]
    # line 467: `54.0  471,292,258  92,188 ... [CUDA memcpy HtoD]`; line 476: `2,982,487.461` KiB
    htod = gpu.loc["[CUDA memcpy HtoD]"]
    assert htod[["total_ns", "calls", "bytes"]].tolist() == [471_292_258, 92_188, 3_054_067_160]
    assert "Jupyter notebook's JSON" in err


def test_nsys_stats_in_markdown_blocks_of_a_notebook_that_printed_nothing(tmp_path, capsys):
    """A course notebook, its outputs cleared, that shows `nsys profile --stats=true` output in
    fenced blocks of its Markdown cells, a report in each (was: refused, "none of its cells
    printed anything"): the blocks of one program's run, one cell after another, are one run
    (its copies' sizes joined to their times), and ncu's `Section:` tables, a block each, are
    the kernel's above them."""
    run, err = imported(capsys, tmp_path, PROSE_NOTEBOOK)
    assert list(run.table("stages")["stage"]) == ["s.1", "s.2", "s.3"]
    calls = run.table("api_calls").set_index(["stage", "name"])
    # line 396: `53.3  23786192424  516  46097272.1  46176391.0  42338870  51323982 ...`
    dtoh = calls.loc[("s.1", "cuMemcpyDtoHAsync_v2")]
    assert dtoh[["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        23_786_192_424,
        516,
        42_338_870,
        51_323_982,
    ]
    gpu = run.table("gpu_activities").set_index(["stage", "name"])
    # line 419: `100.0  1620167222  258  6279717.9  6272194.0  6249988  7635683  86899.5  nvk...`
    kernel = gpu.loc[("s.1", "nvkernel__Z9stencil2dIdEvPKT_PS0_mm_F1L5_14")]
    assert kernel[["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        1_620_167_222,
        258,
        6_249_988,
        7_635_683,
    ]
    # line 433 (`22075935038  516 ... [CUDA memcpy Device-to-Host]`), in the next cell's block
    # line 447 (`277025.391  516 ... [CUDA memcpy Device-to-Host]`, MB)
    copy = gpu.loc[("s.1", "[CUDA memcpy DtoH]")]
    assert copy[["total_ns", "calls", "bytes"]].tolist() == [22_075_935_038, 516, 277_025_391_000]
    # line 1721: the CUDA version's kernel, in the notebook's last `cuda_gpu_kern_sum` block
    cuda = "void stencil2d<double>(const T1 *, T1 *, unsigned long, unsigned long)"
    assert gpu.loc[("s.3", cuda), ["total_ns", "calls"]].tolist() == [12_199_314_275, 258]
    counters = run.table("counters").set_index(["stage", "metric"])
    # line 825, a block below the kernel line's (line 790): `Registers Per Thread ... 40`
    assert counters.loc[("s.2", "Registers Per Thread"), "value"] == 40
    assert "printed no profiler output: read from the fenced blocks of its Markdown" in err


def test_a_notebooks_markdown_blocks_are_read_and_the_rest_skipped() -> None:
    """Only Markdown cells' fenced text: a code cell's fence, prose outside a fence and a cell's
    outputs are blank; a block left open ends with its cell; a source given as one string is
    read too, each of its lines at its file line. Prose or a code cell between two blocks
    starts a section (a fence), nothing but a cell boundary does not (cell 4's block goes on
    cell 3's)."""
    notebook = (
        b'{\n "cells": [\n  {\n   "cell_type": "markdown",\n   "source": [\n'
        b'    "prose\\n",\n    "```\\n",\n    "row 1\\n",\n    "```\\n",\n'
        b'    "after\\n",\n    "~~~\\n",\n    "open"\n   ]\n  },\n'
        b'  {\n   "cell_type": "code",\n   "outputs": [],\n   "source": [\n'
        b'    "```\\n",\n    "code"\n   ]\n  },\n'
        b'  {\n   "cell_type": "markdown",\n   "source": "```\\nrow 2\\n```"\n  },\n'
        b'  {\n   "cell_type": "markdown",\n   "source": [\n    "```\\n",\n'
        b'    "row 3\\n",\n    "```"\n   ]\n  }\n ]\n}\n'
    )
    shape = published.notebook_blocks(notebook)
    shown = zip(shape.lines, shape.data.decode().split("\n"), strict=True)
    kept = [(int(line), text) for line, text in shown if text]
    assert kept == [(7, "```"), (8, "row 1"), (11, "```"), (12, "open")] + [
        (25, "```"),
        (25, "row 2"),
        (31, "row 3"),
    ]
    assert np.all(np.diff(shape.lines) >= 0)


def test_a_pages_pre_text_has_its_tags_off_and_entities_decoded() -> None:
    page = (
        b"<!DOCTYPE html>\n<p>prose &amp; more</p><pre><code>==1== a &lt;b&gt;\n"
        b"  row&#34;x&#34;</code></pre><p>after</p>\n<prefix>not a block</prefix>\n"
    )
    shape = published.html_text(page)
    # a fence above the block, at its <pre>'s line; line 4 is no block: blank
    assert shape.data == b'\n```\n==1== a <b>\n  row"x"\n\n'
    assert shape.lines.tolist() == [1, 2, 2, 3, 4, 5]


def test_an_elision_in_a_later_pre_block_leaves_earlier_tables_whole(tmp_path, capsys):
    """A whole-line cut of NCAR's nsys slides (was: "rows elided at line 398: tables partial",
    the `...` of a Fortran listing in a later block, and the tables "partial"): the stats
    block's tables are whole, as nsys printed them."""
    run, err = imported(capsys, tmp_path, SLIDES)
    assert "elided" not in err
    assert run.table("stages")["technique"].tolist() == ["imported from nsys stats output"]
    calls = run.table("api_calls").set_index("name")
    # line 30: `98.9  311,045,408,877  829,502  374,978.5  480  4,110,831  672,951.6
    # cuStreamSynchronize `
    assert calls.loc["cuStreamSynchronize", ["total_ns", "calls", "min_ns"]].tolist() == [
        311_045_408_877,
        829_502,
        480,
    ]
    assert len(calls) == 15  # lines 30-44


def test_each_pre_block_is_a_section_of_its_own() -> None:
    """A fence above each block: an elision mark in the second block is that section's."""
    page = b"<html>\n<pre>==1== a\n==1== b</pre>\n<pre>do n=1,9\n...\nend do</pre>\n"
    shape = published.html_text(page)
    sections = capture.split(shape.data.decode())
    assert [(s.first_line, s.elided) for s in sections] == [(3, ()), (6, (7,))]
    assert shape.lines.tolist() == [1, 2, 2, 3, 4, 4, 5, 6, 7]
    assert published.nothing_shown(published.html_text(b"<html>\n<pre></pre>\n")) is not None


def test_a_notebooks_outputs_are_read_and_its_sources_skipped() -> None:
    notebook = (
        b'{\n "cells": [\n  {\n   "cell_type": "code",\n   "outputs": [\n    {\n'
        b'     "text": [\n      "one \\u001b[1mtwo\\u001b[0m\\n",\n      "thr",\n'
        b'      "ee\\n"\n     ]\n    }\n   ],\n   "source": [\n    "print(1)\\n"\n   ]\n'
        b"  }\n ]\n}\n"
    )
    shape = published.notebook_text(notebook)
    text = shape.data.decode().split("\n")
    assert text[7:9] == ["one two", "three"]  # lines 8 and 9: `thr` + `ee` run together
    assert shape.lines[7:9].tolist() == [8, 9]
    assert "print(1)" not in shape.data.decode()
    assert np.all(np.diff(shape.lines) >= 0)


def test_a_notebook_is_display_only_when_no_cell_printed_text() -> None:
    """Only a notebook whose every printed line is a rich output's name is refused as such."""

    def shown(*texts: str) -> str | None:
        output = '    {{\n     "text/plain": [\n      "{}"\n     ]\n    }}'
        outputs = ",\n".join(output.format(t) for t in texts)
        notebook = f'{{\n "cells": [\n  {{\n   "outputs": [\n{outputs}\n   ]\n  }}\n ]\n}}\n'
        return published.nothing_shown(published.notebook_text(notebook.encode()))

    assert "only rich outputs" in (shown("<Figure size 640x480 with 1 Axes>") or "")
    assert shown("<Figure size 640x480 with 1 Axes>", "==1== Profiling result:") is None
    assert shown("<a> <b>") is None


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        (
            "prose.html",
            "<!DOCTYPE html>\n<p>No profiler here</p>\n",
            "it is an HTML page in which no profiler table was found (it has no <pre> block",
        ),
        (
            "empty.ipynb",
            '{\n "cells": [\n  {\n   "cell_type": "code",\n   "outputs": [],\n'
            '   "source": [\n    "!nsys profile ./a.out\\n"\n   ]\n  }\n ]\n}\n',
            "it is a Jupyter notebook in which no profiler table was found (none of its cells",
        ),
    ],
)
def test_a_page_or_notebook_that_shows_no_text_is_refused_saying_so(
    tmp_path, capsys, name, text, says
):
    path = tmp_path / name
    path.write_text(text)
    argv = ["import", "--model", "pub", "--out", tmp_path / "out", "--stage", f"s={path}"]
    assert_refused(profgen(argv, capsys), 2, says)


TIMELINE = DATA / "nvprof_profiles" / "ece408-m3-timeline.nvvp"
KERNEL_TABLE = (  # nvprof's schema for kernels it serialised (as in the timeline's file)
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, "
    "registersPerThread INT NOT NULL, start INT NOT NULL, end INT NOT NULL, deviceId INT NOT "
    "NULL, streamId INT NOT NULL, gridX INT NOT NULL, gridY INT NOT NULL, gridZ INT NOT NULL, "
    "blockX INT NOT NULL, blockY INT NOT NULL, blockZ INT NOT NULL, staticSharedMemory INT NOT "
    "NULL, dynamicSharedMemory INT NOT NULL, correlationId INT NOT NULL, name INT NOT NULL)"
)


def test_an_nvprof_profile_gives_its_kernels_copies_and_memsets(tmp_path, capsys):
    """The sums below are the file's own (sqlite3: `SELECT count(*), sum(end - start) ...`
    grouped by kernel name id, by copyKind, and over the memsets)."""
    run, _ = imported(capsys, tmp_path, TIMELINE)
    stage = run.table("stages").iloc[0]
    assert stage["technique"] == "imported from an nvprof profile (nvprof -o)"
    gpu = run.table("gpu_activities").set_index("name")
    # `_ZN5mxnet2op14forward_kernelEPfPKfS3_iiiiii`: 2 launches, 206431525 ns, 52222939-154208586
    # (demangled by cu++filt or the C++ runtime, which space a pointer differently)
    (forward_name,) = [n for n in gpu.index if n.startswith("mxnet::op::forward_kernel(")]
    forward = gpu.loc[forward_name]
    assert forward[["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        206_431_525,
        2,
        52_222_939,
        154_208_586,
    ]
    # copyKind 1 (HtoD): 20 copies, 33862598 ns, 208996184 bytes; copyKind 2: 1, 5440 ns
    htod = gpu.loc["[CUDA memcpy HtoD]"]
    assert htod[["total_ns", "calls", "bytes"]].tolist() == [33_862_598, 20, 208_996_184]
    assert gpu.loc["[CUDA memcpy DtoH]", ["total_ns", "bytes"]].tolist() == [5_440, 40_000]
    memset = gpu.loc["[CUDA memset]"]
    assert memset[["total_ns", "calls", "bytes"]].tolist() == [10_720, 9, 123_196]
    assert int(gpu["calls"].sum()) == 27 + 21 + 9


def test_kernels_nvprof_serialised_are_read_from_its_kernel_table(tmp_path, capsys):
    """nvprof collecting metrics stores kernels in `CUPTI_ACTIVITY_KIND_KERNEL`, not the
    concurrent table; a profile with none of its activity tables is refused saying so."""
    path = tmp_path / "metrics.nvprof"
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY, value TEXT)")
        db.execute(KERNEL_TABLE)
        db.execute("INSERT INTO StringTable VALUES (3, '_Z6kernelPfi')")
        db.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 40, 1000, 48705900, 0, 7, 10000, "
            "12, 25, 16, 16, 1, 0, 0, 5, 3)"
        )
        db.commit()
    run, _ = imported(capsys, tmp_path / "out", path)
    trace = run.table("gpu_trace").iloc[0]
    assert trace["name"].replace(" *", "*") == "kernel(float*, int)"  # `_Z6kernelPfi` demangled
    assert [trace[c] for c in ("duration_ns", "grid_x", "block_y", "registers")] == [
        48_704_900,
        10_000,
        16,
        40,
    ]
    empty = tmp_path / "empty.nvprof"
    with contextlib.closing(sqlite3.connect(empty)) as db:
        db.execute("CREATE TABLE Version(version INT)")
        db.commit()
    argv = ["import", "--model", "pub", "--out", tmp_path / "o2", "--stage", f"s={empty}"]
    assert_refused(profgen(argv, capsys), 2, "no CUPTI activity table of nvprof's")


@pytest.mark.parametrize(
    ("name", "module", "finder", "what"),
    [
        ("mf.nsys-rep", "nsys", "find_nsys", "an Nsight Systems report, read through `nsys stats`"),
        (
            "sgemm.ncu-rep",
            "ncu",
            "find_ncu",
            "an Nsight Compute report, read through `ncu --import`",
        ),
    ],
)
def test_a_report_whose_tool_is_missing_is_refused_naming_the_file(
    tmp_path, capsys, monkeypatch, name, module, finder, what
):
    """A user given someone's .nsys-rep (or .ncu-rep) on a machine without the tool reads, in
    one line, which file it is, what it is, and what is missing."""
    from profiler.collect import ncu, nsys

    def missing(env=None):  # type: ignore[no-untyped-def]
        raise ToolNotFound(f"{module} was not found on PATH: install it")

    monkeypatch.setattr({"nsys": nsys, "ncu": ncu}[module], finder, missing)
    report = tmp_path / name
    report.write_bytes(b"\x00")
    argv = ["import", "--model", "pub", "--out", tmp_path / "o", "--stage", f"s={report}"]
    assert_refused(profgen(argv, capsys), 4, f"{report}: {what}, and {module} was not found")


def test_an_element_that_is_no_valid_json_string_is_a_blank_line_and_its_array_goes_on() -> None:
    """A hand-edited notebook: the middle string of an output's `text` (and of a Markdown cell's
    `source`) holds a raw tab, which JSON does not allow in a string. Both readers give a blank
    line for it and read the strings after it (the outputs' reader, before it shared the
    sources' `_json_string`, dropped the rest of the array)."""
    strings = '      "==1== a\\n",\n      "bad\tcell\\n",\n      "==1== b\\n"\n'
    outputs = '   "outputs": [\n    {\n     "text": [\n' + strings + "     ]\n    }\n   ]\n"
    code = '{\n "cells": [\n  {\n   "cell_type": "code",\n' + outputs + "  }\n ]\n}\n"
    shape = published.notebook_text(code.encode())
    lines = shape.data.decode().split("\n")
    assert lines[7:10] == ["==1== a", "", "==1== b"]  # file lines 8-10
    assert shape.lines[7:10].tolist() == [8, 9, 10]
    fenced = '      "```\\n",\n' + strings.replace('"\\n"\n', '"\\n",\n') + '      "```\\n"\n'
    source = '   "source": [\n' + fenced + "   ]\n"
    markdown = '{\n "cells": [\n  {\n   "cell_type": "markdown",\n' + source + "  }\n ]\n}\n"
    blocks = published.notebook_blocks(markdown.encode()).data.decode().split("\n")
    assert blocks[5:10] == [published.BLOCK, "==1== a", "", "==1== b", ""]  # lines 6-10
