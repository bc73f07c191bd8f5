"""One `nsys stats` run's reports pasted one per Markdown fence (issue 14): consecutive fenced
blocks of nsys output that name different reports, with no prompt and no report named twice
between them, are one run; the same report named again, or a prompt, still starts another.

The files are made from a real one: mojo-gpu-puzzles' B200 output (nsys 2026.2.1,
tests/data/nsys/2026.2.1/mojo-matmul-stats-fenced.md), whose three reports share one fence.
Here each report gets a fence of its own, and an elision line (`...`) stands under the API
summary's first row where the author abridged it ("abridged to the rows that matter"): the
elision makes the file a terminal capture (`parse.capture`), which is cut at every fence.
"""

from __future__ import annotations

from pathlib import Path

from clirun import profgen

from profiler import schema, store
from profiler.parse import capture

MOJO = Path(__file__).parent / "data" / "nsys" / "2026.2.1" / "mojo-matmul-stats-fenced.md"


def _reports() -> list[str]:
    """The file's three reports (`** CUDA API Summary (cuda_api_sum):` and its table, ...), in
    order, each without the blank line that parts it from the next."""
    body = MOJO.read_text().split("```txt\n", 1)[1].split("```", 1)[0]
    return body.strip("\n").split("\n\n")


def _elided(report: str) -> str:
    """`report` with an elision line under its first row (the line after the header's rule)."""
    lines = report.split("\n")
    return "\n".join([*lines[:4], "...", *lines[4:]])


def _fenced(reports: list[str], between: str = "") -> str:
    """A Markdown file of `reports`, each in a fence of its own, `between` above each fence."""
    return "The output:\n\n" + "".join(f"{between}```\n{r}\n```\n\n" for r in reports)


def _imported(tmp: Path, text: str, capsys) -> tuple[str, store.Run]:  # type: ignore[no-untyped-def]
    path = tmp / "notes.md"
    path.write_text(text)
    argv = ["import", "--model", "m", "--out", tmp / "out", "--stage", f"s={path}"]
    result = profgen(argv, capsys)
    assert result.code == 0, result.err
    return result.err, store.load_run(result.out.strip().splitlines()[-1])


def test_one_runs_reports_one_per_fence_are_one_run(tmp_path, capsys):
    """The API summary, the kernel summary and the memory-operation summary, a fence each: one
    stage with all three tables (they were three stages, `s.1` to `s.3`, each with one)."""
    api, kern, mem = _reports()
    text = _fenced([_elided(api), kern, mem])
    assert capture.is_capture(text)
    err, run = _imported(tmp_path, text, capsys)
    assert list(run.table("stages")["stage"]) == ["s"]
    assert "rows elided at line 8: tables partial" in err
    calls = run.table("api_calls").set_index("name")  # the four rows of the API summary
    assert list(calls.index) == [
        "cuMemAllocHost_v2", "cuStreamCreate", "cuModuleLoadDataEx", "cuLaunchKernelEx"
    ]  # fmt: skip
    assert calls.loc["cuMemAllocHost_v2", "total_ns"] == 402_987_325
    assert calls.loc["cuLaunchKernelEx", "total_ns"] == 32_316
    gpu = run.table("gpu_activities")  # the kernel and the three memory operations, by time
    assert list(gpu["kind"]) == [schema.MEMCPY, schema.MEMSET, schema.MEMCPY, schema.KERNEL]
    assert list(gpu["total_ns"]) == [12_768, 6_688, 4_384, 2_176]
    assert list(gpu["calls"]) == [3, 4, 3, 1]
    assert list(gpu["copy_kind"].iloc[[0, 2]]) == ["DtoH", "HtoD"]


def test_prose_between_the_fences_keeps_them_one_run(tmp_path, capsys):
    """A line of prose above each fence (`Summary:`) parts the blocks as well: still one run."""
    api, kern, mem = _reports()
    _, run = _imported(tmp_path, _fenced([_elided(api), kern, mem], "Summary:\n\n"), capsys)
    assert list(run.table("stages")["stage"]) == ["s"]
    assert len(run.table("api_calls")) == 4 and len(run.table("gpu_activities")) == 4


def test_a_report_fenced_again_starts_another_run(tmp_path, capsys):
    """The three fences twice over: the second API summary names a report the run named already,
    so a second run starts there: two stages of the same tables."""
    api, kern, mem = _reports()
    _, run = _imported(tmp_path, _fenced([_elided(api), kern, mem] * 2), capsys)
    assert list(run.table("stages")["stage"]) == ["s.1", "s.2"]
    gpu = run.table("gpu_activities")
    assert gpu.groupby("stage")["total_ns"].sum().to_dict() == {"s.1": 26_016, "s.2": 26_016}
    assert run.table("api_calls").groupby("stage").size().to_dict() == {"s.1": 4, "s.2": 4}


def test_a_prompt_between_the_fences_starts_another_run(tmp_path, capsys):
    """A command typed above the memory-operation summary's block (`$ nsys stats ...`, inside
    its fence) is another command's output: two stages, the second titled by it."""
    api, kern, mem = _reports()
    command = "nsys stats --report cuda_gpu_mem_time_sum report2.nsys-rep"
    _, run = _imported(tmp_path, _fenced([_elided(api), kern, f"$ {command}\n{mem}"]), capsys)
    stages = run.table("stages")
    assert list(stages["stage"]) == ["s.1", "s.2"]
    assert stages["title"].iloc[1] == f"s, run 2 of 2: {command}"
    gpu = run.table("gpu_activities")
    assert list(gpu.loc[gpu["stage"] == "s.1", "kind"]) == [schema.KERNEL]
    assert list(gpu.loc[gpu["stage"] == "s.2", "total_ns"]) == [12_768, 6_688, 4_384]


def test_a_bare_table_fenced_between_is_no_report_of_the_run(tmp_path, capsys):
    """A fence of the kernel summary's table without its banner (`** CUDA GPU Kernel Summary
    (cuda_gpu_kern_sum):` cut off: another run's, pasted bare) between the kernel summary's and
    the memory operations' fences: its report is not named, so it is not known to be none the
    run named, and nothing is joined across it: the API and kernel summaries are one run and
    the memory operations one (joined across, the bare table was left out with a warning).
    The bare table repeats the kernel summary's rows to the nanosecond, an excerpt of the
    first run: a quote, left out and said so (it was a run of its own)."""
    api, kern, mem = _reports()
    bare = kern.split("\n", 1)[1]
    err, run = _imported(tmp_path, _fenced([_elided(api), kern, bare, mem]), capsys)
    quoted = [line for line in err.splitlines() if "a quote, not a measurement" in line]
    assert len(quoted) == 1 and "run 2 of 3 in the" in quoted[0]
    assert "repeats run 1's" in quoted[0]
    assert list(run.table("stages")["stage"]) == ["s.1", "s.2"]
    assert run.table("api_calls").groupby("stage").size().to_dict() == {"s.1": 4}
    gpu = run.table("gpu_activities")
    assert gpu.groupby("stage")["total_ns"].sum().to_dict() == {
        "s.1": 2_176, "s.2": 12_768 + 6_688 + 4_384
    }  # fmt: skip
