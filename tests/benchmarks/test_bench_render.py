"""Rendering a realistic report: the issue's budget is 3 s on a 2-core machine, the file under 5 MB.

The run is the report tests' run (real H100 traces, see tests/runfactory.py) with the per-image
stage's real operations repeated to the volume a LeNet per-image stage issues: 18,000 x 5 =
90,000 GPU operations in its profiled repeat. Each round starts cold: the embedded plotly.js is
compressed again (`plotly_js_gzip_base64` is cached within a process).
"""

from __future__ import annotations

from pathlib import Path

from runfactory import build_run

from profiler.render import html

PER_IMAGE_OPS = 90_000


def test_render_realistic_report(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = build_run(tile={"cuda_baseline": PER_IMAGE_OPS // 5})
    assert (run.table("gpu_trace")["stage"] == "cuda_baseline").sum() == PER_IMAGE_OPS
    path = tmp_path / "report.html"

    def render() -> Path:
        return html.write_report(run, path)

    benchmark.pedantic(render, setup=html.plotly_js_gzip_base64.cache_clear, rounds=3, iterations=1)
    size = path.stat().st_size
    benchmark.extra_info["report_bytes"] = size
    assert size < 5_000_000
