"""The report's header: what ran, where, when and how, from `run.meta` (run.json).

An imported run may lack any of these fields: a row whose value is unknown is left out, never
printed as `unknown`, blank or an error (a value that is partly known says which part is not).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

UNKNOWN = "unknown"


def _get(meta: Mapping[str, Any], *path: str) -> Any:
    """meta[path[0]][path[1]]..., or None when any step is missing or not a mapping."""
    value: Any = meta
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def _text(value: Any) -> str:
    if value is None or value == "" or value == [] or value == {}:
        return UNKNOWN
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {_text(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def report_title(meta: Mapping[str, Any]) -> str:
    """`profgen report: lenet` (the model's key, or `unknown`)."""
    return f"profgen report: {_text(meta.get('model'))}"


def _joined(meta: Mapping[str, Any], section: str, keys: tuple[str, ...]) -> str:
    """`nsys 2025.3.1, ncu 2025.3.1` for the keys present in meta[section]; unknown if none."""
    parts = [
        f"{k} {_get(meta, section, k)}" for k in keys if _get(meta, section, k) not in (None, "")
    ]
    return ", ".join(parts) if parts else UNKNOWN


def _model(meta: Mapping[str, Any]) -> str:
    title, key = meta.get("model_title"), meta.get("model")
    if title and key:
        return f"{title} ({key})"
    return _text(title or key)


def _gpu(meta: Mapping[str, Any]) -> str:
    gpu, count = _get(meta, "machine", "gpu"), _get(meta, "machine", "gpu_count")
    text = _text(gpu)
    if gpu and isinstance(count, int) and count > 1:
        text += f" (x{count})"
    memory = _get(meta, "machine", "gpu_memory_mib")
    if gpu and isinstance(memory, int) and not isinstance(memory, bool):
        text += f", {memory:,} MiB"
    return text


def _clocks(meta: Mapping[str, Any]) -> str:
    """`SM 345 MHz (max 1,980), memory 2,619 MHz (max 2,619)`: clocks when the run started."""
    clocks = _get(meta, "machine", "clocks_mhz")
    if not isinstance(clocks, Mapping) or not clocks:
        return _text(clocks)
    parts = []
    for unit, label in (("sm", "SM"), ("mem", "memory")):
        now, top = clocks.get(f"clocks_{unit}"), clocks.get(f"clocks_max_{unit}")
        if now is None and top is None:
            continue
        text = f"{label} {_text(now)} MHz"
        parts.append(text + (f" (max {_text(top)})" if top is not None else ""))
    known = {"clocks_sm", "clocks_max_sm", "clocks_mem", "clocks_max_mem"}
    parts += [f"{k} {_text(v)}" for k, v in clocks.items() if k not in known]
    return ", ".join(parts)


def _backend(meta: Mapping[str, Any]) -> str:
    backend = _text(_get(meta, "settings", "backend"))
    return backend + (" + Nsight Compute metrics" if _get(meta, "settings", "metrics") else "")


IMPORTED_TIMING = (
    "imported: no unprofiled timing; each stage's time is the span the staged table names"
)


def _timing(meta: Mapping[str, Any]) -> str:
    repeat, warmup = _get(meta, "settings", "repeat"), _get(meta, "settings", "warmup")
    if meta.get("source") == "import":
        return IMPORTED_TIMING
    if repeat is None:
        return UNKNOWN
    how = _get(meta, "settings", "timing")
    median = f"median of {repeat} timed repeats after {_text(warmup)} warm-ups"
    return f"{median}; {how}" if how else median


def _commit(meta: Mapping[str, Any]) -> str:
    commit = _get(meta, "git", "commit")
    if not commit:
        return UNKNOWN
    return f"{commit} (uncommitted changes)" if _get(meta, "git", "dirty") else str(commit)


def header_rows(meta: Mapping[str, Any], path: Path | None = None) -> list[dict[str, str]]:
    """The header as (label, value) rows; every value is a non-empty string, and a row whose
    value is unknown (an imported run knows no GPU, driver, clocks...) is left out.

    Args:
        meta: the run's metadata (run.json).
        path: the run directory, when the run was read from disk.
    """
    rows = [
        ("Model", _model(meta)),
        (str(meta.get("unit") or "items").capitalize(), _text(_get(meta, "settings", "items"))),
        ("Timing", _timing(meta)),
        ("GPU", _gpu(meta)),
        ("Driver", _text(_get(meta, "machine", "driver"))),
        ("CUDA", _joined(meta, "machine", ("cuda_runtime", "cuda_driver")).replace("cuda_", "")),
        ("CPU", _text(_get(meta, "machine", "cpu"))),
        ("CuPy", _text(_get(meta, "machine", "cupy"))),
        ("Profilers", _joined(meta, "machine", ("cupti_python", "nvtx", "nsys", "ncu"))),
        ("profgen", _text(meta.get("profgen_version"))),
        ("Backend", _backend(meta)),
        ("Date", _text(meta.get("created"))),
        ("Git commit", _commit(meta)),
        ("Command", _text(meta.get("command"))),
        ("Source", _text(meta.get("source"))),
        ("Host", _joined(meta, "machine", ("host", "python"))),
        ("Clocks", _clocks(meta)),
        ("Run directory", _text(str(path) if path else None)),
    ]
    return [{"label": label, "value": value} for label, value in rows if value != UNKNOWN]
