"""What this machine is and what it can profile: `machine_info`, `require_cuda`, `doctor`.

Everything is probed lazily, inside these functions; importing this module touches nothing.
Absent tools are reported as such (None, or a failed check with the fix), not raised, except by
`require_cuda`, whose purpose is to stop a sweep before it starts.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import socket
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from profiler.collect import ncu as ncu_mod
from profiler.collect import nsys as nsys_mod
from profiler.collect.tools import output_of
from profiler.errors import NoCudaDevice, ProfgenError, ToolNotFound

if TYPE_CHECKING:
    from profiler.collect.discovery import StudyInfo

PROJECT_ROOT = Path(__file__).resolve().parents[2]
_SMI_FIELDS = (
    "name",
    "driver_version",
    "clocks.sm",
    "clocks.mem",
    "clocks.max.sm",
    "clocks.max.mem",
    "memory.total",
)


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def cuda_state() -> dict[str, Any]:
    """The driver's view of CUDA, through libcuda itself (no framework needed):
    {'devices': n, 'driver': 13000, 'runtime': 13000 or None, 'cupy': version or None}, or,
    when no device can be used, {'error': why, 'fix': what to do}."""
    fix = "install the NVIDIA driver and check that nvidia-smi lists a GPU"
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return {"error": "the CUDA driver (libcuda.so.1) is not installed", "fix": fix}
    count, version = ctypes.c_int(0), ctypes.c_int(0)
    status = lib.cuInit(0)
    if status != 0:
        return {"error": f"the CUDA driver could not start (cuInit error {status})", "fix": fix}
    lib.cuDeviceGetCount(ctypes.byref(count))
    lib.cuDriverGetVersion(ctypes.byref(version))
    state: dict[str, Any] = {
        "devices": count.value,
        "driver": version.value,
        "runtime": _runtime_version(),
        "cupy": _version("cupy-cuda13x") or _version("cupy-cuda12x") or _version("cupy"),
    }
    if count.value == 0:
        state.update(
            error="the driver reports zero CUDA devices",
            fix="check nvidia-smi and CUDA_VISIBLE_DEVICES",
        )
    return state


_CC_MAJOR, _CC_MINOR = 75, 76  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, _MINOR


def compute_capability(device: int = 0) -> tuple[int, int] | None:
    """(major, minor) of CUDA device `device` as the driver numbers them (CUDA_VISIBLE_DEVICES
    applies), through libcuda; None when no driver or no such device answers."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    handle, major, minor = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0)
    if lib.cuInit(0) != 0 or lib.cuDeviceGet(ctypes.byref(handle), device) != 0:
        return None
    if lib.cuDeviceGetAttribute(ctypes.byref(major), _CC_MAJOR, handle) != 0:
        return None
    if lib.cuDeviceGetAttribute(ctypes.byref(minor), _CC_MINOR, handle) != 0:
        return None
    return major.value, minor.value


def _runtime_version() -> int | None:
    from profiler.collect.runtimes import cudart

    try:
        lib = cudart()
    except ProfgenError:
        return None
    version = ctypes.c_int(0)
    return version.value if lib.cudaRuntimeGetVersion(ctypes.byref(version)) == 0 else None


def require_cuda() -> None:
    """Stop early, in one sentence, when no CUDA device can be used.

    Raises: NoCudaDevice("no CUDA device was found: <cause>; <fix>").
    """
    state = cuda_state()
    if "error" in state:
        raise NoCudaDevice(f"no CUDA device was found: {state['error']}; {state['fix']}")


def _nvidia_smi() -> dict[str, str] | None:
    try:
        text = output_of(
            ["nvidia-smi", f"--query-gpu={','.join(_SMI_FIELDS)}", "--format=csv,noheader,nounits"],
            timeout=20,
        )
    except ToolNotFound:
        return None
    first = text.strip().splitlines()[0] if text.strip() else ""
    values = [v.strip() for v in first.split(",")]
    if len(values) != len(_SMI_FIELDS):
        return None
    return dict(zip(_SMI_FIELDS, values, strict=False))


def _cpu_model() -> str:
    info = Path("/proc/cpuinfo")
    lines = info.read_text().splitlines() if info.is_file() else []
    for line in lines:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


