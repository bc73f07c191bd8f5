"""Every LeNet stage against the float64 reference on the GPU (marked gpu).

Fresh random inputs at batch sizes that are no multiple of any block or chunk size, and n=1;
every buffer a call writes is filled with NaN first, so an element no kernel writes shows up as
a NaN logit (the kernels' ReLU and max-pool let NaN through) and fails the check; the shipped
model on the shipped images; and a deliberately wrong model that must fail the check.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from profiler.collect import runtimes
from profiler.errors import UsageError
from variants.lenet import data, reference
from variants.lenet.model import MODEL_PATH, LeNet, load, random_weights
from variants.lenet.study import LOGITS_RULE, STUDY

pytestmark = pytest.mark.gpu
# JAX would take 75% of the GPU's memory when it first starts, leaving the stages after it short
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

KEYS = tuple(s.key for s in STUDY.stages)
Stage = Any


def check_logits(out: np.ndarray, ref: np.ndarray):
    return LOGITS_RULE.check(out, ref)


def prepared(key: str, model: LeNet, batch: int, **knobs: Any) -> Stage:
    spec = STUDY.get(key)
    stage = spec.build()
    note = runtimes.adapter(spec.runtime).missing() or runtimes.missing_needs(spec.needs)
    if note:
        pytest.skip(f"{key}: {note}")
    for attr, value in knobs.items():
        assert hasattr(stage, attr), attr
        setattr(stage, attr, value)
    stage.prepare(model, batch)
    if hasattr(stage, "new_output"):  # logits into a fresh page-locked array: make it NaN
        make = stage.new_output

        def poisoned(n: int) -> np.ndarray:
            out = make(n)
            out.fill(np.nan)
            return out

        stage.new_output = poisoned
    return stage


def poison(stage: Stage) -> int:
    """Fill every buffer the stage exposes with NaN (integer buffers, e.g. uint8 pixels, with
    their largest value) and check that it took. Returns how many."""
    import cupy

    buffers = getattr(stage, "buffers", dict)()
    for buf in buffers.values():
        buf.fill(poison_value(buf.dtype))
    cupy.cuda.Device().synchronize()
    for name, buf in buffers.items():
        host = cupy.asnumpy(buf)
        value = poison_value(buf.dtype)
        took = np.isnan(host).all() if np.isnan(value) else (host == value).all()
        assert bool(took), f"{name} was not poisoned"
    return len(buffers)


def poison_value(dtype: Any) -> Any:
    dtype = np.dtype(dtype)
    return np.iinfo(dtype).max if dtype.kind in "ui" else np.nan


def expected(stage: Stage, images: np.ndarray, weights: Any) -> np.ndarray:
    """The float64 reference on the input as the stage's format holds it (uint8 stages)."""
    return reference.forward(stage.reference_input(images), weights)


def run(stage: Stage, images: np.ndarray) -> np.ndarray:
    out = stage.infer(stage.host_input(images))
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    return out


