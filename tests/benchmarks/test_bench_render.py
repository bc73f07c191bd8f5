"""Rendering reports: the issue's budget is 3 s on a 2-core machine, the default LeNet report under
5 MB.

- The H100 LeNet run (`tests/data/runs/lenet-h100-schema1-cupti`), read from disk and rendered,
  as `profgen report` does.
- An untrimmed volume: the sample's traces keep at most 3,000 operations a stage, a fresh sweep's
  per-image stage issues 90,000 in its profiled repeat. The fixture-built run (real H100 traces,
  see tests/runfactory.py) with its per-image stage's real operations repeated to that volume
  (18,000 x 5 = 90,000).
- A megabyte name: the sample with its most launched kernel, a stage title and an NVTX range named
  with 1 MB each (a 100 MB kernel name once made a 437 MB report): names are clipped, so the
  report stays within the budget and renders in about the same time.

Each round starts cold: the embedded plotly.js is compressed again (`plotly_js_gzip_base64` is
cached within a process).
"""

from __future__ import annotations

from pathlib import Path

from hostile import MEGA, edited, rename_kernel, rename_range, retitle
from runfactory import SAMPLE_RUN, build_run

from profiler import store
from profiler.render import html

PER_IMAGE_OPS = 90_000
MAX_BYTES = 5_000_000


def test_render_sample_report(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "report.html"

    def render() -> Path:
        return html.write_report(store.load_run(SAMPLE_RUN), path)

    benchmark.pedantic(render, setup=html.plotly_js_gzip_base64.cache_clear, rounds=3, iterations=1)
    size = path.stat().st_size
    benchmark.extra_info["report_bytes"] = size
    assert size < MAX_BYTES


def test_render_untrimmed_volume(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = build_run(tile={"cuda_baseline": PER_IMAGE_OPS // 5})
    assert (run.table("gpu_trace")["stage"] == "cuda_baseline").sum() == PER_IMAGE_OPS
    path = tmp_path / "report.html"

    def render() -> Path:
        return html.write_report(run, path)

    benchmark.pedantic(render, setup=html.plotly_js_gzip_base64.cache_clear, rounds=3, iterations=1)
    size = path.stat().st_size
    benchmark.extra_info["report_bytes"] = size
    assert size < MAX_BYTES


def test_render_megabyte_names(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = edited(
        store.load_run(SAMPLE_RUN),
        [
            rename_kernel("Linear_ReLu_Fused", MEGA),
            retitle("overlap_fusion", MEGA),
            rename_range("h2d", MEGA),
        ],
    )
    path = tmp_path / "report.html"

    def render() -> Path:
        return html.write_report(run, path)

    benchmark.pedantic(render, rounds=3, iterations=1)
    size = path.stat().st_size
    benchmark.extra_info["report_bytes"] = size
    assert size < MAX_BYTES
