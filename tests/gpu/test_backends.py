"""The cupti, nsys and ncu backends on real LeNet stages (marked gpu).

The same stage collected with cupti and with nsys must give the same kernel names, the same
call counts and per-kernel total times within 10%; the cupti trace must carry kernels with
grids, copies with their kind and bytes, and GPU work attributed to the stage's ranges; ncu
must write a metrics CSV. The comparison is printed (run with -s to see it).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from profiler import schema
from profiler.analyze.attribution import attribute
from profiler.collect import discovery, doctor
from profiler.collect import nsys as nsys_mod
from profiler.collect.runner import collect_stage
from profiler.collect.stagejob import StageJob
from profiler.parse import cupti as parse_cupti

pytestmark = pytest.mark.gpu

IMAGES = int(os.environ.get("PROFGEN_TEST_IMAGES", "10000"))
STAGES = ("no_sync", "pinned", "overlap_fusion")


@cache
def lenet() -> discovery.StudyInfo:
    return discovery.describe("lenet")


def job(stage: str, backend: str, ncu_items: int | None = None, **kw) -> StageJob:
    info = lenet().stage(stage)
    if ncu_items is not None:
        info = dataclasses.replace(info, ncu_items=ncu_items)
    return StageJob(
        study=lenet(),
        stage=info,
        items=IMAGES,
        repeat=3,
        warmup=1,
        backend=backend,
        timeout_s=300,
        profiled_repeats=3,
        **kw,
    )


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], object]:
    root = tmp_path_factory.mktemp("backends")
    keep = os.environ.get("PROFGEN_KEEP_RAW")
    out = {}
    for stage in STAGES:
        for backend in ("cupti", "nsys"):
            raw = root / backend / stage
            out[(stage, backend)] = collect_stage(job(stage, backend), raw)
    if keep:
        shutil.copytree(root, keep, dirs_exist_ok=True)
    return out


def cupti_tables(outcome) -> tuple[pd.DataFrame, pd.DataFrame]:
    gpu, api, rng = parse_cupti.read_traces(outcome.files["cupti"], outcome.job.key)
    return attribute(gpu, api, rng, stage_range=outcome.job.range_name)


def kernel_totals_cupti(outcome) -> pd.DataFrame:
    gpu, _ = cupti_tables(outcome)
    k = gpu[(gpu["kind"] == schema.KERNEL) & (gpu["repeat"] >= 0)]
    return k.groupby("name").agg(total_ns=("duration_ns", "sum"), calls=("duration_ns", "size"))


def kernel_totals_nsys(outcome) -> pd.DataFrame:
    csv = outcome.files["nsys:cuda_gpu_kern_sum"]
    df = pd.read_csv(csv)
    df = df.rename(columns={"Total Time (ns)": "total_ns", "Instances": "calls", "Name": "name"})
    return df.set_index("name")[["total_ns", "calls"]]


@pytest.mark.parametrize("stage", STAGES)
def test_both_backends_pass(collected, stage):
    for backend in ("cupti", "nsys"):
        outcome = collected[(stage, backend)]
        assert outcome.status == schema.PASS, (backend, outcome.reason)
        assert len(outcome.result["timed_ns"]) == 3
        assert len(outcome.result["profiled_ns"]) == 3


@pytest.mark.parametrize("stage", STAGES)
def test_cupti_trace_content(collected, stage):
    outcome = collected[(stage, "cupti")]
    gpu, rng = cupti_tables(outcome)
    kernels = gpu[gpu["kind"] == schema.KERNEL]
    copies = gpu[gpu["kind"] == schema.MEMCPY]
    assert len(kernels) and kernels["name"].notna().all() and (kernels["grid_x"] > 0).all()
    assert set(copies["copy_kind"]) >= {"HtoD", "DtoH"}
    assert (copies["bytes"] > 0).all()
    h2d = copies[copies["copy_kind"] == "HtoD"]
    assert h2d["bytes"].sum() == 3 * IMAGES * 28 * 28 * 4  # every image copied once per repeat
    want_src = "pageable" if stage == "no_sync" else "pinned"
    assert set(h2d["src_kind"]) == {want_src}
    assert sorted(set(gpu["repeat"])) == [0, 1, 2]
    assert (gpu["range"].notna()).all()  # every op was issued inside some range of the stage
    assert {"h2d", "d2h"} <= set(gpu["range"].dropna())
    top = rng[rng["level"] == 0]
    assert list(top["name"]) == [outcome.job.range_name] * 3
    assert (top["gpu_ops"] == len(gpu) // 3).all()


@pytest.mark.parametrize("stage", STAGES)
def test_nsys_agrees_with_cupti(collected, stage, capsys):
    cupti = kernel_totals_cupti(collected[(stage, "cupti")])
    nsys = kernel_totals_nsys(collected[(stage, "nsys")])
    both = cupti.join(nsys, lsuffix="_cupti", rsuffix="_nsys", how="outer")
    both["ratio"] = both["total_ns_nsys"] / both["total_ns_cupti"]
    with capsys.disabled():
        print(f"\n{stage}: per-kernel totals over 3 profiled repeats, {IMAGES} images")
        print(both.to_string())
    assert set(cupti.index) == set(nsys.index)
    assert (both["calls_cupti"] == both["calls_nsys"]).all()
    assert both["ratio"].between(0.9, 1.1).all(), both


@pytest.mark.parametrize("stage", STAGES)
def test_nsys_files(collected, stage):
    outcome = collected[(stage, "nsys")]
    assert outcome.files["nsys-rep"].is_file()
    for report in ("cuda_gpu_trace", "cuda_gpu_kern_sum", "cuda_api_trace", "nvtx_gpu_proj_trace"):
        assert outcome.files[f"nsys:{report}"].is_file(), report
    assert set(nsys_mod.REPORTS) <= {
        k.split(":", 1)[1] for k in outcome.files if k.startswith("nsys:")
    }


def test_ncu_metrics_csv(tmp_path):
    outcome = collect_stage(
        job("no_sync", "none", metrics=True), tmp_path / "raw"
    )
    assert outcome.status == schema.PASS, outcome.reason
    text = outcome.files["ncu"].read_text()
    assert '"ID"' in text and "dram__bytes_read.sum" in text and "lenet:no_sync" in text


def test_ncu_per_image_stage_limited(tmp_path):
    outcome = collect_stage(
        job("cuda_baseline", "none", metrics=True, ncu_items=4),
        tmp_path / "raw",
    )
    assert outcome.status == schema.PASS, outcome.reason
    assert any("first 4 of" in n for n in outcome.notes)
    rows = [
        ln
        for ln in outcome.files["ncu"].read_text().splitlines()
        if ln.startswith('"') and ln[1:2].isdigit()
    ]
    assert len(rows) % 4 == 0 and rows  # the same launches for each of the 4 images


def test_cupti_on_the_per_image_baseline(tmp_path, capsys):
    """The heaviest trace of the study: one image at a time, a sync after every launch."""
    outcome = collect_stage(job("cuda_baseline", "cupti"), tmp_path / "raw")
    assert outcome.status == schema.PASS, outcome.reason
    gpu, rng = cupti_tables(outcome)
    assert sorted(gpu["repeat"].unique()) == [0, 1, 2] and gpu["range"].notna().all()
    assert len(gpu[gpu["kind"] == schema.KERNEL]) == 3 * IMAGES * 7
    timed, profiled = outcome.result["timed_ns"], outcome.result["profiled_ns"]
    with capsys.disabled():
        print(f"\ncuda_baseline: timed {sorted(timed)} ns, profiled under cupti {profiled} ns")


def test_ceilings_measured():
    from profiler.collect import ceilings

    got = ceilings.measure(Path(os.environ.get("TMPDIR", "/tmp")) / "profgen-ceilings")
    assert 1e9 < got["h2d_pinned_bytes_per_s"] < 1e12 and 1e9 < got["d2h_pinned_bytes_per_s"] < 1e12
    assert got["d2d_bytes_per_s"] > got["h2d_pinned_bytes_per_s"]
    assert 1e12 < got["fp32_flops_per_s"] < 1e15


def test_doctor_says_cupti_works():
    checks = doctor.doctor(probe=False)
    assert doctor.cupti_works(checks), doctor.format_checks(checks)
