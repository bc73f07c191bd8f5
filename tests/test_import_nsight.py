"""`profgen import` of what nsys and ncu print by default, on real public captures (issue 14).

Every file here is real tool output copied from a public repository (tests/data/nsys/README.md
and tests/data/ncu/README.md say where from). Each is detected as the right kind, imported into
a run whose tables hold the file's values, and shown and re-rendered; error-only ncu output is
refused with one line that quotes ncu's own error.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from clirun import assert_refused, profgen

from profiler import store
from profiler.parse import detect

DATA = Path(__file__).parent / "data"
NSYS, NCU = DATA / "nsys", DATA / "ncu"
NSYS_TEXT = [
    NSYS / "2019.5.2" / "conv-kernel-stats.md",
    NSYS / "2020.4.3" / "omp-offload-stats.txt",
    NSYS / "2022.x" / "array_inc_a.output",
    NSYS / "2023.x" / "vector-add-stats-head.md",
    NSYS / "2023.2.3" / "derivative-stats.txt",
    NSYS / "2023.2.3" / "derivative-nvtx-gpu-proj-trace.txt",
    NSYS / "2023.x" / "fmha-kern-sum-flush-left-header.txt",
]
NCU_TEXT = [
    NCU / "2020.x" / "matrix_sums-2a.txt",
    NCU / "2020.x" / "reductions-1b.txt",
    NCU / "2022.x" / "matrix_sums.profile1-simple.output",
    NCU / "2022.x" / "matrix_sums.profile2-flags.output",
    NCU / "2022.x" / "nsight-profile.1.reductions-b-160K.output",
    NCU / "2023.x" / "ppc-max-flops.txt",
    NCU / "2023.x" / "ppc-cp5-matmul.txt",
]
NCU_ERRORS = [
    NCU / "2024.3.2" / "tornadovm-nvgpuctrperm-error.log",
    NCU / "2026.2.1" / "tornadovm-connect-error.log",
]


def imported(tmp_path: Path, capsys: pytest.CaptureFixture[str], *stages: str) -> store.Run:
    out = tmp_path / "out"
    argv = ["import", "--model", "m", "--out", out]
    result = profgen([*argv, *(a for s in stages for a in ("--stage", s))], capsys)
    assert result.code == 0, result.err
    path = Path(result.out.strip().splitlines()[-1])
    run = store.load_run(path)
    for table in ("stages", "gpu_activities", "api_calls", "metrics", "range_trace"):
        if table in run.tables:
            shown = profgen(["show", path, "--table", table], capsys)
            assert shown.code == 0 and "Traceback" not in shown.err, shown.err
    assert profgen(["report", path, "-o", tmp_path / "again.html"], capsys).code == 0
    return run


def test_every_real_capture_is_detected_as_its_kind():
    assert {detect.detect(p) for p in NSYS_TEXT} == {detect.NSYS_TEXT}
    assert {detect.detect(p) for p in NCU_TEXT + NCU_ERRORS} == {detect.NCU_TEXT}
    for csv in (NCU / "2025.3.1").glob("*.csv"):
        assert detect.detect(csv) == detect.NCU_CSV


def test_nsys_text_captures_import_with_their_values(tmp_path, capsys):
    stages = [f"s{i}={p}" for i, p in enumerate(NSYS_TEXT)]
    run = imported(tmp_path, capsys, *stages)
    assert list(run.table("stages")["stage"]) == [f"s{i}" for i in range(len(NSYS_TEXT))]
    act = run.table("gpu_activities").set_index(["stage", "name"])
    # values as the files print them (2019.5.2 in ns; 2022.x with thousands separators)
    assert act.loc[("s0", "conv_forward_kernel"), "total_ns"] == 104_424_277
    assert act.loc[("s0", "[CUDA memcpy DtoH]"), "calls"] == 6
    assert act.loc[("s2", "inc(int *, unsigned long)"), "total_ns"] == 883_936
    assert act.loc[("s3", "vectorAdd(const float *, const float *, float *, int)"), "calls"] == (
        1_010
    )
    # 2020.4.3's gputrace text: the kernel's 222,080 ns, whatever the summary says
    assert act.loc[("s1", "__omp_offloading_30_736b0b47_main_l20"), "total_ns"] == 222_080
    api = run.table("api_calls").set_index(["stage", "name"])
    assert api.loc[("s4", "cudaMalloc"), "total_ns"] == 59_962_131
    assert ("s2", "sem_wait") not in api.index  # an OS runtime row is no CUDA API call
    ranges = run.table("ranges").set_index(["stage", "name"])
    assert ranges.loc[("s4", "Forward Sine Kernel Launch"), "total_ns"] == 224_515
    trace = run.table("range_trace")
    proj = trace[trace["stage"] == "s5"]
    assert len(proj) == 9 and proj["gpu_start_ns"].min() == 282_734_719
    # a kern sum pasted with its header flush left of its rule: every column in its place
    fmha = act.loc["s6"]
    assert fmha.loc["_gemm_mha_v2_0x7d506f90cde376753e5ca2590e8e79f6", "total_ns"] == 315_204_989
    assert list(fmha["calls"]) == [1_589, 4_767, 3_178, 1_589, 1_589, 1_589]
    assert list(fmha["max_ns"])[:2] == [199_745, 37_568]
    assert fmha.index[1].endswith("(unsigne…")  # the name as nsys cut it


def test_ncu_text_captures_import_with_their_values(tmp_path, capsys):
    stages = [f"k{i}={p}" for i, p in enumerate(NCU_TEXT)]
    run = imported(tmp_path, capsys, *stages)
    m = run.table("metrics")
    assert m.groupby("stage").size().to_dict() == {
        "k0": 2, "k1": 3, "k2": 2, "k3": 2, "k4": 3, "k5": 1, "k6": 1,
    }  # fmt: skip
    one = m.set_index(["stage", "kernel_id"])
    assert one.loc[("k0", 1), "duration_ns"] == 3_320_000  # Duration msecond 3.32
    assert one.loc[("k2", 0), "dram_throughput_pct"] == 23.52
    assert one.loc[("k5", 0), "duration_ns"] == 1_130_000_000  # Duration second 1.13
    assert one.loc[("k6", 0), "registers"] == 100
    stages_table = run.table("stages").set_index("stage")
    assert stages_table.loc["k0", "technique"] == "imported from Nsight Compute output"


@pytest.mark.parametrize("path", NCU_ERRORS, ids=[p.name for p in NCU_ERRORS])
def test_error_only_ncu_output_is_refused_quoting_ncu(tmp_path, capsys, path):
    said = next(ln for ln in path.read_text().splitlines() if ln.startswith("==ERROR=="))
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", out], capsys)
    assert_refused(result, 2, str(path), "ncu profiled no kernel", said[:80])
    assert not out.exists() or not any(out.iterdir())


def test_decimal_comma_capture_imports_saying_how_it_was_read(tmp_path, capsys):
    """Two `nsys` runs typed after prompts, each printing `Generating '...'` (nsys prints it
    once a run): a capture of two runs, the first of which failed before its tables; the
    second's four tables printed in a pt_BR locale (`81,0`, `33.916.556.517`)."""
    path = NSYS / "2023.x" / "adi-gpu-profile-allgpu-ptbr.txt"
    assert detect.detect(path) == detect.CAPTURE
    run = imported(tmp_path, capsys, f"s={path}")
    api = run.table("api_calls").set_index("name")
    assert len(api) == 6 and api.loc["cudaMemcpy", "total_ns"] == 7_613_179_044
    assert (api.loc["cudaMalloc", "calls"], api.loc["cudaMalloc", "max_ns"]) == (7, 72_873_235)
    act = run.table("gpu_activities").set_index("name")
    thomas = act.loc["parallelThomas(double *, unsigned long, double *, double *, double *)"]
    assert (thomas["total_ns"], thomas["calls"]) == (22_879_503_708, 22_002)
    dtoh = act.loc["[CUDA memcpy DtoH]"]
    assert (dtoh["total_ns"], dtoh["calls"]) == (7_459_745_893, 1_619)
    assert dtoh["bytes"] == 51_859_821_000  # `51859,821` MB
    said = run.meta["inputs"][0]["warnings"]
    assert len(said) == 4 and all("read with a decimal comma" in w for w in said)
    assert "line 52: the cuda_gpu_mem_size_sum table's" in said[3]


