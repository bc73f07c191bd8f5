"""`profgen import` of nvprof output end to end (issue 14), on the real files in tests/data/nvprof.

The LeNet study's eight logs (the document profgen's LeNet study comes from, hyjwpk/LeNet5) are
imported as one run and every row of every table is checked against the log's own text, read
here by a reference reader that converts units with `Decimal` (exact), independent of the
parser under test.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from clirun import assert_refused, profgen

from profiler import schema, store
from profiler.parse import gpuops

NVPROF = Path(__file__).parent / "data" / "nvprof"
LENET = NVPROF / "9.x" / "lenet"
STEPS = [
    "01-cuda-baseline",
    "02-image-parallel",
    "03-conv-kernels",
    "04-fc-kernels",
    "05-no-redundant-syncs",
    "06-pinned-memory",
    "07-fc-coalesced",
    "08-overlap-fusion",
]
NS = {"ns": Decimal(1), "us": Decimal(10**3), "ms": Decimal(10**6), "s": Decimal(10**9)}


def ns(cell: str) -> Decimal:
    """`1.40806s` -> Decimal(1408060000), exactly."""
    unit = next(u for u in ("ns", "us", "ms", "s") if cell.endswith(u))
    return Decimal(cell[: -len(unit)]) * NS[unit]


def reference_rows(log: Path, skip: int = 0) -> dict[str, list[dict[str, object]]]:
    """The summary rows of a log as it prints them, by row type: the reference the import must
    give back. `skip`: how many summaries come before the one read (a log of several runs)."""
    lines = log.read_text().splitlines()
    header = [i for i, line in enumerate(lines) if "Time(%)" in line][skip]
    rows: dict[str, list[dict[str, object]]] = {"GPU activities": [], "API calls": []}
    kind = ""
    for line in lines[header + 1 :]:
        body = line.strip()
        if not body or body.startswith("```"):
            break  # the end of the table (a blank line, or the fence of a README's block)
        if body.startswith(("GPU activities:", "API calls:")):
            kind, body = body.split(":", 1)
        pct, total, calls, avg, low, high, name = body.split(None, 6)
        rows[kind].append(
            {
                "name": name,
                "time_pct": float(pct[:-1]),
                "total_ns": int(ns(total)),
                "calls": int(calls),
                "avg_ns": ns(avg),
                "min_ns": int(ns(low)),
                "max_ns": int(ns(high)),
            }
        )
    return rows


def run_import(capsys: pytest.CaptureFixture[str], out: Path, *stages: str) -> Path:
    argv = ["import", "--model", "lenet", "--out", out]
    argv += [a for stage in stages for a in ("--stage", stage)]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    return Path(result.out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def lenet_run(tmp_path_factory: pytest.TempPathFactory) -> store.Run:
    from profiler.importer import import_run

    stages = [(step, str(LENET / f"{step}.txt")) for step in STEPS]
    path = import_run("lenet", stages, {}, tmp_path_factory.mktemp("runs"))
    return store.load_run(path)


def test_lenet_logs_import_as_one_run(lenet_run):
    stages = lenet_run.table("stages")
    assert list(stages["stage"]) == STEPS and list(stages["order"]) == list(range(8))
    kinds = {i["stage"]: i["kind"] for i in lenet_run.meta["inputs"]}
    assert set(kinds.values()) == {"nvprof"}
    assert list(dict.fromkeys(lenet_run.table("gpu_activities")["stage"])) == STEPS
    assert list(dict.fromkeys(lenet_run.table("api_calls")["stage"])) == STEPS


@pytest.mark.parametrize("step", STEPS)
def test_lenet_tables_give_back_the_logged_values(lenet_run, step):
    """Every row of both tables of every step, to the nanosecond (Avg, printed with more digits
    than a nanosecond in a few rows, to within half of one)."""
    assert_logged(lenet_run, step, reference_rows(LENET / f"{step}.txt"))


def assert_logged(run: store.Run, step: str, expected: dict[str, list[dict[str, object]]]) -> None:
    """Stage `step` of `run` has the summary rows `expected` (`reference_rows`), and no others."""
    for table, kind in (("gpu_activities", "GPU activities"), ("api_calls", "API calls")):
        got = run.table(table)
        got = got[got["stage"] == step]
        assert len(got) == len(expected[kind]), (step, table)
        by_name = {row["name"]: row for row in got.to_dict("records")}
        for want in expected[kind]:
            row = by_name[want["name"]]
            for column in ("total_ns", "calls", "min_ns", "max_ns"):
                assert row[column] == want[column], (step, want["name"], column)
            assert abs(Decimal(repr(row["avg_ns"])) - want["avg_ns"]) <= Decimal("0.5")
            assert row["time_pct"] == pytest.approx(want["time_pct"], abs=1e-9)


def test_lenet_values_read_by_hand(lenet_run):
    """A few cells converted by hand from the logs' text."""
    api = lenet_run.table("api_calls")
    sync = api[(api["stage"] == "01-cuda-baseline") & (api["name"] == "cudaDeviceSynchronize")]
    # `66.33%  5.07250s  70001  72.463us  1.1000us  4.5818ms  cudaDeviceSynchronize`
    assert sync[["total_ns", "calls", "min_ns", "max_ns"]].iloc[0].tolist() == [
        5_072_500_000,
        70_001,
        1_100,
        4_581_800,
    ]
    gpu = lenet_run.table("gpu_activities")
    fused = gpu[gpu["stage"] == "08-overlap-fusion"]
    conv2 = fused[fused["name"] == "Conv2_ReLu(float*, float*, float*, float*, float*)"].iloc[0]
    # `42.50%  12.128ms  16  757.97us  628.96us  920.99us  Conv2_ReLu(float*, ...)`
    assert (conv2["total_ns"], conv2["calls"], conv2["min_ns"], conv2["max_ns"]) == (
        12_128_000,
        16,
        628_960,
        920_990,
    )
    pinned = gpu[(gpu["stage"] == "06-pinned-memory") & (gpu["kind"] == "memcpy")]
    # `23.97%  4.8775ms  11  443.41us ... [CUDA memcpy HtoD]`, `0.30%  60.515us  1 ... DtoH`
    assert dict(zip(pinned["copy_kind"], pinned["total_ns"], strict=True)) == {
        "HtoD": 4_877_500,
        "DtoH": 60_515,
    }
    kernels = gpu[(gpu["stage"] == "01-cuda-baseline") & (gpu["kind"] == "kernel")]
    assert sorted(kernels["calls"]) == [20_000, 20_000, 30_000]  # MaxPool, Conv_ReLu, Linear_ReLu


