"""profgen's NVTX ranges: the one way a stage names its phases.

`range(name)` pushes an NVTX range in domain "profgen" (so nsys and ncu see it) and, when an
in-process tracer has installed a recorder with `set_recorder`, also records the push and the
pop on the tracer's clock, so GPU work can be attributed to the range that was open on its
thread when the work was issued.

Any non-empty string names a phase, ONNX node names such as `/layer1/layer1.0/conv1/Conv`
included. Nsight Compute's `--nvtx-include` syntax gives `/` and `@` a meaning, so the name an
NVTX range (and the in-process recorder) carries is `encode(name)`: `%`, `/` and `@` written as
`%25`, `%2F` and `%40`. The mapping is deterministic and reversible; `decode` gives back the
name as written, which is what the tables and the report show.
Nothing is imported or probed until the first range is pushed.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any, Protocol

DOMAIN = "profgen"
#: characters a range's NVTX text cannot carry as they are, and how they are written there
_ESCAPES = {"%": "%25", "/": "%2F", "@": "%40"}
_UNESCAPE = re.compile("|".join(re.escape(v) for v in _ESCAPES.values()))
_BY_CODE = {v: k for k, v in _ESCAPES.items()}


def encode(name: str) -> str:
    """The NVTX text of a phase called `name` (`/` -> `%2F`, `@` -> `%40`, `%` -> `%25`).
    A name without those characters is its own text (the common case costs three lookups)."""
    if "%" not in name and "/" not in name and "@" not in name:
        return name
    return "".join(_ESCAPES.get(ch, ch) for ch in name)


def decode(text: str) -> str:
    """The phase name whose NVTX text is `text` (the inverse of `encode`)."""
    return _UNESCAPE.sub(lambda m: _BY_CODE[m.group(0)], text) if "%" in text else text


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
    """Return `name`, or raise ValueError when it is not a non-empty string."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a range name is a non-empty string, not {name!r}")
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
    text = encode(check_name(name))
    nvtx = _load_nvtx()
    if nvtx:
        nvtx.push_range(message=text, domain=DOMAIN)
    if _recorder is not None:
        _recorder.push(text)


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
    push(name)
    try:
        yield
    finally:
        pop()
