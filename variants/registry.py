"""Models and their ordered stages.

Stage modules are imported only when asked for, and they import CuPy or torch only inside
`prepare`, so listing stages needs neither.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass

from profiler.errors import UsageError
from variants.base import Model, Stage


@dataclass(frozen=True)
class ModelSpec:
    """A study: its model loader and its stages, in order."""

    name: str
    title: str
    stage_package: str
    stage_keys: tuple[str, ...]
    loader: str  # "module:function" returning a Model

    def load(self) -> Model:
        module, func = self.loader.split(":")
        load: Callable[[], Model] = getattr(importlib.import_module(module), func)
        return load()

    def stage_class(self, key: str) -> type[Stage]:
        if key not in self.stage_keys:
            choices = ", ".join(self.stage_keys)
            raise UsageError(f"unknown stage {key!r} for model {self.name}; choose from: {choices}")
        cls: type[Stage] = importlib.import_module(f"{self.stage_package}.{key}").STAGE
        return cls

    def stages(self) -> list[type[Stage]]:
        return [self.stage_class(k) for k in self.stage_keys]


LENET = ModelSpec(
    name="lenet",
    title="LeNet-5 on 28x28 handwritten digits",
    stage_package="variants.lenet.stages",
    stage_keys=(
        "torch_cpu",
        "torch_gpu",
        "cuda_baseline",
        "batch_parallel",
        "conv_opt",
        "fc_opt",
        "no_sync",
        "pinned",
        "fc_coalesced",
        "overlap_fusion",
    ),
    loader="variants.lenet.model:load",
)

MODELS: dict[str, ModelSpec] = {m.name: m for m in (LENET,)}

#: Environment variable naming more studies: comma-separated `module:ATTRIBUTE` of ModelSpec
#: objects (a user's own study; the tests' CPU-only study). Worker processes inherit it.
EXTRA_MODELS_ENV = "PROFGEN_MODELS"


def models() -> dict[str, ModelSpec]:
    """The built-in studies plus those named in $PROFGEN_MODELS.

    Raises: UsageError when an entry of $PROFGEN_MODELS cannot be imported.
    """
    found = dict(MODELS)
    for ref in filter(None, (r.strip() for r in os.environ.get(EXTRA_MODELS_ENV, "").split(","))):
        module, _, attr = ref.partition(":")
        try:
            spec = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError, ValueError) as exc:
            raise UsageError(f"${EXTRA_MODELS_ENV}: cannot load {ref!r} ({exc})") from exc
        if not isinstance(spec, ModelSpec):
            raise UsageError(f"${EXTRA_MODELS_ENV}: {ref!r} is not a ModelSpec")
        found[spec.name] = spec
    return found


def get_model(name: str) -> ModelSpec:
    """The study called `name`. Raises: UsageError naming the valid choices."""
    known = models()
    try:
        return known[name]
    except KeyError:
        raise UsageError(f"unknown model {name!r}; choose from: {', '.join(known)}") from None
