"""The terminal's staged table and sweep progress: plain text when stdout is not a terminal (a
pipe, a CI log: what capsys gives), a box table when it is; run text never reaches the terminal
as escape codes or rich markup."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from runfactory import sample_run

from profiler import schema
from profiler.cli.display import LiveProgress, print_staged
from profiler.render import terminal

BOX = set("─│┃━┏┓┗┛┡┩╇╈┼┠┨┯┷╭╮╰╯")
HOSTILE_TITLE = "[bold red]Evil[/] \x1b[2J\x07\u202e"
HOSTILE_REASON = "[link=https://x]click[/link]\x1b[31m\nsecond line\rover"


def stages_of_sample():  # type: ignore[no-untyped-def]
    return sample_run().table(schema.STAGES.name)


def hostile_stages():  # type: ignore[no-untyped-def]
    stages = stages_of_sample().copy()
    stages.loc[stages["stage"] == "conv_opt", "title"] = HOSTILE_TITLE
    stages.loc[stages["stage"] == "pinned", "status"] = schema.FAIL
    stages.loc[stages["stage"] == "pinned", "reason"] = HOSTILE_REASON
    return stages


def test_plain_text_when_stdout_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    print_staged(stages_of_sample(), 10_000, "images", "LeNet-5")
    out = capsys.readouterr().out
    assert not BOX & set(out) and "\x1b" not in out
    lines = out.splitlines()
    assert lines[0] == "LeNet-5, 10,000 images"
    assert lines[1].split()[:4] == ["Stage", "Time", "(10,000", "images)"]
    cuda = next(line for line in lines if line.startswith("CUDA baseline "))
    assert cuda.split()[2:] == ["1.561s", "1.513s-1.606s", "0.003737x", "1x", "9e-07", "PASS"]
    assert len(lines) == 2 + 10


def test_box_table_when_stdout_is_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    print_staged(stages_of_sample(), 10_000, "images", "LeNet-5", out=out)
    assert BOX & set(out.getvalue()) and "0.003737x" in out.getvalue()


def test_run_text_is_neither_escape_codes_nor_markup(capsys: pytest.CaptureFixture[str]) -> None:
    print_staged(hostile_stages(), 10_000, "images", "[blink]title[/]")
    plain = capsys.readouterr().out
    console = Console(file=io.StringIO(), width=400, color_system=None, force_terminal=False)
    console.print(terminal.staged_rich_table(hostile_stages(), 10_000, "images", "[blink]title[/]"))
    boxed = console.file.getvalue()  # type: ignore[attr-defined]
    for out in (plain, boxed):
        assert not any(ch in out for ch in "\x1b\x07\r\u202e")
        assert "[bold red]Evil[/] \\x1b[2J\\x07\\u202e" in out
        assert "[blink]title[/], 10,000 images" in out
        note = next(line for line in out.splitlines() if line.startswith("FAIL "))
        assert note.endswith("[link=https://x]click[/link]\\x1b[31m second line over")


def test_progress_lines_show_run_text_as_written() -> None:
    console = Console(file=io.StringIO(), width=300, color_system=None, force_terminal=False)
    progress = LiveProgress(console)
    progress.begin([("s", HOSTILE_TITLE)])
    progress.finish("s", "FAIL", "[bold]why[/] \x1b[31mred")
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b" not in out and "[bold red]Evil[/]" in out
    assert "[bold]why[/] \\x1b[31mred" in out
