"""Which NVTX range each launch of imported ncu output is in (`profiler.parse.ncu_nvtx`).

Real files: tests/data/ncu/2022.x/ykt-gcn-* (a user's `<default domain>` range `convLayer`
around every kernel, text and CSV) and the H100 captures in 2025.3.1/ (profgen's own domain).
Expected names are read off the files' text here, not from the parser.
"""

from __future__ import annotations

import re
from pathlib import Path

from profiler.parse import ncu_csv, ncu_nvtx, ncu_text

NCU = Path(__file__).parent / "data" / "ncu"
TEXT = NCU / "2022.x" / "ykt-gcn-paddle-nvtx.txt"
PADDLE_CSV = NCU / "2022.x" / "ykt-gcn-paddle-nvtx-csv.txt"
TORCH_CSV = NCU / "2022.x" / "ykt-gcn-torch-nvtx-csv.txt"
RAW = NCU / "2025.3.1" / "raw-metrics.csv"
PROFGEN_CELL = (
    '""profgen:stage/overlap/rep0:none:none:RGB:0xff:REGISTERED:stage/overlap/rep0""  '
    '""profgen:compute:none:none:RGB:0xff:REGISTERED:compute""'
)


def test_text_blocks_give_each_kernel_the_users_range():
    text = TEXT.read_text()
    # by hand: 14 kernel lines, each followed by `NVTX Start/End Ranges:`, `<default domain>`,
    # `<0,convLayer>`; the `==PROF==` lines number the launches 1..14
    assert (
        len(
            re.findall(
                r"^\s+NVTX Start/End Ranges:\n\s+<default domain>\n\s+<0,convLayer>\n", text, re.M
            )
        )
        == 14
    )
    m = ncu_text.read_metrics(TEXT, "gcn")
    assert list(m["kernel_id"]) == list(range(1, 15))
    assert list(m["range"]) == ["convLayer"] * 14
    assert m["name"].iloc[0].startswith("void phi::funcs::GatherNdCUDAKernel<float, int>")
    assert m["duration_ns"].iloc[0] == 11170  # `gpu__time_duration.sum  usecond  11.17`


def test_csv_start_stop_column_gives_the_users_range():
    for path, first in (
        (PADDLE_CSV, "void phi::funcs::GatherNdCUDAKernel"),
        (TORCH_CSV, "void at::native::index_elementwise_kernel"),
    ):
        # by hand: launches 0..13, push/pop cells "",
        # start/stop " ""0:<default domain>:convLayer:none:none"" "
        m = ncu_csv.read_metrics(path, "gcn")
        assert list(m["kernel_id"]) == list(range(14)), path
        assert list(m["range"]) == ["convLayer"] * 14, path
        assert m["name"].iloc[0].startswith(first)


def variant(tmp_path: Path, cell: str, start: str = "") -> Path:
    """The H100 raw page with every launch's push/pop cell `cell` and start/stop cell `start`
    (CSV-quoted as ncu writes them)."""
    text, count = re.subn(
        r'"756  ""profgen:[^,]*",""', f'"756  {cell} ","{start}"', RAW.read_text()
    )
    assert count == 16
    path = tmp_path / "raw.csv"
    path.write_text(text)
    return path


def test_profgen_domain_wins_over_a_users_range_inside_it(tmp_path):
    user = '""<default domain>:convLayer:none:none:RGB:0xff:ASCII:convLayer""'
    started = ' ""0:<default domain>:epoch:none:none:RGB:0xff:ASCII:epoch"" '
    m = ncu_csv.read_metrics(variant(tmp_path, f"{PROFGEN_CELL}  {user}", started), "s")
    assert set(m["range"]) == {"compute"}  # profgen's innermost, as before


