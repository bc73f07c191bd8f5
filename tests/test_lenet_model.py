"""The shipped LeNet-5: its ONNX file, the float64 reference against onnxruntime, the stated
accuracy, bad model files, and the reference itself on cases computed by hand."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from profiler.errors import DataError
from variants.lenet import data, model, reference
from variants.lenet.study import LOGITS_RULE


@pytest.fixture(scope="module")
def shipped() -> model.LeNet:
    return model.load()


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    return data.normalize(data.load_shipped().images)


@pytest.fixture(scope="module")
def logits(shipped, images) -> np.ndarray:
    return shipped.reference(images)


# --- the shipped model -------------------------------------------------------------------


def test_load_gives_the_shapes_of_shapes(shipped):
    assert {k: v.shape for k, v in shipped.weights.items()} == model.SHAPES
    assert all(v.dtype == np.float32 for v in shipped.weights.values())
    assert shipped.source == str(model.MODEL_PATH)


def test_weights_are_the_initializers_of_the_same_name(shipped):
    """The CUDA stages rely on the names: conv1.weight must be conv1's weight, and so on."""
    graph = onnx.load(str(model.MODEL_PATH)).graph
    init = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    assert set(init) == set(model.SHAPES)
    for name, array in shipped.weights.items():
        np.testing.assert_array_equal(array, init[name])


def test_reference_matches_onnxruntime(logits, images):
    """The float64 reference against onnxruntime running the shipped file on every shipped
    image, with the study's per-image error: max_j |a - b| / max_j |ref|.

    onnxruntime runs the graph in float32, as shipped: its CPU provider has no float64 Conv
    (a float64 copy of the graph fails with NOT_IMPLEMENTED), and float32 is enough: measured
    5.8e-7 (6.7e-7 with graph optimisations off; NumPy in float32 gives 6.7e-7, PyTorch 7.6e-7)
    on an AVX2 CPU with onnxruntime 1.31. The error is mostly the float32 rounding of the
    activations between layers, so it barely depends on the CPU's summation order.
    """
    import onnxruntime as ort  # the `test` extra: a missing one fails, it does not skip
    session = ort.InferenceSession(str(model.MODEL_PATH), providers=["CPUExecutionProvider"])
    out = session.run(None, {session.get_inputs()[0].name: images})[0]
    assert out.shape == (len(images), 10)
    verdict = LOGITS_RULE.check(out, logits)
    assert verdict.max_rel_err < 1e-6, verdict
    assert verdict.topk_mismatches == 0


def test_onnx_batch_dimension_is_dynamic():
    graph = onnx.load(str(model.MODEL_PATH)).graph
    dims = graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param and [d.dim_value for d in dims[1:]] == [1, 28, 28]


def test_heldout_accuracy_is_at_least_the_stated_one(logits):
    """The training script writes the accuracy it reached into the model's metadata."""
    meta = {p.key: p.value for p in onnx.load(str(model.MODEL_PATH)).metadata_props}
    digits = data.load_shipped()
    test = digits.test_index
    assert int(meta["heldout_images"]) == len(test)
    stated = float(meta["heldout_accuracy"])
    accuracy = (logits[test].argmax(axis=1) == digits.labels[test]).mean()
    assert accuracy >= stated - 1e-6
    assert stated >= 0.95  # a trained network, not a lucky random one


def test_the_study_inputs_are_data_benchmark_images(tmp_path):
    from variants.lenet.study import STUDY

    np.testing.assert_array_equal(STUDY.make_inputs(7), data.benchmark_images(7))


# --- bad model files ---------------------------------------------------------------------


def test_load_missing_file(tmp_path):
    path = tmp_path / "lenet.onnx"
    with pytest.raises(DataError, match=f"{path}: model file not found"):
        model.load(path)


@pytest.mark.parametrize("content", [b"hello, this is not ONNX\n", b""])
def test_load_not_onnx(tmp_path, content):
    path = tmp_path / "notes.onnx"
    path.write_bytes(content)
    with pytest.raises(DataError, match=f"{path}: not a"):
        model.load(path)


