"""Framework GPU, XLA: LeNet-5 in JAX, jit-compiled (what TensorFlow runs on)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from profiler.ranges import range as phase
from profiler.study import Stage


def forward(x: Any, w: Mapping[str, Any]) -> Any:
    """LeNet-5 in jax.numpy and jax.lax, float32 at full precision (no TF32)."""
    import jax
    from jax import lax

    hi = lax.Precision.HIGHEST

    def conv_relu(x: Any, name: str) -> Any:
        y = lax.conv_general_dilated(
            x,
            w[f"{name}.weight"],
            (1, 1),
            "VALID",
            precision=hi,
            dimension_numbers=("NCHW", "OIHW", "NCHW"),
        )
        return jax.nn.relu(y + w[f"{name}.bias"][None, :, None, None])

    def pool(x: Any) -> Any:
        return lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def linear(x: Any, name: str) -> Any:
        return jax.numpy.matmul(x, w[f"{name}.weight"].T, precision=hi) + w[f"{name}.bias"]

    x = pool(conv_relu(x, "conv1"))
    x = pool(conv_relu(x, "conv2")).reshape(x.shape[0], -1)
    x = jax.nn.relu(linear(x, "fc1"))
    x = jax.nn.relu(linear(x, "fc2"))
    return linear(x, "fc3")


class JaxGpu(Stage):
    """Framework GPU, JAX

    The same network written in jax.numpy and jax.lax and compiled whole by jax.jit into XLA's
    fused GPU code (the compiler TensorFlow uses, full float32 precision), the input copied in
    from the caller's NumPy array and the logits copied back on every call, compiled during the
    untimed warm-up calls.
    """

    def prepare(self, model: Any, batch: int) -> None:
        import jax

        device = jax.devices("gpu")[0]
        self._device = device
        self._w = {
            k: jax.device_put(np.asarray(v, dtype=np.float32), device)
            for k, v in model.weights.items()
        }
        self._f = jax.jit(forward)

    def infer(self, images: np.ndarray) -> np.ndarray:
        import jax

        with phase("h2d"):
            x = jax.device_put(np.ascontiguousarray(images, dtype=np.float32), self._device)
        logits = self._f(x, self._w)
        with phase("d2h"):
            return np.asarray(logits)  # waits for the result and copies it back