def test_a_document_of_several_runs_imports_each_run_as_a_stage(tmp_path, capsys):
    """The LeNet study's README holds its eight logs, one per step: imported as the stages
    `lenet.1` to `lenet.8`, each giving back its own log's rows (the logs in tests/data are line
    ranges of the README), titled with the stage's title, its place and the command profiled."""
    readme = LENET / "hyjwpk-LeNet5-README.md"
    argv = ["import", "--model", "m", "--out", tmp_path, "--stage", f"lenet={readme}"]
    result = profgen([*argv, "--title", "lenet=LeNet-5", "--repeats", "lenet=10000"], capsys)
    assert result.code == 0 and result.err == "", result.err
    run = store.load_run(result.out.strip())
    stages = run.table("stages")
    keys = [f"lenet.{n}" for n in range(1, 9)]
    assert list(stages["stage"]) == keys and run.meta["stages"] == keys
    assert list(stages["title"]) == [f"LeNet-5, run {n} of 8: ./infer" for n in range(1, 9)]
    assert list(stages["repeats"]) == [10_000] * 8  # --repeats of the file, for each run
    firsts = [31, 58, 85, 113, 143, 172, 202, 232]  # each run's header line in the README
    assert list(stages["technique"]) == [
        f"imported from nvprof output: run {n} of 8, its tables from line {line}"
        for n, line in enumerate(firsts, 1)
    ]
    for key, step in zip(keys, STEPS, strict=True):
        assert_logged(run, key, reference_rows(LENET / f"{step}.txt"))
    gpu = run.table("gpu_activities").set_index(["stage", "name"])
    # README line 32: `52.43%  352.50ms  30000  11.749us  7.5520us  28.448us  Linear_ReLu(...)`
    linear = gpu.loc[("lenet.1", "Linear_ReLu(float*, float*, float*, float*, int, bool)")]
    assert linear[["total_ns", "calls", "min_ns", "max_ns"]].tolist() == [
        352_500_000,
        30_000,
        7_552,
        28_448,
    ]
    # its time: the summed GPU time (352.50 + 226.20 + 72.233 + 13.746 + 7.6724 ms) a repeat
    assert stages["median_ns"].iloc[0] == round(672_351_400 / 10_000)


