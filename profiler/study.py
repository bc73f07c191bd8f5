"""The Study API: how every study, built in or a user's own, plugs into profgen.

A study is a value. It declares its name and title, the unit it counts ("images", "rows"), a
function that makes the benchmark input for N items (and optionally a `--data` loader), its
reference, its comparison rule, and its stages in order, each with an explicit role::

    from profiler.study import Compare, Study

    study = Study("softmax", title="Row-wise softmax", unit="rows",
                  inputs=make_rows, reference=softmax_float64,
                  compare=Compare(rtol=1e-5, atol=1e-7))

    @study.stage(role="baseline", runtime="cupy", title="Naive kernel")
    def naive(x):
        ...                                  # host array in, host array out: timed

    @study.stage(role="step", runtime="cupy")
    class Tuned:
        '''Tuned kernel

        One warp per row, the row read once into registers.'''
        def prepare(self, model, batch): ...  # upload, compile, allocate: not timed
        def infer(self, x): ...               # timed: copies and kernels all count
        def release(self): ...

A class stage whose input format holds less than the study's input (uint8 pixels of float
images) says so with `reference_input(x)`: the reference it is checked against is then computed
on that input, and the result says so in a note.

Registration order is the study order. A stage's title and technique default to the first line
and the rest of its docstring. Roles: `baseline` (at most one: speedups count from it),
`framework` (any number of framework references) and `step` (an optimisation step). The
runtime names how the harness waits for the device and marks the profiled range: `cupy`,
`torch`, `triton`, `numba`, `jax`, `cudart` (any CUDA code, through libcudart) or `cpu`.

When the study declares a `model` loader, its reference is called as `reference(x, model)` and
class stages are prepared with it; otherwise `reference(x)` and `prepare(None, batch)`.

Only profgen's worker process imports a study's module, so nothing here imports a framework.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from profiler.errors import UsageError

ROLES = ("baseline", "framework", "step")
RUNTIMES = ("cupy", "torch", "triton", "numba", "jax", "cudart", "cpu")
#: stage keys and study names: what a file name, an NVTX range and a CSV cell all accept
KEY_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")


def check_key(key: str, what: str = "stage key") -> str:
    """Return `key`, or raise UsageError when it is not a short identifier-like name."""
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise UsageError(
            f"{what} {key!r}: use 1-64 letters, digits, '_', '.' or '-', starting with a letter"
        )
    return key


@dataclass(frozen=True)
class Verdict:
    """How a stage's outputs compare with the reference."""

    max_abs_err: float
    max_rel_err: float
    topk_mismatches: int | None
    passed: bool
    reason: str