def test_nvtx_projection_none_row_is_the_one_left_out(tmp_path, capsys):
    path = NSYS / "2023.2.3" / "derivative-nvtx-gpu-proj-trace.txt"
    rows = [ln for ln in path.read_text().splitlines() if re.match(r" \S", ln) and "  " in ln]
    names = {re.split(r"\s{2,}", r.strip())[0] for r in rows if not r.strip().startswith("-")}
    names -= {"Name"}
    run = imported(tmp_path, capsys, f"p={path}")
    assert set(run.table("range_trace")["name"]) == names - {"None"}


def test_reports_of_two_runs_interleaved_under_labels_are_two_stages(tmp_path, capsys):
    """A README closes each fence right under the table (the fence line is no row) and quotes
    each report twice, before and after a change, each fence under its `(Before)` or `(After)`
    line, the two runs' reports interleaved: one stage per label (was: the first table of each
    report read, so the run took the memory copies of `(After)`, the only by-time table, beside
    the API calls and kernel of `(Before)`)."""
    path = NSYS / "2020.x" / "nsys-before-after-fenced.md"
    run = imported(tmp_path, capsys, f"s={path}")
    stages = run.table("stages")
    assert list(stages["title"]) == ["s, run 1 of 2: (Before)", "s, run 2 of 2: (After)"]
    assert "its tables at lines 32, 56, 74" in stages["technique"].iloc[0]
    api = run.table("api_calls").set_index(["stage", "name"])
    names = ["cudaDeviceSynchronize", "cudaMallocManaged", "cudaFree", "cudaLaunchKernel"]
    assert list(api.loc["s.1"].index) == names
    assert list(api.loc["s.2"].index) == [names[1], names[0], *names[2:]]
    assert api.loc[("s.1", "cudaLaunchKernel"), "total_ns"] == 44_684  # the row above the fence
    assert api.loc[("s.1", "cudaDeviceSynchronize"), "total_ns"] == 2_272_873_106  # line 35
    assert api.loc[("s.2", "cudaDeviceSynchronize"), "total_ns"] == 139_151_459  # line 48
    assert api.loc[("s.2", "cudaMallocManaged"), "calls"] == 3
    act = run.table("gpu_activities").set_index(["stage", "name"])
    kernel = "addVectorsInto(float*, float*, float*, int)"
    assert (act.loc[("s.1", kernel), "total_ns"], act.loc[("s.1", kernel), "calls"]) == (
        2_272_862_746,
        1,
    )
    assert act.loc[("s.2", kernel), "total_ns"] == 139_197_810  # line 68
    assert list(act.loc["s.1"].index) == [kernel]  # (Before) gives its copies by size only
    htod = act.loc[("s.2", "[CUDA Unified Memory memcpy HtoD]")]
    assert (htod["total_ns"], htod["calls"]) == (68_810_237, 2_304)  # line 86, by time
    assert pd.isna(htod["bytes"])  # (After) gives no table by size