def test_each_nvprof_run_of_a_log_is_a_stage(tmp_path, capsys):
    """Seven `nvprof ./nbody` runs, one per commit (nichitapavel/cuda): seven stages, in file
    order, each with its own run's rows; the first three have API calls only (`No kernels were
    profiled.`), the last profiles `./nbody 15`."""
    log = NVPROF / "9.x" / "nichitapavel-nbody-runs.txt"
    argv = ["import", "--model", "m", "--out", tmp_path, "--stage", f"nb={log}"]
    result = profgen(argv, capsys)
    um = log.read_text().split("\n").index("==297== Unified Memory profiling result:") + 1
    said = f"line {um}: nvprof's Unified Memory profiling result (line {um}) left out"
    assert result.code == 0 and result.err.count("\n") == 1 and said in result.err, result.err
    run = store.load_run(result.out.strip())
    stages = run.table("stages")
    assert list(stages["stage"]) == [f"nb.{n}" for n in range(1, 8)]
    assert stages["title"].iloc[0] == "nb, run 1 of 7: ./nbody"
    assert stages["title"].iloc[6] == "nb, run 7 of 7: ./nbody 15"
    for skip in range(7):
        assert_logged(run, f"nb.{skip + 1}", reference_rows(log, skip))
    gpu = run.table("gpu_activities")
    assert set(gpu["stage"]) == {"nb.4", "nb.5", "nb.6", "nb.7"}
    last = gpu[gpu["stage"] == "nb.7"].set_index("name")
    # line 191: `99.99%  1.10627s  10  110.63ms  106.67ms  124.52ms  bodyForce(Body*, float, int)`
    # line 192: `0.01%  90.783us  10  9.0780us  8.7680us  10.624us  integratePosition(...)`
    assert last.loc["bodyForce(Body*, float, int)", ["total_ns", "calls"]].tolist() == [
        1_106_270_000,
        10,
    ]
    assert last.loc["integratePosition(Body*, float, int)", "total_ns"] == 90_783
    api = run.table("api_calls")
    first = api[api["stage"] == "nb.1"].set_index("name")
    assert len(first) == 7  # lines 22-28
    # line 22: `API calls:   99.58%  159.25ms  1  159.25ms  159.25ms  159.25ms  cudaMallocManaged`
    assert first.loc["cudaMallocManaged", ["total_ns", "calls"]].tolist() == [159_250_000, 1]


def test_summaries_pasted_one_per_step_without_nvprof_lines_are_a_stage_each(tmp_path, capsys):
    """A README of optimisation steps quotes an `nvprof.exe` summary under two of its steps,
    each in a fenced block of its own, with no `==PID==` or `Profiling result:` line (it was
    refused as one run with two summaries, one per device?): each summary is a run, so a
    stage, with every row as printed."""
    log = NVPROF / "9.x" / "voxel-raytrace-readme-two-summaries.md"
    result = profgen(["import", "--model", "m", "--out", tmp_path, "--stage", f"v={log}"], capsys)
    assert result.code == 0 and result.err == "", result.err
    run = store.load_run(result.out.strip())
    stages = run.table("stages")
    assert list(stages["stage"]) == ["v.1", "v.2"]
    # The first is under `## Change how we initialize CuRAND` (line 29), the second under no
    # heading of its own: the same step's text (lines 41-45) is between them.
    titles = ["v, run 1 of 2: Change how we initialize CuRAND", "v, run 2 of 2"]
    assert list(stages["title"]) == titles
    for skip in range(2):
        assert_logged(run, f"v.{skip + 1}", reference_rows(log, skip))
    gpu = run.table("gpu_activities").set_index(["stage", "name"])["total_ns"]
    # lines 36 and 49: `42.60%  8.30312s ... render_init(...)`, then `0.02%  1.6980ms ...`
    init = "render_init(int, int, curandStateXORWOW*)"
    assert (gpu[("v.1", init)], gpu[("v.2", init)]) == (8_303_120_000, 1_698_000)


