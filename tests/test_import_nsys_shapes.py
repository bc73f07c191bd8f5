"""`profgen import` of `nsys stats` output in shapes the column-text reader did not take as they
are: a table drawn in a box (`--format table`) and written in the Windows code page, and the
`--stats=true` output of several MPI ranks printed into one stream, whose banners name other
reports than the tables under them, and an agent's transcript whose next line follows a table's
last row with no blank line between. The files are in tests/data/nsys/2023.x (its README says
where each comes from)."""

from __future__ import annotations

from pathlib import Path

from test_import_pasted import imported
from test_import_refusals import refusal

from profiler.parse import boxed, codepage

NSYS = Path(__file__).parent / "data" / "nsys" / "2023.x"
DEMO = NSYS.parent / "2025.3.1" / "demo" / "nsys-stats-stdout.txt"
BOXED_CP1252 = NSYS / "trt-nvtx-sum-format-table.cp1252"
MPI_CUT = NSYS / "cme213-mpi-ranks-interleaved-cut.txt"


def test_an_nsys_format_table_written_on_windows_imports_its_ranges(tmp_path, capsys):
    run, err = imported(BOXED_CP1252, tmp_path, capsys)
    ranges = run.table("ranges")
    assert len(ranges) == 64
    first = ranges.iloc[0]
    assert first["name"] == "TensorRT:ExecutionContext::enqueueV3"
    assert (first["calls"], first["total_ns"]) == (60, 75270120)
    assert (first["min_ns"], first["max_ns"]) == (303018, 46362529)
    assert first["avg_ns"] == 1254502.0
    cut = ranges[ranges["name"].str.endswith("…")]
    assert len(cut) == 6  # the six names nsys cut, its `…` read from cp1252's byte 0x85
    assert cut.iloc[0]["total_ns"] == 1160392
    assert int(ranges["total_ns"].sum()) == 321_331_525  # the file's column, summed by awk
    assert "Windows code page (cp1252)" in err and "`nsys stats --format table`" in err


def test_unboxing_blanks_the_bars_on_the_borders_of_nsys_boxes_only():
    text = (
        b" ** NVTX Range Summary (nvtx_sum):\n"
        b"\n"
        b"+----------+-----------------+-----------+---------+\n"
        b"| Time (%) | Total Time (ns) | Instances |  Range  |\n"
        b"+----------+-----------------+-----------+---------+\n"
        b"|     60.0 |             600 |         3 | a|b     |\n"
        b"|     40.0 |             400 |         1 | c       |\n"
        b"+----------+-----------------+-----------+---------+\n"
    )
    shape = boxed.unboxed(text)
    assert shape is not None
    assert shape.data == (
        b" ** NVTX Range Summary (nvtx_sum):\n"
        b"\n"
        b"  Time (%)   Total Time (ns)   Instances    Range   \n"
        b" ---------- ----------------- ----------- --------- \n"
        b"      60.0               600           3   a|b      \n"
        b"      40.0               400           1   c        \n"
    )
    assert shape.lines.tolist()[:6] == [1, 2, 4, 5, 6, 7]  # the rules above and below left out
    own = b"+---+---+\n| a | b |\n+---+---+\n| 1 | 2 |\n+---+---+\n"  # a program's own box
    assert boxed.unboxed(own) is None
    assert boxed.unboxed(b"+----+\n| no header |\n") is None


def boxed_report(title: str, rows: list[list[str]]) -> list[str]:
    """A report's CSV rows (header first) drawn in a box as `--format table` draws it: header
    cells centred, numbers right-aligned, text left-aligned, cells padded by characters."""
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells: list[str], header: bool) -> str:
        padded = [
            c.center(w) if header else c.rjust(w) if c[:1].isdigit() else c.ljust(w)
            for c, w in zip(cells, widths, strict=True)
        ]
        return "| " + " | ".join(padded) + " |"

    body = [line(row, False) for row in rows[1:]]
    return ["", f" ** {title}:", "", rule, line(rows[0], True), rule, *body, rule]


