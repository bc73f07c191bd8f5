"""README's promises that a test can hold: the test command is exactly what `.ci/run` runs,
and the tutorial's commands name files that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def fenced_commands() -> list[str]:
    return re.findall(r"```sh\n(.*?)\n```", README, re.S)


def test_the_test_command_is_what_ci_runs():
    test_command = next(c for c in fenced_commands() if c.endswith("tox"))
    assert test_command in (ROOT / ".ci" / "run").read_text().splitlines()
    assert "chromedriver" in test_command and "venv" in test_command


def test_the_main_command_runs_in_a_venv_it_makes():
    main = fenced_commands()[0]
    assert "python3 -m venv .venv" in main and main.endswith(".venv/bin/profgen sweep lenet")
    assert "pip install" not in main.replace(".venv/bin/pip install", "")  # never system pip


def test_the_tutorial_files_exist():
    for path in re.findall(r"profgen (?:sweep|list) (examples/\S+\.py)", README):
        assert (ROOT / path).is_file(), path
