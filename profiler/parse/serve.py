"""A serving worker's output (`profiler.collect.serve.worker`) -> each point's facts and its
per-request and per-batch record arrays."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from profiler.collect.serve.loop import BATCH_FIELDS, REQUEST_FIELDS  # names only
from profiler.errors import ParseError

ARRAYS = tuple(f"request_{k}" for k in REQUEST_FIELDS) + tuple(f"batch_{k}" for k in BATCH_FIELDS)


def read_point(raw: Path, facts: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The record arrays of one point, from `raw/<facts['file']>`.

    Raises: ParseError when the file is missing, unreadable or lacks an array.
    """
    path = raw / str(facts.get("file", ""))
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: np.asarray(npz[k], dtype=np.int64) for k in ARRAYS}
    except (OSError, ValueError, KeyError) as exc:
        raise ParseError(path, "a serving point's records (profgen serve)", str(exc)) from None
    return arrays
