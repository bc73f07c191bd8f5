"""The HTML report: one self-contained file, readable without JavaScript for its tables.

plotly.js is embedded once, gzip-compressed and base64-encoded (about 2.0 MB instead of 4.8 MB:
the default LeNet report must stay under 5 MB). The page inflates it with the browser's own
`DecompressionStream` (Chrome 80, Firefox 113, Safari 16.4) and then runs the charts' deferred
scripts; a browser without it shows the tables and a note instead of the charts. Nothing is
fetched from the network.

Units are formatted here, in template filters, from the context's raw numbers.
"""

from __future__ import annotations

import base64
import functools
import gzip
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jinja2

from profiler import files
from profiler.render import outputs
from profiler.render.context import build_context
from profiler.store import Run

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
MISSING = "—"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def seconds(ns: Any) -> str:
    """`0.0137s`: seconds to four significant digits, as the study wrote them."""
    return MISSING if _missing(ns) else f"{ns / 1e9:.4g}s"


def duration(ns: Any) -> str:
    """nvprof's style: `78.79us`, `2.701ms`, `353ns`, four significant digits."""
    if _missing(ns):
        return MISSING
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
        if abs(ns) >= scale:
            return f"{ns / scale:.4g}{unit}"
    return f"{ns:.4g}ns"


def pct(value: Any, digits: int = 2) -> str:
    return MISSING if _missing(value) else f"{value:.{digits}f}%"


def speedup(value: Any) -> str:
    """`48.93x`; `∞` for infinite."""
    if _missing(value):
        return MISSING
    return "∞" if math.isinf(value) else f"{value:.4g}x"


def gain(ratio: Any) -> str:
    """A speedup ratio as a percentage gain: 1.013 -> `+1.3%`."""
    if _missing(ratio):
        return MISSING
    return "+∞" if math.isinf(ratio) else f"{(ratio - 1.0) * 100.0:+.1f}%"


def _si(value: float, unit: str, digits: int = 4) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


def nbytes(value: Any) -> str:
    """Decimal units, as nsys prints them: `16.78 MB`."""
    return MISSING if _missing(value) else _si(float(value), "B")


def rate(value: Any, unit: str = "B/s") -> str:
    """`53.22 GB/s`, `184.2 GFLOP/s`."""
    return MISSING if _missing(value) else _si(float(value), unit)


def count(value: Any) -> str:
    """An integer with thousands separators."""
    return MISSING if _missing(value) else f"{int(value):,}"


def sci(value: Any) -> str:
    return MISSING if _missing(value) else f"{value:.2g}"


def number(value: Any, digits: int = 4) -> str:
    return MISSING if _missing(value) else f"{value:.{digits}g}"


FILTERS = {
    "seconds": seconds,
    "duration": duration,
    "pct": pct,
    "speedup": speedup,
    "gain": gain,
    "nbytes": nbytes,
    "rate": rate,
    "count": count,
    "sci": sci,
    "number": number,
}


def environment() -> jinja2.Environment:
    """The templates' environment: StrictUndefined (a missing key fails), HTML autoescaping."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    return env


@functools.cache
def plotly_js_gzip_base64() -> str:
    """plotly.min.js as shipped with the installed plotly, gzip-compressed, base64-encoded."""
    from plotly.offline import get_plotlyjs

    raw = get_plotlyjs().encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def render_report(run: Run) -> str:
    """The report of `run` as one HTML document.

    Raises: jinja2.UndefinedError when a template uses a key the context lacks (a bug).
    """
    import plotly

    ctx = build_context(run)
    page = environment().get_template("report.html.j2")
    return page.render(
        **ctx, plotly_js_gz=plotly_js_gzip_base64(), plotly_version=plotly.__version__
    )


def write_report(
    run: Run, path: str | Path, inputs: Iterable[str | Path] | None = None, what: str = "report"
) -> Path:
    """Render `run` and write it to `path` through `profiler.files` (atomically, never through a
    planted link, only as a regular file). The target is checked before the work of rendering.

    Args:
        run: the run.
        path: the HTML file to write.
        inputs: files the report must not overwrite (default: the files `run` was read from).
        what: how the target is named in an error (`--output`).

    Returns: the path written.
    Raises: UsageError when `path` is a directory, a device or another non-regular file, or one
        of the inputs; OutputError when the disk refuses.
    """
    inputs = outputs.run_inputs(run) if inputs is None else list(inputs)
    files.check_output_file(path, inputs, what)
    return files.write_text(path, render_report(run), inputs, what)
