"""The HTML report: one self-contained file, readable without JavaScript for its tables.

plotly.js is embedded once, gzip-compressed and base64-encoded (about 2.0 MB instead of 4.8 MB:
the default LeNet report must stay under 5 MB). The page inflates it with the browser's own
`DecompressionStream` (Chrome 80, Firefox 113, Safari 16.4) and then runs the charts' deferred
scripts; a browser without it shows the tables and a note instead of the charts. Nothing is
fetched from the network.

Units are formatted in template filters, from the context's raw numbers, by the formatters every
renderer shares (`profiler.render.units`). Autoescaping is on for every template: run text is
always escaped; only chart fragments (`| safe`), whose run text plotly's JSON encoder escapes,
are not.
"""

from __future__ import annotations

import base64
import functools
import gzip
import importlib.util
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jinja2

from profiler import files
from profiler.render import outputs, units
from profiler.render.context import build_context
from profiler.store import Run


def templates_dir() -> Path:
    """Where the report's templates are: the `profiler.templates` data package of an installed
    profgen (wheel or editable), else the top-level templates/ of a source checkout."""
    try:
        spec = importlib.util.find_spec("profiler.templates")
    except ModuleNotFoundError:
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        if (Path(location) / "report.html.j2").is_file():
            return Path(location)
    return Path(__file__).resolve().parents[2] / "templates"


MISSING = "—"

# The template filters: `profiler.render.units`, the formatters every renderer shares, with the
# page's em dash for a missing value.
seconds = functools.partial(units.seconds, missing=MISSING)
duration = functools.partial(units.duration, missing=MISSING)
pct = functools.partial(units.pct, missing=MISSING)
speedup = functools.partial(units.speedup, missing=MISSING)
gain = functools.partial(units.gain, missing=MISSING)
nbytes = functools.partial(units.nbytes, missing=MISSING)
rate = functools.partial(units.rate, missing=MISSING)
count = functools.partial(units.count, missing=MISSING)
sci = functools.partial(units.sci, missing=MISSING)
number = functools.partial(units.number, missing=MISSING)



def signed(value: Any, digits: int = 2) -> str:
    """`+1.23`: a signed number to `digits` decimals (a difference in percentage points)."""
    return MISSING if units.is_missing(value) else f"{float(value):+.{digits}f}"


def gain2(ratio: Any) -> str:
    """A ratio as a percentage change to two decimals: 1.0127 -> `+1.27%` (gains of a few
    percent set against each other)."""
    if units.is_missing(ratio) or float(ratio) == float("inf"):
        return gain(ratio)
    return f"{(float(ratio) - 1.0) * 100.0:+.2f}%"


FILTERS = {
    "signed": signed,
    "gain2": gain2,
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
        loader=jinja2.FileSystemLoader(templates_dir()),
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

    if run.meta.get("source") == "serve":  # `profgen serve`: its own page
        from profiler.render import serve_report

        ctx, name = serve_report.build_context(run), "serve_report.html.j2"
    else:
        ctx, name = build_context(run), "report.html.j2"
    page = environment().get_template(name)
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