def test_summaries_pasted_one_per_step_are_titled_by_their_step(tmp_path, capsys):
    """The README above with its second summary moved under the step heading after it (`## Use
    compute_61, sm_61`) and a block holding a shell comment (`# ...`, no heading: it is inside
    a fence) between: each stage's title names the heading nearest above its summary."""
    text = (NVPROF / "9.x" / "voxel-raytrace-readme-two-summaries.md").read_text()
    first, _, rest = text.partition("Turns out `render_init`")
    second = rest[rest.index("```\n") : rest.index("\n- 64 registers")]
    path = tmp_path / "steps.md"
    path.write_text(
        first + "## Use compute_61, sm_61\n\n```\n# nvprof.exe ./render 1200 800\n```\n\n" + second
    )
    result = profgen(["import", "--model", "m", "--out", tmp_path / "o", "--stage", f"v={path}"],
                     capsys)  # fmt: skip
    assert result.code == 0 and result.err == "", result.err
    stages = store.load_run(result.out.strip()).table("stages")
    assert list(stages["title"]) == [
        "v, run 1 of 2: Change how we initialize CuRAND",
        "v, run 2 of 2: Use compute_61, sm_61",
    ]


def test_runs_with_no_table_are_left_out_and_said_so(tmp_path, capsys):
    """A log of three runs (real logs, one after another), the first of which profiled no
    kernel and printed no table: the other two are the stages `s.1` and `s.2`, and the first is
    left out, said in the technique of the stage after it and as a warning."""
    empty = (NVPROF / "9.x" / "bfs-gpu-summary-no-kernels.txt").read_text()
    stream = (NVPROF / "9.x" / "cuda-stream-summary.txt").read_text()
    path = tmp_path / "three.txt"
    path.write_text(empty + stream + stream.replace("==8123==", "==8124=="))
    result = profgen(["import", "--model", "m", "--out", tmp_path / "o", "--stage", f"s={path}"],
                     capsys)  # fmt: skip
    assert result.code == 0, result.err
    why = "nvprof output with no table profgen reads; nvprof says: 'No kernels were profiled.'"
    um = "line 7: nvprof's Unified Memory profiling result (line 7) left out: profgen has no table"
    assert result.err == (
        f"profgen: warning: stage s: {path}: line 4: nvprof run left out: {why}\n"
        f"profgen: warning: stage s: {path}: {um} for it\n"
    )
    run = store.load_run(result.out.strip())
    stages = run.table("stages")
    second = len(empty.splitlines()) + len(stream.splitlines()) + 4  # its header line
    assert list(stages["technique"]) == [
        f"imported from nvprof output: run 1 of 2, its tables from line 19; runs left out: "
        f"line 4 ({why})",
        f"imported from nvprof output: run 2 of 2, its tables from line {second}",
    ]
    expected = reference_rows(NVPROF / "9.x" / "cuda-stream-summary.txt")
    assert_logged(run, "s.1", expected)
    assert_logged(run, "s.2", expected)


def test_an_empty_run_beside_one_with_tables_is_said_left_out(tmp_path, capsys):
    """JuliaGPU/CUDA.jl#371: a run whose `Profiling result:` (line 7) is followed by `No kernels
    were profiled.` only, then another run's summary (quoted from the docs). The file is read as
    one run, its tables the second's; the first is said left out in nvprof's words (it was
    passed over without a word)."""
    path = NVPROF / "9.x" / "juliagpu-371-empty-run-then-quoted-summary.md"
    result = profgen(["import", "--model", "m", "--out", tmp_path, "--stage", f"s={path}"], capsys)
    assert result.code == 0, result.err
    why = (
        "nvprof output with no table profgen reads; nvprof says: 'No kernels were profiled.' / "
        "'No API activities were profiled.'"
    )
    assert result.err == f"profgen: warning: stage s: {path}: line 7: nvprof run left out: {why}\n"
    run = store.load_run(result.out.strip())
    gpu, api = run.table("gpu_activities"), run.table("api_calls")
    # `GPU activities:  100.00%  247.61ms  1  247.61ms  247.61ms  247.61ms  ptxcall_gpu_add1__1`
    assert gpu[["name", "total_ns", "calls"]].values.tolist() == [
        ["ptxcall_gpu_add1__1", 247_610_000, 1]
    ]
    # `0.00%  960ns  2  480ns  358ns  602ns  cuCtxGetCurrent`, the last of five
    assert len(api) == 5 and api.iloc[-1][["name", "total_ns", "calls", "min_ns"]].tolist() == [
        "cuCtxGetCurrent", 960, 2, 358
    ]  # fmt: skip