@dataclass(frozen=True)
class Compare:
    """The rule a stage's outputs must meet: allclose, then an optional top-k agreement.

    Every element must satisfy |out - ref| <= atol + rtol * s, where s is |ref| of the element
    (`scale="element"`, numpy.allclose's rule) or the largest |ref| of its row, the last axis
    (`scale="row"`: right for logits, whose small entries matter less). The reported relative
    error is max |out - ref| / (s + atol / rtol), which stays <= rtol exactly when all is close.

    With `topk` = k > 0, every row whose reference has a clear k-th largest value (the gap to
    the next one is more than `tie_margin` times its magnitude) must have the same top-k set.
    NaN, infinities and a wrong shape always fail.
    """

    rtol: float = 1e-5
    atol: float = 1e-8
    scale: Literal["element", "row"] = "element"
    topk: int = 0
    tie_margin: float = 1e-3

    def __post_init__(self) -> None:
        if not (self.rtol >= 0 and self.atol >= 0 and self.rtol + self.atol > 0):
            raise UsageError(f"Compare: rtol and atol must be >= 0, not both 0 ({self})")
        if self.scale not in ("element", "row") or self.topk < 0 or self.tie_margin < 0:
            raise UsageError(f"Compare: bad scale, topk or tie_margin ({self})")

    def describe(self) -> str:
        """The rule in a few words, for the report."""
        text = f"allclose rtol={self.rtol:g} atol={self.atol:g}"
        text += " (scale: row maximum)" if self.scale == "row" else ""
        if self.topk:
            text += f"; same top-{self.topk} (near ties {self.tie_margin:g} excluded)"
        return text

    def check(self, out: Any, ref: np.ndarray) -> Verdict:
        """Judge `out` against `ref` (float64) under this rule."""
        out = np.asarray(out)
        rows = len(ref) if ref.ndim else 1
        if out.shape != ref.shape:
            return Verdict(np.inf, np.inf, None, False, f"shape {out.shape}, expected {ref.shape}")
        out64 = out.astype(np.float64)
        if not np.isfinite(out64).all():
            bad = int((~np.isfinite(out64)).reshape(rows, -1).any(axis=1).sum())
            return Verdict(np.inf, np.inf, None, False, f"{bad} rows hold NaN or infinity")
        diff = np.abs(out64 - ref)
        scale = self._scale(ref)
        floor = self.atol / self.rtol if self.rtol else np.finfo(np.float64).tiny
        rel = float((diff / (scale + floor)).max(initial=0.0))
        abs_err = float(diff.max(initial=0.0))
        allowed = self.atol + self.rtol * scale
        reasons = []
        far = int((diff > allowed).sum())
        if far:
            reasons.append(f"{far} values outside {self.describe().split(';')[0]}")
        mismatches = self._topk_mismatches(out64, ref) if self.topk else None
        if mismatches:
            reasons.append(f"{mismatches} rows change their top-{self.topk}")
        detail = f" (max relative error {rel:.3g})" if far else ""
        return Verdict(abs_err, rel, mismatches, not reasons, "; ".join(reasons) + detail)

    def _scale(self, ref: np.ndarray) -> np.ndarray:
        mag: np.ndarray = np.abs(ref)
        if self.scale == "row" and ref.ndim:
            return np.broadcast_to(mag.max(axis=-1, keepdims=True), ref.shape)
        return mag

    def _topk_mismatches(self, out: np.ndarray, ref: np.ndarray) -> int:
        if ref.ndim == 0 or self.topk >= ref.shape[-1]:
            return 0
        k = self.topk
        ref2, out2 = ref.reshape(-1, ref.shape[-1]), out.reshape(-1, out.shape[-1])
        order = np.argsort(-ref2, axis=1, kind="stable")
        kth = np.take_along_axis(ref2, order[:, k - 1 : k], axis=1)[:, 0]
        nxt = np.take_along_axis(ref2, order[:, k : k + 1], axis=1)[:, 0]
        decisive = (kth - nxt) > self.tie_margin * np.abs(kth)
        mine = np.sort(np.argsort(-out2, axis=1, kind="stable")[:, :k], axis=1)
        theirs = np.sort(order[:, :k], axis=1)
        return int((decisive & (mine != theirs).any(axis=1)).sum())


class Stage:
    """An optional base for class stages: every hook but `infer` has a default."""

    def unavailable(self) -> str | None:
        """Why this stage cannot run on this machine (it is then SKIPPED), or None."""
        return None

    def prepare(self, model: Any, batch: int) -> None:  # noqa: B027 - optional hook
        """Upload weights, compile, allocate for calls of up to `batch` items. Not timed."""

    def host_input(self, x: np.ndarray) -> np.ndarray:
        """Where the application keeps its input before `infer` (not timed): the array as
        given, or a copy in page-locked memory for a stage whose technique is about that."""
        return x

    def reference_input(self, x: np.ndarray) -> np.ndarray:
        """The input this stage's outputs are checked on: `x` itself, or, for a stage whose
        input format holds less than `x` does (e.g. uint8 pixels), `x` as that format gives it
        back, so the reference is computed on the very values the stage computes on."""
        return x

    def infer(self, x: np.ndarray) -> np.ndarray:
        """Outputs for the items `x` (host arrays in and out). Timed."""
        raise NotImplementedError

    def release(self) -> None:  # noqa: B027 - optional hook
        """Release what `prepare` took."""


class FunctionStage(Stage):
    """A plain function `f(x) -> y` as a stage: nothing to prepare or release."""

    def __init__(self, fn: Callable[[np.ndarray], Any]) -> None:
        self.fn = fn

    def infer(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.fn(x))


