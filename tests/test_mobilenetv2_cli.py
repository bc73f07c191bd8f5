"""The MobileNetV2 study from the command line: `profgen export-onnx` writes the model the
stages run, `--onnx` runs a user's own file, and a file the layer plan cannot run is refused
in one line, exit 2, naming the node and its op, before any stage starts."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from clirun import assert_refused, profgen
from onnx import helper

from profiler.errors import EXIT_USAGE
from variants.mobilenetv2 import model

ROOT = Path(__file__).resolve().parents[1]


def test_export_onnx_writes_the_model_the_study_runs(tmp_path, capsys):
    out = tmp_path / "sub" / "mobilenetv2.onnx"
    result = profgen(["export-onnx", "mobilenetv2", "-o", out], capsys)
    assert result.code == 0, result.err
    assert result.out.strip() == str(out)
    assert out.read_bytes() == model.path().read_bytes()
    onnx.checker.check_model(str(out))


def test_export_onnx_of_a_study_without_a_model_file_is_refused(tmp_path, capsys):
    result = profgen(["export-onnx", ROOT / "examples" / "softmax.py", "-o", tmp_path / "x"],
                     capsys)
    assert_refused(result, EXIT_USAGE, "softmax", "no model file")


def with_softmax(tmp_path: Path) -> Path:
    m = onnx.load(str(model.path()))
    gemm = m.graph.node[-1]
    gemm.output[0] = "logits"
    m.graph.node.append(helper.make_node("Softmax", ["logits"], ["output"], name="/Softmax"))
    path = tmp_path / "softmax.onnx"
    onnx.save(m, str(path))
    return path


def test_an_onnx_file_with_an_unsupported_op_is_refused_before_running(tmp_path, capsys):
    path = with_softmax(tmp_path)
    result = profgen(["run", "mobilenetv2", "--stage", "ort_cpu", "--onnx", path], capsys)
    assert_refused(result, EXIT_USAGE, str(path), "'/Softmax'", "op Softmax", "unsupported op")


def test_onnx_is_refused_by_a_study_that_reads_no_model(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    path.write_bytes(model.path().read_bytes())
    result = profgen(["run", ROOT / "examples" / "softmax.py", "--stage", "Naive", "--onnx",
                      path], capsys)
    assert_refused(result, EXIT_USAGE, "softmax", "--onnx")


def test_a_users_onnx_file_runs_and_passes(tmp_path, capsys):
    pytest.importorskip("onnxruntime")
    path = tmp_path / "mine.onnx"
    path.write_bytes(model.path().read_bytes())
    result = profgen(["run", "mobilenetv2", "--stage", "ort_cpu", "--onnx", path, "--images",
                      "4", "--repeat", "1", "--warmup", "0"], capsys)
    assert result.code == 0, result.err
    assert "PASS" in result.out
    from variants.mobilenetv2.study import STUDY

    assert STUDY.load_model(path).path == path and STUDY.reads_model
