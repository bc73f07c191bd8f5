"""Compile a study's .cu files with NVRTC (through CuPy) and fill their `__constant__` arrays."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from profiler.errors import UsageError

#: NVRTC options: C++17 and no fast-math (results must stay close to a float64 reference)
COMPILE_OPTIONS: tuple[str, ...] = ("-std=c++17",)
LOCAL_INCLUDE = re.compile(r'^#include "([\w.\-]+)"\s*$', re.MULTILINE)
CONSTANT_DECL = re.compile(r"__constant__\s+float\s+(\w+)\s*\[([^\]]+)\]")


def source(path: Path) -> str:
    """The CUDA C of `path` with each `#include "x.cuh"` of a file beside it pasted in place
    (once; `#pragma once` dropped), so that CuPy's compile cache, keyed on the source text,
    sees a change to any of them, and NVRTC needs no include path."""
    return _expand(Path(path), set())


def _expand(path: Path, seen: set[Path]) -> str:
    text = path.read_text()

    def paste(match: re.Match[str]) -> str:
        header = path.with_name(match.group(1))
        if header in seen:
            return ""
        seen.add(header)
        return _expand(header, seen).replace("#pragma once\n", "")

    return LOCAL_INCLUDE.sub(paste, text)


def compile_module(path: Path, defines: Iterable[str] = ()) -> Any:
    """Compile the .cu file at `path` into a loaded `cupy.RawModule`.

    Each call gives a module of its own, so two stages in one process never share the
    `__constant__` arrays of a module. Raises: cupy's CompileException on a compile error.
    """
    import cupy

    options = COMPILE_OPTIONS + tuple(f"-D{d}" for d in defines)
    module = cupy.RawModule(code=source(path), options=options)
    module.compile()
    return module


def kernels(module: Any, names: Iterable[str]) -> dict[str, Any]:
    """The `cupy.RawKernel`s called `names` in `module` (extern "C" names)."""
    return {n: module.get_function(n) for n in names}


def constant_sizes(path: Path) -> dict[str, int]:
    """Bytes of every `__constant__ float sym[a * b]` array declared in the .cu file at `path`.

    Raises: UsageError when a size is not a product of integer literals.
    """
    sizes = {}
    for sym, dims in CONSTANT_DECL.findall(source(path)):
        if not re.fullmatch(r"[\d\s*]+", dims):
            raise UsageError(f"{path.name}: size of {sym} is not a product of integers")
        sizes[sym] = 4 * math.prod(int(d) for d in dims.split("*"))
    return sizes


def set_constants(module: Any, path: Path, values: Mapping[str, np.ndarray]) -> None:
    """Copy each float32 array of `values` into the `__constant__` array of the same name in
    `module`, compiled from `path`. Raises: UsageError on a size mismatch."""
    import cupy

    sizes = constant_sizes(path)
    for symbol, value in values.items():
        host = np.ascontiguousarray(value, dtype=np.float32).ravel()
        if sizes.get(symbol) != host.nbytes:
            raise UsageError(
                f"{path.name}: __constant__ {symbol} holds {sizes.get(symbol)} bytes, "
                f"{host.nbytes} given"
            )
        ptr = module.get_global(symbol).ptr
        cupy.cuda.runtime.memcpy(ptr, host.ctypes.data, host.nbytes, 1)  # host to device
