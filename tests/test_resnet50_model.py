"""The ResNet-50 model builder (issue 11's model, on the shared engine): torchvision's layout
with BatchNorm kept, 25.5 M parameters, node names that give block phases, activations in
range on real images, and onnxruntime and the float64 executor agreeing on it."""

from __future__ import annotations

from functools import cache

import numpy as np
import onnx
import pytest

from variants.mobilenetv2 import data
from variants.mobilenetv2.study import LOGITS_RULE
from variants.onnxplan import execute, plan
from variants.resnet50 import model


@cache
def net():
    return plan.load(model.path())


@cache
def traced():
    return execute.activations(net(), data.benchmark_images(10)[8:10])


def test_the_graph_has_torchvisions_layers_and_parameters():
    p = net()
    counts = p.counts()
    assert (counts["Conv"], counts["BatchNormalization"], counts["Relu"]) == (53, 53, 49)
    assert (counts["Add"], counts["MaxPool"], counts["GlobalAveragePool"]) == (16, 1, 1)
    assert counts["Gemm"] == 1
    stats = sum(ly.params[k].size for ly in p.layers if ly.op == "BatchNormalization"
                for k in ("mean", "var"))
    zero_biases = sum(ly.out_shape[0] for ly in p.layers if ly.op == "Conv")
    assert not any(ly.params["bias"].any() for ly in p.layers if ly.op == "Conv")
    assert p.parameters() - stats - zero_biases == 25_557_032  # torchvision's resnet50()
    phases = [ly.phase for ly in p.layers]
    assert phases[:4] == ["conv1", "bn1", "relu", "maxpool"]
    assert {"layer1.0.conv1", "layer1.0.bn3", "layer1.0.downsample.0", "layer1.0.Add",
            "layer3.5.relu_2", "layer4.2.conv3"} <= set(phases)
    assert "layer2.0.downsample.1" in phases and phases[-3:] == ["avgpool", "Flatten", "fc"]
    downsample = p.layer("/layer2/layer2.0/downsample/downsample.0/Conv")
    assert downsample.attrs["stride"] == (2, 2)
    assert p.layer("/layer2/layer2.0/conv2/Conv").attrs["stride"] == (2, 2)  # v1.5


def test_activations_stay_in_range_through_sixteen_residual_blocks():
    p, acts = net(), traced()
    for layer in p.layers:
        value = acts[layer.output]
        assert np.isfinite(value).all() and np.abs(value).max() < 200, layer.name
    last_adds = [acts[ly.output].std() for ly in p.layers if ly.op == "Add"]
    assert max(last_adds) < 5 * min(last_adds)
    logits = acts[p.output]
    assert 1 < logits.std(axis=1).min() and logits.std(axis=1).max() < 10


def test_onnxruntime_and_the_float64_executor_agree():
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(str(model.path()), providers=["CPUExecutionProvider"])
    x = data.benchmark_images(10)[8:10]
    theirs = session.run(None, {"input": x})[0]
    verdict = LOGITS_RULE.check(theirs, traced()[net().output])
    assert verdict.passed, verdict.reason


def test_the_build_is_deterministic():
    assert model.build().SerializeToString() == model.path().read_bytes()
    onnx.checker.check_model(str(model.path()))