def test_a_last_run_that_ended_in_nvprofs_error_is_said_to_be_left_out(tmp_path, capsys):
    """A log of eight runs whose last one ends at `==12181== Error: Internal profiling error
    1749:999.` before any `Profiling result:` line: the seven runs with tables are the stages,
    and the last is said to be left out, quoting nvprof's error (it was dropped without a
    word), in a warning and in the technique of the stage before it."""
    path = NVPROF / "8.x" / "bspgpu-gt630-units-row-runs.txt"
    result = profgen(["import", "--model", "m", "--out", tmp_path, "--stage", f"s={path}"], capsys)
    assert result.code == 0, result.err
    why = (
        "it ended before nvprof's `Profiling result:`, with no table; nvprof says: "
        "'Error: Internal profiling error 1749:999.'"
    )
    assert result.err == f"profgen: warning: stage s: {path}: line 50: nvprof run left out: {why}\n"
    run = store.load_run(result.out.strip())
    stages = run.table("stages")
    assert list(stages["stage"]) == [f"s.{n}" for n in range(1, 8)]
    assert stages["technique"].iloc[-1] == (
        f"imported from nvprof output: run 7 of 7, its tables from line 46; runs left out: "
        f"line 50 ({why})"
    )
    last = run.table("gpu_activities").query("stage == 's.7'").set_index("name")
    assert last.loc["matSum(float*, float*, float*, int)", "total_ns"] == 118_124_500
    assert last.loc["[CUDA memcpy HtoD]", ["total_ns", "calls"]].tolist() == [166_908_200, 2]


def test_a_run_key_given_as_a_stage_too_is_refused(tmp_path, capsys):
    readme = LENET / "hyjwpk-LeNet5-README.md"
    argv = ["import", "--model", "m", "--out", tmp_path, "--stage", f"s={readme}"]
    result = profgen([*argv, "--stage", f"s.2={LENET / '02-image-parallel.txt'}"], capsys)
    assert_refused(result, 2, "--stage s: its file holds 8 profiler runs, each imported as a stage "
                   "(s.1 to s.8), but the key 's.2' is given with --stage too")  # fmt: skip
    assert not any(tmp_path.iterdir())


def test_lenet_report_names_every_step(lenet_run):
    report = (lenet_run.path / "report.html").read_text()
    for step in STEPS:
        assert step in report
    assert "Linear_ReLu" in report and "cudaHostAlloc" in report


def test_other_layouts_import_in_one_run(tmp_path, capsys):
    """A text gpu trace, CSV metrics, an old CSV summary, an API-only summary, an NVTX range
    summary and a text API trace, one stage each."""
    path = run_import(
        capsys,
        tmp_path,
        f"trace={NVPROF / '9.x' / 'cheby-text-gpu-trace.txt'}",
        f"metrics={NVPROF / '8.x' / 'j3d27pt-csv-metrics.csv'}",
        f"summary={NVPROF / '8.x' / 'jacobi-csv-summary.csv'}",
        f"api={NVPROF / '9.x' / 'bfs-api-summary-only.txt'}",
        f"nvtx={NVPROF / '9.x' / 'psyclone-readme-nvtx-ranges.md'}",
        f"apitrace={NVPROF / '9.x' / 'vector-add-text-api-trace.txt'}",
    )
    run = store.load_run(path)
    trace = run.table("gpu_trace")
    assert set(trace["stage"]) == {"trace"} and len(trace) == 7
    assert list(trace["duration_ns"].iloc[:2]) == [29_925_000, 29_949_000]  # 29.925ms, 29.949ms
    act = run.table("gpu_activities")  # from the trace, and from the summary
    kernels = act[(act["stage"] == "trace") & (act["kind"] == "kernel")]
    assert kernels["calls"].tolist() == [2] and kernels["total_ns"].tolist() == [
        4_385_000 + 4_579_900
    ]
    assert act[act["stage"] == "summary"]["total_ns"].iloc[0] == 122_472_626
    metrics = schema.validate(run.table("metrics"), schema.METRICS)
    assert (
        metrics["stage"].tolist() == ["metrics"] and metrics["fp32_flops"].iloc[0] == 36_134_886_144
    )
    api = run.table("api_calls")
    assert api[api["stage"] == "api"]["total_ns"].iloc[0] == 972_190_000  # cudaMallocManaged
    # the API trace summarised: 624.30ms of cudaMallocHost, 90 cudaMallocAsync calls
    calls = api[api["stage"] == "apitrace"].set_index("name")
    assert calls.loc["cudaMallocHost", "total_ns"] == 624_300_000
    assert calls.loc["cudaMallocAsync", ["calls", "total_ns"]].tolist() == [90, 25_227_512]
    assert calls.loc["cudaLaunchKernel", "calls"] == 30
    ranges = run.table("ranges")
    assert ranges["stage"].tolist() == ["nvtx"] and ranges["total_ns"].tolist() == [758_780]


