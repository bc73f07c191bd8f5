"""The MobileNetV2 study on the CPU: the built model has torchvision's layout and node names,
its activations are in a realistic range with ReLU6 clipping a real fraction, onnxruntime and
the float64 executor agree on it, the images are deterministic crops, and a one-element bug in
one layer fails the study's comparison rule while correct fp32 arithmetic passes it."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from profiler.errors import DataError
from variants.mobilenetv2 import data, model
from variants.mobilenetv2.study import LOGITS_RULE, STUDY, load, reference
from variants.onnxplan import execute


@cache
def net():
    return load()


@cache
def few_images():
    return data.benchmark_images(36)[32:36]  # not the calibration images


@cache
def traced():
    return execute.activations(net().plan, few_images())


def test_the_graph_has_torchvisions_layer_counts_and_names():
    p = net().plan
    counts = p.counts()
    assert (counts["Conv"], counts["Clip"], counts["Add"]) == (52, 35, 10)
    assert (counts["GlobalAveragePool"], counts["Gemm"], counts["Flatten"]) == (1, 1, 1)
    assert len(p.layers) == 100
    assert 3.45e6 < p.parameters() < 3.52e6  # torchvision: 3,504,872 with BN, 3.49 M folded
    names = [ly.name for ly in p.layers]
    assert names[0] == "/features/features.0/features.0.0/Conv"
    assert "/features/features.2/conv/conv.1/conv.1.0/Conv" in names
    assert "/features/features.3/Add" in names and names[-1] == "/classifier/classifier.1/Gemm"
    phases = [ly.phase for ly in p.layers]
    assert phases[:5] == ["features.0.0", "features.0.2", "features.1.conv.0.0",
                          "features.1.conv.0.2", "features.1.conv.1"]
    assert "features.3.Add" in phases and phases[-3:] == ["GlobalAveragePool", "Flatten",
                                                          "classifier.1"]
    kinds = {(ly.attrs["kernel"], ly.attrs["group"] > 1) for ly in p.layers if ly.op == "Conv"}
    assert kinds == {((3, 3), False), ((1, 1), False), ((3, 3), True)}  # stem, 1x1, depthwise
    depthwise = [ly for ly in p.layers if ly.op == "Conv" and ly.attrs["group"] > 1]
    strides = [ly.attrs["stride"][0] for ly in depthwise]
    assert strides.count(2) == 4 and p.output_shape == (1000,)


def test_the_build_is_deterministic_and_cached():
    path = model.path()
    assert path == model.cached_path() and path.is_file()
    assert model.build().SerializeToString() == path.read_bytes()


def test_activations_are_in_range_and_relu6_clips_a_real_fraction():
    p, acts = net().plan, traced()
    for layer in p.layers:
        assert np.isfinite(acts[layer.output]).all()
        assert np.abs(acts[layer.output]).max() < 100, layer.name
    clips = [acts[ly.inputs[0]] for ly in p.layers if ly.op == "Clip"]
    above = np.array([(a > 6).mean() for a in clips])
    below = np.array([(a < 0).mean() for a in clips])
    assert (above > 1e-3).all(), above.min()  # every ReLU6 clips at 6 somewhere
    assert 0.005 < above.mean() < 0.1 and 0.2 < below.mean() < 0.6
    logits = acts[p.output]
    assert 1 < logits.std(axis=1).min() and logits.std(axis=1).max() < 10
    assert len(set(logits.argmax(axis=1))) > 1  # the top class depends on the image


def test_onnxruntime_and_the_float64_executor_agree():
    ours = traced()[net().plan.output]
    theirs = reference(few_images(), net())
    verdict = LOGITS_RULE.check(theirs, ours)
    assert verdict.passed, verdict.reason
    assert verdict.max_rel_err < 1e-4


def _planted(layer_name, flat_index):
    """The Conv function of the executor, with one output element of one layer wrong: it
    reads its neighbour's value, as an off-by-one index would."""

    def conv(layer, x):
        y = execute.conv(layer, x)
        if layer.name == layer_name:
            flat = y.reshape(len(y), -1)
            flat[:, flat_index] = flat[:, flat_index + 1]
        return y

    return {"Conv": conv}