@dataclass(frozen=True)
class StageSpec:
    """A registered stage: what it is, how it runs and its typed options.

    `profiled_repeats`: repeats of the profiled pass (None: the sweep's default).
    `ncu_items`: items of the Nsight Compute pass (None: all; a per-item stage sets a few).
    `timeout_s`: the stage's own time limit (None: the sweep's). `compare`: a rule that
    replaces the study's (an fp16 stage needs a looser one). `needs`: modules that must import
    (e.g. "torch"), or "cuda" for a CUDA device; a stage that lacks one is SKIPPED.
    """

    key: str
    title: str
    technique: str
    role: str
    runtime: str
    impl: Any
    needs: tuple[str, ...] = ()
    profiled_repeats: int | None = None
    ncu_items: int | None = None
    timeout_s: float | None = None
    compare: Compare | None = None

    @property
    def uses_gpu(self) -> bool:
        return self.runtime != "cpu" or "cuda" in self.needs

    def build(self) -> Any:
        """A fresh instance: the class instantiated, or a function wrapped."""
        return self.impl() if inspect.isclass(self.impl) else FunctionStage(self.impl)

    def describe(self) -> dict[str, Any]:
        """JSON-ready facts the parent process needs (it never imports the stage)."""
        return {
            "key": self.key,
            "title": self.title,
            "technique": self.technique,
            "role": self.role,
            "runtime": self.runtime,
            "uses_gpu": self.uses_gpu,
            "needs": list(self.needs),
            "profiled_repeats": self.profiled_repeats,
            "ncu_items": self.ncu_items,
            "timeout_s": self.timeout_s,
            "compare": self.compare.describe() if self.compare else None,
        }


