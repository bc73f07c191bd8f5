"""profiler.parse.cupti on CUPTI records captured from the LeNet stages on an H100, checked
against what Nsight Systems reported for the same stages (another process of the same run),
and against corrupt files."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from profiler import schema
from profiler.errors import ParseError
from profiler.parse import cupti as P

DATA = Path(__file__).parent / "data"
CUPTI = DATA / "cupti" / "13.0.1"
NSYS = DATA / "nsys" / "2025.3.1"
IMAGES = 10_000


def traces(stage: str, file: str | None = None):
    return P.read_traces(CUPTI / (file or f"lenet-{stage}.npz"), stage)


@pytest.mark.parametrize("stage", ["no_sync", "pinned", "overlap_fusion"])
def test_kernel_names_and_counts_match_nsys(stage):
    gpu, _, _ = traces(stage)
    kernels = gpu[gpu["kind"] == schema.KERNEL].groupby("name").size()
    nsys = pd.read_csv(NSYS / f"lenet-{stage}" / "nsys_cuda_gpu_kern_sum.csv").set_index("Name")[
        "Instances"
    ]
    assert kernels.sort_index().to_dict() == nsys.sort_index().to_dict()


@pytest.mark.parametrize(
    "stage, src", [("no_sync", "pageable"), ("pinned", "pinned"), ("overlap_fusion", "pinned")]
)
def test_copies_by_kind_and_bytes(stage, src):
    gpu, _, _ = traces(stage)
    copies = gpu[gpu["kind"] == schema.MEMCPY]
    h2d, d2h = copies[copies["copy_kind"] == "HtoD"], copies[copies["copy_kind"] == "DtoH"]
    assert len(h2d) + len(d2h) == len(copies)
    assert h2d["bytes"].sum() == 3 * IMAGES * 784 * 4  # three repeats, float32 28x28 images
    assert d2h["bytes"].sum() == 3 * IMAGES * 10 * 4  # ten logits each
    assert set(h2d["src_kind"]) == {src} and set(h2d["dst_kind"]) == {"device"}
    assert set(d2h["src_kind"]) == {"device"}
    assert set(h2d["name"]) == {"[CUDA memcpy HtoD]"} and set(d2h["name"]) == {"[CUDA memcpy DtoH]"}
    assert copies[["grid_x", "registers"]].isna().all().all()
    # nsys's own per-direction byte totals for the same stage (in MB)
    sizes = pd.read_csv(NSYS / f"lenet-{stage}" / "nsys_cuda_gpu_mem_size_sum.csv").set_index(
        "Operation"
    )
    assert sizes.loc["[CUDA memcpy Host-to-Device]", "Total (MB)"] == pytest.approx(
        h2d["bytes"].sum() / 1e6, abs=1e-3
    )


def test_kernel_fields():
    gpu, _, _ = traces("no_sync")
    k = gpu[gpu["kind"] == schema.KERNEL]
    assert (k["grid_x"] > 0).all() and (k["block_x"] > 0).all() and (k["registers"] > 0).all()
    assert k["bytes"].isna().all() and k["copy_kind"].isna().all()
    assert (k["duration_ns"] == k["end_ns"] - k["start_ns"]).all() and (k["duration_ns"] > 0).all()
    assert gpu["start_ns"].is_monotonic_increasing
    assert (gpu["repeat"] == -1).all() and gpu["range"].isna().all()  # left to attribution
    nsys = pd.read_csv(NSYS / "lenet-no_sync" / "nsys_cuda_gpu_trace.csv")
    nk = nsys[nsys["GrdX"].notna()].groupby("Name")[["GrdX", "BlkX", "Reg/Trd"]].first()
    mine = k.groupby("name")[["grid_x", "block_x", "registers"]].first()
    assert mine.to_numpy().tolist() == nk.loc[mine.index].to_numpy().astype(int).tolist()


def test_api_trace_names_like_nsys():
    _, api, _ = traces("no_sync")
    nsys = pd.read_csv(NSYS / "lenet-no_sync" / "nsys_cuda_api_trace.csv")
    assert set(api["name"]) == set(nsys["Name"]) - {
        "cuProfilerStart"
    }  # the capture range's own call
    assert api["thread"].nunique() == 1 and api["correlation_id"].is_unique
    assert (api["duration_ns"] >= 0).all()


def test_ranges_nesting_per_image():
    gpu, api, rng = traces("cuda_baseline", "lenet-cuda_baseline-16img.npz")
    top = rng[rng["level"] == 0]
    assert list(top["name"]) == ["lenet:cuda_baseline"] * 2
    phases = rng[rng["level"] == 1]["name"].value_counts()
    # per image: h2d, 8 layer phases... each once per image and repeat (16 images, 2 repeats)
    assert set(phases) == {32} and {"h2d", "conv1", "fc3", "d2h"} <= set(phases.index)
    assert (rng["end_ns"] > rng["start_ns"]).all()
    inner = rng[rng["level"] == 1]
    outer = top.iloc[0]
    first = inner[inner["start_ns"] < top.iloc[1]["start_ns"]]
    assert (first["start_ns"] >= outer["start_ns"]).all() and (
        first["end_ns"] <= outer["end_ns"]
    ).all()
    assert len(gpu[gpu["kind"] == schema.KERNEL]) == 2 * 16 * 7


def test_schemas_hold():
    gpu, api, rng = traces("overlap_fusion")
    schema.validate(gpu, schema.GPU_TRACE)
    schema.validate(api, schema.API_TRACE)
    schema.validate(rng, schema.RANGE_TRACE)
    nsys = pd.read_csv(NSYS / "lenet-overlap_fusion" / "nsys_cuda_gpu_trace.csv")
    assert (
        gpu["stream"].value_counts().to_dict() == nsys["Strm"].value_counts().to_dict()
    )  # 4 streams


# -- corrupt input ------------------------------------------------------------------------------
def test_missing_file(tmp_path):
    with pytest.raises(ParseError, match="no such file") as err:
        P.read_traces(tmp_path / "nope.npz", "s")
    assert "nope.npz" in str(err.value) and "CUPTI record file" in str(err.value)


def test_empty_file(tmp_path):
    (tmp_path / "empty.npz").write_bytes(b"")
    with pytest.raises(ParseError, match="empty.npz"):
        P.read_traces(tmp_path / "empty.npz", "s")


def test_truncated_file(tmp_path):
    data = (CUPTI / "lenet-no_sync.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ParseError, match="cut.npz"):
        P.read_traces(tmp_path / "cut.npz", "s")


def test_wrong_tool_output(tmp_path):
    csv = NSYS / "lenet-no_sync" / "nsys_cuda_gpu_trace.csv"
    with pytest.raises(ParseError, match="nsys_cuda_gpu_trace.csv"):
        P.read_traces(csv, "s")


def test_npz_of_something_else(tmp_path):
    np.savez(tmp_path / "other.npz", x=np.arange(3))
    with pytest.raises(ParseError, match="no `meta`"):
        P.read_traces(tmp_path / "other.npz", "s")


def test_other_format_version(tmp_path):
    raw = dict(np.load(CUPTI / "lenet-no_sync.npz"))
    raw["meta"] = np.asarray('{"format": 99}')
    np.savez(tmp_path / "future.npz", **raw)
    with pytest.raises(ParseError, match="format 99"):
        P.read_traces(tmp_path / "future.npz", "s")


def test_missing_array(tmp_path):
    raw = dict(np.load(CUPTI / "lenet-no_sync.npz"))
    del raw["kernel.start"]
    np.savez(tmp_path / "part.npz", **raw)
    with pytest.raises(ParseError, match="kernel.start"):
        P.read_traces(tmp_path / "part.npz", "s")


def test_inconsistent_arrays(tmp_path):
    raw = dict(np.load(CUPTI / "lenet-no_sync.npz"))
    raw["names.kernel"] = raw["names.kernel"][:1]  # codes now point past the table
    np.savez(tmp_path / "bad.npz", **raw)
    with pytest.raises(ParseError, match="inconsistent"):
        P.read_traces(tmp_path / "bad.npz", "s")


def test_not_a_zip_but_named_npz(tmp_path):
    (tmp_path / "text.npz").write_text("Time (%),Total Time (ns)\n")
    with pytest.raises(ParseError):
        P.read_traces(tmp_path / "text.npz", "s")
    assert not zipfile.is_zipfile(tmp_path / "text.npz")


def test_fifo_is_refused_without_blocking(tmp_path):
    import os

    from test_parse_values import deadline

    fifo = tmp_path / "s.npz"
    os.mkfifo(fifo)
    with deadline(10), pytest.raises(ParseError, match="not a regular file") as exc:
        P.read_raw(fifo)
    assert str(fifo) in str(exc.value)


def test_arrays_that_unpack_too_large_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(P, "UNPACKED_LIMIT", 10_000)
    with pytest.raises(ParseError, match="its arrays unpack to 13810 bytes"):
        P.read_raw(CUPTI / "lenet-no_sync.npz")


def test_long_kernel_and_range_names_are_capped(tmp_path):
    from cupti_factory import synthetic, write

    from profiler.parse.bounded_names import MAX_NAME

    arrays = synthetic(8)
    long = "k" * 1_000_000
    arrays["names.kernel"] = np.array([long + str(i) for i in range(len(arrays["names.kernel"]))])
    arrays["names.range"] = np.array(["m:s", "r" * 100_000, "inner"])
    gpu, _, ranges = P.read_traces(write(tmp_path / "s.npz", arrays), "s")
    names = gpu[gpu["kind"] == schema.KERNEL]["name"]
    assert names.str.len().max() < MAX_NAME + 80 and names.str.contains("1,000,001 char").all()
    assert ranges["name"].str.len().max() < MAX_NAME + 80