def test_a_summary_whose_shares_have_no_percent_sign(tmp_path, capsys):
    """The oldest summary layout (CSCfi/csc-user-guide: a prompt, `======== Profiling result:`,
    single spaces) prints `Time(%)` cells as bare numbers, `49.52`: read as the shares they are,
    every row as the log prints it."""
    log = NVPROF / "8.x" / "csc-dct8x8-bare-percent-summary.txt"
    run = store.load_run(run_import(capsys, tmp_path, f"dct={log}"))
    act = run.table("gpu_activities")
    assert len(act) == 12 and act["time_pct"].sum() == pytest.approx(100.0, abs=0.1)
    first = act.iloc[0]
    assert first["name"] == "CUDAkernel2DCT(float*, float*, int)"
    assert (first["time_pct"], first["total_ns"], first["calls"]) == (49.52, 9_360_000, 101)
    assert (first["avg_ns"], first["min_ns"], first["max_ns"]) == (92_680, 92_310, 94_310)
    last = act.iloc[-1]  # `[CUDA memcpy DtoA]`: a copy into an array, device to device
    assert (last["kind"], last["copy_kind"], last["total_ns"]) == ("memcpy", "DtoD", 22_590)
    assert act["calls"].tolist() == [101, 10, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1]


def test_a_summary_with_a_units_row_reads_its_plain_numbers_in_those_units(tmp_path, capsys):
    """`nvprof -u ms` before CUDA 9 (marcosamaris/BSPGPU, a GeForce GT 630) puts a units row
    under the header (`%  ms  ms  ms  ms`) and prints times as plain numbers: each of the seven
    runs with a table is a stage, every time read in ms (was: refused, "a summary row has 7
    fields ..., this one 5" at the units row)."""
    log = NVPROF / "8.x" / "bspgpu-gt630-units-row-runs.txt"
    run = store.load_run(run_import(capsys, tmp_path, f"sum={log}"))
    assert list(run.table("stages")["stage"]) == [f"sum.{k}" for k in range(1, 8)]
    act = run.table("gpu_activities").set_index(["stage", "name"])
    # line 6: `60.96  0.035136  2  0.017568  0.017536  0.017600  [CUDA memcpy HtoD]`
    first = act.loc[("sum.1", "[CUDA memcpy HtoD]")]
    assert (first["time_pct"], first["total_ns"], first["calls"]) == (60.96, 35_136, 2)
    assert (first["avg_ns"], first["min_ns"], first["max_ns"]) == (17_568, 17_536, 17_600)
    # line 49: `41.44  118.1245  1  118.1245  118.1245  118.1245  matSum(float*, float*, ...)`
    last = act.loc[("sum.7", "matSum(float*, float*, float*, int)")]
    assert (last["time_pct"], last["total_ns"], last["calls"]) == (41.44, 118_124_500, 1)
    assert len(act) == 14


def test_copies_to_and_from_cuda_arrays_keep_the_names_nvprof_printed(tmp_path, capsys):
    """`[CUDA memcpy HtoA]` and `[CUDA memcpy DtoA]` (the CSCfi dct8x8 log) are rows of their
    own, named as printed, beside `[CUDA memcpy HtoD]`: their direction is that of device
    memory (copy_kind HtoD, DtoD), but their name is not (was: two `[CUDA memcpy HtoD]` rows)."""
    log = NVPROF / "8.x" / "csc-dct8x8-bare-percent-summary.txt"
    run = store.load_run(run_import(capsys, tmp_path, f"dct={log}"))
    act = run.table("gpu_activities")
    copies = act[act["kind"] == "memcpy"]
    assert copies[["name", "copy_kind", "total_ns", "calls"]].values.tolist() == [
        ["[CUDA memcpy DtoH]", "DtoH", 331_370, 2],
        ["[CUDA memcpy HtoD]", "HtoD", 266_700, 2],
        ["[CUDA memcpy HtoA]", "HtoD", 176_870, 1],
        ["[CUDA memcpy DtoA]", "DtoD", 22_590, 1],
    ]
    assert act["name"].is_unique


def test_copy_names_keep_arrays_in_both_tools_spellings() -> None:
    assert gpuops.copy_name(" [CUDA memcpy AtoH] ") == "[CUDA memcpy AtoH]"
    assert gpuops.copy_name("[CUDA memcpy Host-to-Device]") == "[CUDA memcpy HtoD]"
    assert gpuops.copy_name("[CUDA memcpy Array-to-Device]") == "[CUDA memcpy AtoD]"
    assert gpuops.copy_direction("[CUDA memcpy Array-to-Device]") == "DtoD"
    assert gpuops.copy_name("[CUDA memset]") is None and gpuops.copy_name(None) is None


