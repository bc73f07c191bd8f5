"""The Stage contract, the Model interface, and the correctness rule every stage is held to.

A stage is one step of an optimisation study. `prepare` does everything that is not timed
(upload weights, compile kernels, allocate); `infer` takes a host array of images and returns
a host array of logits, and everything inside it is timed: input copy, kernels, output copy.
Inside `infer` a stage names its phases with `profiler.ranges.range("h2d")`, `range("conv1")`...
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol

import numpy as np


class Model(Protocol):
    """A network with trained weights, a float64 reference and benchmark data."""

    name: str
    input_shape: tuple[int, ...]
    classes: int
    weights: Mapping[str, np.ndarray]

    def reference(self, images: np.ndarray) -> np.ndarray:
        """float64 logits of shape (n, classes): the ground truth for every stage."""
        ...

    def benchmark_images(self, count: int, data_path: Path | None = None) -> np.ndarray:
        """`count` float32 images of shape (count, *input_shape), built deterministically."""
        ...


class Stage(abc.ABC):
    """One step of a study. Subclasses set `key`, `title`, `technique` and implement
    `prepare` and `infer`."""

    key: ClassVar[str]
    title: ClassVar[str]
    technique: ClassVar[str]
    #: True when the stage runs on the GPU (needs CuPy and a CUDA device).
    uses_gpu: ClassVar[bool] = True

    def unavailable(self) -> str | None:
        """Why this stage cannot run on this machine (it is then SKIPPED), or None."""
        return None

    @abc.abstractmethod
    def prepare(self, model: Model, batch: int) -> None:
        """Upload weights, compile, allocate for calls of up to `batch` images. Not timed."""

    def host_input(self, images: np.ndarray) -> np.ndarray:
        """Where the application keeps its input before `infer` (not timed).

        The default is the array as given (pageable memory). Stages whose technique is about
        host memory (page-locked buffers) return a copy in that memory, as an application
        would allocate it once and decode into it.
        """
        return images

    @abc.abstractmethod
    def infer(self, images: np.ndarray) -> np.ndarray:
        """float32 logits (n, classes) for `images` (n, *input_shape). Timed."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what `prepare` took."""


@dataclass(frozen=True)
class Verdict:
    """How a stage's logits compare with the float64 reference."""

    max_rel_err: float
    top1_mismatches: int
    passed: bool
    reason: str


REL_TOL = 1e-4  # relative error of the logits, per image: max |out-ref| / max |ref|
TIE_TOL = 1e-3  # two largest reference logits closer than this (relative) are a near tie


def check_logits(out: np.ndarray, ref: np.ndarray) -> Verdict:
    """Compare logits with the reference.

    The relative error of an image is max_j |out_j - ref_j| / max_j |ref_j|; a stage passes when
    the largest over all images is under REL_TOL and every image whose two largest reference
    logits are not a near tie (closer than TIE_TOL, relative) has the same top-1 class.
    NaN, infinities and a wrong shape fail.
    """
    if out.shape != ref.shape:
        return Verdict(
            float("inf"), len(ref), False, f"logits shape {out.shape}, expected {ref.shape}"
        )
    out64 = out.astype(np.float64)
    if not np.isfinite(out64).all():
        bad = int((~np.isfinite(out64)).any(axis=1).sum())
        return Verdict(float("inf"), bad, False, f"{bad} images have NaN or infinite logits")
    scale = np.maximum(np.abs(ref).max(axis=1), np.finfo(np.float64).tiny)
    rel = (np.abs(out64 - ref).max(axis=1) / scale).max(initial=0.0)
    top2 = np.sort(ref, axis=1)[:, -2:]
    decisive = (top2[:, 1] - top2[:, 0]) > TIE_TOL * np.abs(top2[:, 1])
    mismatches = int((decisive & (out64.argmax(axis=1) != ref.argmax(axis=1))).sum())
    reasons = []
    if rel >= REL_TOL:
        reasons.append(f"max relative error {rel:.3g} >= {REL_TOL:g}")
    if mismatches:
        reasons.append(f"{mismatches} images change their top-1 class")
    return Verdict(float(rel), mismatches, not reasons, "; ".join(reasons))
