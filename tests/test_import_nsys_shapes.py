"""`profgen import` of `nsys stats` output in shapes the column-text reader did not take as they
are: a table drawn in a box (`--format table`) and written in the Windows code page, and the
`--stats=true` output of several MPI ranks printed into one stream, whose banners name other
reports than the tables under them. The files are in tests/data/nsys/2023.x (its README says
where each comes from)."""

from __future__ import annotations

from pathlib import Path

from test_import_pasted import imported
from test_import_refusals import refusal

from profiler.parse import boxed, codepage

NSYS = Path(__file__).parent / "data" / "nsys" / "2023.x"
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
