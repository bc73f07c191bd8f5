"""`profgen import` fed a corpus of broken, hostile and odd inputs (issue 9).

Each case builds one stage input in a temporary folder. A broken input is refused cleanly: exit
2 (4 where the environment lacks a tool), exactly one line on stderr naming the file that is
wrong, no traceback, and no run left behind. An odd but whole input is imported, and the run
it makes can be shown and re-rendered (`profgen show`, `profgen report`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from clirun import assert_refused, profgen
from test_parse_values import deadline

DATA = Path(__file__).parent / "data"
NSYS = DATA / "nsys" / "2025.3.1"
DEMO, OVERLAP = NSYS / "demo", NSYS / "overlap"
KERN = DEMO / "cuda_gpu_kern_sum.csv"
TRACE = DEMO / "cuda_gpu_trace.csv"
NVPROF_TEXT = DATA / "nvprof" / "9.x" / "cuda-stream-summary.txt"
NVPROF_CSV = DATA / "nvprof" / "9.x" / "cfd-csv-summary.csv"
NVPROF_TRACE = DATA / "nvprof" / "9.x" / "cfd-csv-gpu-trace-head.csv"
NCU_RAW = DATA / "ncu" / "2025.3.1" / "raw-metrics.csv"


@dataclass(frozen=True)
class Case:
    """`make(tmp)` builds the input and returns (the path to import, the file a refusal must
    name); `fragments` must appear in the refusal; `code` 0 means it imports."""

    make: Callable[[Path], tuple[Path, Path]]
    code: int = 2
    fragments: tuple[str, ...] = ()


def file_with(name: str, content: bytes | str) -> Callable[[Path], tuple[Path, Path]]:
    def make(tmp: Path) -> tuple[Path, Path]:
        path = tmp / name
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return path, path

    return make


def edited(source: Path, old: str, new: str, name: str = "") -> Callable[..., tuple[Path, Path]]:
    """`source` with the first `old` replaced by `new` (the edit must apply)."""
    text = source.read_text()
    assert old in text, (source, old)
    return file_with(name or source.name, text.replace(old, new, 1))


def in_folder(name: str, content: str) -> Callable[[Path], tuple[Path, Path]]:
    """A copy of the demo nsys folder with `name` replaced by `content`."""

    def make(tmp: Path) -> tuple[Path, Path]:
        folder = tmp / "stage"
        shutil.copytree(DEMO, folder)
        (folder / name).write_text(content)
        return folder, folder / name

    return make


def fifo(tmp: Path) -> tuple[Path, Path]:
    path = tmp / "trace.csv"
    os.mkfifo(path)
    return path, path


def fifo_report(tmp: Path) -> tuple[Path, Path]:
    path = tmp / "x.nsys-rep"
    os.mkfifo(path)
    return path, path


def link_to_fifo(tmp: Path) -> tuple[Path, Path]:
    """A link named on the command line is resolved: the refusal names the FIFO itself."""
    target, _ = fifo(tmp)
    link = tmp / "link.csv"
    link.symlink_to(target)
    return link, target


def device(tmp: Path) -> tuple[Path, Path]:
    return Path(os.devnull), Path(os.devnull)


def empty_folder(tmp: Path) -> tuple[Path, Path]:
    folder = tmp / "empty"
    folder.mkdir()
    return folder, folder


def folder_of_links(tmp: Path) -> tuple[Path, Path]:
    """Every report in the folder is a link: nothing regular to read."""
    folder = tmp / "links"
    folder.mkdir()
    for f in DEMO.glob("*.csv"):
        (folder / f.name).symlink_to(f)
    return folder, folder


def huge_line(tmp: Path) -> tuple[Path, Path]:
    path = tmp / "line.txt"
    path.write_bytes(b"a" * 5_000_000)  # 5 MB, no newline
    return path, path


def nul_deep(tmp: Path) -> tuple[Path, Path]:
    """A NUL in a kernel name after 16 KB of the program's own output."""
    text = NVPROF_TEXT.read_text().replace(
        "==8123== Profiling result:", "step ok\n" * 2000 + "==8123== Profiling result:"
    )
    return file_with("log.txt", text.replace("cudaMemcpy\n", "cuda\x00Memcpy\n"))(tmp)


def kern(row: str) -> str:
    return KERN.read_text().splitlines()[0] + "\n" + row + "\n"


