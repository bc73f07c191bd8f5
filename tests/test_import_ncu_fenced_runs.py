"""Several ncu runs in one Markdown file, each in a fence of its own: one stage per run, as
nvprof's and nsys's runs are. A real post (tests/data/ncu/README.md); expected values are
read from its text here.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from clirun import profgen
from test_import_pasted import imported

from profiler import store
from profiler.parse import ncu_runs

NCU = Path(__file__).parent / "data" / "ncu"
RUNS = NCU / "2023.x" / "blog-two-runs-fenced-one-space-indent.md"


def sectors(path: Path) -> list[int]:
    """The `l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum` value of each run, from the text."""
    row = re.compile(r"^ +l1tex__t_sectors_pipe_lsu_mem_global_op_ld\.sum +sector +([0-9,]+)$")
    found = (row.match(line) for line in path.read_text().splitlines())
    return [int(m[1].replace(",", "")) for m in found if m]


def test_two_fenced_runs_are_two_stages(tmp_path, capsys):
    """Each fence holds one run's `==PROF== Disconnected from process` line and its result: the
    runs are stages `s.1` and `s.2` with their own values (both were read as one stage before,
    two launches numbered 0 and the same kernel name, the runs' values side by side)."""
    assert sectors(RUNS) == [2_097_152, 262_144]
    run, _ = imported(RUNS, tmp_path, capsys)
    assert list(run.table("stages")["stage"]) == ["s.1", "s.2"]
    c = run.table("counters")
    got = c[c["metric"] == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    assert list(got["stage"]) == ["s.1", "s.2"]
    assert list(got["value"]) == sectors(RUNS)
    assert list(got["kernel_id"]) == [0, 0]  # each run's own first launch


def test_a_run_whose_section_line_was_cut_out(tmp_path, capsys):
    """The same post with the first run's `Section:` line deleted (a paste that lost it; found
    by fuzzing): that run's metric table is still read under its kernel line, its counters with
    no section, instead of an IndexError (a run with no `Section:` line at all)."""
    text = RUNS.read_text()
    path = tmp_path / "post.md"
    path.write_text(text.replace("   Section: Command line profiler metrics\n", "", 1))
    argv = ["import", "--model", "m", "--out", tmp_path / "out", "--stage", f"s={path}"]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    run = store.load_run(result.out.strip().splitlines()[-1])
    c = run.table("counters")
    got = c[c["metric"] == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    assert list(got["stage"]) == ["s.1", "s.2"]
    assert list(got["value"]) == sectors(RUNS)
    assert list(got["section"].isna()) == [True, False]


UNFENCED = NCU / "any" / "bitonic-h100-two-runs-unfenced-cut.md"


def test_two_unfenced_runs_of_two_processes_are_two_stages(tmp_path, capsys):
    """Notes that paste two `--print-summary per-kernel` results without a fence, each after
    its `==PROF== Disconnected from process N` line (11139, then 17772), the grade script's
    output and other notes between: a new process after the first run's results starts the
    second run, and each is a stage with its own kernels and values (both were one stage)."""
    text = UNFENCED.read_text(encoding="utf-8")
    lines = text.split("\n")
    second = next(k for k, line in enumerate(lines) if line.startswith("==PROF== Disconnected"))
    second = next(k for k in range(second + 1, len(lines)) if "Disconnected" in lines[k])
    kernel = re.compile(r"^ {4}(?P<name>\S.*) \([0-9, ]+\)x\([0-9, ]+\), Invocations (?P<n>\d+)$")
    warps = r"sm__warps_active\.avg\.pct_of_peak_sustained_active"
    row = re.compile(rf"^ +{warps} +% +[0-9.]+ +[0-9.]+ +([0-9.]+)$")
    expected: list[list[tuple[str, int, float]]] = [[], []]
    name, count = "", 0
    for k, line in enumerate(lines):
        if (m := kernel.match(line)) is not None:
            name, count = m["name"], int(m["n"])
        elif (m := row.match(line)) is not None:
            expected[k > second].append((name, count, float(m[1])))
    assert [len(run) for run in expected] == [2, 4]
    run, _ = imported(UNFENCED, tmp_path, capsys)
    stages = run.table("stages")
    assert list(stages["stage"]) == ["s.1", "s.2"]
    assert "run 2 of 2, its tables from line" in stages["technique"].iloc[1]
    c = run.table("counters")
    got = c[c["metric"] == "sm__warps_active.avg.pct_of_peak_sustained_active"]
    for key, want in zip(["s.1", "s.2"], expected, strict=True):
        mine = got[got["stage"] == key]
        assert list(mine["name"]) == [name for name, _, _ in want]
        assert list(mine["invocations"]) == [n for _, n, _ in want]
        assert list(mine["value"]) == [value for _, _, value in want]
        assert list(mine["kernel_id"]) == list(range(len(want)))  # each run's own launches
    metrics = run.table("metrics")
    assert list(metrics["stage"]) == ["s.1"] * 2 + ["s.2"] * 4


def test_an_excerpt_of_a_section_without_its_kernel_line_is_said_to_be_left_out(
    tmp_path, capsys
):
    """A post's `ncu vector_add.exe` result, then a fenced excerpt of its `GPU Speed Of Light
    Throughput` table alone (no kernel line, values of another run, `<- KEY!` notes): the
    result is read (`Duration 181.09 us`) and the excerpt named as left out, with its line
    and why (it was passed over without a word)."""
    path = NCU / "2025.x" / "hugo-speedrun-section-excerpt-without-kernel-line-cut.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    sections = [k for k, line in enumerate(lines) if line.strip().startswith("Section: GPU Speed")]
    excerpt = sections[-1]
    assert lines[excerpt].startswith("Section:")  # flush left: the excerpt, not ncu's result
    durations = [line.split()[-1] for line in lines if line.strip().startswith("Duration ")]
    result = profgen(["import", "--model", "m", "--stage", f"s={path}", "--out", tmp_path], capsys)
    assert result.code == 0, result.err
    said = (
        f"line {excerpt + 1}: ncu-text output left out: it quotes Nsight Compute's `Section:` "
        f"tables (1, the first at line {excerpt + 1}: 'GPU Speed Of Light Throughput') with no "
        "kernel line above them (`name (grid)x(block), Context 1, Stream 7`): no launch to give "
        "their metrics to\n"
    )
    assert said in result.err, result.err
    run = store.load_run(result.out.strip().splitlines()[-1])
    metrics = run.table("metrics")
    assert len(metrics) == 1 and len(durations) == 2
    assert metrics["duration_ns"].iloc[0] == round(float(durations[0]) * 1000)


def test_processes_of_one_run_stay_one_run_and_a_new_process_after_results_starts_one():
    """`--target-processes all`: a parent and its child connect before any result, so they are
    one run; a process connecting after the results starts the next; a process line after the
    last result (nothing under it) starts none."""
    text = [
        "==PROF== Connected to process 10 (/a)",  # 0
        "==PROF== Connected to process 11 (/b)",  # 1: the child, same run
        "==PROF== Disconnected from process 11",  # 2
        "==PROF== Disconnected from process 10",  # 3
        "  k(int) (1, 1, 1)x(32, 1, 1), Context 1, Stream 7",  # 4: a result
        "==PROF== Connected to process 12 (/a)",  # 5: the next run
        "  k(int) (1, 1, 1)x(32, 1, 1), Context 1, Stream 7",  # 6
        "==PROF== Connected to process 13 (/a)",  # 7: no result under it
    ]
    data = "\n".join(text).encode()
    starts = ncu_runs.run_starts(data, np.array([4, 6]))
    assert [line for line, _ in starts] == [5]
    assert data[starts[0][1] :].startswith(b"==PROF== Connected to process 12")


NOTES = NCU / "2023.x" / "zh-lab-notes-two-fenced-runs-no-process-lines.md"


def launches(path: Path) -> list[list[tuple[str, str, str]]]:
    """Each fenced block's launches of `path`, from its text: per kernel line, the kernel's
    name and the value of its `Duration` row (or its sectors row when it has none), the blocks
    holding no kernel line (the command's) left out."""
    blocks = path.read_text().split("```")[1::2]
    kernel = re.compile(r"^ *(\w+)\(.*\) \(64, 1, 1\)x\(256, 1, 1\), Context 1")
    value = re.compile(r"^ +(Duration|l1tex__t_sectors_\S+) +\S+ +([0-9.,]+)$")
    out = []
    for block in blocks:
        found: list[tuple[str, str, str]] = []
        for line in block.splitlines():
            if m := kernel.match(line):
                found.append((m[1], "", ""))
            elif (m := value.match(line)) and found:
                found[-1] = (found[-1][0], m[1], m[2])
        if found:
            out.append(found)
    return out


def test_runs_fenced_with_no_process_lines_are_two_stages(tmp_path, capsys):
    """Notes that paste two `nv-nsight-cu-cli` runs of the same two kernels, each run's results
    in a fence of its own and no `==PROF==` line: the fence is where the second run starts
    (both were read as one stage of four launches before), each run's launches from 0."""
    blocks = launches(NOTES)
    assert [[name for name, _, _ in b] for b in blocks] == [["row_sums", "column_sums"]] * 2
    run, _ = imported(NOTES, tmp_path, capsys)
    assert list(run.table("stages")["stage"]) == ["s.1", "s.2"]
    m = run.table("metrics")
    assert list(m["stage"]) == ["s.1", "s.1", "s.2", "s.2"]
    assert list(m["kernel_id"]) == [0, 1, 0, 1]
    assert [n.split("(")[0] for n in m["name"]] == ["row_sums", "column_sums"] * 2
    durations = [round(float(v) * 1_000_000) for _, key, v in blocks[0] if key == "Duration"]
    assert list(m["duration_ns"][:2]) == durations
    c = run.table("counters")
    got = c[c["metric"] == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    assert list(got["stage"]) == ["s.2", "s.2"]
    assert list(got["kernel_id"]) == [0, 1]
    assert list(got["value"]) == [int(v.replace(",", "")) for _, _, v in blocks[1]]


def test_two_runs_in_c_comments_are_two_stages(tmp_path, capsys):
    """Two ncu runs pasted into a source file, each in a `/* */` comment of its own (no
    `==PROF==` lines): the comment lines part them as a fence does (one stage before, four
    launches numbered 0 to 3)."""
    path = NCU / "2023.x" / "matrix-sum-ncu-in-c-comments-cut.cu"
    text = path.read_text()
    assert text.count("/*") == 2 and text.count("*/") == 2 and "==PROF==" not in text
    run, _ = imported(path, tmp_path, capsys)
    assert list(run.table("stages")["stage"]) == ["s.1", "s.2"]
    m = run.table("metrics")
    kernels = [f"{k}(const float *, float *, unsigned long)" for k in ("row_sums", "column_sums")]
    assert list(m["stage"]) == ["s.1", "s.1", "s.2", "s.2"]
    assert list(m["name"]) == kernels * 2 and list(m["kernel_id"]) == [0, 1, 0, 1]
    assert m["duration_ns"][0] == 22_570_000  # `Duration  ms  22.57` of run 1's row_sums
    c = run.table("counters")
    got = c[c["metric"] == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    assert list(got["stage"]) == ["s.2", "s.2"] and list(got["kernel_id"]) == [0, 1]
    assert list(got["value"]) == sectors(path)


def test_fenced_runs_whose_launch_ids_restart_at_0_are_two_stages(tmp_path, capsys):
    """The two-run post with its `==PROF== Connected/Disconnected` lines taken out: each fence
    still holds a `==PROF== Profiling "matrix_add_2D" - 0` line, so the launch IDs repeat (0,
    0) and rows cannot be told apart by ID; the fence where the IDs restart at 0 parts the runs
    (one stage of two launches both numbered 0 before)."""
    text = RUNS.read_text()
    kept = [ln for ln in text.split("\n") if not re.match(r"==PROF== (Conn|Disconn)ected", ln)]
    assert re.findall(r'==PROF== Profiling "matrix_add_2D" - (\d+):', text) == ["0", "0"]
    path = tmp_path / "post.md"
    path.write_text("\n".join(kept))
    run, _ = imported(path, tmp_path, capsys)
    assert list(run.table("stages")["stage"]) == ["s.1", "s.2"]
    assert list(run.table("metrics")["kernel_id"]) == [0, 0]
    c = run.table("counters")
    got = c[c["metric"] == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    assert list(got["stage"]) == ["s.1", "s.2"] and list(got["kernel_id"]) == [0, 0]
    assert list(got["value"]) == sectors(RUNS)
    both = c.groupby("stage")["metric"].apply(list)
    assert both["s.1"] == both["s.2"] and len(both["s.1"]) == 2  # each run its own rows only


PIDS = NCU / "2024.x" / "hgemm-swizzle-zh-two-runs-one-fence-pid-lines-cut.md"


def test_two_runs_in_one_fence_told_apart_by_their_process_lines_are_two_stages(
    tmp_path, capsys
):
    """Two `ncu --metrics` runs of one program in one fence, no `==PROF==` lines: each run's
    launches under its own `[pid] app@127.0.0.1` line, both runs of the same two kernels (was:
    one stage of four launches). Each process's launches stay together, in file order."""
    lines = PIDS.read_text(encoding="utf-8").splitlines()
    pid = re.compile(r"^\[([0-9]+)\] hgemm_mma_swizzle\.bin@127\.0\.0\.1$")
    row = re.compile(r"^ +(\S+\.sum) +([0-9]+)$")
    runs: list[list[tuple[str, int]]] = []
    for line in lines:
        if pid.match(line):
            runs.append([])
        elif m := row.match(line):
            runs[-1].append((m[1], int(m[2])))
    assert [len(r) for r in runs] == [2, 2]
    run, _ = imported(PIDS, tmp_path, capsys)
    assert list(run.table("stages")["stage"]) == ["s.1", "s.2"]
    c = run.table("counters")
    for n, expected in enumerate(runs, 1):
        got = c[(c["stage"] == f"s.{n}") & c["metric"].str.endswith(".sum")]
        assert list(zip(got["metric"], got["value"], strict=True)) == expected
        assert list(got["kernel_id"]) == [0, 1]


def test_a_process_line_naming_the_run_s_own_process_again_starts_no_run():
    """A `[pid]` line repeated above a launch of its own process (one process's launches) does
    not part them, though the kernel comes again; another process's line does."""
    text = [
        "[10] a@127.0.0.1",  # 0
        "  k(int) (1, 1, 1)x(32, 1, 1), Context 1, Stream 7",  # 1
        "[10] a@127.0.0.1",  # 2: the same process
        "  k(int) (1, 1, 1)x(32, 1, 1), Context 1, Stream 7",  # 3
        "[11] a@127.0.0.1",  # 4: another one
        "  k(int) (1, 1, 1)x(32, 1, 1), Context 1, Stream 7",  # 5
    ]
    data = "\n".join(text).encode()
    starts = ncu_runs.block_starts(data, np.array([1, 3, 5]), ["k", "k", "k"])
    assert [line for line, _ in starts] == [5]
