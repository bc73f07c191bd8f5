"""The command's help, as a new user meets it: every subcommand says what it does, with
examples and its defaults; every positional argument is explained; the exit codes are listed;
bare `profgen` prints its usage and one line."""

from __future__ import annotations

import argparse

import pytest

from profiler import defaults
from profiler.analyze.checks import defaults_text
from profiler.cli import build_parser, main
from profiler.errors import EXIT_CODES_HELP


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("name", sorted(subparsers()))
def test_every_subcommand_is_documented(name: str) -> None:
    p = subparsers()[name]
    text = p.format_help()
    assert p.description and len(p.description) > 40, name
    assert "exit codes:" in text and "developer" not in text.lower()
    if name not in ("doctor", "list"):
        assert "example" in text, name
    for action in p._actions:
        if not action.option_strings:  # positionals
            assert action.help, f"{name} {action.dest} has no help"
            assert action.metavar == action.metavar.upper() if action.metavar else True


def test_defaults_are_stated_from_the_code() -> None:
    sweep = subparsers()["sweep"].format_help().replace("\n", " ")
    assert " ".join(defaults_text().split()) in " ".join(sweep.split())
    assert f"(default: the study's, else {defaults.REPEAT})" in sweep
    assert "(default: cupti" in sweep
    show = subparsers()["show"].format_help()
    assert "..." not in show and "gpu_activities" in show and "batch_sweep" in show


def test_the_top_level_help_is_for_users(capsys) -> None:
    text = build_parser().format_help()
    assert "staged GPU optimisation studies" in text and EXIT_CODES_HELP.split(",")[0] in text
    assert "thin argparse" not in text


def test_bare_profgen_prints_its_usage_and_one_line(capsys) -> None:
    assert main([]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("usage: profgen") and err[-1].startswith("profgen: error: choose")


def test_run_arguments_are_named_alike() -> None:
    for name in ("show", "report", "baseline"):
        usage = subparsers()[name].format_usage()
        assert "RUN" in usage and "run_dir" not in usage and "OUTPUT" not in usage, usage