def lenet_graph(
    weights: dict[str, np.ndarray],
    *,
    pool: str = "MaxPool",
    conv_pads: tuple[int, ...] = (0, 0, 0, 0),
    fc_as_matmul: bool = False,
) -> onnx.ModelProto:
    """A LeNet-5 ONNX graph built by hand (not by torch), with a few knobs to break it."""
    inits = [numpy_helper.from_array(v, k) for k, v in weights.items()]
    nodes, x = [], "images"
    for i, conv in enumerate(["conv1", "conv2"]):
        nodes += [
            helper.make_node(
                "Conv", [x, f"{conv}.weight", f"{conv}.bias"], [f"c{i}"], pads=list(conv_pads)
            ),
            helper.make_node("Relu", [f"c{i}"], [f"r{i}"]),
            helper.make_node(pool, [f"r{i}"], [f"p{i}"], kernel_shape=[2, 2], strides=[2, 2]),
        ]
        x = f"p{i}"
    nodes.append(helper.make_node("Flatten", [x], ["flat"], axis=1))
    x = "flat"
    for i, fc in enumerate(["fc1", "fc2", "fc3"]):
        if fc_as_matmul:
            inits.append(numpy_helper.from_array(weights[f"{fc}.weight"].T.copy(), f"{fc}.wT"))
            nodes += [
                helper.make_node("MatMul", [x, f"{fc}.wT"], [f"m{i}"]),
                helper.make_node("Add", [f"m{i}", f"{fc}.bias"], [f"g{i}"]),
            ]
        else:
            w, b = f"{fc}.weight", f"{fc}.bias"
            nodes.append(helper.make_node("Gemm", [x, w, b], [f"g{i}"], transB=1))
        x = f"g{i}"
        if fc != "fc3":
            nodes.append(helper.make_node("Relu", [x], [f"a{i}"]))
            x = f"a{i}"
    graph = helper.make_graph(
        nodes,
        "lenet",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["n", 1, 28, 28])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["n", 10])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def save(tmp_path, proto: onnx.ModelProto, name: str = "other.onnx"):
    path = tmp_path / name
    onnx.save(proto, str(path))
    return path


def test_hand_built_graph_reads_back(tmp_path):
    """The same weights through Gemm or MatMul + Add nodes read back identically."""
    weights = model.random_weights(3)
    for matmul in (False, True):
        path = save(tmp_path, lenet_graph(weights, fc_as_matmul=matmul), f"m{matmul}.onnx")
        back = model.read_onnx_weights(path)
        for name in model.SHAPES:
            np.testing.assert_array_equal(back[name], weights[name])


def test_load_another_network(tmp_path):
    """A small MLP classifier: Flatten, Gemm, Relu, Gemm."""
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((32, 784)).astype(np.float32), "w1"),
        numpy_helper.from_array(np.zeros(32, np.float32), "b1"),
        numpy_helper.from_array(rng.standard_normal((10, 32)).astype(np.float32), "w2"),
        numpy_helper.from_array(np.zeros(10, np.float32), "b2"),
    ]
    nodes = [
        helper.make_node("Flatten", ["x"], ["f"]),
        helper.make_node("Gemm", ["f", "w1", "b1"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 1, 28, 28])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 10])],
        inits,
    )
    path = save(tmp_path, helper.make_model(graph))
    with pytest.raises(DataError, match=f"{path}: not a LeNet-5: expected the layers Conv"):
        model.load(path)


def test_load_lenet_with_other_shapes(tmp_path):
    weights = model.random_weights(1)
    weights["conv1.weight"] = np.zeros((6, 1, 3, 3), np.float32)  # 3x3 kernels
    path = save(tmp_path, lenet_graph(weights))
    with pytest.raises(DataError, match=r"not a LeNet-5: conv1.weight has shape \(6, 1, 3, 3\)"):
        model.load(path)


def test_load_lenet_with_average_pooling(tmp_path):
    path = save(tmp_path, lenet_graph(model.random_weights(1), pool="AveragePool"))
    with pytest.raises(DataError, match=f"{path}: not a LeNet-5: .*found Conv Relu AveragePool"):
        model.load(path)


def test_load_lenet_with_padded_convolutions(tmp_path):
    path = save(tmp_path, lenet_graph(model.random_weights(1), conv_pads=(1, 1, 1, 1)))
    with pytest.raises(DataError, match=r"not a LeNet-5: Conv node .* pads=\[1, 1, 1, 1\]"):
        model.load(path)


# --- the reference, against cases computed by hand ---------------------------------------


def test_conv2d_delta_kernel_crops_and_shifts():
    x = np.random.default_rng(0).standard_normal((2, 1, 28, 28))
    w = np.zeros((2, 1, 5, 5))
    w[0, 0, 0, 0] = 1.0  # out[i, j] = x[i, j]
    w[1, 0, 3, 1] = -2.0  # out[i, j] = -2 x[i + 3, j + 1]
    out = reference.conv2d(x, w, np.array([0.5, 0.0]))
    assert out.shape == (2, 2, 24, 24)
    np.testing.assert_array_equal(out[:, 0], x[:, 0, :24, :24] + 0.5)
    np.testing.assert_array_equal(out[:, 1], -2.0 * x[:, 0, 3:27, 1:25])