BAD = {
    "empty file": Case(file_with("empty.csv", b""), fragments=("empty",)),
    "blank lines only": Case(file_with("blank.txt", "\n \n\t\n"), fragments=("empty",)),
    "binary garbage": Case(file_with("junk.bin", bytes(range(256)) * 64), fragments=("binary",)),
    "UTF-16 nvprof log": Case(
        file_with("utf16.txt", NVPROF_TEXT.read_text().encode("utf-16")), fragments=("UTF-16",)
    ),
    "Latin-1 bytes": Case(
        file_with("latin1.txt", "==1== Profiling result: caf\xe9\n".encode("latin-1")),
        fragments=("not UTF-8",),
    ),
    "NUL byte at the start": Case(
        edited(NVPROF_TEXT, "cudaMemcpy\n", "cuda\x00Memcpy\n"), fragments=("binary file",)
    ),
    "NUL byte deep in a log": Case(nul_deep, fragments=("it holds a NUL byte",)),
    "a FIFO": Case(fifo, fragments=("not a regular file",)),
    "a FIFO named .nsys-rep": Case(fifo_report, fragments=("not a regular file",)),
    "a link to a FIFO": Case(link_to_fifo, fragments=("not a regular file",)),
    "a device": Case(device, fragments=("not a regular file",)),
    "an empty folder": Case(empty_folder, fragments=("no regular CSV file",)),
    "a folder of links only": Case(folder_of_links, fragments=("no regular CSV file",)),
    "a 5 MB line without newline": Case(huge_line, fragments=("recognised none of them",)),
    "CSV of no profiler": Case(file_with("x.csv", "alpha,beta\n1,2\n"), fragments=("none",)),
    "ncu CSV under an nsys name": Case(
        in_folder("cuda_gpu_trace.csv", NCU_RAW.read_text()), fragments=("found header",)
    ),
    "nsys summary with only its header": Case(
        file_with("cuda_gpu_kern_sum.csv", kern("").rstrip() + "\n"),
        fragments=("header but no rows",),
    ),
    "ncu CSV with only its header": Case(
        file_with("ncu.csv", "\n".join(NCU_RAW.read_text().splitlines()[:5]) + "\n"),
        fragments=("no rows to import",),
    ),
    "Avg = inf": Case(
        file_with("k.csv", kern("100.0,33153,3,inf,11008.0,10977,11168,102.5,addone")),
        fragments=("line 2, column 'Avg (ns)': 'inf' is not a finite number",),
    ),
    "Instances = nan": Case(
        file_with("k.csv", kern("100.0,33153,nan,11051.0,11008.0,10977,11168,102.5,addone")),
        fragments=("column 'Instances': 'nan' is not a number",),
    ),
    "total = 1e300": Case(
        file_with("k.csv", kern("100.0,1e300,3,11051.0,11008.0,10977,11168,102.5,addone")),
        fragments=("column 'Total Time (ns)': '1e300' is out of range",),
    ),
    "total = 2**63": Case(
        file_with("k.csv", kern(f"100.0,{2**63},3,11051.0,11008.0,10977,11168,102.5,addone")),
        fragments=("column 'Total Time (ns)'", "out of range"),
    ),
    "total = 2**63 - 1": Case(
        file_with("k.csv", kern(f"100.0,{2**63 - 1},3,11051.0,11008.0,10977,11168,0,addone")),
        fragments=("column 'Total Time (ns)'", "out of range"),
    ),
    "negative call count": Case(
        file_with("k.csv", kern("100.0,33153,-3,11051.0,11008.0,10977,11168,102.5,addone")),
        fragments=("column 'Instances': '-3' is negative",),
    ),
    "call count 1.2.3": Case(
        file_with("k.csv", kern("100.0,33153,1.2.3,11051.0,11008.0,10977,11168,102.5,addone")),
        fragments=("column 'Instances': '1.2.3' is not a number",),
    ),
    "30-digit call count (nvprof)": Case(
        edited(NVPROF_TEXT, "       103  1.8260ms", f"  {'7' * 30}  1.8260ms"),
        fragments=("line 5, column 'Calls'", "out of range"),
    ),
    "share ...% (nvprof)": Case(
        edited(NVPROF_TEXT, "20.21%", "...%"),
        fragments=("line 5, column 'Time(%)': '...%' is not a number",),
    ),
    "negative duration (nsys trace)": Case(
        edited(TRACE, "972061673,319688,", "972061673,-319688,"),
        fragments=("line 2, column 'Duration (ns)': '-319688' is negative",),
    ),
    "duration past uint64 (nvprof trace)": Case(
        edited(NVPROF_TRACE, "1.183779,0.000992,", f"1.183779,{2**64},"),
        fragments=("line 6, column 'Duration'", "out of range"),
    ),
    "Avg inf (nvprof CSV summary)": Case(
        edited(NVPROF_CSV, ",44.775000,", ",inf,"),
        fragments=("line 6, column 'Avg': 'inf' is not a finite number",),
    ),
    "nvprof --csv metrics header cut in a name (fuzzed)": Case(
        edited(
            DATA / "nvprof" / "8.x" / "j3d27pt-csv-metrics.csv",
            '"Metric Description","Min","Max","Avg"',
            '"Metric Descripti',
        ),
        fragments=("no column Min, Max, Avg in its header",),
    ),
    "two Name columns": Case(
        file_with("k.csv", KERN.read_text().replace("StdDev (ns),Name", "Name,Name")),
        fragments=("column 'Name' appears twice",),
    ),
    "a row with an extra first cell": Case(
        file_with("k.csv", kern("7,100.0,33153,3,11051.0,11008.0,10977,11168,102.5,addone")),
        fragments=("more cells than the header",),
    ),
    "text summary cut mid-row": Case(
        file_with("cut.txt", NVPROF_TEXT.read_text()[: NVPROF_TEXT.read_text().index("cudaFree")]),
        fragments=("a summary row has 7 fields", "truncated"),
    ),
    "text summary shares above 100%": Case(
        edited(NVPROF_TEXT, "13.34%", "23.34%"),
        fragments=("GPU activities rows add up to 109.99% of the time, more than 100%",),
    ),
    "nsys trace cut mid-row": Case(
        in_folder("cuda_gpu_trace.csv", TRACE.read_text()[:-40]),
        fragments=("the last row has fewer than the header's 21 cells",),
    ),
    "line of 100,000 spaces inside a table": Case(
        edited(NVPROF_TEXT, " GPU activities:", " " * 100_000 + "x\n GPU activities:"),
        fragments=("line 5: not a summary row",),
    ),
    "text gpu trace with a re-spaced row": Case(
        edited(DATA / "nvprof/9.x/cuda-stream-text-gpu-trace-head.txt", "  (1024 1 1)",
               "(1024 1 1)", "t.txt"),
        fragments=("line 5: the row does not line up with the gpu trace header",),
    ),
    "nsys chatter without reports": Case(
        file_with("out.txt", "Generating SQLite file /tmp/x.sqlite\nSKIPPED: no CUDA data\n"),
        fragments=("recognised none of them",),
    ),
    ".nsys-rep without nsys": Case(
        file_with("x.nsys-rep", b"\x00report"), code=4, fragments=("nsys",)
    ),
    ".sqlite without nsys": Case(
        file_with("x.sqlite", b"SQLite format 3\x00"), code=4, fragments=("nsys",)
    ),
    ".ncu-rep without ncu": Case(
        file_with("x.ncu-rep", b"\x00report"), code=4, fragments=("ncu",)
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_broken_input_is_refused(tmp_path, capsys, monkeypatch, case):
    monkeypatch.setenv("PATH", "/nonexistent")  # no nsys: an .nsys-rep cannot be converted
    monkeypatch.setenv("NSYS", "/nonexistent/nsys")
    monkeypatch.setenv("NCU", "/nonexistent/ncu")
    stage, named = case.make(tmp_path)
    out = tmp_path / "out"
    with deadline(60):
        result = profgen(["import", "--model", "m", "--stage", f"s={stage}", "--out", out], capsys)
    assert_refused(result, case.code, *case.fragments)
    if case.code == 2:
        assert str(named) in result.err
    assert not out.exists() or not any(out.iterdir())  # no run, not even a partial one


def many_kernels(tmp: Path) -> tuple[Path, Path]:
    """Two kernel names of 3 MB that differ only at the end, in a real trace."""
    text = OVERLAP.joinpath("cuda_gpu_trace.csv").read_text()
    a, b = "k" * 3_000_000 + "_a", "k" * 3_000_000 + "_b"
    text = text.replace(",scale\n", f",{a}\n").replace(",relu\n", f",{b}\n")
    return file_with("cuda_gpu_trace.csv", text)(tmp)


def crlf(tmp: Path) -> tuple[Path, Path]:
    return file_with("crlf.txt", NVPROF_TEXT.read_text().replace("\n", "\r\n"))(tmp)


def with_bom(tmp: Path) -> tuple[Path, Path]:
    return file_with("bom.csv", b"\xef\xbb\xbf" + KERN.read_bytes())(tmp)


def hostile_names(tmp: Path) -> tuple[Path, Path]:
    name = '"<script>alert(1)</script>\x1b[31mred\x1b[0m javascript:x`|*"'
    return file_with("k.csv", KERN.read_text().replace(",addone", f",{name}"))(tmp)


def folder_with_a_secret_link(tmp: Path) -> tuple[Path, Path]:
    secret = tmp / "shadow"
    secret.write_text("root:SECRET:19000::::::\n")
    folder = tmp / "stage"
    shutil.copytree(DEMO, folder)
    (folder / "x_cuda_api_trace.csv").symlink_to(secret)
    return folder, folder


GOOD = {
    "100,000 spaces inside a kernel name": Case(
        edited(NVPROF_TEXT, "cudaMemcpy\n", "cudaMemcpy" + " " * 100_000 + "x\n"), code=0
    ),
    "3 MB kernel names": Case(many_kernels, code=0),
    "CRLF line endings": Case(crlf, code=0),
    "UTF-8 byte-order mark": Case(with_bom, code=0),
    "markup and escape codes in a name": Case(hostile_names, code=0),
    "a folder with a link to a secret": Case(folder_with_a_secret_link, code=0),
}


@pytest.mark.parametrize("case", GOOD.values(), ids=GOOD.keys())
def test_odd_but_whole_input_is_imported(tmp_path, capsys, case):
    stage, _ = case.make(tmp_path)
    out = tmp_path / "out"
    with deadline(60):
        result = profgen(["import", "--model", "m", "--stage", f"s={stage}", "--out", out], capsys)
    assert result.code == 0, result.err
    run = Path(result.out.strip().splitlines()[-1])
    assert (run / "report.html").is_file() and (run / "run.json").is_file()
    assert (run / "report.html").stat().st_size < 20_000_000  # 3 MB names are capped
    for table in ("stages", "gpu_activities"):
        shown = profgen(["show", run, "--table", table], capsys)
        assert shown.code == 0 and "Traceback" not in shown.err, shown.err
    again = profgen(["report", run, "-o", tmp_path / "again.html"], capsys)
    assert again.code == 0, again.err
    for file in run.rglob("*"):
        assert not file.is_symlink()
        if file.is_file():
            assert b"SECRET" not in file.read_bytes(), file


def test_corpus_size():
    assert len(BAD) + len(GOOD) >= 25


# --- the flags of an honest import: --repeats and --range ---------------------------------------

NESTED = NSYS / "nested"
BAD_FLAGS = {
    "repeats 0": (["--repeats", "0"], ("--repeats", "positive integer")),
    "repeats -3": (["--repeats", "-3"], ("--repeats", "positive integer")),
    "repeats 1.5": (["--repeats", "1.5"], ("--repeats", "'1.5'")),
    "repeats words": (["--repeats", "ten"], ("--repeats", "'ten'")),
    "repeats empty": (["--repeats", ""], ("--repeats",)),
    "repeats =5": (["--repeats", "=5"], ("--repeats", "N or KEY=N")),
    "repeats KEY=": (["--repeats", "s="], ("--repeats", "positive integer")),
    "repeats 30 digits": (["--repeats", "9" * 30], ("--repeats", "1 to 1,000,000,000")),
    "repeats past the limit": (["--repeats", "1000000001"], ("1 to 1,000,000,000",)),
    "repeats for an unknown stage": (["--repeats", "x=3"], ("unknown stage 'x'", "stages: s")),
    "repeats twice for a stage": (
        ["--repeats", "s=3", "--repeats", "s=4"],
        ("--repeats is given twice for stage 's'",),
    ),
    "repeats twice for all": (
        ["--repeats", "3", "--repeats", "4"],
        ("--repeats is given twice for all stages",),
    ),
    "range that matches nothing": (
        ["--range", "nope"],
        ("--range 'nope' matches no NVTX range of stage 's'", "'compute'"),
    ),
    "range empty": (["--range", ""], ("--range", "name an NVTX range")),
    "range KEY= empty": (["--range", "s="], ("--range", "name an NVTX range")),
    "range twice for a stage": (
        ["--range", "s=compute", "--range", "s=h2d"],
        ("--range is given twice for stage 's'",),
    ),
    "range 1 MB of name": (["--range", "r" * 1_000_000], ("matches no NVTX range",)),
    "range with a control character": (["--range", "a\x1b[31mb"], ("matches no NVTX range",)),
}


@pytest.mark.parametrize("argv, fragments", BAD_FLAGS.values(), ids=BAD_FLAGS.keys())
def test_bad_repeats_and_range_are_refused_in_one_line(tmp_path, capsys, argv, fragments):
    out = tmp_path / "out"
    with deadline(60):
        result = profgen(
            ["import", "--model", "m", "--stage", f"s={NESTED}", "--out", out, *argv], capsys
        )
    assert_refused(result, 2, *fragments)
    assert "\x1b" not in result.err  # run text reaches the terminal escaped
    assert len(result.err) < 2_000  # a huge name is clipped, not echoed whole
    assert not out.exists() or not any(out.iterdir())
