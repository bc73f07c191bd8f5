"""A serving run as Markdown text for the terminal and CI: the table of points, the Pareto
statement and the Little's law check."""

from __future__ import annotations

import math
from typing import Any

from profiler import schema
from profiler.analyze import serving
from profiler.render.escape import TEXT_LIMIT, terminal


def _us(ns: Any) -> str:
    return "-" if ns is None or (isinstance(ns, float) and math.isnan(ns)) else f"{ns / 1e3:,.1f}"


def _n(x: Any, fmt: str = ",.0f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def points_text(run: Any, _serving: Any = None) -> str:
    points = run.table(schema.SERVE_POINTS.name)
    meta = run.meta
    unit = str(meta.get("unit") or "items")
    slo_ns = float((meta.get("settings") or {}).get("slo_ms") or 1.0) * 1e6
    serve = meta.get("serve") or {}
    lines = []
    if serve.get("status") not in (None, schema.PASS):
        lines.append(
            f"serve: {serve.get('status')}: {terminal(serve.get('reason') or '', TEXT_LIMIT)}"
        )
    if points.empty:
        return "\n".join(lines or ["no points were measured"])
    front = serving.pareto_front(points)
    knee = serving.knee(points)
    head = (
        f"| point | {unit}/s | req/s | p50 us | p90 us | p99 us | max us | queue us | H2D us | "
        "compute us | D2H us | overhead p50 us | issue us | GPU busy % | batch | offline /s | "
        "flag |"
    )
    lines += [head, "|" + "---|" * 17]
    for i, p in points.iterrows():
        mark = (" (front)" if front[i] else "") + (" (knee)" if p["point"] == knee else "")
        cells = [f"{p['point']}{mark}", _n(p["items_per_s"]), _n(p["requests_per_s"])]
        cells += [_us(p[f"{k}_ns"]) for k in ("p50", "p90", "p99", "max", "queue", "h2d")]
        cells += [_us(p[f"{k}_ns"]) for k in ("compute", "d2h", "overhead_p50", "issue")]
        cells += [_n(p["gpu_busy_pct"], ".1f"), _n(p["batch_mean"], ".1f")]
        cells += [_n(p["offline_items_per_s"]), terminal(p["flag"] or "", TEXT_LIMIT)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Little's law (closed loop: throughput x mean latency / C, within "
        f"{100 * serving.LITTLE_TOLERANCE:g}%):",
    ]
    for _, r in serving.littles_table(points).iterrows():
        verdict = "holds" if r["holds"] else "BROKEN"
        lines.append(
            f"  {r['point']}: C={int(r['concurrency'])}, {r['requests_per_s']:,.0f} req/s x "
            f"{r['mean_ns'] / 1e3:,.1f} us = {r['product']:.3f} ({r['ratio']:.4f} of C) {verdict}"
        )
    for g in serve.get("groups") or []:
        for note in g.get("notes", []):
            lines.append(f"note: {terminal(note, TEXT_LIMIT)}")
    for _, r in serving.overhead_share(points).iterrows():
        lines.append(
            f"server overhead at C=1, {r['point']}: {_us(r['overhead_p50_ns'])} us of a p50 of "
            f"{_us(r['p50_ns'])} us ({_n(r['share_pct'], '.1f')}%)"
        )
    lines += ["", serving.slo_sentence(points, slo_ns, unit)]
    best = serving.best_under_slo(points, slo_ns)
    if best is not None:
        ratio = serving.offline_ratio(points, best)
        lines.append(f"Offline throughput at its batch size / served throughput: {ratio:.2f}x.")
    if knee:
        lines.append(f"Knee of the Pareto front: {knee}.")
    return "\n".join(lines)
