"""The report of a serving run: the header, latency against throughput (Pareto front and knee),
the table of points, the one-sentence answer under the latency objective, Little's law per
closed-loop point, the configuration notes, the regression verdicts, and a link to the trace.
`profiler.render.html` renders it with templates/serve_report.html.j2."""

from __future__ import annotations

from typing import Any

from profiler import schema
from profiler.analyze import serving
from profiler.render import figures_serve
from profiler.render.header import header_rows, report_title
from profiler.render.records import DEFERRED_TYPE, figure_html, records, shown
from profiler.render.serve_trace import trace_name, trace_point
from profiler.store import Run


def build_context(run: Run) -> dict[str, Any]:
    meta = run.meta
    points = run.table(schema.SERVE_POINTS.name)
    unit = str(meta.get("unit") or "items")
    slo_ms = float((meta.get("settings") or {}).get("slo_ms") or 1.0)
    front = serving.pareto_front(points) if not points.empty else None
    knee = serving.knee(points) if not points.empty else None
    serve = meta.get("serve") or {}
    table = points.assign(
        pareto=front if front is not None else False, knee=points["point"] == knee
    )
    best = trace_point(run, slo_ms * 1e6)
    return {
        "title": shown(report_title(meta) + " (serving)"),
        "unit": shown(unit),
        "header": [{k: shown(v) for k, v in row.items()} for row in serve_header(meta, run.path)],
        "trimmed": None,
        "deferred_type": DEFERRED_TYPE,
        "status": shown(serve.get("status") or ""),
        "reason": shown(serve.get("reason") or ""),
        "notes": [shown(n) for g in serve.get("groups") or [] for n in g.get("notes", [])],
        "groups": records_of(serve.get("groups") or []),
        "chart": {
            "html": figure_html(
                figures_serve.latency_throughput(points, front, knee, unit), "chart-serve"
            )
        }
        if front is not None
        else None,
        "points": records(table),
        "knee": knee,
        "slo_sentence": shown(serving.slo_sentence(points, slo_ms * 1e6, unit))
        if not points.empty
        else "",
        "littles": records(serving.littles_table(points)) if not points.empty else [],
        "tolerance_pct": 100 * serving.LITTLE_TOLERANCE,
        "trace": f"raw/serve/{trace_name(best)}" if best else None,
        "trace_point": best,
        "regressions": records(run.table(schema.REGRESSIONS.name))
        if run.has(schema.REGRESSIONS.name)
        else None,
    }


def serve_header(meta: dict[str, Any], path: Any) -> list[dict[str, str]]:
    """The run's header, its sweep-only rows (items, timing, backend) replaced by one that says
    how the points were served and measured."""
    settings = meta.get("settings") or {}
    unit = str(meta.get("unit") or "items").capitalize()
    rows = [r for r in header_rows(meta, path) if r["label"] not in (unit, "Timing", "Backend")]
    serving = (
        f"stage {settings.get('stage')}, {settings.get('request_items')} "
        f"{meta.get('unit') or 'items'} a request; each point {settings.get('warmup_s')} s of "
        f"warm-up, then {settings.get('duration_s')} s measured; one answer in "
        f"{settings.get('check_every')} checked against the reference; p99 objective "
        f"{settings.get('slo_ms')} ms"
    )
    return [rows[0], {"label": "Serving", "value": serving}, *rows[1:]]


def records_of(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "config": "b{}-s{}{}".format(
                g["key"][0], g["key"][1], "-graphs" if g["key"][2] else ""
            ),
            "engine": shown(g.get("engine", "")),
            "offline": g.get("offline_items_per_s"),
        }
        for g in groups
    ]
