"""CPU checks of the LeNet stages: every .cu file compiles for sm_90 (when nvcc is on PATH) with
its kernels under their plain extern "C" names and no register spills, and every stage module
imports without CuPy or PyTorch and carries the key, title and technique of the study."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from variants.lenet.study import STUDY

KERNELS = Path(__file__).resolve().parents[1] / "variants" / "lenet" / "kernels"

# The study's table, copied from the issue (not from the code).
TITLES = {
    "torch_cpu": "Framework CPU baseline",
    "torch_gpu": "Framework GPU baseline",
    "torch_pinned": "Framework GPU baseline, pinned input",
    "torch_compile": "Framework GPU, torch.compile",
    "jax_gpu": "Framework GPU, JAX",
    "cuda_baseline": "CUDA baseline",
    "batch_parallel": "Image-parallel inference",
    "conv_opt": "Convolution kernel optimisation",
    "fc_opt": "Fully-connected kernel optimisation",
    "no_sync": "Redundant synchronisation removed",
    "pinned": "Pinned host memory",
    "fc_coalesced": "Coalesced fully-connected access",
    "overlap_fusion": "Copy/compute overlap and kernel fusion",
    "one_kernel": "Whole network in one kernel",
    "one_kernel_const": "Weights in constant memory",
    "graph_fp32": "CUDA graphs on fp32 input",
    "uint8_input": "uint8 input converted on the device",
    "graph": "CUDA graphs for small batches",
}

FAST = ["-DLENET_FC_VEC4", "-DLENET_FC_UNROLL=2", "-DLENET_STAGE_ALL"]
# (file, extra nvcc flags, kernels it must define)
BUILDS = [
    ("generic", [], {"Conv_ReLu", "MaxPool", "Linear_ReLu"}),
    ("conv", [], {"Conv1_ReLu", "Conv2_ReLu"}),
    ("fc", [], {"Linear1_ReLu", "Linear2_ReLu", "Linear3"}),
    ("fc", ["-DLENET_FC_TRANSPOSED"], {"Linear1_ReLu", "Linear2_ReLu", "Linear3"}),
    ("fused", [], {"Conv1_ReLu_Pool1", "Conv2_ReLu_Pool2", "Linear_ReLu_Fused"}),
    ("one_kernel", ["-DLENET_IMGS=8"], {"LeNet_Fused"}),
    ("one_kernel", ["-DLENET_IMGS=8", "-DLENET_CONST_WEIGHTS"], {"LeNet_Fused"}),
    ("one_kernel", ["-DLENET_IMGS=8", "-DLENET_INPUT_U8"], {"LeNet_Fused"}),
    ("one_kernel", ["-DLENET_IMGS=2", "-DLENET_INPUT_U8"], {"LeNet_Fused"}),
    ("one_kernel", ["-DLENET_IMGS=2", "-DLENET_CONST_WEIGHTS"], {"LeNet_Fused"}),
    ("one_kernel", ["-DLENET_IMGS=4", "-DLENET_INPUT_U8", "-DLENET_CONV1_CONST"], {"LeNet_Fused"}),
    # the stages' defaults (variants/lenet/stages/one_kernel.py): 16-byte fc input loads, the
    # staging loads issued first
    *(
        ("one_kernel", [f"-DLENET_IMGS={imgs}", *FAST, *extra], {"LeNet_Fused"})
        for imgs in (8, 4, 2)
        for extra in (
            [],
            ["-DLENET_CONST_WEIGHTS"],
            ["-DLENET_INPUT_U8"],
            ["-DLENET_CONST_WEIGHTS", "-DLENET_INPUT_U8"],  # uint8_input's
        )
    ),
    # a server's requests read in place by row (LENET_INPUT_ROWS), fp32 and uint8
    *(
        ("one_kernel", ["-DLENET_IMGS=2", *FAST, "-DLENET_INPUT_ROWS", *extra], {"LeNet_Fused"})
        for extra in ([], ["-DLENET_INPUT_U8"], ["-DLENET_CONST_WEIGHTS", "-DLENET_INPUT_U8"])
    ),
]


def test_every_cu_file_is_built() -> None:
    assert {p.stem for p in KERNELS.glob("*.cu")} == {name for name, _, _ in BUILDS}


def build_id(value: object) -> str:
    """A parameter's id; a set's members sorted, so that every xdist worker, whatever its hash
    seed, collects the same ids (a CI run failed on `{'MaxPool', ...}` against `{'Conv_ReLu',
    ...}`)."""
    return str(sorted(value)) if isinstance(value, set) else str(value)


@pytest.mark.parametrize(("name", "flags", "expected"), BUILDS, ids=build_id)
def test_kernels_compile_for_sm90(
    name: str, flags: list[str], expected: set[str], tmp_path: Path
) -> None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    cmd = [
        nvcc,
        "-arch=sm_90",
        "--cubin",
        "-std=c++17",
        f"-I{KERNELS}",
        "-Xptxas",
        "-v",
        *flags,
        "-o",
        str(tmp_path / f"{name}.cubin"),
        str(KERNELS / f"{name}.cu"),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    entries = set(re.findall(r"Compiling entry function '([^']+)'", proc.stderr))
    assert entries == expected  # plain names: extern "C", nothing mangled, nothing extra
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", proc.stderr)
    assert spills and all(s == ("0", "0") for s in spills), proc.stderr
    assert not re.search(r"[1-9]\d* bytes stack frame", proc.stderr), proc.stderr


def test_stage_modules_import_without_cupy_or_torch() -> None:
    code = (
        "import sys\n"
        "from variants.lenet.study import STUDY\n"
        "classes = STUDY.stages\n"
        "bad = [m for m in ('cupy', 'cupyx', 'torch', 'jax') if m in sys.modules]\n"
        "assert not bad, bad\n"
        "print(len(classes))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(len(TITLES))


@pytest.mark.parametrize("key", list(TITLES))
def test_stage_key_title_and_technique(key: str) -> None:
    spec = STUDY.get(key)
    assert spec.key == key
    assert spec.title == TITLES[key]
    technique = spec.technique
    assert technique.endswith(".") and len(technique) > 60
    assert not re.search(r"\.\s+[A-Z]", technique), "technique must be one sentence"


def test_stage_order_is_the_study_order() -> None:
    assert tuple(s.key for s in STUDY.stages) == tuple(TITLES)


def test_roles_are_stated_not_guessed() -> None:
    roles = {s.key: s.role for s in STUDY.stages}
    assert roles.pop("cuda_baseline") == "baseline"
    frameworks = ("torch_cpu", "torch_gpu", "torch_pinned", "torch_compile", "jax_gpu")
    assert {roles.pop(k) for k in frameworks} == {"framework"}
    assert set(roles.values()) == {"step"}
    assert STUDY.get("torch_cpu").runtime == "cpu" and not STUDY.get("torch_cpu").uses_gpu


@pytest.mark.parametrize(("taper", "lead"), [(0, 0), (1, 0), (2, 0), (3, 0), (0, 2), (2, 1)])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 1037, 2048, 2049, 4096, 10_000, 100_000])
def test_chunks_cover_the_batch(n: int, taper: int, lead: int) -> None:
    from variants.lenet.stages._chunked import chunk_bounds

    chunks = chunk_bounds(n, max_chunks=8, min_images=1024, align=16, taper=taper, lead=lead)
    assert 1 <= len(chunks) <= 8 + taper + lead
    assert chunks[0][0] == 0 and sum(c for _, c in chunks) == n
    for (start, count), (nxt, _) in zip(chunks, chunks[1:], strict=False):
        assert nxt == start + count and count % 16 == 0
    assert all(count > 0 for _, count in chunks)


@pytest.mark.parametrize(
    ("n", "expected"),
    [(1, 1), (256, 1), (1023, 1), (2047, 1), (2048, 2), (4096, 4), (10_000, 8), (100_000, 8)],
)
def test_chunk_count_follows_the_batch(n: int, expected: int) -> None:
    """One chunk per 1,024 images, at most eight: a small batch is never cut (issue 12: a fixed
    eight chunks made batch 256 3.2x slower per image than the un-chunked stage before it)."""
    from variants.lenet.stages._chunked import chunk_bounds

    chunks = chunk_bounds(n, max_chunks=8, min_images=1024, align=16)
    assert len(chunks) == expected
    assert min(c for _, c in chunks[:-1] or chunks) >= min(n, 1024)


def test_a_taper_halves_the_last_chunk() -> None:
    """10,000 images: eight chunks of 1,264 (the last 1,152), its last cut into 576, 288, 288."""
    from variants.lenet.stages._chunked import chunk_bounds

    plain = chunk_bounds(10_000, max_chunks=8, min_images=1024, align=16)
    assert [c for _, c in plain] == [1264] * 7 + [1152]
    tapered = chunk_bounds(10_000, max_chunks=8, min_images=1024, align=16, taper=2)
    assert tapered[:7] == plain[:7] and [c for _, c in tapered[7:]] == [576, 288, 288]
    assert chunk_bounds(1000, 8, 1024, 16, taper=3) == [(0, 1000)]  # one chunk: not cut


def test_a_lead_halves_the_first_chunk_smallest_first() -> None:
    """10,000 images in four chunks of 2,512 (the last 2,464): the first cut into 624, 624 and
    1,264; with a taper the last into 1,232, 624 and 608."""
    from variants.lenet.stages._chunked import chunk_bounds

    chunks = chunk_bounds(10_000, max_chunks=4, min_images=1024, align=16, taper=2, lead=2)
    assert [c for _, c in chunks] == [624, 624, 1264, 2512, 2512, 1232, 624, 608]
    assert chunks[3] == (2512, 2512)
    one = chunk_bounds(2048, max_chunks=4, min_images=1024, align=16, lead=1)
    assert one == [(0, 512), (512, 512), (1024, 1024)]