GIT_COMMIT_ENV = "PROFGEN_GIT_COMMIT"  # for copies of a checkout without .git (CI, devices)


def git_info(root: Path = PROJECT_ROOT) -> dict[str, Any]:
    """The commit named by $PROFGEN_GIT_COMMIT when it is set (dirty unknown): whoever copied the
    tree knows what it is, and a copy may carry a stale .git of its own (seen on the GPU
    machine); else {'commit': sha, 'dirty': bool} of the project checkout; else {}."""
    if os.environ.get(GIT_COMMIT_ENV):
        return {"commit": os.environ[GIT_COMMIT_ENV], "dirty": None}
    return _git_checkout(root)


def _git_checkout(root: Path) -> dict[str, Any]:
    try:
        sha = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=20,
        )
        if sha.returncode != 0:
            return {}
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return {}
    return {"commit": sha.stdout.strip(), "dirty": bool(status.stdout.strip())}


def _tool_version(find: Any, version: Any) -> tuple[str | None, str | None]:
    try:
        path = find()
        return str(path), version(path)
    except ToolNotFound:
        return None, None


def run_meta(
    study: StudyInfo, command: str, source: str, settings: dict[str, Any], stages: list[str]
) -> dict[str, Any]:
    """What run.json says of every run, sweep or serve: the study, when, the command and its
    settings, this machine and its git commit."""
    from profiler import __version__

    machine = machine_info()
    return {
        "profgen_version": __version__,
        "model": study.name,
        "model_title": study.title,
        "unit": study.unit,
        "study": {"ref": study.ref, "version": study.version, "compare": study.compare},
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command,
        "source": source,
        "settings": settings,
        "machine": machine,
        "git": machine.pop("git", {}),
        "stages": stages,
    }


def machine_info() -> dict[str, Any]:
    """The machine a run was measured on, for run.json (missing things are None).

    Returns: gpu, gpu_count, driver, cuda_runtime, cuda_driver, clocks (MHz, when nvidia-smi
    reads them), cupy, cupti_python, nvtx, nsys (+ nsys_path), ncu (+ ncu_path), cpu, host,
    python, platform, git ({'commit', 'dirty'}).
    """
    cuda = cuda_state()
    smi = _nvidia_smi() or {}
    nsys_path, nsys_version = _tool_version(nsys_mod.find_nsys, nsys_mod.version)
    ncu_path, ncu_version = _tool_version(ncu_mod.find_ncu, ncu_mod.version)
    clocks = {k.replace(".", "_"): _mhz(smi.get(k)) for k in _SMI_FIELDS if k.startswith("clocks")}
    return {
        "gpu": smi.get("name"),
        "gpu_count": cuda.get("devices"),
        "gpu_memory_mib": _mhz(smi.get("memory.total")),
        "driver": smi.get("driver_version"),
        "cuda_runtime": _cuda_version(cuda.get("runtime")),
        "cuda_driver": _cuda_version(cuda.get("driver")),
        "clocks_mhz": clocks if any(v is not None for v in clocks.values()) else None,
        "cupy": cuda.get("cupy") or _version("cupy-cuda13x") or _version("cupy"),
        "cupti_python": _version("cupti-python"),
        "nvtx": _version("nvtx"),
        "nsys": nsys_version,
        "nsys_path": nsys_path,
        "ncu": ncu_version,
        "ncu_path": ncu_path,
        "cpu": _cpu_model(),
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git": git_info(),
    }


def _mhz(text: str | None) -> int | None:
    try:
        return int(float(text)) if text is not None else None
    except ValueError:  # "[N/A]"
        return None


def _cuda_version(code: int | None) -> str | None:
    return f"{code // 1000}.{code % 1000 // 10}" if code else None


def run_json_probe(module: str, timeout: float = 120.0) -> dict[str, Any]:
    """Run `python -m module` in a child and read the JSON on its last stdout line.

    Raises: ProfgenError with the child's last output lines when it fails.
    """
    try:
        done = subprocess.run(
            [sys.executable, "-m", module],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=PROJECT_ROOT,
            env=dict(os.environ),
        )
    except subprocess.TimeoutExpired as exc:
        raise ProfgenError(f"python -m {module} did not finish within {timeout:g} s") from exc
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        err = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ProfgenError(f"python -m {module} exited with status {done.returncode}: {err}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result
