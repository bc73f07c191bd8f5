"""Runtime adapters: how the harness waits for the device and brackets the profiled range for
a stage, through the runtime the stage already uses, so no study pays for a framework it does
not use (a torch-only study runs without CuPy).

Each adapter says why it cannot run here (`missing`), waits for every queued GPU operation
(`synchronize`), and starts and stops the CUDA profiler API capture range that
`nsys profile --capture-range=cudaProfilerApi` records (`profiler_start`, `profiler_stop`).
Frameworks are imported inside the methods, never at import time.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import sys
from functools import cache
from typing import Any

from profiler.errors import NoCudaDevice


class CpuRuntime:
    """A stage on the CPU: nothing to wait for, no capture range."""

    name = "cpu"
    uses_gpu = False

    def missing(self) -> str | None:
        return None

    def synchronize(self) -> None:
        pass

    def profiler_start(self) -> None:
        pass

    def profiler_stop(self) -> None:
        pass


class CudartRuntime:
    """Any CUDA code: libcudart's cudaDeviceSynchronize and cudaProfilerStart/Stop, loaded with
    ctypes (the fallback for runtimes without their own, e.g. JAX)."""

    name = "cudart"
    uses_gpu = True

    def missing(self) -> str | None:
        try:
            lib = cudart()
        except NoCudaDevice as exc:
            return str(exc)
        count = ctypes.c_int(0)
        if lib.cudaGetDeviceCount(ctypes.byref(count)) != 0 or count.value == 0:
            return "no CUDA device found (cudaGetDeviceCount)"
        return None

    def synchronize(self) -> None:
        _check(cudart().cudaDeviceSynchronize(), "cudaDeviceSynchronize")

    def profiler_start(self) -> None:
        _check(cudart().cudaProfilerStart(), "cudaProfilerStart")

    def profiler_stop(self) -> None:
        _check(cudart().cudaProfilerStop(), "cudaProfilerStop")


class CupyRuntime:
    name = "cupy"
    uses_gpu = True

    def missing(self) -> str | None:
        try:
            import cupy
        except ImportError:
            return "CuPy is not installed (pip install 'profgen[cuda]')"
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except cupy.cuda.runtime.CUDARuntimeError as exc:
            return f"no CUDA device found ({exc})"
        return None if count else "no CUDA device found"

    def synchronize(self) -> None:
        import cupy

        cupy.cuda.runtime.deviceSynchronize()

    def profiler_start(self) -> None:
        import cupy

        cupy.cuda.profiler.start()

    def profiler_stop(self) -> None:
        import cupy

        cupy.cuda.profiler.stop()


class TorchRuntime:
    name = "torch"
    uses_gpu = True
    requires: tuple[str, ...] = ("torch",)

    def missing(self) -> str | None:
        for module in self.requires:
            if not _importable(module):
                return f"{module} is not installed"
        import torch

        return None if torch.cuda.is_available() else "PyTorch sees no CUDA device"

    def synchronize(self) -> None:
        import torch

        torch.cuda.synchronize()

    def profiler_start(self) -> None:
        import torch

        torch.cuda.profiler.start()

    def profiler_stop(self) -> None:
        import torch

        torch.cuda.profiler.stop()


class TritonRuntime(TorchRuntime):
    """Triton kernels launch on torch's streams: torch's adapter, and Triton must import."""

    name = "triton"
    requires = ("torch", "triton")


class NumbaRuntime:
    name = "numba"
    uses_gpu = True

    def missing(self) -> str | None:
        if not _importable("numba"):
            return "numba is not installed"
        from numba import cuda

        return None if cuda.is_available() else "Numba sees no CUDA device"

    def synchronize(self) -> None:
        from numba import cuda

        cuda.synchronize()

    def profiler_start(self) -> None:
        from numba import cuda

        cuda.profile_start()

    def profiler_stop(self) -> None:
        from numba import cuda

        cuda.profile_stop()


class JaxRuntime(CudartRuntime):
    """JAX has no device-wide synchronise: libcudart's, on the primary context XLA shares."""

    name = "jax"

    def missing(self) -> str | None:
        if not _importable("jax"):
            return "JAX is not installed"
        import jax

        if not any(d.platform == "gpu" for d in jax.devices()):
            return "JAX sees no GPU (install jax[cuda13])"
        return super().missing()


ADAPTERS: dict[str, Any] = {
    a.name: a
    for a in (
        CpuRuntime,
        CudartRuntime,
        CupyRuntime,
        TorchRuntime,
        TritonRuntime,
        NumbaRuntime,
        JaxRuntime,
    )
}


def adapter(name: str) -> Any:
    """A fresh adapter for runtime `name` (see profiler.study.RUNTIMES)."""
    return ADAPTERS[name]()


def missing_needs(needs: tuple[str, ...]) -> str | None:
    """Why a stage's `needs` are not met here: a module that does not import, or "cuda"
    without a device. None when all are met."""
    for need in needs:
        if need == "cuda":
            why = CudartRuntime().missing()
            if why:
                return why
        elif not _importable(need):
            return f"{need} is not installed"
    return None


def _importable(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


@cache
def cudart() -> Any:
    """libcudart, loaded once. Raises: NoCudaDevice when no copy of it can be found."""
    for candidate in _cudart_candidates():
        try:
            return ctypes.CDLL(candidate)
        except OSError:
            continue
    raise NoCudaDevice(
        "libcudart (the CUDA runtime library) was not found: install the CUDA toolkit or "
        "nvidia-cuda-runtime, or put its lib folder on LD_LIBRARY_PATH"
    )


def _cudart_candidates() -> list[str]:
    found = ctypes.util.find_library("cudart")
    names = [found] if found else []
    names += [f"libcudart.so.{v}" for v in (13, 12, 11)] + ["libcudart.so"]
    for root in sys.path:  # the nvidia-cuda-runtime wheels (pip installs of CUDA)
        names += sorted(glob.glob(os.path.join(root, "nvidia", "*", "lib", "libcudart.so*")))
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    names += sorted(glob.glob(os.path.join(cuda_home, "lib64", "libcudart.so*")))
    return names


def _check(status: int, call: str) -> None:
    if status != 0:
        raise RuntimeError(f"{call} failed with cudaError {status}")
