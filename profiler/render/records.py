"""What the report's context is made of: plain records (dicts of str, int, float, bool, None) and
chart fragments that wait for the page's plotly.js.

Every string a record holds is run text, shown in the HTML page: its control characters are
written out as escapes (`\\x1b`) and it is clipped to `escape.TEXT_LIMIT` characters, so no name
or reason costs more than that however large it is in the run. The templates autoescape it.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from profiler.render import data
from profiler.render.escape import TEXT_LIMIT, clip, visible_controls

DEFERRED_TYPE = "text/x-profgen-plot"
PLOT_CONFIG = {"displaylogo": False, "responsive": True}
_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def shown(value: Any, limit: int = TEXT_LIMIT) -> str:
    """Run text as the page shows it: controls escaped, at most `limit` characters."""
    return visible_controls(clip(value, limit))


def plain(value: Any) -> Any:
    """A cell as a plain Python value (missing: None); strings as `shown`."""
    value = data.plain(value)
    return shown(value) if isinstance(value, str) else value


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts of plain Python values (see `plain`)."""
    columns = {c: [plain(v) for v in df[c].astype(object).tolist()] for c in df.columns}
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]


def anchor(prefix: str, key: str, position: int) -> str:
    """An element id for a stage: `<prefix>-<key>` when the key is a short plain name (links
    stay readable), else `<prefix>-<position>`."""
    return f"{prefix}-{key}" if _ID.fullmatch(key) else f"{prefix}-{position}"


def figure_html(fig: go.Figure, div_id: str) -> str:
    """The figure as an HTML fragment (no plotly.js) whose script waits for the page's loader.

    Raises: ValueError when plotly's fragment does not hold exactly one script tag.
    """
    html = str(
        fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config=PLOT_CONFIG)
    )
    if html.count("<script") != 1:
        raise ValueError(
            f"plotly fragment for {div_id} has {html.count('<script')} scripts, expected 1"
        )
    return html.replace("<script", f'<script type="{DEFERRED_TYPE}"', 1)
