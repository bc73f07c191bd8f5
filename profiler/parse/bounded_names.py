"""Names (kernels, API functions, ranges, labels) of bounded size, and columns of them.

Names are capped by `cap_names` at `MAX_NAME` characters: the first `MAX_NAME` are kept and a
marker with the original length and a short hash is appended, so distinct long names stay
distinct and a 100 MB name costs 1 KB.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pandas as pd

# Long enough for real C++ template names (a 900-character thrust kernel in tests/data).
MAX_NAME = 1024


def cap_name(name: str) -> str:
    """`name` itself when at most `MAX_NAME` characters; else its first `MAX_NAME` characters,
    its length and a short hash of all of it."""
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{name[:MAX_NAME]}... [{len(name):,} characters, sha256 {digest}]"


def coded_strings(codes: np.ndarray, names: list[Any]) -> pd.Series:
    """A `string` column of `names[codes]` (code -1: missing), taken from the names: no string
    is made per row. Its storage is Python's whatever pandas' default: a row then refers to its
    name, where pyarrow's storage would copy the name's bytes into every row (0.5 s of a
    million-row metric table's read, its kernel names a few hundred bytes each)."""
    pool = pd.array([*names, pd.NA], dtype=_BY_REFERENCE)
    return pd.Series(pool.take(np.where(codes < 0, len(names), codes)))


_BY_REFERENCE = pd.StringDtype("python")


def cap_names(names: pd.Series) -> pd.Series:
    """`cap_name` of every value (of the categories only, for a categorical)."""
    if isinstance(names.dtype, pd.CategoricalDtype):
        cats = names.cat.categories
        if len(cats) and cats.str.len().max() > MAX_NAME:
            return names.cat.rename_categories([cap_name(str(c)) for c in cats])
        return names
    lengths = names.str.len()
    long = (lengths > MAX_NAME).fillna(False).to_numpy(dtype=bool)
    if not long.any():
        return names
    # Set through an object array: pandas 3.0 fails to put a list into a pyarrow-backed
    # `string` Series by a mask (`only integer scalar arrays can be converted`).
    cells = names.to_numpy(dtype=object, copy=True)  # (without a copy: the caller's own cells)
    cells[long] = [cap_name(str(v)) for v in cells[long]]
    return pd.Series(cells, index=names.index, dtype=names.dtype, name=names.name)