def random_images(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random((n, 1, 28, 28), dtype=np.float32)


@pytest.mark.parametrize("n", [1037, 1, 4500])
@pytest.mark.parametrize("key", KEYS)
def test_stage_matches_reference_on_fresh_inputs(key: str, n: int) -> None:
    model = LeNet(weights=random_weights(seed=n))
    stage = prepared(key, model, batch=n + 11)  # capacity past n: the tail must not matter
    try:
        for seed in (1, 2):  # a second call on new images catches state left by the first
            images = random_images(n, seed=100 * n + seed)
            poisoned = poison(stage)
            if STUDY.get(key).runtime == "cupy":
                assert poisoned >= 3, f"{key} exposes too few buffers to poison"
            verdict = check_logits(run(stage, images), expected(stage, images, model.weights))
            assert verdict.passed, f"{key}, n={n}, call {seed}: {verdict.reason}"
    finally:
        stage.release()


@pytest.mark.parametrize("key", KEYS)
def test_stage_matches_reference_on_shipped_images(key: str) -> None:
    if not MODEL_PATH.is_file():
        pytest.skip(f"{MODEL_PATH} is not there yet")
    model = load()
    images = data.normalize(data.load_shipped().images)
    stage = prepared(key, model, batch=len(images))
    try:
        poison(stage)
        out = run(stage, images)
    finally:
        stage.release()
    verdict = check_logits(out, expected(stage, images, model.weights))
    assert verdict.passed, f"{key}: {verdict.reason}"


@pytest.mark.parametrize("key", KEYS)
def test_wrong_weights_fail_the_check(key: str) -> None:
    """The check can fail: a stage run with conv2's weights 1% off must not pass."""
    weights = random_weights(seed=7)
    wrong = dict(weights, **{"conv2.weight": weights["conv2.weight"] * np.float32(1.01)})
    images = random_images(257, seed=7)
    stage = prepared(key, LeNet(weights=wrong), batch=257)
    try:
        out = run(stage, images)
    finally:
        stage.release()
    assert np.isfinite(out).all()
    verdict = check_logits(out, expected(stage, images, weights))
    assert not verdict.passed
    assert verdict.max_rel_err > 1e-3


@pytest.mark.parametrize("key", [s.key for s in STUDY.stages if s.runtime == "cupy"])
def test_more_images_than_prepared_for_is_refused(key: str) -> None:
    stage = prepared(key, LeNet(weights=random_weights(seed=3)), batch=4)
    try:
        with pytest.raises(UsageError, match="prepared for 4"):
            stage.infer(stage.host_input(random_images(5, seed=3)))
    finally:
        stage.release()


CHUNKED = (
    "overlap_fusion", "one_kernel", "one_kernel_const", "graph_fp32", "uint8_input", "graph"
)


@pytest.mark.parametrize("key", CHUNKED)
def test_every_batch_size_of_one_prepared_stage(key: str) -> None:
    """One prepared stage called at sizes that take each path: one chunk, several chunks with
    a ragged tail, a graph captured and then replayed, sizes in any order."""
    model = LeNet(weights=random_weights(seed=11))
    stage = prepared(key, model, batch=5000)
    try:
        for i, n in enumerate([1, 64, 1, 5000, 2047, 2048, 64, 1024, 1025, 3, 16, 17]):
            images = random_images(n, seed=500 + i)
            poison(stage)
            verdict = check_logits(run(stage, images), expected(stage, images, model.weights))
            assert verdict.passed, f"{key}, n={n}: {verdict.reason}"
    finally:
        stage.release()


@pytest.mark.parametrize("key", ("graph", "graph_fp32"))
def test_graph_replays_a_large_batch_per_input_buffer(key: str) -> None:
    """Above 1,024 images the graph is captured per batch size and input buffer: a second
    buffer of the same size gets its own graph, new images in a buffer already seen are read
    at replay, and pageable input takes the chunked path (the uint8 graph stage keeps no large
    graphs by default, its input being read in place: they are asked for here)."""
    model = LeNet(weights=random_weights(seed=13))
    stage = prepared(key, model, batch=3000, large_graphs=4)
    keep = []  # every input buffer stays alive, so no two share an address
    try:
        for seed, n, pinned in [
            (1, 3000, True),
            (2, 3000, True),
            (3, 2500, True),
            (4, 3000, False),
        ]:
            images = random_images(n, seed=seed)
            x = stage.host_input(images)
            x = x if pinned else np.array(x)  # a pageable copy of the input
            keep.append(x)
            for _ in range(2):  # the second call replays
                poison(stage)
                out = stage.infer(x)
                verdict = check_logits(out, expected(stage, images, model.weights))
                assert verdict.passed, f"seed {seed}, n={n}, pinned={pinned}: {verdict.reason}"
            if pinned:
                x[...] = stage.host_input(random_images(n, seed=seed + 10))  # same buffer
                out = stage.infer(x)
                fresh = random_images(n, seed=seed + 10)
                assert check_logits(out, expected(stage, fresh, model.weights)).passed
        assert len(stage._large) == 3
    finally:
        stage.release()


def unaligned_pinned(x: np.ndarray) -> np.ndarray:
    """A copy of `x` in page-locked memory one byte past a 16-byte boundary."""
    from variants.cuda import memory

    raw = memory.pinned_empty((x.nbytes + 1,), np.uint8)
    out = raw[1:].view(x.dtype).reshape(x.shape)
    out[...] = x
    return out


@pytest.mark.parametrize("key", ("uint8_input", "one_kernel"))
def test_input_read_in_place_and_the_fallbacks(key: str) -> None:
    """Page-locked input is read in place, one launch kept per batch size, at sizes built for
    latency and for throughput; pageable input and page-locked input off the kernel's 16-byte
    alignment are copied in chunks instead; every result matches the reference."""
    model = LeNet(weights=random_weights(seed=19))
    stage = prepared(key, model, batch=3000, in_place=True)
    try:
        cases = [(3000, "pinned"), (1, "pinned"), (700, "pinned"), (2049, "pageable"),
                 (2049, "unaligned"), (3000, "pinned")]
        for i, (n, where) in enumerate(cases):
            images = random_images(n, seed=40 + i)
            x = stage.host_input(images)
            x = {"pinned": x, "pageable": np.array(x), "unaligned": unaligned_pinned(x)}[where]
            poison(stage)
            verdict = check_logits(stage.infer(x), expected(stage, images, model.weights))
            assert verdict.passed, f"{key}, n={n}, {where}: {verdict.reason}"
            assert (n in stage._in_place) == (where == "pinned"), (n, where)
    finally:
        stage.release()


KNOBS = {
    # the paths the defaults left: scalar fc loads, a load-then-store staging loop, eight even
    # chunks, the output allocated first
    "off": {"fc_vec": False, "stage_all": False, "early_copy": False, "max_chunks": 8,
            "taper": 0, "small_chunk_images": 0, "in_place": False},
    # further than the defaults: 16 fc weights in flight, registers capped for four blocks an
    # SM, eight chunks, the last cut three more times and the first twice, chunks of up to 300
    # images two a block, the input read in place eight images a block
    "more": {"fc_unroll": 4, "min_blocks": 4, "max_chunks": 8, "taper": 3,
             "small_chunk_images": 300, "lead": 2, "in_place": True, "in_place_imgs": 8},
    # a large batch's graph cut finer than the chunk-by-chunk path: sixteen chunks, the last
    # cut four more times and the first three times
    "graph cut": {"graph_chunks": 16, "graph_taper": 4, "graph_lead": 3, "min_chunk_images": 256,
                  "large_graphs": 4},
}
ONE_KERNEL_KEYS = ("one_kernel", "one_kernel_const", "graph_fp32", "uint8_input", "graph")
GRAPH_KEYS = ("graph_fp32", "graph")


@pytest.mark.parametrize(
    ("key", "knobs"),
    [(k, n) for n in KNOBS for k in (GRAPH_KEYS if n == "graph cut" else ONE_KERNEL_KEYS)],
)
def test_one_kernel_knobs_keep_the_results(key: str, knobs: str) -> None:
    """The tuning knobs the bench tries, off and further than the defaults, at sizes whose
    tapered tails differ, every buffer poisoned."""
    model = LeNet(weights=random_weights(seed=17))
    spec = STUDY.get(key)
    stage = spec.build()
    note = runtimes.adapter(spec.runtime).missing() or runtimes.missing_needs(spec.needs)
    if note:
        pytest.skip(f"{key}: {note}")
    for attr, value in KNOBS[knobs].items():
        assert hasattr(stage, attr), attr
        setattr(stage, attr, value)
    stage.prepare(model, 10_000)
    try:
        for i, n in enumerate([10_000, 4500, 2049, 1, 700]):
            images = random_images(n, seed=900 + i)
            poison(stage)
            verdict = check_logits(run(stage, images), expected(stage, images, model.weights))
            assert verdict.passed, f"{key} {knobs}, n={n}: {verdict.reason}"
    finally:
        stage.release()
