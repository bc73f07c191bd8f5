"""The tutorial's CPU-only twin run as a user would: the installed `profgen`, from a temporary
directory outside the checkout, through real worker processes, no GPU. And a CPU study runs
with CuPy absent: the harness needs no framework a study does not use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from profiler import store

ROOT = Path(__file__).resolve().parents[1]
TWIN = ROOT / "examples" / "softmax_cpu.py"
NO_CUPY = ROOT / "tests" / "studies" / "no_cupy"


def profgen(args: list[str], cwd: Path, env: dict[str, str] | None = None):
    exe = Path(sys.executable).with_name("profgen")
    cmd = (
        [str(exe)]
        if exe.exists()
        else [sys.executable, "-c", "from profiler.cli import main; raise SystemExit(main())"]
    )
    return subprocess.run(cmd + args, cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


def run_dir(done: subprocess.CompletedProcess, cwd: Path) -> Path:
    """The run directory a command printed last (relative to where it ran)."""
    return cwd / done.stdout.strip().splitlines()[-1]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    work = tmp_path / "elsewhere"
    work.mkdir()
    return work


def test_the_cpu_twin_sweeps_from_outside_the_checkout(outside: Path, tmp_path: Path):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = profgen(["sweep", str(TWIN), "--backend", "none", "--repeat", "3"], outside, env)
    assert done.returncode == 0, done.stderr
    run = store.load_run(run_dir(done, outside))
    assert run.path.parent == outside / "reports"  # --out defaults to ./reports of the caller
    stages = run.table("stages")
    assert list(stages["stage"]) == ["row_loop", "vectorised", "InPlace", "scipy_softmax"]
    assert list(stages["status"]) == ["PASS"] * 4
    assert list(stages["role"]) == ["baseline", "step", "step", "framework"]
    assert run.meta["unit"] == "rows" and (stages["items"] == 2048).all()
    assert (run.path / "report.html").stat().st_size > 100_000
    assert "Time for 2,048 rows" in (run.path / "report.html").read_text()
    ranges = set(run.table("ranges")["name"]) if run.has("ranges") else set()
    assert not ranges  # backend none: no trace, no range table


def test_a_second_sweep_hits_the_reference_cache(outside: Path, tmp_path: Path):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    args = [
        "sweep",
        str(TWIN),
        "--backend",
        "none",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--stages",
        "vectorised",
    ]
    first, second = profgen(args, outside, env), profgen(args, outside, env)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    logs = [run_dir(p, outside) / "raw" / "vectorised" / "worker.log" for p in (first, second)]
    assert "reference: cache miss" in logs[0].read_text()
    assert "reference: cache hit" in logs[1].read_text()


def test_a_cpu_study_runs_with_cupy_absent(outside: Path, tmp_path: Path):
    path = os.pathsep.join(filter(None, [str(NO_CUPY), os.environ.get("PYTHONPATH", "")]))
    env = dict(os.environ, PYTHONPATH=path, XDG_CACHE_HOME=str(tmp_path / "cache"))
    blocked = subprocess.run(
        [sys.executable, "-c", "import cupy"], env=env, capture_output=True, text=True
    )
    assert blocked.returncode != 0 and "blocked for this test" in blocked.stderr
    study = ROOT / "tests" / "studies" / "toy_study.py"
    done = profgen(["sweep", str(study), "--backend", "none", "--stages", "ref"], outside, env)
    assert done.returncode == 0, done.stderr
    result = json.loads((run_dir(done, outside) / "raw" / "ref" / "result.json").read_text())
    assert result["status"] == "PASS" and result["runtime"] == "cpu"


def test_list_names_the_installed_studies_from_their_entry_points(outside: Path):
    done = profgen(["list"], outside)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("lenet: LeNet-5 on 28x28 handwritten digits")
    assert " 6. cuda_baseline" in done.stdout and "[baseline, cupy]" in done.stdout
    one = profgen(["list", str(TWIN)], outside)
    assert one.returncode == 0 and one.stdout.startswith("softmax_cpu: Row-wise softmax on the CPU")
