"""Studies other than LeNet on the GPU (marked gpu): the tutorial's softmax study, and a
torch-only study profiled with CuPy absent (its import is blocked by tests/studies/no_cupy)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from profiler import store

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
NO_CUPY = ROOT / "tests" / "studies" / "no_cupy"


def sweep(study: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    cmd = [sys.executable, "-c", "from profiler.cli import main; raise SystemExit(main())"]
    cmd += ["sweep", str(study), "--out", str(tmp_path / "runs"), "--repeat", "5", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return store.load_run(done.stdout.strip().splitlines()[-1])


def test_the_softmax_tutorial_sweeps_and_profiles(tmp_path):
    run = sweep(ROOT / "examples" / "softmax.py", tmp_path, "--items", "8192")
    stages = run.table("stages").set_index("stage")
    assert list(stages.index) == ["Naive", "Warp", "WarpPinned", "torch_softmax"]
    assert (stages["status"] == "PASS").all(), stages["reason"]
    kernels = run.table("gpu_activities")
    names = set(kernels.loc[kernels["kind"] == "kernel", "name"])
    assert {"naive", "warp"} <= names
    assert {"h2d", "softmax", "d2h"} <= set(run.table("ranges")["name"])
    print("\nsoftmax:", stages[["median_ns", "max_rel_err"]].to_string())


@pytest.mark.parametrize("backend", ["cupti", "nsys"])
def test_a_torch_only_study_runs_with_cupy_absent(tmp_path, backend):
    path = os.pathsep.join(filter(None, [str(NO_CUPY), os.environ.get("PYTHONPATH", "")]))
    env = dict(os.environ, PYTHONPATH=path)
    probe = subprocess.run([sys.executable, "-c", "import cupy"], env=env, capture_output=True)
    assert probe.returncode != 0  # CuPy really is absent for the sweep below
    run = sweep(
        ROOT / "tests" / "studies" / "torch_only_study.py", tmp_path, "--backend", backend, env=env
    )
    stages = run.table("stages")
    assert list(stages["status"]) == ["PASS", "PASS"], list(stages["reason"])
    kernels = run.table("gpu_activities")
    assert (kernels["kind"] == "kernel").any() and set(kernels["stage"]) == {"eager", "Resident"}
    assert "relu_scale" in set(run.table("ranges")["name"])


def test_a_cpu_only_study_sweeps_under_nsys(tmp_path):
    """A CPU stage has no CUDA profiler API of its own: nsys's capture range is opened through
    libcudart, so nsys writes a report (of ranges, no kernels) instead of none."""
    run = sweep(
        ROOT / "tests" / "studies" / "toy_study.py",
        tmp_path,
        "--backend",
        "nsys",
        "--stages",
        "ref",
    )
    assert list(run.table("stages")["status"]) == ["PASS"]
    assert "tanh" in set(run.table("ranges")["name"])