@pytest.mark.parametrize(
    "file, fragments",
    [
        (
            "8.x/jacobi-untiled-no-kernels.txt",
            ("nvprof says: 'Error: Application received signal 2' / 'No kernels were profiled.'",),
        ),
        ("9.x/bfs-gpu-summary-no-kernels.txt", ("nvprof says: 'No kernels were profiled.'",)),
        ("9.x/bfs-text-gpu-trace-unified-memory-only.txt", ("Unified Memory events only",)),
        (
            "9.x/kobzol-coalescing-readme-trimmed.txt",
            ("line 3: a metric row with no `Kernel:` line above it", "trimmed output?"),
        ),
    ],
)
def test_nvprof_output_profgen_cannot_use_is_refused(tmp_path, capsys, file, fragments):
    path = NVPROF / file
    out = tmp_path / "out"
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", out], capsys)
    assert_refused(result, 2, str(path), *fragments)
    assert not out.exists() or not any(out.iterdir())


def test_lenet_logs_with_their_headings_and_fences(tmp_path):
    """Each log as the README shows it, from its `###` heading to its closing code fence, gives
    the same tables as the bare log."""
    from profiler.parse import nvprof

    lines = (LENET / "hyjwpk-LeNet5-README.md").read_text().splitlines()
    headings = [i for i, line in enumerate(lines) if line.startswith("### ")]
    assert len(headings) == len(STEPS)
    for step, at in zip(STEPS, headings, strict=True):
        end = next(i for i in range(at + 3, len(lines)) if lines[i] == "```")
        path = tmp_path / f"{step}.md"
        path.write_text("\n".join(lines[at : end + 1]) + "\n")
        fenced, bare = nvprof.read_log(path, step), nvprof.read_log(LENET / f"{step}.txt", step)
        assert set(fenced) == set(bare) == {"gpu_activities", "api_calls"}
        for name in bare:
            assert fenced[name].equals(bare[name]), (step, name)


def test_events_none_of_which_maps_import_as_counters(tmp_path, capsys):
    """A Jetson's `nvprof --events all` (francescofiorella/Parallel-Minmax), once refused as none
    of its events is a column of the metrics table: imported, its 71 events in `counters.csv`,
    read back as parsed, and `profgen show --table counters` prints them."""
    from profiler.parse import nvprof

    log = NVPROF / "9.x" / "minmax-tegra-x1-events.log"
    path = run_import(capsys, tmp_path, f"minmax={log}")
    run = store.load_run(path)
    assert not run.has("metrics")
    counters = run.table("counters")
    want = nvprof.read_log(log, "minmax")["counters"]
    assert len(counters) == 71 and counters.equals(want)
    shown = profgen(["show", str(path), "--table", "counters"], capsys)
    assert shown.code == 0 and "l2_subp1_read_tex_sector_queries" in shown.out


def test_a_name_the_log_broke_onto_the_next_line_is_joined_to_its_row(tmp_path, capsys):
    """atsmith3/ece408_final_project's m1.2 log (RAI's client, mxnet on a V100): the client broke
    the row of a 351-character mshadow kernel inside its name, `...Plan<mshadow:` / `:expr::...`,
    the second part at the start of line 102 (was refused: line 102 is not a percentage). The
    line cannot be a row and the row above is whole: read as the end of its name."""
    log = NVPROF / "9.x" / "atsmith3-m12-rai-broken-name.log"
    run = store.load_run(run_import(capsys, tmp_path, f"m12={log}"))
    act, api = run.table("gpu_activities"), run.table("api_calls")
    assert (len(act), len(api)) == (18, 38)
    broken = act[act["name"].str.contains("ReduceWithAxisExp")]
    assert len(broken) == 1
    name = broken["name"].iloc[0]
    assert name.startswith("void mshadow::cuda::MapPlanKernel<mshadow::sv::saveto, int=8, ")
    assert "mshadow::expr::Plan<mshadow::expr::ReduceWithAxisExp<mshadow::red::maximum, " in name
    assert name.endswith(">(mshadow::gpu, unsigned int, mshadow::Shape<int=2>, int=2)")
    assert len(name) == 351
    cells = broken[["total_ns", "calls", "min_ns", "max_ns"]].values.tolist()
    assert cells == [[4896, 1, 4896, 4896]]
    assert act["total_ns"].sum() == 111_810_502 and act["calls"].sum() == 68
    after = act[act["name"].str.startswith("cudnn::gemm::computeOffsetsKernel(")]
    assert after["total_ns"].tolist() == [2336]
    last = api[api["name"].str.startswith("cuDriverGetVersion")]  # RAI's lines right under it
    assert last[["name", "total_ns", "calls"]].values.tolist() == [["cuDriverGetVersion", 1970, 3]]
    first = api.iloc[0]
    assert (first["name"], first["total_ns"], first["calls"]) == (
        "cudaStreamCreateWithFlags",
        3_145_230_000,
        22,
    )


