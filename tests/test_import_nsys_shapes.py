"""`profgen import` of `nsys stats` output in shapes the column-text reader did not take as they
are: the `--stats=true` output of several MPI ranks printed into one stream, whose banners name
other reports than the tables under them. The files are in tests/data/nsys/2023.x (its README says
where each comes from)."""

from __future__ import annotations

from pathlib import Path

from test_import_pasted import imported

NSYS = Path(__file__).parent / "data" / "nsys" / "2023.x"
MPI_CUT = NSYS / "cme213-mpi-ranks-interleaved-cut.txt"


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
