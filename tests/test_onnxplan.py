"""The ONNX layer-plan engine on small hand-made graphs: every supported op loads with the right
shapes and runs in the NumPy executor as onnxruntime runs it; unsupported ops and attributes
are one-line errors naming the node; BatchNorm folding, buffer sharing and the kernels' NumPy
twins hold."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from profiler.errors import EXIT_USAGE, DataError
from variants.onnxplan import execute, fold, memory, plan, twins

RNG = np.random.default_rng(7)


def tensor(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def model(nodes, inits, in_shape, out_shape, opset=17):
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", *in_shape])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", *out_shape])],
        inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def w(*shape, scale=0.3):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def every_op_model():
    """Conv (stride 2, asymmetric pads, groups), BN, Clip, Relu, Add, both pools, GAP, Reshape
    by a Constant, Identity, Gemm (transB 0), MatMul + Add of a constant."""
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "c1w", "c1b"], ["c1"], name="/stem/conv/Conv", strides=[2, 2],
          pads=[1, 0, 2, 1], kernel_shape=[3, 3]),
        n("BatchNormalization", ["c1", "s", "b", "m", "v"], ["bn"], name="/stem/bn/Bn",
          epsilon=1e-3),
        n("Clip", ["bn", "lo", "hi"], ["a1"], name="/stem/act/Clip"),
        n("Conv", ["a1", "c2w"], ["c2"], name="/block/dw/Conv", group=4, pads=[1, 1, 1, 1]),
        n("Relu", ["c2"], ["a2"], name="/block/relu/Relu"),
        n("Add", ["a2", "a1"], ["s1"], name="/block/Add"),
        n("Identity", ["s1"], ["s1i"], name="/block/Identity"),
        n("MaxPool", ["s1i"], ["p1"], name="/pool/MaxPool", kernel_shape=[3, 3],
          strides=[2, 2], pads=[1, 1, 1, 1]),
        n("AveragePool", ["p1"], ["p2"], name="/avg/AveragePool", kernel_shape=[2, 2],
          pads=[0, 0, 1, 1], count_include_pad=0),
        n("AveragePool", ["p2"], ["p3"], name="/avg2/AveragePool", kernel_shape=[3, 3],
          pads=[1, 1, 1, 1], count_include_pad=1),
        n("GlobalAveragePool", ["p3"], ["g"], name="/GlobalAveragePool"),
        n("Constant", [], ["shape"], name="/Constant",
          value=tensor("shape", np.array([-1, 4], np.int64))),
        n("Reshape", ["g", "shape"], ["r"], name="/Reshape"),
        n("Gemm", ["r", "fw", "fb"], ["f1"], name="/fc/Gemm", alpha=0.5, beta=2.0),
        n("MatMul", ["f1", "mw"], ["f2"], name="/head/MatMul"),
        n("Add", ["f2", "mb"], ["y"], name="/head/Add"),
    ]
    inits = [
        tensor("c1w", w(4, 3, 3, 3)), tensor("c1b", w(4)),
        tensor("s", 1 + w(4)), tensor("b", w(4)), tensor("m", w(4)),
        tensor("v", np.abs(1 + w(4))),
        tensor("lo", np.float32(0)), tensor("hi", np.float32(1.5)),
        tensor("c2w", w(4, 1, 3, 3)),
        tensor("fw", w(4, 6)), tensor("fb", w(6)), tensor("mw", w(6, 5)), tensor("mb", w(5)),
    ]
    return model(nodes, inits, (3, 17, 13), (5,))


def ort_run(m, x):
    ort = pytest.importorskip("onnxruntime")
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, {"x": x.astype(np.float32)})[0]


def test_every_supported_op_loads_with_its_shapes_and_phases():
    p = plan.from_model(every_op_model())
    assert [ly.op for ly in p.layers] == [
        "Conv", "BatchNormalization", "Clip", "Conv", "Relu", "Add", "MaxPool", "AveragePool",
        "AveragePool", "GlobalAveragePool", "Reshape", "Gemm", "Gemm", "Add",
    ]
    shapes = {ly.name: ly.out_shape for ly in p.layers}
    assert shapes["/stem/conv/Conv"] == (4, 9, 6)  # (17+1+2-3)//2+1, (13+0+1-3)//2+1
    assert shapes["/pool/MaxPool"] == (4, 5, 3)
    assert shapes["/avg/AveragePool"] == (4, 5, 3)
    assert shapes["/Reshape"] == (4,)
    assert p.output == "y" and p.output_shape == (5,) and p.input_shape == (3, 17, 13)
    assert p.layer("/block/Add").inputs == ("a2", "a1")
    assert p.layer("/pool/MaxPool").inputs == ("s1",)  # Identity resolved
    phases = [ly.phase for ly in p.layers]
    assert phases[:3] == ["stem.conv", "stem.bn", "stem.act"]
    assert "block.Add" in phases and "GlobalAveragePool" in phases and "head.Add" in phases
    assert len(set(phases)) == len(phases)


def test_the_numpy_executor_matches_onnxruntime_on_every_op():
    m = every_op_model()
    x = RNG.standard_normal((3, 3, 17, 13)).astype(np.float32)
    ours = execute.run(plan.from_model(m), x)
    theirs = ort_run(m, x)
    assert ours.shape == theirs.shape == (3, 5)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_clip_attributes_of_old_opsets_and_gemm_transb():
    n = helper.make_node
    nodes = [
        n("Flatten", ["x"], ["f"], name="/Flatten"),
        n("Gemm", ["f", "wt", "gb"], ["g"], name="/fc/Gemm", transB=1),
        n("Clip", ["g"], ["y"], name="/act/Clip", min=-0.2, max=0.3),
    ]
    m = model(nodes, [tensor("wt", w(7, 12)), tensor("gb", w(7))], (3, 2, 2), (7,), opset=10)
    x = RNG.standard_normal((4, 3, 2, 2)).astype(np.float32)
    p = plan.from_model(m)
    assert p.layer("/act/Clip").attrs == {"min": pytest.approx(-0.2), "max": pytest.approx(0.3)}
    np.testing.assert_allclose(execute.run(p, x), ort_run(m, x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "node, words",
    [
        (helper.make_node("Softmax", ["x"], ["y"], name="/head/Softmax"),
         ["'/head/Softmax'", "op Softmax", "unsupported op"]),
        (helper.make_node("Conv", ["x", "k"], ["y"], name="/c/Conv", dilations=[2, 2]),
         ["'/c/Conv'", "op Conv", "dilations=[2, 2]"]),
        (helper.make_node("MaxPool", ["x"], ["y"], name="/p/MaxPool", kernel_shape=[2, 2],
                          ceil_mode=1), ["'/p/MaxPool'", "ceil_mode=1"]),
        (helper.make_node("Conv", ["x", "x"], ["y"], name="/d/Conv"),
         ["'/d/Conv'", "weight input is not a constant"]),
    ],
)
def test_an_unsupported_node_is_a_one_line_usage_error_naming_it(node, words):
    m = model([node], [tensor("k", w(3, 3, 3, 3))], (3, 8, 8), (3, 6, 6))
    with pytest.raises(DataError) as info:
        plan.from_model(m, "net.onnx")
    text = str(info.value)
    assert "\n" not in text and text.startswith("net.onnx: node ")
    assert all(word in text for word in words), text
    assert info.value.exit_code == EXIT_USAGE


def test_a_missing_or_broken_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="not found"):
        plan.load(tmp_path / "nope.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a protobuf at all \xff\xfe")
    with pytest.raises(DataError, match="bad.onnx"):
        plan.load(bad)


def test_folding_batchnorm_into_the_conv_keeps_the_outputs():
    p = plan.from_model(every_op_model())
    folded = fold.fold_batchnorm(p)
    assert p.counts()["BatchNormalization"] == 1
    assert folded.counts()["BatchNormalization"] == 0
    assert len(folded.layers) == len(p.layers) - 1
    x = RNG.standard_normal((2, 3, 17, 13))
    np.testing.assert_allclose(execute.run(folded, x), execute.run(p, x), rtol=1e-5, atol=1e-6)


def test_buffer_slots_never_overwrite_a_tensor_still_to_be_read():
    p = plan.from_model(every_op_model())
    where, count = memory.slots(p)
    assert count < len(p.layers)
    last = {}
    for i, ly in enumerate(p.layers):
        for name in ly.inputs:
            last[name] = i
    alive = {p.input}
    for i, ly in enumerate(p.layers):
        if ly.op not in memory.VIEWS:
            clash = [t for t in alive if where[t] == where[ly.output]]
            assert not clash, (ly.name, clash)
        alive |= {ly.output}
        alive -= {t for t in ly.inputs if last[t] == i}


CONVS = [  # (n, c, h, w, oc, k, stride, pads, group)
    (2, 3, 9, 7, 4, 3, 2, (1, 1), 1),
    (1, 6, 8, 8, 6, 3, 1, (1, 1), 6),
    (2, 4, 5, 6, 6, 1, 1, (0, 0), 2),
    (1, 2, 7, 5, 3, 5, 2, (2, 0), 1),
]


def _conv_layer(n, c, h, wd, oc, k, stride, pads, group):
    t, left = pads
    lay = plan.Layer("c", "Conv", ("x",), "y", ((c, h, wd),), (0,),
                     {"kernel": (k, k), "stride": (stride, stride),
                      "pads": (t, left, t, left), "group": group},
                     {"weight": w(oc, c // group, k, k), "bias": w(oc)})
    ho, wo = (h + 2 * t - k) // stride + 1, (wd + 2 * left - k) // stride + 1
    from dataclasses import replace

    return replace(lay, out_shape=(oc, ho, wo))


@pytest.mark.parametrize("case", CONVS)
def test_the_direct_conv_and_im2col_twins_index_like_the_executor(case):
    lay = _conv_layer(*case)
    x = RNG.standard_normal((case[0], *lay.in_shape))
    want = execute.conv(lay, x)
    args = (lay.params["weight"].astype(np.float64), lay.params["bias"].astype(np.float64),
            lay.attrs["stride"], lay.attrs["pads"][:2], lay.attrs["group"], lay.out_shape[1:])
    np.testing.assert_allclose(twins.conv_direct(x, *args), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(twins.im2col_conv(x, *args), want, rtol=1e-12, atol=1e-12)


def test_a_twin_with_a_wrong_bound_is_caught():
    """The comparison above can fail: a twin reading one column past the input's edge (the
    bug `ix <= wd` would be) differs from the executor."""
    lay = _conv_layer(*CONVS[0])
    x = RNG.standard_normal((2, *lay.in_shape))
    padded = np.pad(x, ((0, 0), (0, 0), (0, 0), (0, 1)), constant_values=1.0)
    args = (lay.params["weight"].astype(np.float64), lay.params["bias"].astype(np.float64),
            lay.attrs["stride"], lay.attrs["pads"][:2], lay.attrs["group"], lay.out_shape[1:])
    wrong = twins.conv_direct(padded, *args)[..., : lay.out_shape[2]]
    assert not np.allclose(wrong, execute.conv(lay, x), rtol=1e-6, atol=1e-6)


def _fused_layer(case, act, with_residual):
    from dataclasses import replace

    lay = _conv_layer(*case)
    attrs = {**lay.attrs, "act": act} if act else lay.attrs
    inputs = ("x", "r") if with_residual else ("x",)
    return replace(lay, attrs=attrs, inputs=inputs)


@pytest.mark.parametrize("case, hw", [((2, 24, 7, 7, 40, 1, 1, (0, 0), 1), 49),
                                      ((3, 17, 1, 1, 70, 1, 1, (0, 0), 1), 1)])
@pytest.mark.parametrize("act, with_residual", [(None, True), ((0.0, 6.0), False)])
def test_the_pointwise_gemm_twin_with_its_epilogue_matches_the_executor(case, hw, act,
                                                                        with_residual):
    lay = _fused_layer(case, act, with_residual)
    x = RNG.standard_normal((case[0], *lay.in_shape)) * 3
    res = RNG.standard_normal((case[0], *lay.out_shape)) if with_residual else None
    want = execute.conv(lay, x, res)
    lo, hi = act or (-np.inf, np.inf)
    w64 = lay.params["weight"].astype(np.float64)
    got = twins.pointwise_gemm(x, w64[:, :, 0, 0], lay.params["bias"].astype(np.float64), res,
                               lo, hi, hw)
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", [(2, 5, 9, 40, 5, 3, 1, (1, 1), 5),
                                  (1, 3, 20, 70, 3, 3, 2, (1, 1), 3),
                                  (1, 2, 7, 7, 2, 3, 2, (1, 1), 2)])
def test_the_depthwise_twin_reads_its_shared_tile_like_the_executor(case):
    lay = _fused_layer(case, (0.0, 6.0), True)
    x = RNG.standard_normal((case[0], *lay.in_shape)) * 3
    res = RNG.standard_normal((case[0], *lay.out_shape))
    want = execute.conv(lay, x, res)
    got = twins.depthwise3x3(x, lay.params["weight"].astype(np.float64),
                             lay.params["bias"].astype(np.float64), res, 0.0, 6.0,
                             lay.attrs["stride"][0], lay.out_shape[1:])
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-12, atol=1e-12)


def test_epilogue_fusion_folds_residual_adds_and_activations_into_convs():
    from variants.onnxplan import fuse

    p = plan.from_model(every_op_model())
    fused = fuse.epilogues(fold.fold_batchnorm(p))
    ops = [ly.op for ly in fused.layers]
    assert ops[:2] == ["Conv", "Conv"]  # stem conv + BN + Clip; depthwise conv + Relu + Add
    stem, dw = fused.layers[:2]
    assert stem.attrs["act"] == (0.0, pytest.approx(1.5)) and len(stem.inputs) == 1
    assert dw.attrs["act"] == (0.0, np.inf) and "/block/Add" not in dw.attrs["fused"]
    assert "Add" in ops  # the Relu sits between the conv and the Add: not a residual epilogue
    x = RNG.standard_normal((2, 3, 17, 13))
    np.testing.assert_allclose(execute.run(fused, x), execute.run(p, x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", [(2, 5, 9, 40, 5, 3, 1, (1, 1), 5),
                                  (1, 3, 20, 70, 3, 3, 2, (1, 1), 3)])
def test_the_direct_depthwise_twin_matches_the_executor(case):
    lay = _fused_layer(case, (0.0, 6.0), False)
    x = RNG.standard_normal((case[0], *lay.in_shape)) * 3
    want = execute.conv(lay, x)
    got = twins.depthwise3x3_direct(x, lay.params["weight"].astype(np.float64),
                                    lay.params["bias"].astype(np.float64), None, 0.0, 6.0,
                                    lay.attrs["stride"][0], lay.out_shape[1:])
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", [(2, 3, 15, 11, 32, 3, 2, (1, 1), 1),
                                  (1, 3, 8, 9, 5, 3, 1, (0, 0), 1)])
def test_the_stem_twin_matches_the_executor(case):
    lay = _fused_layer(case, (0.0, 6.0), True)
    x = RNG.standard_normal((case[0], *lay.in_shape)) * 3
    res = RNG.standard_normal((case[0], *lay.out_shape))
    want = execute.conv(lay, x, res)
    got = twins.stem_conv3x3(x, lay.params["weight"].astype(np.float64),
                             lay.params["bias"].astype(np.float64), res, 0.0, 6.0,
                             lay.attrs["stride"], lay.attrs["pads"][:2], lay.out_shape[1:])
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-12, atol=1e-12)


def test_the_tuned_gemm_threads_cover_each_tile_column_once():
    tid = np.arange(256)
    cols = twins.pointwise_gemm_tuned_columns(128, tid)
    rows = (tid // 16) * 4
    owned = {(r + dr, c) for r, cs in zip(rows, cols, strict=True) for dr in range(4) for c in cs}
    assert owned == {(r, c) for r in range(64) for c in range(128, 192)}
    assert (np.diff(cols[:16, 0]) == 1).all()  # a store instruction: 16 consecutive pixels
