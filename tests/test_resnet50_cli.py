"""The ResNet-50 study from the command line: `profgen export-onnx resnet50` writes the model
the stages run, and `--onnx` with a network that is not a bottleneck ResNet is refused in one
line, exit 2, before any stage starts."""

from __future__ import annotations

from clirun import assert_refused, profgen

from profiler.errors import EXIT_USAGE
from variants.mobilenetv2 import model as mobilenet
from variants.resnet50 import model


def test_export_onnx_writes_the_model_the_study_runs(tmp_path, capsys):
    out = tmp_path / "resnet50.onnx"
    result = profgen(["export-onnx", "resnet50", "-o", out], capsys)
    assert result.code == 0, result.err
    assert out.read_bytes() == model.path().read_bytes()


def test_a_network_that_is_not_a_resnet_is_refused_before_running(tmp_path, capsys):
    path = tmp_path / "mobilenetv2.onnx"
    path.write_bytes(mobilenet.path().read_bytes())
    result = profgen(["run", "resnet50", "--stage", "unfused", "--onnx", path], capsys)
    assert_refused(result, EXIT_USAGE, str(path), "not a bottleneck ResNet")