@dataclass
class Study:
    """A staged study (see the module docstring). Register stages with `stage` or `add`.

    `inputs(n)` makes the benchmark input for n items (its first axis is n); `data(path, n)`
    reads n items from a user's file for `--data`; `model()` loads what stages and the
    reference share (weights), and with `reads_model` also `model(path)` a user's model file
    for `--onnx`; `model_file()` gives the path of the default model's file (built at first
    use) for `profgen export-onnx`; `layers(model)`, when given, gives one row per network node
    the stages name with a range (`profiler.schema.LAYERS` columns: kind, shapes, FLOPs, bytes),
    which the run keeps for its per-layer report; `version` changes whenever the reference
    would change for the same weights and inputs (it keys the reference cache).
    """

    name: str
    title: str
    inputs: Callable[[int], np.ndarray]
    reference: Callable[..., np.ndarray]
    unit: str = "items"
    compare: Compare = field(default_factory=Compare)
    data: Callable[[Path, int], np.ndarray] | None = None
    model: Callable[..., Any] | None = None
    version: str = "1"
    default_items: int = 10_000
    #: timed repeats of a sweep or run when `--repeat` is not given (None: profgen's default)
    default_repeat: int | None = None
    reads_model: bool = False
    model_file: Callable[[], Path] | None = None
    layers: Callable[[Any], Any] | None = None
    _stages: dict[str, StageSpec] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        check_key(self.name, "study name")
        if self.default_repeat is not None and self.default_repeat < 1:
            raise UsageError(f"study {self.name}: default_repeat must be at least 1")
        if not self.unit or not self.title:
            raise UsageError(f"study {self.name}: title and unit must not be empty")
        if not isinstance(self.compare, Compare):
            raise UsageError(f"study {self.name}: compare must be a profiler.study.Compare")

    def stage(self, key: str | None = None, **options: Any) -> Callable[[Any], Any]:
        """Decorator: register the function or class it decorates (see `add`); returns it."""

        def register(impl: Any) -> Any:
            self.add(impl, key=key, **options)
            return impl

        return register

    def add(
        self,
        impl: Any,
        *,
        runtime: str,
        role: str = "step",
        key: str | None = None,
        title: str | None = None,
        technique: str | None = None,
        needs: Iterable[str] = (),
        profiled_repeats: int | None = None,
        ncu_items: int | None = None,
        timeout_s: float | None = None,
        compare: Compare | None = None,
    ) -> StageSpec:
        """Register a stage (a function `f(x) -> y` or a class with `infer`) after the others.

        Raises: UsageError for a bad key, a duplicate, an unknown role or runtime, a second
        baseline, or an option out of range.
        """
        key = check_key(key or str(getattr(impl, "__name__", "")), "stage key")
        doc_title, doc_technique = _from_docstring(impl)
        spec = StageSpec(
            key=key,
            title=title or doc_title or key,
            technique=technique if technique is not None else doc_technique,
            role=role,
            runtime=runtime,
            impl=impl,
            needs=tuple(needs),
            profiled_repeats=profiled_repeats,
            ncu_items=ncu_items,
            timeout_s=timeout_s,
            compare=compare,
        )
        self._check_new(spec)
        self._stages[key] = spec
        return spec

    def _check_new(self, spec: StageSpec) -> None:
        where = f"study {self.name}, stage {spec.key}"
        if spec.key in self._stages:
            raise UsageError(f"{where}: registered twice")
        if spec.role not in ROLES:
            raise UsageError(f"{where}: role {spec.role!r} is none of {', '.join(ROLES)}")
        if spec.runtime not in RUNTIMES:
            raise UsageError(f"{where}: runtime {spec.runtime!r} is none of {', '.join(RUNTIMES)}")
        if spec.role == "baseline" and any(s.role == "baseline" for s in self._stages.values()):
            raise UsageError(f"{where}: a study has at most one baseline stage")
        if not (inspect.isclass(spec.impl) or callable(spec.impl)):
            raise UsageError(f"{where}: a stage is a function or a class with `infer`")
        if inspect.isclass(spec.impl) and not callable(getattr(spec.impl, "infer", None)):
            raise UsageError(f"{where}: the class has no `infer` method")
        for name in ("profiled_repeats", "ncu_items"):
            value = getattr(spec, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise UsageError(f"{where}: {name} must be a positive integer, not {value!r}")
        if spec.timeout_s is not None and not spec.timeout_s > 0:
            raise UsageError(f"{where}: timeout_s must be positive, not {spec.timeout_s!r}")

    @property
    def stages(self) -> tuple[StageSpec, ...]:
        """Every stage, in study order."""
        return tuple(self._stages.values())

    def get(self, key: str) -> StageSpec:
        """The stage `key`. Raises: UsageError naming the valid keys."""
        try:
            return self._stages[key]
        except KeyError:
            choices = ", ".join(self._stages) or "none registered"
            raise UsageError(
                f"unknown stage {key!r} of study {self.name}; choose from: {choices}"
            ) from None

    def compare_for(self, spec: StageSpec) -> Compare:
        """The rule `spec` is held to: its own, else the study's."""
        return spec.compare or self.compare

    def load_model(self, path: Path | None = None) -> Any:
        """The study's model (None when it declares none), from the file `path` when given.

        Raises: UsageError when `path` is given to a study that reads no model file."""
        if path is not None and not (self.reads_model and self.model is not None):
            raise UsageError(f"study {self.name} reads no --onnx model file")
        if self.model is None:
            return None
        return self.model(path) if path is not None else self.model()

    def make_inputs(self, count: int, data_path: Path | None = None) -> np.ndarray:
        """The benchmark input for `count` items, from `--data` when given.

        Raises: UsageError when `--data` is given to a study without a data loader, or when the
        study's functions return something whose first axis is not `count`.
        """
        if data_path is not None and self.data is None:
            raise UsageError(f"study {self.name} reads no --data file")
        x = self.data(data_path, count) if data_path is not None and self.data else None
        x = np.asarray(self.inputs(count) if x is None else x)
        if x.ndim == 0 or len(x) != count:
            raise UsageError(f"study {self.name}: inputs for {count} items have shape {x.shape}")
        return x

    def run_reference(self, x: np.ndarray, model: Any) -> np.ndarray:
        """The reference outputs for `x`, as float64."""
        out = self.reference(x, model) if self.model is not None else self.reference(x)
        return np.asarray(out, dtype=np.float64)

    def describe(self) -> dict[str, Any]:
        """JSON-ready facts the parent process needs (`profgen list`, the sweep's plan)."""
        return {
            "name": self.name,
            "title": self.title,
            "unit": self.unit,
            "version": self.version,
            "default_items": self.default_items,
            "default_repeat": self.default_repeat,
            "reads_data": self.data is not None,
            "reads_model": self.reads_model,
            "exports_model": self.model_file is not None,
            "compare": self.compare.describe(),
            "stages": [s.describe() for s in self.stages],
        }


def _from_docstring(impl: Any) -> tuple[str, str]:
    """(first line, the rest joined into one paragraph) of `impl`'s own docstring."""
    doc = impl.__dict__.get("__doc__") if inspect.isclass(impl) else getattr(impl, "__doc__", None)
    lines = inspect.cleandoc(doc).splitlines() if doc else []
    if not lines:
        return "", ""
    return lines[0].strip().rstrip("."), " ".join(ln.strip() for ln in lines[1:] if ln.strip())