@pytest.mark.parametrize("layer, index", [
    ("/features/features.4/conv/conv.1/conv.1.0/Conv", 6 * 28 * 28 + 14 * 28 + 14),
    ("/features/features.14/conv/conv.2/Conv", 100 * 7 * 7 + 24),
])
def test_one_wrong_element_in_one_layer_fails_the_check(layer, index):
    p = net().plan
    truth = traced()[p.output]
    fp32 = execute.run(p, few_images(), np.float32)
    assert LOGITS_RULE.check(fp32, truth).passed  # honest fp32 arithmetic passes
    wrong = execute.run(p, few_images(), np.float32, ops=_planted(layer, index))
    verdict = LOGITS_RULE.check(wrong, truth)
    assert not verdict.passed, verdict


def test_the_images_are_deterministic_normalised_crops():
    a, b = data.benchmark_images(6), data.benchmark_images(3)
    assert a.shape == (6, 3, 224, 224) and a.dtype == np.float32
    np.testing.assert_array_equal(a[:3], b)
    assert not np.array_equal(a[0], a[2])
    low, high = (0 - data.MEAN) / data.STD, (1 - data.MEAN) / data.STD
    assert (a.min(axis=(0, 2, 3)) >= low - 1e-5).all()
    assert (a.max(axis=(0, 2, 3)) <= high + 1e-5).all()
    assert 0.5 < a.std() < 1.6


def test_data_files_of_either_layout_are_read_and_bad_ones_refused(tmp_path):
    crops = np.stack([data.crop(i) for i in range(3)])
    path = tmp_path / "rgb.npy"
    np.save(path, crops)
    np.testing.assert_allclose(STUDY.make_inputs(2, path), data.benchmark_images(2), atol=1e-6)
    np.save(tmp_path / "f.npy", data.benchmark_images(2))
    assert STUDY.make_inputs(2, tmp_path / "f.npy").shape == (2, 3, 224, 224)
    np.save(tmp_path / "bad.npy", np.zeros((2, 224, 224), np.float32))
    with pytest.raises(DataError, match="bad.npy: expected float32"):
        STUDY.make_inputs(2, tmp_path / "bad.npy")
    with pytest.raises(DataError, match="holds 2 images, 5 asked"):
        STUDY.make_inputs(5, tmp_path / "f.npy")


def test_the_study_declares_the_issues_stages_in_order():
    keys = ["torch_gpu", "torch_graph", "torch_fp16", "ort_cpu", "cuda_naive", "im2col_gemm",
            "fused", "specialised", "tuned", "pinned", "graph", "fp16"]
    assert [s.key for s in STUDY.stages] == keys
    roles = {s.key: s.role for s in STUDY.stages}
    assert roles == {"torch_gpu": "framework", "torch_graph": "framework",
                     "torch_fp16": "framework", "ort_cpu": "framework",
                     "cuda_naive": "baseline", "im2col_gemm": "step", "fused": "step",
                     "specialised": "step", "tuned": "step", "pinned": "step", "graph": "step",
                     "fp16": "step"}
    assert STUDY.default_items == 256 and STUDY.unit == "images"


def test_the_fused_plan_has_one_layer_per_convolution_and_computes_the_same():
    from variants.onnxplan import fuse
    from variants.onnxplan import fused_stages as gpu

    p = net().plan
    fused = fuse.epilogues(p)
    assert fused.counts() == {"Conv": 52, "GlobalAveragePool": 1, "Flatten": 1, "Gemm": 1}
    convs = [ly for ly in fused.layers if ly.op == "Conv"]
    assert sum(len(ly.inputs) == 2 for ly in convs) == 10  # the residual Adds
    assert sum(ly.attrs.get("act") == (0.0, 6.0) for ly in convs) == 35
    assert sum(gpu.is_pointwise(ly) for ly in convs) == 34
    assert sum(gpu.is_depthwise3x3(ly) for ly in convs) == 17
    assert [ly.phase for ly in convs if gpu.is_stem3x3(ly)] == ["features.0.0"]
    x = few_images()[:1]
    np.testing.assert_allclose(execute.run(fused, x), traced()[p.output][:1], rtol=1e-9,
                               atol=1e-9)
