"""The wheel a user installs, not the checkout: built, installed into a folder outside the
checkout, and used from there to render a committed sample run and to import nsys output.
The templates must be in the wheel (a non-editable install could not render any report)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "runs" / "lenet-h100-schema1-cupti"
NSYS = ROOT / "tests" / "data" / "report" / "nsys-2025.3.1-h100"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from this checkout, installed (without dependencies) into a folder."""
    tmp = tmp_path_factory.mktemp("wheel")
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    done = subprocess.run(
        [*build, "-w", str(tmp / "dist"), str(ROOT)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp / "dist").glob("profgen-*.whl")
    target = tmp / "site"
    install = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
    done = subprocess.run([*install, str(wheel)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return target


def from_wheel(site: Path, code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(site), PYTHONNOUSERSITE="1")
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_wheel_carries_templates_and_the_study_entry_point(installed: Path):
    assert (installed / "profiler" / "templates" / "report.html.j2").is_file()
    assert (installed / "variants" / "lenet" / "kernels" / "fused.cu").is_file()
    for header in ("lenet/kernels/common.cuh", "onnxplan/kernels/conv_direct.cuh"):
        assert (installed / "variants" / header).is_file(), header  # kernels paste them in
    (dist,) = installed.glob("profgen-*.dist-info")
    assert "lenet = variants.lenet.study:STUDY" in (dist / "entry_points.txt").read_text()


def test_the_installed_wheel_renders_a_report_and_imports_a_run(installed: Path, tmp_path: Path):
    code = (
        "import profiler, sys\n"
        f"assert profiler.__file__.startswith({str(installed)!r}), profiler.__file__\n"
        "from profiler.cli import main\n"
        f"assert main(['report', {str(SAMPLE)!r}, '-o', 'r.html']) == 0\n"
        f"assert main(['import', '--model', 'm', '--stage', 'demo={NSYS}',"
        " '--out', 'runs']) == 0\n"
    )
    done = from_wheel(installed, code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.html").stat().st_size > 1_000_000
    (run,) = (tmp_path / "runs").iterdir()
    assert (run / "report.html").is_file() and (run / "run.json").is_file()


def test_every_package_is_listed_for_the_wheel():
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for top in ("profiler", "variants")
        for p in (ROOT / top).rglob("__init__.py")
    }
    assert found | {"profiler.templates"} == listed
