"""Kernel names as Nsight Systems shows them: demangled by NVIDIA's cu++filt when it is there.

CUPTI reports mangled names (`_Z5scaleIfEvPT_S0_i`); nsys shows what cu++filt prints
(`void scale<float>(T1 *, T1, int)`). Without cu++filt, the C++ runtime's `__cxa_demangle` gives
`void scale<float>(float*, float, int)`; names that are not mangled (`extern "C"` kernels,
cuBLAS's kernels) are kept as they are.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import shutil
import subprocess
from collections.abc import Sequence

CHUNK = 200  # names per cu++filt call


def find_cufilt() -> str | None:
    """cu++filt on PATH, under $CUDA_HOME or /usr/local/cuda*, or None."""
    on_path = shutil.which("cu++filt")
    if on_path:
        return on_path
    roots = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", "")]
    roots += sorted(glob.glob("/usr/local/cuda*"), reverse=True)
    for root in filter(None, roots):
        cand = os.path.join(root, "bin", "cu++filt")
        if os.access(cand, os.X_OK):
            return cand
    return None


def demangle(names: Sequence[str]) -> tuple[list[str], str]:
    """`names` demangled, and the method used: `cu++filt`, `cxa_demangle` or `none`.

    Raises: subprocess.CalledProcessError when cu++filt is found but fails.
    """
    mangled = sorted({n for n in names if n.startswith("_Z")})
    if not mangled:
        return list(names), "none"
    tool = find_cufilt()
    if tool:
        table = _cufilt(tool, mangled)
        method = "cu++filt"
    else:
        table = {m: _cxa_demangle(m) for m in mangled}
        method = "cxa_demangle" if any(table[m] != m for m in mangled) else "none"
    return [table.get(n, n) for n in names], method


def _cufilt(tool: str, mangled: list[str]) -> dict[str, str]:
    table: dict[str, str] = {}
    for i in range(0, len(mangled), CHUNK):
        part = mangled[i : i + CHUNK]
        done = subprocess.run([tool, *part], capture_output=True, text=True, timeout=60, check=True)
        lines = done.stdout.splitlines()
        if len(lines) != len(part):
            raise subprocess.CalledProcessError(
                done.returncode, [tool, "..."], done.stdout, done.stderr
            )
        table.update(zip(part, lines, strict=False))
    return table


_LIBSTDCXX: list[ctypes.CDLL | None] = []  # loaded once: [library] or [None]


def _libstdcxx() -> ctypes.CDLL | None:
    if not _LIBSTDCXX:
        path = ctypes.util.find_library("stdc++")
        _LIBSTDCXX.append(ctypes.CDLL(path) if path else None)
    return _LIBSTDCXX[0]


def _cxa_demangle(name: str) -> str:
    lib = _libstdcxx()
    if lib is None:
        return name
    fn = lib.__cxa_demangle
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    status = ctypes.c_int()
    ptr = fn(name.encode(), None, None, ctypes.byref(status))
    if not ptr or status.value != 0:
        return name
    try:
        return ctypes.string_at(ptr).decode("utf-8", errors="replace")
    finally:
        ctypes.CDLL(None).free(ctypes.c_void_p(ptr))
