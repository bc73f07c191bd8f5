"""profgen's NVTX ranges: the one way a stage names its phases.

`range(name)` pushes an NVTX range in domain "profgen" (so nsys and ncu see it) and, when an
in-process tracer has installed a recorder with `set_recorder`, also records the push and the
pop on the tracer's clock, so GPU work can be attributed to the range that was open on its
thread when the work was issued.

Range names never contain `/` or `@`: Nsight Compute's `--nvtx-include` syntax uses them.
Nothing is imported or probed until the first range is pushed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Protocol

DOMAIN = "profgen"
FORBIDDEN = ("/", "@")


class Recorder(Protocol):
    """What an in-process tracer provides to see ranges on its own clock."""

    def push(self, name: str) -> None: ...

    def pop(self) -> None: ...


_recorder: Recorder | None = None
_nvtx: Any = None  # the `nvtx` module once loaded, False when it is not installed


def set_recorder(recorder: Recorder | None) -> None:
    """Install (or remove, with None) the tracer that records ranges on its clock."""
    global _recorder
    _recorder = recorder


def check_name(name: str) -> str:
    """Return `name`, or raise ValueError when Nsight Compute could not filter on it."""
    if not name or any(ch in name for ch in FORBIDDEN):
        raise ValueError(f"range name {name!r} must be non-empty and contain neither '/' nor '@'")
    return name


def _load_nvtx() -> Any:
    global _nvtx
    if _nvtx is None:
        try:
            import nvtx

            _nvtx = nvtx
        except ImportError:
            _nvtx = False
    return _nvtx


def push(name: str) -> None:
    """Open range `name` on this thread (prefer the `range` context manager)."""
    nvtx = _load_nvtx()
    if nvtx:
        nvtx.push_range(message=name, domain=DOMAIN)
    if _recorder is not None:
        _recorder.push(name)


def pop() -> None:
    """Close the innermost range opened by `push` on this thread."""
    if _recorder is not None:
        _recorder.pop()
    nvtx = _load_nvtx()
    if nvtx:
        nvtx.pop_range(domain=DOMAIN)


@contextlib.contextmanager
def range(name: str) -> Iterator[None]:  # noqa: A001 - the name the Stage contract uses
    """Name a phase of a stage: `with range("conv1"): launch(...)`."""
    push(check_name(name))
    try:
        yield
    finally:
        pop()