def test_reports_of_two_runs_interleaved_without_labels_are_refused(tmp_path, capsys):
    """The same README with the `(Before)`/`(After)` lines taken out: nothing tells the runs
    apart, and reading the first table of each report would mix them (the by-time copies of
    the second run beside the first run's calls), so the file is refused."""
    text = (NSYS / "2020.x" / "nsys-before-after-fenced.md").read_text()
    path = tmp_path / "unlabelled.md"
    path.write_text(text.replace("(Before)\n", "\n").replace("(After)\n", "\n"))
    argv = ["import", "--model", "m", "--out", tmp_path / "o", "--stage", f"s={path}"]
    result = profgen(argv, capsys)
    assert result.code != 0
    assert "prints the cuda_api_sum report again at line 44" in result.err
    assert "cuda_gpu_kern_sum table at line 56 comes after that" in result.err


def test_ncu_csv_closed_by_a_fence_in_a_readme_ends_there(tmp_path, capsys):
    # nv-nsight-cu-cli 2020's --csv details page in a README, its fence closed under the last
    # row and prose after it: the table ends at the fence (a second block further on is left)
    path = NCU / "2020.x" / "xplacer-readme-head.md"
    run = imported(tmp_path, capsys, f"s={path}")
    one = run.table("metrics").set_index("kernel_id").loc[0]
    assert len(run.table("metrics")) == 1
    assert one["name"] == "cuda_compute_step_factor(int,float*,float*,float*)"
    assert (one["duration_ns"], one["registers"]) == (8_992, 20)  # Duration nsecond 8992
    assert (one["sm_throughput_pct"], one["achieved_occupancy_pct"]) == (22.48, 48.0)
    assert one["dram_throughput_pct"] == 46.47  # line 68: "SOL FB","%","46.47" (dram__throughput)


