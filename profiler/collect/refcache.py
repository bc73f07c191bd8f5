"""Reference outputs cached across runs, in the user's cache directory.

The key is a content hash of what the reference depends on: the study's name and version,
its model (every array, number and string reachable from it, and the bytes of files it names)
and the inputs. A model holding something that cannot be hashed by content (an open handle, a
framework object) turns the cache off for that study rather than risk a stale hit.

Files: `<cache>/references/<study>-<key>.npy` (see `profiler.files.cache_dir`).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from profiler import files
from profiler.study import Study

_SCALARS = (str, int, float, bool, complex, type(None))


class Unhashable(Exception):
    """The model holds something whose content cannot be hashed."""


def content_digest(obj: Any) -> str:
    """A hex SHA-256 of `obj`'s content: ndarrays (dtype, shape, bytes), mappings (by sorted
    key), sequences, scalars, dataclasses and plain objects (their attributes), and files
    named by a Path (their bytes).

    Raises: Unhashable naming the first thing it cannot hash.
    """
    h = hashlib.sha256()
    _feed(h, obj, set())
    return h.hexdigest()


def _feed(h: Any, obj: Any, seen: set[int]) -> None:
    if isinstance(obj, _SCALARS):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
    elif isinstance(obj, bytes):
        h.update(b"bytes:" + obj)
    elif isinstance(obj, (np.ndarray, np.generic)):
        arr = np.ascontiguousarray(obj)
        h.update(f"nd:{arr.dtype.str}:{arr.shape};".encode())
        h.update(arr.view(np.uint8).reshape(-1).data if arr.size else b"")
    elif isinstance(obj, Path):
        h.update(f"path:{obj};".encode())
        if obj.is_file():
            h.update(files.read_bytes(obj))
    elif id(obj) in seen:
        h.update(b"cycle;")
    else:
        # `seen` holds the containers being hashed (this one's ancestors), not every container
        # met: a temporary (a dataclass field's (name, value) pair) is freed once hashed, and
        # its id comes back for the next temporary, which must not read as a cycle
        seen.add(id(obj))
        try:
            _feed_container(h, obj, seen)
        finally:
            seen.discard(id(obj))


def _feed_container(h: Any, obj: Any, seen: set[int]) -> None:
    if isinstance(obj, Mapping):
        items = sorted(obj.items(), key=lambda kv: repr(kv[0]))
        h.update(f"map:{len(items)};".encode())
        for key, value in items:
            _feed(h, key, seen)
            _feed(h, value, seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        values = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        h.update(f"seq:{len(values)};".encode())
        for value in values:
            _feed(h, value, seen)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        h.update(f"dc:{type(obj).__qualname__};".encode())
        for f in dataclasses.fields(obj):
            _feed(h, (f.name, getattr(obj, f.name)), seen)
    elif hasattr(obj, "__dict__") and not callable(obj):
        h.update(f"obj:{type(obj).__qualname__};".encode())
        _feed(h, {k: v for k, v in vars(obj).items() if not callable(v)}, seen)
    else:
        raise Unhashable(f"a {type(obj).__name__}")


def reference_key(study: Study, model: Any, inputs: np.ndarray) -> str:
    """The cache key of `study`'s reference for `model` and `inputs`.

    Raises: Unhashable when the model cannot be hashed by content.
    """
    parts = (study.name, study.version, content_digest(model), content_digest(inputs))
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]


def cached_reference(
    study: Study,
    model: Any,
    inputs: np.ndarray,
    log: Callable[[str], None],
    root: Path | None = None,
) -> np.ndarray:
    """The study's float64 reference for `inputs`, from the cache when the key matches.

    `log` hears one line: a hit (with the file), a miss (computed and stored), or why the
    cache is off. A cache file that cannot be read is recomputed; one that cannot be written
    is only logged.
    """
    try:
        key = reference_key(study, model, inputs)
    except Unhashable as exc:
        log(f"reference: cache off (the model holds {exc} that cannot be hashed by content)")
        return study.run_reference(inputs, model)
    path = (root or files.cache_dir() / "references") / f"{study.name}-{key}.npy"
    cached = _load(path, len(inputs))
    if cached is not None:
        log(f"reference: cache hit {path}")
        return cached
    ref = study.run_reference(inputs, model)
    try:
        with files.atomic_output(path) as fh:
            np.save(fh, ref, allow_pickle=False)
        log(f"reference: cache miss, computed and stored in {path}")
    except Exception as exc:  # noqa: BLE001 - an unwritable cache only costs time
        log(f"reference: cache miss, computed; not stored ({exc})")
    return ref


def _load(path: Path, count: int) -> np.ndarray | None:
    if not path.is_file():
        return None
    try:
        ref = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    return ref if ref.ndim and len(ref) == count and ref.dtype == np.float64 else None