def test_users_push_pop_range_without_profgen(tmp_path):
    outer = '""<default domain>:model:none:none:RGB:0xff:ASCII:model""'
    inner = '""<default domain>:conv:1:none:none:RGB:0xff:ASCII:conv:1""'
    started = ' ""0:<default domain>:epoch:none:none:RGB:0xff:ASCII:epoch"" '
    m = ncu_csv.read_metrics(variant(tmp_path, f"{outer}  {inner}", started), "s")
    assert set(m["range"]) == {"conv:1"}  # innermost push/pop wins over start/end
    cccl = '""CCCL:cub::DeviceReduce::Reduce:none:none:RGB:0xff:ASCII:cub::DeviceReduce::Reduce""'
    m = ncu_csv.read_metrics(variant(tmp_path, f"{outer}  {cccl}"), "s")
    assert set(m["range"]) == {"CCCL:cub::DeviceReduce::Reduce"}  # another domain: its name
    m = ncu_csv.read_metrics(variant(tmp_path, "", started), "s")
    assert set(m["range"]) == {"epoch"}


def test_text_push_pop_block_prefers_profgen_over_start_end(tmp_path):
    """The real text with the first kernel's block rewritten as a push/pop stack of two domains
    (the layout of the start/end block: a domain, then `<N,name>` under it)."""
    text = TEXT.read_text()
    block = "    NVTX Start/End Ranges:\n      <default domain>\n        <0,convLayer>\n"
    stack = (
        "    NVTX Push/Pop Stack for Thread 1800013:\n      <default domain>\n        <0,forward>\n"
        "          Payload: none\n        <1,conv:1>\n      profgen\n        <0,stage>\n"
        "        <1,phase a>\n"
    )
    users = stack.split("      profgen\n")[0] + "\n"
    path = tmp_path / "t.txt"
    path.write_text(text.replace(block, block + stack, 1).replace(block, users + block, 2))
    m = ncu_text.read_metrics(path, "s")
    assert list(m["range"][:3]) == ["phase a", "conv:1", "convLayer"]


def test_nvtx_lines_outside_blocks_are_no_ranges(tmp_path):
    text = TEXT.read_text()
    noise = "NVTX Push/Pop Stack:\n  <default domain>\n    <0,program output>\n"
    path = tmp_path / "t.txt"
    path.write_text(noise + text.replace("Section:", "NVTX Start/End Ranges\n    Section:", 1))
    assert set(ncu_text.read_metrics(path, "s")["range"]) == {"convLayer"}


def nested_titles(path: Path) -> Path:
    """A real ncu text page whose NVTX block has 20,000 nested `NVTX Push/Pop Stack:` titles,
    each indented one more space, written at `path`."""
    text = TEXT.read_text()
    block = "    NVTX Start/End Ranges:\n      <default domain>\n        <0,convLayer>\n"
    deep = "".join(" " * (6 + i) + "NVTX Push/Pop Stack:\n" for i in range(20_000))
    path.write_text(text.replace(block, block + deep, 1))
    return path


def test_nested_block_titles_are_read(tmp_path):
    m = ncu_text.read_metrics(nested_titles(tmp_path / "t.txt"), "s")  # (timed: benchmarks)
    assert list(m["range"][:2]) == ["convLayer"] * 2


def test_layouts_from_headers():
    old = ncu_nvtx.Layout.of("Id:Domain:Start/Stop_Range:PL_Type:PL_Value")
    assert old == ncu_nvtx.Layout(1, 2, False)
    assert old.segments(' "0:<default domain>:a:b:none:none" ') == [("<default domain>", "a:b")]
    new = ncu_nvtx.Layout.of(
        "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
    )
    assert new == ncu_nvtx.Layout(0, 6, True)
    assert ncu_nvtx.Layout.of("Kernel Name") is None


def test_import_keeps_the_range_and_refuses_range_time_naming_it(tmp_path, capsys):
    from clirun import assert_refused, profgen

    from profiler import store

    argv = ["import", "--model", "m", "--out", tmp_path, "--stage", f"a={TEXT}"]
    result = profgen([*argv, "--stage", f"b={PADDLE_CSV}"], capsys)
    assert result.code == 0, result.err
    metrics = store.load_run(Path(result.out.strip().splitlines()[-1])).table("metrics")
    assert list(metrics["range"]) == ["convLayer"] * 28
    shown = profgen(["show", result.out.strip().splitlines()[-1], "--table", "metrics"], capsys)
    assert shown.code == 0 and "convLayer" in shown.out
    refused = profgen([*argv, "--range", "conv"], capsys)
    assert_refused(refused, 2, "--range 'conv'", "its kernels ran in the ranges 'convLayer'")