def test_conv2d_against_explicit_loops():
    rng = np.random.default_rng(1)
    x, w, b = (
        rng.standard_normal((2, 3, 7, 6)),
        rng.standard_normal((4, 3, 5, 5)),
        rng.standard_normal(4),
    )
    expected = np.zeros((2, 4, 3, 2))
    for n in range(2):
        for o in range(4):
            for i in range(3):
                for j in range(2):
                    total = b[o]
                    for c in range(3):
                        for dy in range(5):
                            for dx in range(5):
                                total += x[n, c, i + dy, j + dx] * w[o, c, dy, dx]
                    expected[n, o, i, j] = total
    np.testing.assert_allclose(reference.conv2d(x, w, b), expected, rtol=1e-12, atol=1e-12)


def test_maxpool2_and_relu():
    x = np.array([[1, 2, 5, 6], [3, 4, 7, 8], [-1, -2, 0, 9], [-3, -4, 0, 0]], float)
    np.testing.assert_array_equal(reference.maxpool2(x[None, None])[0, 0], [[4, 8], [-1, 9]])
    np.testing.assert_array_equal(reference.relu(np.array([-2.0, 0.0, 3.0])), [0.0, 0.0, 3.0])


def test_forward_on_hand_picked_weights():
    """Weights that route one pixel through every layer, so the logits are known by hand.

    conv1 channel 0 copies the image (delta kernel), pool1 takes 2x2 maxima; conv2 channel 5
    copies pool1's channel 0, pool2 takes maxima again, so pool2[5, a, b] is the largest pixel
    of the image's 4x4 block (4a.., 4b..). fc1 row 7 reads flat index 5*16 + 2*4 + 3, which is
    pool2[5, 2, 3] only if the flatten order is (C, H, W): the block rows 8-11, columns 12-15.
    """
    w = {k: np.zeros(s, np.float32) for k, s in model.SHAPES.items()}
    w["conv1.weight"][0, 0, 0, 0] = 1
    w["conv1.bias"][1] = -3  # a channel that conv1's ReLU must zero ...
    w["conv2.weight"][6, 1, 2, 2] = -1  # ... or conv2 channel 6 gets +3
    w["conv2.weight"][5, 0, 0, 0] = 1
    w["conv2.bias"][8] = -2  # a channel that conv2's ReLU must zero
    w["fc1.weight"][7, 5 * 16 + 2 * 4 + 3] = 2
    w["fc1.weight"][7, [6 * 16, 8 * 16 + 5]] = 100  # pool2 channels 6 and 8: zero if the ReLUs work
    w["fc1.bias"][7] = 0.5
    w["fc1.bias"][8] = -1  # fc1's ReLU must zero it
    w["fc2.weight"][3, 7], w["fc2.bias"][3] = 3, -1
    w["fc2.weight"][3, 8] = 50
    w["fc2.weight"][4, 7] = -1  # negative: the ReLU must zero it
    w["fc3.weight"][:, 3] = np.arange(10) - 4  # negative logits stay (no ReLU at the end)
    w["fc3.weight"][:, 4] = 1000
    w["fc3.bias"][:] = 0.25
    image = np.zeros((3, 1, 28, 28), np.float32)
    image[0, 0, 9, 14] = 0.5  # inside the block: the 2x2 maxima carry it through
    image[1, 0, 14, 9] = 0.5  # the transposed place: outside the block
    image[2, 0, 9, 14], image[2, 0, 11, 12] = 0.25, 0.5  # two pixels in the block: the max
    hidden = 3 * (2 * 0.5 + 0.5) - 1  # fc1 -> 1.5, fc2 -> 3.5
    expected = np.array(
        [
            (np.arange(10) - 4) * hidden + 0.25,
            (np.arange(10) - 4) * (3 * 0.5 - 1) + 0.25,  # fc1 sees only its bias
            (np.arange(10) - 4) * hidden + 0.25,
        ]
    )
    np.testing.assert_allclose(reference.forward(image, w), expected, rtol=1e-12)


def test_forward_chunks_and_dtypes(shipped, images, logits):
    """Chunking over CHUNK images and the input dtype change nothing."""
    n = reference.CHUNK + 3
    one_by_one = np.concatenate([shipped.reference(images[i : i + 1]) for i in range(0, n, 97)])
    np.testing.assert_allclose(one_by_one, logits[0:n:97], rtol=1e-12, atol=1e-12)
    five = shipped.reference(images[:5].astype(np.float64))
    np.testing.assert_allclose(five, logits[:5], rtol=1e-12, atol=1e-12)
    assert logits.dtype == np.float64
    assert reference.forward(images[:0], shipped.weights).shape == (0, 10)
