"""Machine information, `require_cuda` and `profgen doctor`, on this machine (no GPU here) and
with the probes' findings stubbed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from profiler.collect import doctor as probes
from profiler.collect import env
from profiler.collect.doctor import Check
from profiler.errors import NoCudaDevice

pytestmark = pytest.mark.skipif(env.cuda_state().get("devices"), reason="this machine has a GPU")


def test_require_cuda_is_one_sentence():
    with pytest.raises(NoCudaDevice) as err:
        env.require_cuda()
    text = str(err.value)
    assert text.startswith("no CUDA device was found: ") and "\n" not in text
    assert "Traceback" not in text


@pytest.mark.parametrize(
    "state, cause",
    [
        (
            {"error": "CuPy is not installed (No module named 'cupy')", "fix": "install CuPy"},
            "CuPy is not installed",
        ),
        (
            {
                "cupy": "14.2.0",
                "devices": 0,
                "runtime": 13020,
                "driver": 13000,
                "error": "the driver reports zero CUDA devices",
                "fix": "check nvidia-smi",
            },
            "the driver reports zero CUDA devices; check nvidia-smi",
        ),
    ],
)
def test_require_cuda_names_the_cause(monkeypatch, state, cause):
    monkeypatch.setattr(env, "cuda_state", lambda: state)
    with pytest.raises(NoCudaDevice, match=f"^no CUDA device was found: {cause}"):
        env.require_cuda()


def test_cuda_state_without_a_driver_needs_no_framework(monkeypatch):
    """The driver is asked through libcuda itself: CuPy is never imported for it."""
    import ctypes

    def no_driver(name, *a, **kw):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(ctypes, "CDLL", no_driver)
    monkeypatch.setitem(sys.modules, "cupy", None)  # importing CuPy now fails
    state = env.cuda_state()
    assert state["error"] == "the CUDA driver (libcuda.so.1) is not installed"
    assert "nvidia-smi" in state["fix"]


def test_cuda_state_when_cuinit_fails(monkeypatch):
    import ctypes

    class Driver:
        @staticmethod
        def cuInit(flags):
            return 35  # CUDA_ERROR_INSUFFICIENT_DRIVER

    monkeypatch.setattr(ctypes, "CDLL", lambda name, *a, **kw: Driver())
    state = env.cuda_state()
    assert state["error"] == "the CUDA driver could not start (cuInit error 35)"


def test_machine_info_without_gpu():
    info = env.machine_info()
    for key in (
        "gpu",
        "driver",
        "cuda_runtime",
        "cupy",
        "cupti_python",
        "nvtx",
        "nsys",
        "ncu",
        "cpu",
        "host",
        "python",
        "git",
        "clocks_mhz",
    ):
        assert key in info
    assert info["python"] == ".".join(map(str, sys.version_info[:3]))
    assert info["cpu"] and info["host"]
    if info["git"]:
        assert len(info["git"]["commit"]) == 40 and isinstance(info["git"]["dirty"], bool)


def test_git_info_outside_a_checkout(tmp_path):
    assert env.git_info(tmp_path) == {}


def test_doctor_here_says_what_is_missing():
    checks = probes.doctor(probe=False)
    names = [c.name for c in checks]
    assert names[:3] == ["CUDA device", "nvtx", "cupti"]
    assert not probes.cupti_works(checks)
    text = probes.format_checks(checks)
    assert "FAIL  CUDA device" in text and text.rstrip().endswith("backends that work here: none")


def test_doctor_exit_status(monkeypatch, capsys):
    from profiler.cli import main

    assert main(["doctor", "--quick"]) == 4
    monkeypatch.setattr(
        probes,
        "doctor",
        lambda probe: [
            Check("CUDA device", True, "H100", required=True),
            Check("cupti", True, "traced 3 kernels", required=True),
            Check("nsys", False, "not found"),
        ],
    )
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "backends that work here: cupti\n" in out or out.rstrip().endswith(
        "backends that work here: cupti"
    )


def test_nsys_importer_missing_libdw(monkeypatch, tmp_path):
    monkeypatch.setattr(probes.nsys_mod, "find_nsys", lambda: Path("/opt/nsys"))
    monkeypatch.setattr(probes.nsys_mod, "version", lambda path: "2025.3.1.90")
    monkeypatch.setattr(probes.nsys_mod, "importer", lambda path: Path("/opt/QdstrmImporter"))
    monkeypatch.setattr(probes.nsys_mod, "missing_libraries", lambda path: ["libdw.so.1"])
    checks = probes.check_nsys(probe=True)
    assert [c.ok for c in checks] == [True, False]
    bad = checks[1]
    assert (
        "cannot load libdw.so.1" in bad.detail
        and "libdw1" in bad.fix
        and "LD_LIBRARY_PATH" in bad.fix
    )
    text = probes.format_checks(checks)
    assert "fix: install libdw1" in text and "nsys" not in text.splitlines()[-1].split(":", 1)[1]


def test_ncu_counters_for_administrators_only(monkeypatch):
    monkeypatch.setattr(probes.ncu_mod, "find_ncu", lambda: Path("/usr/bin/ncu"))
    monkeypatch.setattr(probes.ncu_mod, "version", lambda path: "2025.3.1.0")
    monkeypatch.setattr(probes, "_admin_only", lambda: True)
    monkeypatch.setattr(probes.os, "geteuid", lambda: 1000)
    checks = probes.check_ncu(probe=True)
    assert checks[1].name == "ncu counters" and not checks[1].ok
    assert "ERR_NVGPUCTRPERM" in checks[1].fix or "administrators" in checks[1].detail


def test_missing_libraries_from_ldd(tmp_path, monkeypatch):
    monkeypatch.setattr(
        probes.nsys_mod,
        "output_of",
        lambda cmd, timeout, env=None: (
            "\tlinux-vdso.so.1 (0x00007ffc)\n\tlibdw.so.1 => not found\n"
            "\tlibc.so.6 => /lib/libc.so.6\n"
        ),
    )
    assert probes.nsys_mod.missing_libraries(Path("/opt/QdstrmImporter")) == ["libdw.so.1"]


def test_git_commit_from_the_environment_wins(tmp_path, monkeypatch):
    """A copy of the checkout (a device, a CI artifact) records the commit the environment
    names, even when the copy carries a stale .git of its own; unset, git's answer is used."""
    from profiler.collect import env

    monkeypatch.setenv(env.GIT_COMMIT_ENV, "0123abc")
    assert env.git_info(tmp_path) == {"commit": "0123abc", "dirty": None}
    assert env.git_info()["commit"] == "0123abc"
    monkeypatch.delenv(env.GIT_COMMIT_ENV)
    assert env.git_info(tmp_path) == {}
    assert len(env.git_info()["commit"]) == 40