def test_nv_nsight_cu_cli_2019_csv_without_id_columns_is_read_by_launch(tmp_path, capsys):
    # 2019's --csv details page starts "Kernel Name","Kernel Time": no ID and no process
    # columns; the program's output and `==PROF== Report:` come first. Launches are told apart
    # by kernel name and time, numbered in file order
    path = NCU / "2019.x" / "gpuvirt-backprop-stats.txt"
    assert detect.detect(path) == detect.NCU_CSV
    run = imported(tmp_path, capsys, f"s={path}")
    names = run.table("metrics").set_index("kernel_id")["name"].to_dict()
    assert names == {0: "bpnn_layerforward_CUDA", 1: "bpnn_adjust_weights_cuda"}
    counters = run.table("counters").set_index(["kernel_id", "metric"])["value"]
    assert counters[(0, "EXEC")] == 4_161_536 and counters[(1, "FP64")] == 524_300
    assert len(counters) == 2 * 12  # 12 pipelines each


def test_ncu_text_with_a_decimal_comma_is_read_so_and_said(tmp_path, capsys):
    # nv-nsight-cu-cli 2020 run in a locale that writes `10,55` and `13 181 137` (was: refused,
    # saying to print the numbers with LC_ALL=C)
    path = NCU / "2020.x" / "handson-ax-decimal-comma.txt"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    assert result.code == 0, result.err
    said = (
        "line 5: the `GPU Speed Of Light` section's numbers are read with a decimal comma "
        "('875,84'): ncu ran in a locale that writes them so"
    )
    assert result.err == f"profgen: warning: stage s: {path}: {said}\n"
    run = store.load_run(result.out.strip())
    m = run.table("metrics").iloc[0]
    assert (m["name"], m["duration_ns"], m["sm_throughput_pct"]) == ("ax_kernel", 10_550_000, 3.34)
    c = run.table("counters").set_index("metric")["value"]
    assert (c["Elapsed Cycles"], c["SM Active Cycles"]) == (13_181_137, 12_837_852.30)
    assert (c["Memory Frequency"], c["SOL FB"], len(c)) == (875.84, 84.58, 10)


def test_ncu_text_whose_section_mixes_c_numbers_with_commas_is_refused_with_the_hint(
    tmp_path, capsys
):
    # Synthetic: the decimal-comma file with one cell as C writes it (`1.25`): its section is of
    # no one locale, so it is not read with a decimal comma, and the refusal says how to print
    text = (NCU / "2020.x" / "handson-ax-decimal-comma.txt").read_text()
    path = tmp_path / "mixed.txt"
    path.write_text(text.replace("  1,25\n", "  1.25\n"))
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    said = "line 6, metric 'SOL FB': '84,58' is not a number"  # the first mapped metric's row
    assert_refused(result, 2, str(path), said, "decimal comma", "LC_ALL=C")


def test_one_run_fenced_twice_under_one_heading_is_two_stages_in_turn(tmp_path, capsys):
    """A real 2020.x capture pasted twice, each copy in a fence under the same `## Output`
    heading: the labels do not tell the runs apart, but each copy's first table is its first
    report again after a fence, so each copy is a run (in turn), titled by its heading; without
    the fences and headings nothing parts them, and every later table is of a report read
    already: the first of each is read, with a warning."""
    source = NSYS / "2020.x" / "meanpaper-m2-blank-lines-in-tables.txt"
    text = source.read_text()
    line = next(ln for ln in text.splitlines() if ln.strip().endswith(" cudaMemcpy"))
    total, calls = int(line.split()[1]), int(line.split()[2])  # the first CUDA API table's
    fenced = tmp_path / "twice.md"
    fenced.write_text(f"## Output\n```\n{text}```\n\n## Output\n```\n{text}```\n")
    run = imported(tmp_path / "a", capsys, f"s={fenced}")
    titles = list(run.table("stages")["title"])
    assert titles == ["s, run 1 of 2: Output", "s, run 2 of 2: Output"]
    api = run.table("api_calls").set_index(["stage", "name"])
    for stage in ("s.1", "s.2"):
        got = api.loc[(stage, "cudaMemcpy")]
        assert (got["total_ns"], got["calls"]) == (total, calls)
    plain = tmp_path / "plain.txt"
    plain.write_text(text + text)
    argv = ["import", "--model", "m", "--out", tmp_path / "b", "--stage", f"s={plain}"]
    result = profgen(argv, capsys)
    assert result.code == 0 and "profgen reads the first table of each report" in result.err
    run = store.load_run(Path(result.out.strip().splitlines()[-1]))
    assert list(run.table("stages")["stage"]) == ["s"]
    assert run.table("api_calls").set_index("name").loc["cudaMemcpy", "total_ns"] == total