def test_a_broken_name_is_joined_only_under_a_whole_row(tmp_path, capsys):
    """A line that cannot be a row under a row cut short is no name's end: refused, naming it."""
    text = (
        "==1== Profiling result:\n"
        "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
        " GPU activities:  100.00%  4.8960us         1  4.8960us  4.8960us\n"
        ":expr::ReduceWithAxisExp<float>(int)\n"
    )
    log = tmp_path / "cut.log"
    log.write_text(text)
    argv = ["import", "--model", "m", "--stage", f"a={log}", "--out", tmp_path / "o"]
    result = profgen(argv, capsys)
    assert_refused(result, 2, "line 3: a summary row has 7 fields", "this one 5")


def test_a_cut_summary_of_a_run_that_profiled_no_kernel_quotes_nvprof(tmp_path, capsys):
    """ApolloAuto/apollo#5764: `No kernels were profiled.`, then the `API calls:` header where
    the excerpt ends. The refusal says the summary has no rows and quotes nvprof (it gave the
    row count alone, which read as a cut file only)."""
    path = NVPROF / "9.x" / "apollo-5764-no-kernels-api-header-cut.md"
    lines = path.read_text().splitlines()
    header = next(n for n, line in enumerate(lines, 1) if line.startswith("Time(%)"))
    result = profgen(["import", "--model", "m", "--out", tmp_path, "--stage", f"s={path}"], capsys)
    assert_refused(
        result,
        2,
        f"(the summary at line {header} has no rows (truncated?); nvprof says: "
        "'No kernels were profiled.')",
    )


def test_unified_memory_and_dependency_analysis_tables_are_said_to_be_left_out(
    tmp_path, capsys
):
    """A lab's `nvprof --dependency-analysis` run: its GPU summary is read (nine kernels, each
    row's time exact), and its `Unified Memory profiling result` and `Dependency Analysis`
    (critical path) tables, which profgen has no table for, are named with their lines in a
    warning (they were passed over without a word)."""
    path = NVPROF / "9.x" / "gtc2018-openacc-um-dependency-analysis.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    um = next(k for k, line in enumerate(lines) if line.endswith("Memory profiling result:"))
    dep = next(k for k, line in enumerate(lines) if line.endswith("== Dependency Analysis:"))
    header = next(k for k, line in enumerate(lines) if line.startswith("Time(%)"))
    rows = [line.split() for line in lines[header + 1 : um] if line.strip()]
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    assert result.code == 0, result.err
    said = (
        f"line {um + 1}: nvprof's Unified Memory profiling result (line {um + 1}), Dependency "
        f"Analysis (critical path) (line {dep + 1}) left out: profgen has no table for them"
    )
    assert said in result.err, result.err
    run = store.load_run(Path(result.out.strip().splitlines()[-1]))
    act = run.table("gpu_activities").set_index("name")
    assert len(rows) == 9 and sorted(act.index) == sorted(row[-1] for row in rows)
    for row in rows:
        assert act.loc[row[-1], "total_ns"] == ns(row[1])
        assert act.loc[row[-1], "calls"] == int(row[2])


def test_a_unified_memory_table_under_a_summary_is_said_to_be_left_out(tmp_path, capsys):
    """Rodinia's cfd under nvprof 9.x: the summary is read and the `Unified Memory profiling
    result` table under it named as left out, with its line."""
    path = NVPROF / "9.x" / "cfd-text-gpu-summary.txt"
    lines = path.read_text(encoding="utf-8").split("\n")
    um = next(k for k, line in enumerate(lines) if "== Unified Memory profiling result:" in line)
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    assert result.code == 0, result.err
    said = f"line {um + 1}: nvprof's Unified Memory profiling result (line {um + 1}) left out"
    assert said in result.err, result.err
