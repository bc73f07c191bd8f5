"""The Study API on its own: the comparison rule, registration and its refusals, inputs, the
reference cache's key, and finding a study by name, file or module."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from clirun import assert_refused, profgen

from profiler import defaults
from profiler.collect import discovery, loading, refcache
from profiler.errors import UsageError
from profiler.study import Compare, Stage, Study


def study(**kw) -> Study:
    args = dict(title="T", inputs=lambda n: np.ones((n, 3), np.float32), reference=lambda x: x)
    return Study("s", **(args | kw))


# --- the comparison rule ---------------------------------------------------------------------


def test_allclose_per_element_is_numpys_rule():
    ref = np.array([[1.0, 100.0, 1e-9]])
    rule = Compare(rtol=1e-3, atol=1e-6)
    assert rule.check(ref * (1 + 9e-4), ref).passed
    bad = ref.copy()
    bad[0, 1] = 100.2  # 2e-3 relative: outside
    verdict = rule.check(bad, ref)
    assert not verdict.passed and verdict.reason.startswith("1 values outside allclose rtol=0.001")
    assert verdict.max_abs_err == pytest.approx(0.2) and verdict.max_rel_err > 1e-3
    assert np.allclose(ref * (1 + 9e-4), ref, rtol=1e-3, atol=1e-6)  # the same rule as NumPy's


def test_row_scale_measures_against_the_rows_largest_value():
    ref = np.array([[10.0, 1e-4, -3.0]])
    out = ref + np.array([[0.0, 5e-4, 0.0]])  # small logit off by 5x, 5e-5 of the row's max
    assert not Compare(rtol=1e-4, atol=0).check(out, ref).passed
    verdict = Compare(rtol=1e-4, atol=0, scale="row").check(out, ref)
    assert verdict.passed and verdict.max_rel_err == pytest.approx(5e-5)


def test_topk_agreement_ignores_near_ties_only():
    ref = np.array([[1.0, 0.5, 0.1], [1.0, 0.9999, 0.1]])
    swapped = ref[:, [1, 0, 2]]
    rule = Compare(rtol=1.0, atol=1.0, topk=1, tie_margin=1e-3)  # allclose is no obstacle here
    verdict = rule.check(swapped, ref)
    assert verdict.topk_mismatches == 1 and "1 rows change their top-1" in verdict.reason
    assert Compare(rtol=1.0, atol=1.0, topk=2).check(ref[:, [1, 0, 2]], ref).passed  # same set


@pytest.mark.parametrize(
    ("out", "why"),
    [(np.full((2, 3), np.nan), "2 rows hold NaN"), (np.zeros((3, 2)), "shape (3, 2)")],
)
def test_nan_and_shapes_always_fail(out, why):
    verdict = Compare(rtol=1e9, atol=1e9).check(out, np.zeros((2, 3)))
    assert not verdict.passed and why in verdict.reason


def test_a_rule_must_allow_something():
    with pytest.raises(UsageError):
        Compare(rtol=0, atol=0)
    with pytest.raises(UsageError):
        Compare(scale="column")  # type: ignore[arg-type]


# --- registration ------------------------------------------------------------------------------


def test_stages_register_in_order_with_titles_from_docstrings():
    s = study()

    @s.stage(runtime="cpu", role="baseline")
    def first(x):
        """First

        Does the obvious thing.
        It is slow."""
        return x

    @s.stage(runtime="cpu", key="second", title="Given title")
    class Second(Stage):
        def infer(self, x):
            return x

    assert [st.key for st in s.stages] == ["first", "second"]
    assert s.get("first").title == "First"
    assert s.get("first").technique == "Does the obvious thing. It is slow."
    assert s.get("second").title == "Given title" and s.get("second").technique == ""
    assert np.array_equal(s.get("first").build().infer(np.ones(2)), np.ones(2))
    assert isinstance(s.get("second").build(), Second)
    assert s.describe()["stages"][0] | {"key": "first"} == s.describe()["stages"][0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(key="a", runtime="cpu"), "registered twice"),
        (dict(key="b", runtime="cuda"), "runtime 'cuda' is none of"),
        (dict(key="c", runtime="cpu", role="reference"), "role 'reference' is none of"),
        (dict(key="d", runtime="cpu", role="baseline"), "at most one baseline"),
        (dict(key="has space", runtime="cpu"), "stage key 'has space'"),
        (dict(key="e", runtime="cpu", ncu_items=0), "ncu_items must be a positive integer"),
        (dict(key="f", runtime="cpu", timeout_s=-1), "timeout_s must be positive"),
    ],
)
def test_bad_registrations_are_refused(kwargs, message):
    s = study()
    s.add(lambda x: x, key="a", runtime="cpu", role="baseline")
    with pytest.raises(UsageError, match=message):
        s.add(lambda x: x, **kwargs)


def test_a_class_without_infer_is_refused():
    with pytest.raises(UsageError, match="no `infer`"):
        study().add(type("Nothing", (), {}), runtime="cpu")


def test_inputs_and_data():
    s = study(data=lambda path, n: np.zeros((n, 3)))
    assert s.make_inputs(4).shape == (4, 3)
    assert (s.make_inputs(2, Path("x")) == 0).all()
    with pytest.raises(UsageError, match="reads no --data"):
        study().make_inputs(2, Path("x"))
    with pytest.raises(UsageError, match="inputs for 5 items have shape"):
        study(inputs=lambda n: np.ones((3, 3))).make_inputs(5)


# --- the reference cache -------------------------------------------------------------------


class Model:
    def __init__(self, w):
        self.weights = {"w": w, "b": np.zeros(2)}


def test_the_cache_key_follows_weights_inputs_and_version():
    s, x = study(model=lambda: None), np.ones((4, 3), np.float32)
    w = np.arange(6.0).reshape(2, 3)
    key = refcache.reference_key(s, Model(w), x)
    assert key == refcache.reference_key(s, Model(w.copy()), x.copy())  # content, not identity
    assert key != refcache.reference_key(s, Model(w + 1e-9), x)
    x2 = x.copy()
    x2[3, 2] = 2
    assert key != refcache.reference_key(s, Model(w), x2)
    assert key != refcache.reference_key(study(model=lambda: None, version="2"), Model(w), x)


def test_nested_dataclasses_are_hashed_to_their_last_array():
    """A model of dataclasses in tuples (a layer plan): every array counts. The hash once took
    a freed temporary's reused id for a cycle and skipped all but the first layer's weights."""
    import dataclasses

    @dataclasses.dataclass(frozen=True, eq=False)
    class Layer:
        name: str
        params: dict

    @dataclasses.dataclass(frozen=True, eq=False)
    class Net:
        layers: tuple

    def net(last: float) -> Net:
        layers = [Layer(f"l{i}", {"w": np.full(3, float(i))}) for i in range(5)]
        layers.append(Layer("last", {"w": np.full(3, last)}))
        return Net(tuple(layers))

    assert refcache.content_digest(net(1.0)) == refcache.content_digest(net(1.0))
    assert refcache.content_digest(net(1.0)) != refcache.content_digest(net(2.0))
    cyclic: list = [1]
    cyclic.append(cyclic)
    assert refcache.content_digest(cyclic) == refcache.content_digest(cyclic)


def test_a_file_the_model_names_is_hashed_by_content(tmp_path):
    f = tmp_path / "model.onnx"
    f.write_bytes(b"one")
    before = refcache.content_digest({"path": f})
    f.write_bytes(b"two")
    assert refcache.content_digest({"path": f}) != before


def test_an_unhashable_model_turns_the_cache_off(tmp_path):
    s = study(model=lambda: None, reference=lambda x, m: x * 2)
    lines: list[str] = []
    ref = refcache.cached_reference(s, open, np.ones((2, 3)), lines.append, root=tmp_path)
    assert (ref == 2).all() and "cache off" in lines[0] and not list(tmp_path.iterdir())


def test_hit_miss_and_a_corrupt_cache_file(tmp_path):
    s = study(reference=lambda x: x * 3)
    x, lines = np.ones((2, 3)), []
    refcache.cached_reference(s, None, x, lines.append, root=tmp_path)
    (cached,) = tmp_path.iterdir()
    assert (refcache.cached_reference(s, None, x, lines.append, root=tmp_path) == 3).all()
    cached.write_bytes(b"garbage")
    assert (refcache.cached_reference(s, None, x, lines.append, root=tmp_path) == 3).all()
    assert [ln.split(",")[0].split(" ")[2] for ln in lines] == ["miss", "hit", "miss"]


# --- finding a study ---------------------------------------------------------------------------

TWO = """
import numpy as np
from profiler.study import Study
a = Study("a", title="A", inputs=lambda n: np.ones((n, 1)), reference=lambda x: x)
b = Study("b", title="B", inputs=lambda n: np.ones((n, 1)), reference=lambda x: x)
"""


def test_a_file_with_two_studies_needs_a_name(tmp_path):
    path = tmp_path / "two.py"
    path.write_text(TWO)
    with pytest.raises(UsageError, match=r"found 2 \(a, b\); name one as"):
        loading.load_study(str(path))
    assert loading.load_study(f"{path}:b").name == "b"
    with pytest.raises(UsageError, match="c is not a profiler.study.Study"):
        loading.load_study(f"{path}:c")


def test_references_resolve_to_what_a_worker_loads(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text(TWO)
    assert discovery.resolve("mine.py:a") == f"{tmp_path / 'mine.py'}:a"
    assert discovery.resolve("lenet") == "variants.lenet.study:STUDY"
    assert discovery.resolve("pkg.mod:NAME") == "pkg.mod:NAME"
    with pytest.raises(UsageError, match="unknown study 'nope'; installed: lenet"):
        discovery.resolve("nope")
    with pytest.raises(UsageError, match="study file gone.py: not found"):
        discovery.resolve("gone.py")


def test_a_study_that_fails_to_import_is_one_line_and_a_log(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy\nraise RuntimeError('my study is broken')\n")
    result = profgen(["list", str(bad)], capsys)
    assert_refused(result, 2, "cannot load study", "RuntimeError: my study is broken")
    log = Path(result.err.split("full output: ")[1].rstrip(")\n"))
    assert "Traceback" in log.read_text()
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    assert_refused(profgen(["sweep", str(empty)], capsys), 2, "expected one Study", "found 0")


# --- a study's default repeats -------------------------------------------------------------------

REPEATS = """
import numpy as np
from profiler.study import Stage, Study
quiet = Study("quiet", title="Q", inputs=lambda n: np.ones((n, 1)), reference=lambda x: x,
              default_repeat=7)

@quiet.stage("one", runtime="cpu")
class One(Stage):
    '''One'''
    def infer(self, x):
        return x
"""


@pytest.mark.parametrize(("extra", "repeat"), [([], 7), (["--repeat", "3"], 3)])
def test_a_sweep_takes_the_studys_default_repeats_unless_told(tmp_path, extra, repeat):
    from profiler.cli import build_parser
    from profiler.cli.study import build_settings

    path = tmp_path / "quiet.py"
    path.write_text(REPEATS)
    args = build_parser().parse_args(["sweep", str(path), *extra])
    assert build_settings(args, stages=None, backend="none").repeat == repeat
    plain = build_parser().parse_args(["sweep", "lenet"])
    assert build_settings(plain, stages=None, backend="none").repeat == defaults.REPEAT


def test_a_default_repeat_below_one_is_refused():
    with pytest.raises(UsageError, match="default_repeat must be at least 1"):
        Study("z", title="Z", inputs=np.ones, reference=lambda x: x, default_repeat=0)