def test_a_boxed_table_with_a_character_of_several_bytes_before_its_last_column(tmp_path, capsys):
    """Synthetic: the nsys 2025.3.1 demo's kernel, NVTX and NVTX GPU projection summaries (its
    `--format csv` stdout) drawn in boxes as the boxed file is, its range renamed `démo`. The
    projection summary's first column is the range: its `é` (two bytes, one character) left
    the bars after it off their byte places, and the row was refused as a cell outside its
    column. nsys pads by characters: the bars are found by characters."""
    lines = DEMO.read_text().replace(":demo", ":démo").splitlines()
    drawn = []
    for report in ("cuda_gpu_kern_sum", "nvtx_sum", "nvtx_gpu_proj_sum"):
        at = next(i for i, line in enumerate(lines) if f"/{report}.py]" in line) + 1
        end = lines.index("", at)  # (each report's CSV ends at a blank line)
        drawn += boxed_report(f"Summary ({report})", [row.split(",") for row in lines[at:end]])
    path = tmp_path / "boxed.txt"
    path.write_text("\n".join(drawn) + "\n")
    run, err = imported(path, tmp_path, capsys)
    ranges = run.table("ranges")
    assert list(ranges["name"]) == ["stage:démo"]
    assert (ranges["total_ns"].iloc[0], ranges["gpu_total_ns"].iloc[0]) == (494882583, 43036074)
    kernels = run.table("gpu_activities")
    assert kernels[["name", "total_ns", "calls"]].values.tolist() == [["addone", 33153, 3]]
    assert "`nsys stats --format table`" in err


def test_unboxing_finds_the_borders_by_characters_not_bytes():
    """Synthetic: a row with `é` (two bytes) and `前` (three) before its last column has every
    bar on a border blanked, as a row of ASCII does."""
    text = (
        "+-------+----------------------+-----------------+\n"
        "| Range | Total Proj Time (ns) | Range Instances |\n"
        "+-------+----------------------+-----------------+\n"
        "| démo  |             43036074 |               1 |\n"
        "| 前向    |                   12 |               3 |\n"
        "+-------+----------------------+-----------------+\n"
    ).encode()
    shape = boxed.unboxed(text)
    assert shape is not None
    assert shape.data.decode().splitlines()[2:] == [
        "  démo                43036074                 1  ",
        "  前向                        12                 3  ",
    ]


def test_windows_text_is_read_as_cp1252_only_when_it_is_no_utf8():
    shape = codepage.windows_text(b"a\nMatMul\x85 |\n")
    assert shape is not None and shape.data == "a\nMatMul… |\n".encode()
    assert shape.lines.tolist() == [1, 2, 3]
    assert codepage.windows_text("MatMul… |\n".encode()) is None  # UTF-8 already
    assert codepage.windows_text(b"x\x81y\n") is None  # a byte cp1252 leaves undefined
    assert codepage.windows_text(b"x\x85\x00y\n") is None  # a binary file


def test_a_windows_text_file_with_no_profiler_output_keeps_its_refusal(tmp_path, capsys):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"Rendered frame 0 in 118.63 seconds\x85\n")
    assert refusal(path, tmp_path, capsys).endswith("(it is not UTF-8 text (byte 34))")


def test_mpi_ranks_banners_and_tables_interleaved_read_as_their_headers_say(tmp_path, capsys):
    run, err = imported(MPI_CUT, tmp_path, capsys)
    ops = run.table("gpu_activities").set_index("name")
    gemm = ops.loc["volta_s884gemm_128x128_ldg8_f2f_tn"]
    assert gemm["kind"] == "kernel"  # its table sat under `cuda_gpu_mem_size_sum`'s banner
    assert (gemm["total_ns"], gemm["calls"], gemm["min_ns"]) == (4319583, 160, 16800)
    htod = ops.loc["[CUDA memcpy HtoD]"]  # its table sat under `cuda_gpu_kern_sum`'s banner
    assert (htod["kind"], htod["total_ns"], htod["calls"]) == ("memcpy", 6491234, 84)
    assert int((ops["kind"] == "kernel").sum()) == 29
    assert not ops.index.str.startswith("cu").any()  # the CUDA API table was left out
    assert "line 3: a table of calls (CUDA API or OS runtime) under the banner of" in err
    assert "line 42: a cuda_gpu_kern_sum table under the banner of cuda_gpu_mem_size_sum" in err


CODEX = NSYS / "codex-transcript-grep-sections-no-blank-after-cut.log"


def test_a_table_with_a_log_line_right_under_its_last_row_imports(tmp_path, capsys):
    run, err = imported(CODEX, tmp_path, capsys)
    gpu = run.table("gpu_activities").set_index("name")
    kernel = gpu.loc["nvkernel__Z11runTest_GPUiiPiS_i_F1L162_4"]
    assert (kernel["calls"], kernel["total_ns"], kernel["max_ns"]) == (2046, 2554738, 2080)
    # the cuda_gpu_mem_size_sum table the agent's next `exec` line follows: 33.587 MB each way
    assert gpu.loc["[CUDA memcpy HtoD]", "bytes"] == 33_587_000
    assert gpu.loc["[CUDA memcpy DtoH]", "total_ns"] == 2671570
    api = run.table("api_calls").set_index("name")
    assert len(api) == 7
    assert api.loc["cuStreamSynchronize", "calls"] == 4096
    assert api.loc["cuMemAlloc_v2", "total_ns"] == 180801
    assert "line 23: text right under the table's last row ('exec'" in err
