"""Tables for scripts: CSV and JSON with the schema's column names and raw values.

Durations are integer nanoseconds: a `*_ns` column that pandas holds as floats (a median that may
be a half, a column with missing values) is written value by value, the whole ones as integers
(`125546929`, never `125546929.0`) and the others as they are (`4046011.2`). Missing values are
empty in CSV and null in JSON (infinities too). Names are written whole: these outputs are data
for scripts, not displays.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd


def plain(value: Any) -> Any:
    """A cell as a plain Python value: numpy scalars unwrapped, missing values (NA, NaN) None."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def whole_ns(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with every float `*_ns` column as objects whose whole values are Python ints."""
    out = df.copy()
    for col in df.columns:
        if str(col).endswith("_ns") and df[col].dtype.kind == "f":
            whole = [_whole(v) for v in df[col].tolist()]
            out[col] = pd.Series(whole, index=df.index, dtype=object)
    return out


def _whole(value: float) -> Any:
    if math.isnan(value):
        return None
    return int(value) if math.isfinite(value) and value.is_integer() else value


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts of plain Python values (see `plain`), nanoseconds as ints where whole."""
    df = whole_ns(df)
    columns = {c: [plain(v) for v in df[c].astype(object).tolist()] for c in df.columns}
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]


def to_csv(df: pd.DataFrame) -> str:
    """`df` as CSV text with a header line, nanoseconds as integers where whole."""
    return str(whole_ns(df).to_csv(index=False))


def to_json(df: pd.DataFrame) -> str:
    """`df` as a JSON array of records, ending in a newline: missing values are null, and so are
    infinities (JSON has no such number)."""
    rows = [{k: _finite(v) for k, v in row.items()} for row in records(df)]
    return json.dumps(rows, indent=1, default=_fallback, allow_nan=False) + "\n"


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _fallback(value: object) -> object:
    item = getattr(value, "item", None)
    return item() if callable(item) else str(value)