@pytest.mark.parametrize(
    ("cc", "metric", "said"),
    [
        ((9, 0), "dram__bytes_read.sum", "ncu read DRAM counters of a tiny kernel"),
        ((12, 0), "dram__bytes_op_read.sum", "ncu read DRAM counters of a tiny kernel"),
        ((12, 1), "gpu__time_duration.sum", "ncu read the duration of a tiny kernel"),
    ],
)
def test_ncu_probe_asks_for_the_names_of_the_device(monkeypatch, tmp_path, cc, metric, said):
    """`profgen doctor`'s ncu probe asks for DRAM's read bytes by the name ncu gives them at the
    device's compute capability (none at 12.1, GB10) and finds that name in ncu's page."""
    ncu = tmp_path / "ncu"
    ncu.write_text(
        "#!/usr/bin/env python3\nimport sys\nargs = sys.argv[1:]\n"
        "log = args[args.index('--log-file') + 1]\n"
        "open(log, 'w').write(args[args.index('--metrics') + 1])\n"
    )
    ncu.chmod(0o755)
    monkeypatch.setattr(probes.env, "compute_capability", lambda: cc)
    check = probes._probe_ncu(ncu)
    assert check.ok and check.detail == said
    assert probes._probe_metrics(cc)[-1] == metric
